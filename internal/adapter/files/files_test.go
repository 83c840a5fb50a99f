package files

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.yaml")
	if err := os.WriteFile(small, []byte("kind: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte(strings.Repeat("x", 101)), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		path    string
		wantErr error
	}{
		"small file":            {path: small},
		"too large":             {path: big, wantErr: ErrTooLarge},
		"a device":              {path: "/dev/zero", wantErr: ErrNotRegular},
		"a link to a device":    {path: link, wantErr: ErrNotRegular},
		"a FIFO (never opened)": {path: fifo, wantErr: ErrNotRegular},
		"a folder":              {path: dir, wantErr: ErrNotRegular},
		"missing":               {path: filepath.Join(dir, "nope"), wantErr: os.ErrNotExist},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			data, err := Read(tc.path, 100)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("Read(%s) = %v, want %v", tc.path, err, tc.wantErr)
			}
			if err == nil && string(data) != "kind: x\n" {
				t.Errorf("read %q", data)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("error of two lines: %q", err)
			}
		})
	}
}

func TestReadAll(t *testing.T) {
	f, err := os.Open("/dev/zero")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := ReadAll(f, 1<<20); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadAll(/dev/zero) = %v, want ErrTooLarge", err)
	}
	if got, err := ReadAll(strings.NewReader("abc"), 3); err != nil || string(got) != "abc" {
		t.Errorf("ReadAll(abc, 3) = %q, %v", got, err)
	}
}
