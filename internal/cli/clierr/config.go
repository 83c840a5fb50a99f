package clierr

import (
	"fmt"
	"io"
	"strings"

	"github.com/reprieve/reprieve/internal/adapter/config"
	"github.com/reprieve/reprieve/internal/adapter/files"
)

// LoadConfig reads the --config file, or returns the defaults without one;
// a bad file is an ErrInvalidConfig.
func LoadConfig(path string) (config.Config, error) { return LoadConfigFrom(path, nil) }

// LoadConfigFrom is LoadConfig where the path "-" reads stdin (when not
// nil).
func LoadConfigFrom(path string, stdin io.Reader) (config.Config, error) {
	if path == "" {
		return config.Default(), nil
	}
	if path == "-" && stdin != nil {
		data, err := files.ReadAll(stdin, files.MaxSmall)
		if err != nil {
			return config.Config{}, fmt.Errorf("%w: --config: standard input: %s", ErrInvalidConfig, oneLine(err))
		}
		c, err := config.Parse(data)
		if err != nil {
			return config.Config{}, fmt.Errorf("%w: --config: standard input: %s", ErrInvalidConfig, oneLine(err))
		}
		return c, nil
	}
	c, err := config.Load(path)
	if err != nil {
		return config.Config{}, fmt.Errorf("%w: --config: %s", ErrInvalidConfig, oneLine(err))
	}
	return c, nil
}

// oneLine is err's message on one line: decoders' messages can span
// several, and an error is printed as one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// Unsupported reports what the configuration asks for that reprieve does
// not implement: a warning line each on errOut, or, when strict (the
// scheduler, which must not run differently from its configuration), an
// ErrInvalidConfig naming them all.
func Unsupported(path string, c *config.Config, errOut io.Writer, strict bool) error {
	if len(c.Unsupported) == 0 {
		return nil
	}
	if strict {
		return fmt.Errorf("%w: %s: not supported by reprieve: %s", ErrInvalidConfig, path, strings.Join(c.Unsupported, "; "))
	}
	for _, line := range c.Unsupported {
		fmt.Fprintf(errOut, "warning: %s: %s\n", path, line)
	}
	return nil
}
