package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Every input is read with a bound, so that no input makes the loader
// hold more than it can: a file given by its path must be a regular file
// (a device such as /dev/zero, a FIFO or a socket is refused before it is
// read, and a FIFO is opened without waiting for a writer) of at most
// maxFileSize bytes; standard input must be a pipe or a file, and is read
// up to maxStdinSize bytes. An input that starts with a NUL byte (a copy
// of /dev/zero, a sparse file) is refused as soon as it is read, and
// standard input holding one anywhere: no YAML or JSON text holds one. A
// file as large as the bound is most often a List, which the fast path
// reads as it comes; read whole, it is held once, with what is decoded
// from it.

// maxFileSize bounds the size of a file the loader reads.
const maxFileSize = 4 << 30

// maxStdinSize bounds what the loader reads of standard input, which it
// holds whole.
const maxStdinSize = 1 << 30

// openFile opens path for reading, and returns the file and its size: a
// regular file (a symbolic link to one counts as one) of at most
// maxFileSize bytes. It opens without blocking, so that a FIFO put where
// a file was does not wait for a writer; what it opened it checks again.
func openFile(path string) (*os.File, int64, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, 0, fileError(path, err)
	}
	if err := checkRegular(path, info); err != nil {
		return nil, 0, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, fileError(path, err)
	}
	if info, err = f.Stat(); err == nil {
		err = checkRegular(path, info)
	} else {
		err = fileError(path, err)
	}
	if err != nil {
		_ = f.Close()
		return nil, 0, err
	}
	return f, info.Size(), nil
}

// checkRegular refuses info, of path, unless it is a regular file of at
// most maxFileSize bytes.
func checkRegular(path string, info fs.FileInfo) error {
	if !info.Mode().IsRegular() {
		return &InputError{Source: path, Detail: "cannot read: not a regular file (a device, a FIFO or a socket); give a file, or - for standard input"}
	}
	if info.Size() > maxFileSize {
		return tooLarge(path, maxFileSize)
	}
	return nil
}

// tooLarge is the error for an input larger than limit bytes.
func tooLarge(src string, limit int64) error {
	detail := fmt.Sprintf("cannot read: larger than %s, the most the loader reads", sizeName(limit))
	if src == StdinName {
		detail += " of standard input; save it to a file and give the file"
	} else {
		detail += " of a file"
	}
	return &InputError{Source: src, Detail: detail}
}

// sizeName words a bound: "4 GiB".
func sizeName(n int64) string {
	if n >= 1<<30 && n%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB", n>>30)
	}
	return fmt.Sprintf("%d bytes", n)
}

// readFile reads the file path whole, within the bounds of openFile.
func readFile(path string) ([]byte, error) {
	f, size, err := openFile(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return readOpened(path, f, size)
}

// readOpened reads the rest of f, the file path opened by openFile with
// size bytes, into one buffer of its size (io.ReadAll would grow one as it
// reads, allocating about twice what it returns); a file that has grown
// past maxFileSize is refused.
func readOpened(path string, f *os.File, size int64) ([]byte, error) {
	return readBounded(path, f, size, maxFileSize)
}

// readStdin reads standard input (r) whole, up to maxStdinSize bytes. A
// device (a terminal, /dev/zero) is refused before it is read: what is
// piped in or redirected from a file is read.
func readStdin(r io.Reader) ([]byte, error) {
	if r == nil {
		return nil, &InputError{Source: StdinName, Detail: "no standard input to read"}
	}
	var size int64
	if f, ok := r.(*os.File); ok {
		if info, err := f.Stat(); err == nil {
			if info.Mode()&os.ModeDevice != 0 {
				return nil, &InputError{Source: StdinName, Detail: "cannot read: standard input is a device (a terminal, /dev/zero), not a file or a pipe; pipe the manifests in, or redirect them from a file"}
			}
			if info.Mode().IsRegular() {
				if size = info.Size(); size > maxStdinSize {
					return nil, tooLarge(StdinName, maxStdinSize)
				}
			}
		}
	}
	return readBounded(StdinName, r, size, maxStdinSize)
}

// readBounded reads r, named src, whole: size is what it is expected to
// hold (0 if unknown), limit the most it may hold. An input of unknown
// size is read in chunks, joined once it has ended within its bound: one
// past it is not held more than once, nor copied as it grows.
func readBounded(src string, r io.Reader, size, limit int64) ([]byte, error) {
	lr := bounded(src, r, limit)
	var chunks [][]byte
	buf := make([]byte, 0, min(size, limit)+bytes.MinRead)
	for {
		if len(buf) == cap(buf) {
			chunks = append(chunks, buf)
			buf = make([]byte, 0, readChunk)
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case errors.Is(err, io.EOF):
			if len(chunks) == 0 {
				return buf, nil
			}
			return bytes.Join(append(chunks, buf), nil), nil
		case err == nil:
			continue
		}
		if ie := (*InputError)(nil); errors.As(err, &ie) {
			return nil, err
		}
		if src == StdinName {
			return nil, &InputError{Source: src, Detail: "cannot read: " + err.Error(), Err: err}
		}
		return nil, fileError(src, err)
	}
}

// readChunk is the size of the chunks an input of unknown size is read in.
const readChunk = 8 << 20

// bounded returns r, named src, failing with the error tooLarge words
// once it has given more than limit bytes, or with one saying so once it
// has given a NUL byte among its first textStart bytes (standard input:
// among all): no YAML or JSON text the loader reads holds one (YAML and
// JSON refuse the control character, and the loader reads neither in
// UTF-16), and an input of zeros (a copy of /dev/zero, a sparse file) is
// so refused before it is held.
func bounded(src string, r io.Reader, limit int64) io.Reader {
	l := &limitReader{r: r, src: src, limit: limit, textUntil: textStart}
	if src == StdinName {
		l.textUntil = limit
	}
	return l
}

// textStart is how much of a file is checked to hold no NUL byte.
const textStart = 64 << 10

// limitReader is what bounded returns; read counts the bytes given.
type limitReader struct {
	r                      io.Reader
	src                    string
	limit, read, textUntil int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	// One byte more than the bound tells an input at the bound from one
	// past it.
	if left := l.limit + 1 - l.read; int64(len(p)) > left {
		p = p[:left]
	}
	n, err := l.r.Read(p)
	if l.read < l.textUntil {
		if i := bytes.IndexByte(p[:min(int64(n), l.textUntil-l.read)], 0); i >= 0 {
			return 0, &InputError{Source: l.src, Detail: fmt.Sprintf("cannot read: a NUL byte at offset %d: not YAML or JSON text", l.read+int64(i))}
		}
	}
	if l.read += int64(n); l.read > l.limit {
		return 0, tooLarge(l.src, l.limit)
	}
	return n, err
}

// fileError is an error reading the file path, as an *InputError wrapping
// err.
func fileError(path string, err error) error {
	detail := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		detail = pe.Err.Error()
	}
	return &InputError{Source: path, Detail: "cannot read: " + detail, Err: err}
}
