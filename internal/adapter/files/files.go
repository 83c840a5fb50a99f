// Package files reads the small files reprieve takes as input — a
// KubeSchedulerConfiguration, a kubeconfig, an output template — bounded:
// a path that is not a regular file (a device, a FIFO, a folder) or a file
// larger than its cap is refused with one line, before anything is read
// into memory. Snapshots and pods have their own reader (manifest).
package files

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxSmall is the cap of a small input file: far above any real
// configuration, kubeconfig or template, far below what would strain the
// process.
const MaxSmall = 16 << 20

// ErrTooLarge is returned for a file or stream larger than its cap.
var ErrTooLarge = errors.New("larger than the limit")

// ErrNotRegular is returned for a path that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// Check refuses a path that does not name a regular file (following
// symbolic links) of at most limit bytes.
func Check(path string, limit int64) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	if info.Size() > limit {
		return fmt.Errorf("%s: %d bytes: %w of %d bytes", path, info.Size(), ErrTooLarge, limit)
	}
	return nil
}

// Read reads the regular file path, refusing it as Check does; a file
// that grows past limit while it is read is refused too.
func Read(path string, limit int64) ([]byte, error) {
	if err := Check(path, limit); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	data, err := ReadAll(f, limit)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, nil
}

// ReadAll reads r to its end, refusing more than limit bytes (standard
// input, which has no size to check first).
func ReadAll(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w of %d bytes", ErrTooLarge, limit)
	}
	return data, nil
}
