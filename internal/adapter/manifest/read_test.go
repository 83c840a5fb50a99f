package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestReadOpened: readOpened reads a regular file as os.ReadFile does,
// from where it stands, and whatever its size.
func TestReadOpened(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, 511, 512, 513, 1 << 20} {
		path := filepath.Join(dir, fmt.Sprint(size))
		want := bytes.Repeat([]byte("abcdefg\n"), size/8+1)[:size]
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		f, n, err := openFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readOpened(path, f, n)
		_ = f.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("size %d: read %d bytes, %v", size, len(got), err)
		}
	}
}

// TestReadBounded: an input over its bound is refused with one line that
// names it and the bound, without being read past it.
func TestReadBounded(t *testing.T) {
	tests := map[string]struct {
		src         string
		in          io.Reader
		size, limit int64
		want        string
	}{
		"at the bound":    {src: "f", size: 10, limit: 10},
		"under the bound": {src: "f", size: 3, limit: 10},
		"past the bound":  {src: "f", size: 11, limit: 10, want: "f: cannot read: larger than 10 bytes, the most the loader reads of a file"},
		"stdin past it":   {src: StdinName, size: 5 << 20, limit: 1 << 20, want: "<stdin>: cannot read: larger than 1048576 bytes, the most the loader reads of standard input; save it to a file and give the file"},
		"empty stdin":     {src: StdinName, size: 0, limit: 1 << 20},
		"stdin of zeros":  {src: StdinName, in: repeated(0), size: 5 << 20, limit: 1 << 20, want: "<stdin>: cannot read: a NUL byte at offset 0: not YAML or JSON text"},
		"a NUL in stdin": {src: StdinName, in: io.MultiReader(io.LimitReader(repeated('y'), 300<<10), repeated(0)), size: 5 << 20, limit: 1 << 20,
			want: "<stdin>: cannot read: a NUL byte at offset 307200: not YAML or JSON text"},
		"a file of zeros": {src: "f", in: repeated(0), size: 5 << 20, limit: 1 << 20, want: "f: cannot read: a NUL byte at offset 0: not YAML or JSON text"},
		// Past its start, a file is not checked (the general path refuses
		// the NUL byte as it refuses any other control character).
		"a NUL in a file": {src: "f", in: io.MultiReader(io.LimitReader(repeated('y'), 300<<10), repeated(0)), size: 400 << 10, limit: 1 << 20},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := tc.in
			if in == nil {
				in = repeated('y')
			}
			r := &countingReader{r: io.LimitReader(in, tc.size)}
			data, err := readBounded(tc.src, r, 0, tc.limit)
			switch {
			case tc.want == "" && (err != nil || int64(len(data)) != tc.size):
				t.Fatalf("read %d bytes, %v; want %d", len(data), err, tc.size)
			case tc.want != "" && (err == nil || err.Error() != tc.want || !errors.Is(err, ErrInput)):
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if r.n > tc.limit+1 {
				t.Errorf("read %d bytes, past the bound %d", r.n, tc.limit)
			}
		})
	}
}

// repeated reads its byte for ever, as yes(1) or /dev/zero.
type repeated byte

func (b repeated) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// countingReader counts what it reads.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
