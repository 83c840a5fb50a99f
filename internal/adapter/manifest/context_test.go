package manifest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestLoadContextStops: once its context is done, a load stops with the
// context's error, on either path, for a file of documents, a large List
// and a directory.
func TestLoadContextStops(t *testing.T) {
	dir := t.TempDir()
	list := mustJSON(t, map[string]any{"apiVersion": "v1", "kind": "List", "items": manyObjects(200)}, true)
	if len(list) < streamMinSize {
		t.Fatalf("the List is %d bytes, too small to stream", len(list))
	}
	docs := snapshotForms(t, 20)["YAML document per item"]
	folder := filepath.Join(dir, "folder")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "list.json"), list)
	writeFile(t, filepath.Join(dir, "docs.yaml"), docs)
	writeFile(t, filepath.Join(folder, "a.yaml"), docs)
	writeFile(t, filepath.Join(folder, "b.json"), list)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, general := range []bool{false, true} {
		for _, path := range []string{"list.json", "docs.yaml", "folder"} {
			_, err := LoadContext(ctx, Options{general: general, Lean: true}, filepath.Join(dir, path))
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s, general %v: error %v, want context.Canceled", path, general, err)
			}
		}
		s := NewSetWith(Options{general: general})
		if err := s.addBytes(ctx, "list", list); !errors.Is(err, context.Canceled) {
			t.Errorf("bytes, general %v: error %v, want context.Canceled", general, err)
		}
	}
}

// TestStreamStopsMidway: a List being streamed stops at the next chunk
// once its context is done, having read no further.
func TestStreamStopsMidway(t *testing.T) {
	list := mustJSON(t, map[string]any{"apiVersion": "v1", "kind": "List", "items": manyObjects(2000)}, true)
	if len(list) < 6*streamChunk {
		t.Fatalf("the List is %d bytes, want several chunks", len(list))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &cancellingReader{r: bytes.NewReader(list), after: 2 * streamChunk, cancel: cancel}
	s := NewSetWith(Options{Lean: true})
	done, err := s.fast.stream(ctx, s, "list", r)
	if !done || !errors.Is(err, context.Canceled) {
		t.Fatalf("done %v, error %v; want done, context.Canceled", done, err)
	}
	if r.n > 4*streamChunk {
		t.Errorf("read %d bytes after the context was done at %d", r.n, r.after)
	}
	if len(s.Objects.PodParts)+len(s.Objects.Nodes) != 0 {
		t.Errorf("committed %d pods and %d nodes of a List cut short", len(s.Objects.PodParts), len(s.Objects.Nodes))
	}
}

// cancellingReader reads r, calling cancel once it has read after bytes.
type cancellingReader struct {
	r      io.Reader
	after  int
	n      int
	cancel func()
}

func (c *cancellingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.n += n; c.n >= c.after {
		c.cancel()
	}
	return n, err
}
