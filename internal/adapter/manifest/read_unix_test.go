//go:build unix

package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInputsThatAreNoFiles: a device, a FIFO or a file too large, given
// by its path, is refused at once with one line naming it; in a folder,
// what is no regular file (a FIFO, a link to a device) is left out
// unopened, and a link to a regular file is read.
func TestInputsThatAreNoFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skipf("no /dev/zero: %v", err)
	}
	huge := filepath.Join(dir, "huge.json")
	if f, err := os.Create(huge); err != nil {
		t.Fatal(err)
	} else {
		// Sparse: nothing is written, and nothing need be read to refuse it.
		if err := f.Truncate(maxFileSize + 1); err != nil {
			t.Skipf("no sparse file: %v", err)
		}
		_ = f.Close()
	}
	hugeStdin := filepath.Join(dir, "huge-stdin.json")
	if err := os.WriteFile(hugeStdin, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(hugeStdin, maxStdinSize+1); err != nil {
		t.Fatal(err)
	}
	zeros := filepath.Join(dir, "zeros.yaml")
	if err := os.WriteFile(zeros, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(zeros, 3*streamMinSize); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.yaml")
	writeFile(t, good, []byte(nodeDoc))
	// folder: a FIFO, a link to /dev/zero, a link to a regular file and a
	// regular file; devices: only what is no regular file.
	folder := filepath.Join(dir, "folder")
	devices := filepath.Join(dir, "devices")
	for _, d := range []string{folder, devices} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(filepath.Join(d, "a-fifo.yaml"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/dev/zero", filepath.Join(d, "b-zero.yaml")); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(good, filepath.Join(folder, "c-link.yaml")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(folder, "d-pod.yaml"), []byte(podDoc))

	notRegular := "cannot read: not a regular file (a device, a FIFO or a socket); give a file, or - for standard input"
	tests := map[string]struct {
		load      func() (*Set, error)
		want      string // the error, or "" for none
		wantNodes int
	}{
		"/dev/zero as a snapshot":   {load: func() (*Set, error) { return Load("/dev/zero") }, want: "/dev/zero: " + notRegular},
		"a FIFO as a snapshot":      {load: func() (*Set, error) { return Load(fifo) }, want: fifo + ": " + notRegular},
		"a file over the bound":     {load: func() (*Set, error) { return Load(huge) }, want: huge + ": cannot read: larger than 4 GiB, the most the loader reads of a file"},
		"/dev/zero as the pod":      {load: func() (*Set, error) { _, s, err := LoadPodSet(Options{}, "/dev/zero"); return s, err }, want: "/dev/zero: " + notRegular},
		"/dev/zero as the pods":     {load: func() (*Set, error) { _, s, err := LoadPodsSet(Options{}, "/dev/zero"); return s, err }, want: "/dev/zero: " + notRegular},
		"a FIFO as the pod":         {load: func() (*Set, error) { _, s, err := LoadPodSet(Options{}, fifo); return s, err }, want: fifo + ": " + notRegular},
		"a folder of devices":       {load: func() (*Set, error) { return Load(devices) }, want: devices + ": directory has no .yaml, .yml or .json files"},
		"a folder, devices skipped": {load: func() (*Set, error) { return Load(folder) }, wantNodes: 1},
		"/dev/zero as standard input": {load: func() (*Set, error) {
			zero, err := os.Open("/dev/zero")
			if err != nil {
				return nil, err
			}
			defer func() { _ = zero.Close() }()
			return LoadWith(Options{Stdin: zero}, "-")
		}, want: "<stdin>: cannot read: standard input is a device (a terminal, /dev/zero), not a file or a pipe; pipe the manifests in, or redirect them from a file"},
		"standard input from a file over the bound": {load: func() (*Set, error) {
			f, err := os.Open(hugeStdin)
			if err != nil {
				return nil, err
			}
			defer func() { _ = f.Close() }()
			return LoadWith(Options{Stdin: f}, "-")
		}, want: "<stdin>: cannot read: larger than 1 GiB, the most the loader reads of standard input; save it to a file and give the file"},
		"a file of zeros":          {load: func() (*Set, error) { return Load(zeros) }, want: zeros + ": cannot read: a NUL byte at offset 0: not YAML or JSON text"},
		"a file of zeros, general": {load: func() (*Set, error) { return LoadWith(Options{general: true}, zeros) }, want: zeros + ": cannot read: a NUL byte at offset 0: not YAML or JSON text"},
		"a link to /dev/zero":      {load: func() (*Set, error) { return Load(filepath.Join(folder, "b-zero.yaml")) }, want: filepath.Join(folder, "b-zero.yaml") + ": " + notRegular},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			type result struct {
				s   *Set
				err error
			}
			done := make(chan result, 1)
			go func() {
				s, err := tc.load()
				done <- result{s, err}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("still reading after 10 s")
			}
			if tc.want == "" {
				if r.err != nil {
					t.Fatal(r.err)
				}
				if got := len(r.s.Objects.Nodes); got != tc.wantNodes {
					t.Errorf("%d nodes, want %d", got, tc.wantNodes)
				}
				return
			}
			if r.err == nil || r.err.Error() != tc.want || !errors.Is(r.err, ErrInput) || strings.Contains(r.err.Error(), "\n") {
				t.Errorf("error %v, want %q", r.err, tc.want)
			}
		})
	}
	if got := InputSize(folder, "/dev/zero", fifo); got != int64(len(nodeDoc)+len(podDoc)) {
		t.Errorf("InputSize = %d, want the regular files' sizes", got)
	}
}
