package whatif

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// TestWriteListItem: a List written an item at a time is the List
// converted whole: the same bytes in JSON, the same objects in YAML (long
// strings may be folded at other columns), with multi-line and long
// strings.
func TestWriteListItem(t *testing.T) {
	items := []any{
		map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "n1"}},
		map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p", "annotations": map[string]any{
			"script": "line one\n\n  indented\nlast\n",
			"long":   strings.Repeat("word ", 40),
			"quoted": ": - # '\"",
		}}, "spec": map[string]any{"containers": []any{map[string]any{"name": "c", "args": []any{"a", "", "b c"}}}}},
		map[string]any{},
	}
	for _, n := range []int{0, 1, len(items)} {
		whole := map[string]any{"apiVersion": "v1", "kind": "List", "items": items[:n]}
		wantJSON, err := json.Marshal(struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Items      []any  `json:"items"`
		}{"v1", "List", items[:n]})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(whole)
		if err != nil {
			t.Fatal(err)
		}
		wantYAML, err := yaml.JSONToYAML(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, asYAML := range []bool{false, true} {
			var out bytes.Buffer
			lw := newListWriter(&out, asYAML)
			for _, item := range items[:n] {
				b, err := json.Marshal(item)
				if err != nil {
					t.Fatal(err)
				}
				if err := lw.item(b); err != nil {
					t.Fatal(err)
				}
			}
			if err := lw.end(); err != nil {
				t.Fatal(err)
			}
			want := string(wantJSON) + "\n"
			if asYAML {
				want = string(wantYAML)
			}
			got := out.String()
			if asYAML {
				var a, b any
				if err := yaml.Unmarshal([]byte(want), &a); err != nil {
					t.Fatal(err)
				}
				if err := yaml.Unmarshal(out.Bytes(), &b); err != nil {
					t.Fatalf("%d items: written YAML does not read: %v\n%s", n, err, got)
				}
				if diff := cmp.Diff(a, b); diff != "" {
					t.Errorf("%d items: YAML written an item at a time reads otherwise (-whole +items):\n%s", n, diff)
				}
				continue
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%d items, yaml %v: written an item at a time (-whole +items):\n%s", n, asYAML, diff)
			}
		}
	}
}
