// Package clitest holds what the command packages' tests share: golden
// files and scratch input files.
package clitest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Golden compares got with the golden file at path, failing t on a
// difference, or rewrites the file when update is set (the test package's
// -update flag).
func Golden(t testing.TB, path, got string, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

// Files writes a test's input files into one temporary directory.
type Files struct {
	t   testing.TB
	dir string
}

// NewFiles returns the writer of t's input files, in a directory of its
// own that is removed when t ends.
func NewFiles(t testing.TB) *Files { return &Files{t: t, dir: t.TempDir()} }

// Write writes data to the file name and returns its path; a failure
// fails the test.
func (f *Files) Write(name, data string) string {
	f.t.Helper()
	p := filepath.Join(f.dir, name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// Dir returns the directory the files are written in.
func (f *Files) Dir() string { return f.dir }
