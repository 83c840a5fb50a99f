package manifest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// FuzzCutYAMLDocuments holds cutYAMLDocuments to utilyaml.YAMLReader:
// where it cuts a stream, it gives the same documents.
func FuzzCutYAMLDocuments(f *testing.F) {
	for _, s := range []string{
		"a: 1\n", "a: 1", "---\na: 1\n---\nb: 2\n", "---\n---\n\n---\na: 1\n--- # c\nb: 2\n---",
		"a: 1\n---\t\nb: 2\n----\n", "a: 1\r\n---\r\nb: 2\r\n", "--- x\n", "\n\n", "---", "a: |\n  ---\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		next, _ := cutYAMLDocuments(data)
		if next == nil {
			return
		}
		var got, want [][]byte
		for {
			doc, err := next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, bytes.Clone(doc))
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("cut what YAMLReader refuses: %v", err)
			}
			want = append(want, doc)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("documents differ (-YAMLReader +cut):\n%s", diff)
		}
	})
}

// TestCutYAMLDocumentsDeclines: what only YAMLReader reads or refuses
// is left to it.
func TestCutYAMLDocumentsDeclines(t *testing.T) {
	for _, s := range []string{"a: 1\r\n", "--- x\n", "a: 1\n----\n", "---\u00a0\n"} {
		if next, _ := cutYAMLDocuments([]byte(s)); next != nil {
			t.Errorf("%q: cut, want it left to YAMLReader", s)
		}
	}
	if next, _ := cutYAMLDocuments([]byte("a: 1\n--- # comment\nb: 2\n")); next == nil {
		t.Error("a plain stream is left to YAMLReader")
	}
}
