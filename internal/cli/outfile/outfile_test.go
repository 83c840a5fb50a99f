package outfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/reprieve/reprieve/internal/cli/clierr"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	scenario := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(scenario, []byte("kind: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.html")
	if err := os.Symlink(scenario, link); err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, "cluster")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	inFolder := filepath.Join(folder, "nodes.yaml")
	if err := os.WriteFile(inFolder, []byte("kind: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		path    string
		inputs  []string
		wantErr bool
	}{
		"new file":                  {path: filepath.Join(dir, "r.html"), inputs: []string{scenario}},
		"the input itself":          {path: scenario, inputs: []string{scenario}, wantErr: true},
		"a link to the input":       {path: link, inputs: []string{scenario}, wantErr: true},
		"a file of an input folder": {path: inFolder, inputs: []string{folder}, wantErr: true},
		"missing folder":            {path: filepath.Join(dir, "nope", "r.html"), wantErr: true},
		"a folder":                  {path: folder, wantErr: true},
		"a device":                  {path: os.DevNull, wantErr: true},
		"stdin is no file":          {path: filepath.Join(dir, "r2.html"), inputs: []string{"-"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := Check("--report", tc.path, tc.inputs...)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Check(%s) = %v, want error %v", tc.path, err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, clierr.ErrUsage) {
				t.Errorf("error %v is not a usage error", err)
			}
		})
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.html")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A write that fails half-way leaves the old file whole.
	failed := errors.New("disk on fire")
	err := Write(path, func(w io.Writer) error {
		_, _ = io.WriteString(w, "half")
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatalf("Write = %v, want %v", err, failed)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("after a failed write the file holds %q, want the old content", b)
	}
	// A write that succeeds replaces it, keeping its permissions, through
	// a symbolic link, which stays a link.
	link := filepath.Join(dir, "link.html")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("file holds %q, want new", b)
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", info, err)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 kept", info.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("temporary files left: %v", entries)
	}
}
