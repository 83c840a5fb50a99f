package loader

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"
)

// streamCase is a file for the streaming reader and the whole-file path
// to read alike.
type streamCase struct {
	data []byte
	// streamed says whether the streaming reader reads it (else it
	// declines and the file is read whole).
	streamed bool
	// streamedIgnoring says it is streamed under --validate=ignore only.
	streamedIgnoring bool
}

// streamCases are Lists as kubectl writes them and the shapes around them
// the streaming reader must read alike or decline: bad items, unknown and
// duplicate fields, typed lists, several documents, truncated files.
func streamCases(t *testing.T) map[string]streamCase {
	objs := manyObjects(20)
	asList := func(items []map[string]any, kind string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": kind, "metadata": map[string]any{"resourceVersion": ""}, "items": items}
	}
	mutated := func(i int, mutate func(map[string]any)) []map[string]any {
		c := make([]map[string]any, len(objs))
		copy(c, objs)
		o := map[string]any{}
		for k, v := range objs[i] {
			o[k] = v
		}
		mutate(o)
		c[i] = o
		return c
	}
	list := asList(objs, "List")
	jsonList := mustJSON(t, list, true)
	yamlList := mustYAML(t, list)
	cases := map[string]streamCase{
		"JSON List":                             {data: jsonList, streamed: true},
		"compact JSON List":                     {data: mustJSON(t, list, false), streamed: true},
		"YAML List":                             {data: yamlList, streamed: true},
		"JSON List, space around":               {data: append(append([]byte(" \n\t"), jsonList...), " \n\n"...), streamed: true},
		"YAML List without the last line break": {data: bytes.TrimSuffix(yamlList, []byte("\n")), streamed: true},
		"empty JSON List":                       {data: []byte(`{"apiVersion": "v1", "kind": "List", "items": []}`), streamed: true},
		"JSON List, kind first":                 {data: []byte(`{"kind": "List", "apiVersion": "v1", "items": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}]}`), streamed: true},
		"bad apiVersion in an item, JSON":       {data: mustJSON(t, asList(mutated(30, func(o map[string]any) { o["apiVersion"] = "v2" }), "List"), true), streamed: true},
		"bad apiVersion in an item, YAML":       {data: mustYAML(t, asList(mutated(30, func(o map[string]any) { o["apiVersion"] = "v2" }), "List")), streamed: true},
		"wrong kind in a List":                  {data: mustJSON(t, asList(mutated(50, func(o map[string]any) { o["kind"] = "List"; o["items"] = []any{} }), "List"), true), streamed: true},
		"unknown field in an item, JSON":        {data: mustJSON(t, asList(mutated(77, func(o map[string]any) { o["spek"] = map[string]any{} }), "List"), true), streamed: true},
		"unknown field in an item, YAML":        {data: mustYAML(t, asList(mutated(77, func(o map[string]any) { o["spek"] = map[string]any{} }), "List")), streamed: true},
		"bad quantity":                          {data: mustJSON(t, asList(mutated(7, func(o map[string]any) { o["status"] = map[string]any{"allocatable": map[string]any{"cpu": "4x"}} }), "List"), true), streamed: true},
		"an item that is not an object":         {data: bytes.Replace(jsonList, []byte("\"items\": ["), []byte("\"items\": [\n17,"), 1), streamed: true},
		"unknown field in the List":             {data: bytes.Replace(jsonList, []byte("\"kind\": \"List\""), []byte("\"kind\": \"List\", \"extra\": 1"), 1), streamed: true},
		"duplicate item":                        {data: mustJSON(t, asList(append(objs[:len(objs):len(objs)], objs[5]), "List"), true), streamed: true},

		"PodList, items without kind":  {data: []byte(`{"apiVersion": "v1", "kind": "PodList", "items": [{"metadata": {"name": "a", "namespace": "n"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}]}`)},
		"not a List":                   {data: []byte(`{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}, "items": []}`)},
		"no items":                     {data: []byte(`{"apiVersion": "v1", "kind": "List"}`)},
		"two JSON documents":           {data: append(append(bytes.Clone(jsonList), '\n'), jsonList...)},
		"truncated JSON":               {data: jsonList[:len(jsonList)/2]},
		"truncated YAML":               {data: yamlList[:len(yamlList)/2]},
		"JSON with garbage after":      {data: append(bytes.Clone(jsonList), "x"...)},
		"items twice":                  {data: bytes.Replace(jsonList, []byte("\"kind\": \"List\""), []byte("\"kind\": \"List\", \"items\": []"), 1)},
		"YAML with a comment":          {data: append([]byte("# kept whole\n"), yamlList...)},
		"YAML, CRLF endings":           {data: bytes.ReplaceAll(yamlList, []byte("\n"), []byte("\r\n"))},
		"YAML, two documents":          {data: append(append(bytes.Clone(yamlList), "---\n"...), yamlList...)},
		"duplicate key in a YAML item": {data: bytes.Replace(yamlList, []byte("\n  kind: Node\n"), []byte("\n  kind: Node\n  kind: Node\n"), 1), streamedIgnoring: true},
		"escaped key":                  {data: bytes.Replace(jsonList, []byte("\"items\""), []byte("\"it\\u0065ms\""), 1)},
		"deep nesting":                 {data: []byte(`{"apiVersion": "v1", "kind": "List", "items": [` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `]}`), streamed: true},
		"deep nesting, unclosed":       {data: []byte(`{"apiVersion": "v1", "kind": "List", "items": [` + strings.Repeat("[", 20000) + `]}`)},
		"a 10 MB line":                 {data: []byte(`{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a", "annotations": {"a": "` + strings.Repeat("x", 10<<20) + `"}}}]}`), streamed: true},
		"a 10 MB YAML line":            {data: []byte("apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: a\n    annotations:\n      a: " + strings.Repeat("x", 10<<20) + "\nkind: List\n"), streamed: true},
	}
	return cases
}

// TestStreamMatchesWhole reads each case as a file both ways — streamed,
// and read whole — under each --validate mode: the objects, warnings,
// skipped lines, origins and errors must be the same, and the files the
// streaming reader is meant for must be streamed.
func TestStreamMatchesWhole(t *testing.T) {
	dir := t.TempDir()
	opts := cmp.Options{cmpopts.EquateEmpty(), cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })}
	for name, tc := range streamCases(t) {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, v := range []FieldValidation{ValidateStrict, ValidateWarn, ValidateIgnore} {
			load := func(streamMin int64) (*Set, string) {
				s := NewSetWith(Options{Validation: v, Parallelism: 3})
				s.streamMin = streamMin
				err := s.AddPath(path)
				if err != nil {
					if strings.Contains(err.Error(), "\n") {
						t.Errorf("%s, %s: the error is not one line: %q", name, v, err)
					}
					return s, err.Error()
				}
				return s, ""
			}
			whole, wholeErr := load(math.MaxInt64)
			streamed, streamedErr := load(1)
			if whole.streamed != 0 {
				t.Fatalf("%s: read whole, yet streamed", name)
			}
			wantStreamed := 0
			if tc.streamed || tc.streamedIgnoring && v == ValidateIgnore {
				wantStreamed = 1
			}
			if streamed.streamed != wantStreamed {
				t.Errorf("%s, %s: streamed %d files, want %d", name, v, streamed.streamed, wantStreamed)
			}
			if wholeErr != streamedErr {
				t.Errorf("%s, %s: errors differ:\nwhole:    %s\nstreamed: %s", name, v, wholeErr, streamedErr)
			}
			if wholeErr != "" {
				continue
			}
			if diff := cmp.Diff(whole.Objects, streamed.Objects, opts); diff != "" {
				t.Errorf("%s, %s: objects differ (-whole +streamed):\n%s", name, v, diff)
			}
			if diff := cmp.Diff(whole.Warnings, streamed.Warnings); diff != "" {
				t.Errorf("%s, %s: warnings differ (-whole +streamed):\n%s", name, v, diff)
			}
			if diff := cmp.Diff(whole.Skipped, streamed.Skipped); diff != "" {
				t.Errorf("%s, %s: skipped differ (-whole +streamed):\n%s", name, v, diff)
			}
			for i, p := range whole.Objects.Pods {
				q := streamed.Objects.Pods[i]
				if whole.Origin(p) != streamed.Origin(q) || whole.NamespaceGiven(p) != streamed.NamespaceGiven(q) {
					t.Errorf("%s, %s: pod %s: origin %q, namespace given %v; streamed %q, %v", name, v, p.Name, whole.Origin(p), whole.NamespaceGiven(p), streamed.Origin(q), streamed.NamespaceGiven(q))
				}
			}
		}
	}
}
