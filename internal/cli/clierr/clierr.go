// Package clierr classifies command-line errors into exit codes.
package clierr

import (
	"errors"
	"fmt"

	"github.com/reprieve/reprieve/pkg/loader"
)

// ErrUsage marks a misuse of the command line (exit code 2).
var ErrUsage = errors.New("usage error")

// Usagef returns a usage error with a formatted message.
func Usagef(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, args...))
}

// IsInput reports whether err is caused by bad input files (exit code 2).
func IsInput(err error) bool {
	return errors.Is(err, loader.ErrInput) || errors.Is(err, ErrInvalidConfig)
}

// ErrInvalidConfig marks an invalid --config file.
var ErrInvalidConfig = errors.New("invalid configuration")
