package clierr

import (
	"fmt"

	"github.com/reprieve/reprieve/pkg/config"
)

// LoadConfig reads the --config file, or returns the defaults without one;
// a bad file is an ErrInvalidConfig.
func LoadConfig(path string) (config.Config, error) {
	if path == "" {
		return config.Default(), nil
	}
	c, err := config.Load(path)
	if err != nil {
		return config.Config{}, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	return c, nil
}
