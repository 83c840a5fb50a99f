// Package clierr classifies command-line errors into exit codes.
package clierr

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/reprieve/reprieve/internal/adapter/manifest"
)

// ErrUsage marks a misuse of the command line (exit code 2).
var ErrUsage = errors.New("usage error")

// Usagef returns a usage error with a formatted message.
func Usagef(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, args...))
}

// IsInput reports whether err is caused by bad input files (exit code 2).
func IsInput(err error) bool {
	return errors.Is(err, manifest.ErrInput) || errors.Is(err, ErrInvalidConfig) || errors.Is(err, ErrBadFile)
}

// ErrBadFile marks an input file that cannot be used: missing, not a
// regular file, or too large (files.Check).
var ErrBadFile = errors.New("bad input file")

// ErrInvalidConfig marks an invalid --config file.
var ErrInvalidConfig = errors.New("invalid configuration")

// NameFlag prefixes an error reading a file with the flag that named it
// ("--snapshot: nope.yaml: cannot read: no such file or directory"); other
// errors, and nil, are returned unchanged.
func NameFlag(flag string, err error) error {
	if err == nil || !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
		return err
	}
	return fmt.Errorf("%s: %w", flag, err)
}
