// Package outfile writes the files a command produces (simulate's
// --report) so that nothing already stored is lost: the path is checked
// before any long work, a file that is also one of the command's inputs is
// refused, and the content goes to a temporary file in the same folder
// that replaces the old file only once it is complete.
package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/reprieve/reprieve/internal/cli/clierr"
)

// Check refuses, as a usage error naming flag, an output path whose folder
// does not exist or cannot be written, that is a folder or a device, or
// that is the same file as one of inputs (files, or folders whose files
// are read; "-" is standard input and is skipped).
func Check(flag, path string, inputs ...string) error {
	target := resolve(path)
	if info, err := os.Stat(target); err == nil {
		if !info.Mode().IsRegular() {
			return clierr.Usagef("%s %s: not a regular file", flag, path)
		}
		for _, in := range inputs {
			if same, input := readsFile(in, info); same {
				return clierr.Usagef("%s %s: is the input %s; writing it would destroy it", flag, path, input)
			}
		}
	}
	dir := filepath.Dir(target)
	f, err := os.CreateTemp(dir, ".reprieve-check-*")
	if err != nil {
		return clierr.Usagef("%s %s: cannot write there: %v", flag, path, pathErr(err))
	}
	name := f.Name()
	_ = f.Close()
	_ = os.Remove(name)
	return nil
}

// readsFile reports whether the input in (a file or a folder) is, or
// holds, the file of info, and names it.
func readsFile(in string, info fs.FileInfo) (bool, string) {
	if in == "" || in == "-" {
		return false, ""
	}
	st, err := os.Stat(in)
	if err != nil {
		return false, ""
	}
	if !st.IsDir() {
		return os.SameFile(st, info), in
	}
	var found string
	_ = filepath.WalkDir(in, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found != "" {
			return nil
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && os.SameFile(fi, info) {
			found = p
		}
		return nil
	})
	return found != "", found
}

// Write writes path through write: into a temporary file beside it, then
// renamed over it, so that a write that fails half-way leaves the previous
// file whole. A path that is a symbolic link has the file it points to
// replaced, not the link. The file is readable by all, as os.Create makes
// it (or keeps the permissions of the file it replaces).
func Write(path string, write func(io.Writer) error) (err error) {
	target := resolve(path)
	mode := fs.FileMode(0o644)
	if info, err := os.Stat(target); err == nil {
		mode = info.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return pathErr(err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Chmod(mode); err != nil {
		return pathErr(err)
	}
	if err := f.Sync(); err != nil {
		return pathErr(err)
	}
	if err := f.Close(); err != nil {
		return pathErr(err)
	}
	if err := os.Rename(tmp, target); err != nil {
		return pathErr(err)
	}
	return nil
}

// resolve follows a symbolic link at path to the file it names (path
// itself when it is no link or the link is broken).
func resolve(path string) string {
	if t, err := filepath.EvalSymlinks(path); err == nil {
		return t
	}
	return path
}

// pathErr is err without the temporary file's name a *fs.PathError holds.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s", pe.Err.Error())
	}
	return err
}
