package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// mutatedItem returns a copy of items whose item i is a copy of items[i]
// changed by mutate (items itself is unchanged).
func mutatedItem(items []map[string]any, i int, mutate func(map[string]any)) []map[string]any {
	c := slices.Clone(items)
	o := maps.Clone(items[i])
	mutate(o)
	c[i] = o
	return c
}

// manyObjects returns n nodes with pods, a PDB and priority classes, with
// the kinds of values a scanner can trip on: escapes, unicode, block
// scalars, brackets inside strings, long labels.
func manyObjects(n int) []map[string]any {
	objs := []map[string]any{
		{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": map[string]any{"name": "high"}, "value": 1000},
		{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": map[string]any{"name": "web", "namespace": "shop"},
			"spec": map[string]any{"minAvailable": 1, "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}}}},
		{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "shop"}},
		{"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": map[string]any{"name": "agent", "namespace": "shop"}},
	}
	for i := range n {
		node := fmt.Sprintf("node-%03d", i)
		objs = append(objs, map[string]any{
			"apiVersion": "v1", "kind": "Node",
			"metadata": map[string]any{"name": node, "labels": map[string]any{"topology.kubernetes.io/zone": fmt.Sprintf("z%d", i%3)},
				"annotations": map[string]any{"note": "line one\nline \"two\" }]{[\\ end", "example.com/unicode": "ünïcode ✓"}},
			"status": map[string]any{"allocatable": map[string]any{"cpu": "4", "memory": "32Gi", "pods": "110"}},
		})
		for j := range 5 {
			objs = append(objs, map[string]any{
				"apiVersion": "v1", "kind": "Pod",
				"metadata": map[string]any{"name": fmt.Sprintf("web-%03d-%d", i, j), "namespace": "shop",
					"labels":          map[string]any{"app": "web", "tier": strings.Repeat("x", 40)},
					"ownerReferences": []any{map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "uid": "u1", "controller": true}}},
				"spec": map[string]any{"nodeName": node, "priorityClassName": "high", "priority": 1000,
					"containers": []any{map[string]any{"name": "c", "image": "img:1", "args": []any{"--flag={\"a\": [1]}", "#not-a-comment"},
						"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "256Mi"}}}}},
				"status": map[string]any{"phase": "Running"},
			})
		}
		// A pod without a namespace: defaulted, and remembered as such.
		objs = append(objs, map[string]any{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": fmt.Sprintf("solo-%03d", i)},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "c"}}}})
	}
	return objs
}

func mustJSON(t testing.TB, v any, indent bool) []byte {
	t.Helper()
	var b []byte
	var err error
	if indent {
		b, err = json.MarshalIndent(v, "", "    ")
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustYAML(t testing.TB, v any) []byte {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFormsAgree loads the same objects as a JSON List (compact and
// indented), a YAML List large enough to be cut into items, the same YAML
// with a comment that keeps it whole, one YAML document per object, and
// concatenated JSON objects, on one goroutine and on several: every form
// must give the same objects, origins aside.
func TestFormsAgree(t *testing.T) {
	objs := manyObjects(60)
	list := map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}, "items": objs}
	yamlList := mustYAML(t, list)
	var perObject, concatenated bytes.Buffer
	for _, o := range objs {
		perObject.WriteString("---\n")
		perObject.Write(mustYAML(t, o))
		concatenated.Write(mustJSON(t, o, true))
		concatenated.WriteString("\n")
	}
	forms := map[string][]byte{
		"JSON List":               mustJSON(t, list, false),
		"indented JSON List":      mustJSON(t, list, true),
		"YAML List":               yamlList,
		"YAML List with comment":  append([]byte("# kept whole\n"), yamlList...),
		"YAML document per item":  perObject.Bytes(),
		"concatenated JSON":       concatenated.Bytes(),
		"YAML List, CRLF endings": bytes.ReplaceAll(yamlList, []byte("\n"), []byte("\r\n")),
	}
	load := func(name string, data []byte, parallelism int) *Set {
		t.Helper()
		s := NewSetWith(Options{Parallelism: parallelism})
		if err := s.AddBytes("f", data); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return s
	}
	want := load("YAML document per item", perObject.Bytes(), 1)
	if len(want.Objects.Pods) != 360 || len(want.Objects.Nodes) != 60 || len(want.Skipped) != 1 {
		t.Fatalf("reference load: %d pods, %d nodes, %d skipped", len(want.Objects.Pods), len(want.Objects.Nodes), len(want.Skipped))
	}
	opts := cmp.Options{cmpopts.EquateEmpty(), cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })}
	for name, data := range forms {
		for _, parallelism := range []int{1, 2, 8} {
			got := load(name, data, parallelism)
			if diff := cmp.Diff(want.Objects, got.Objects, opts); diff != "" {
				t.Errorf("%s, parallelism %d: objects differ (-per document +this form):\n%s", name, parallelism, diff)
			}
			if len(got.Skipped) != 1 || len(got.Warnings) != 0 {
				t.Errorf("%s: skipped %q, warnings %q", name, got.Skipped, got.Warnings)
			}
			for _, p := range got.Objects.Pods {
				if got.NamespaceGiven(p) != strings.HasPrefix(p.Name, "web-") {
					t.Errorf("%s: pod %s: namespace given = %v", name, p.Name, got.NamespaceGiven(p))
				}
			}
		}
	}
}

// TestLargeListErrors: the first bad item of a large List is the one
// named, whichever goroutine decoded it, with its place in the List; a
// duplicate key in a YAML List is named as in a List
// converted whole.
func TestLargeListErrors(t *testing.T) {
	objs := manyObjects(40)
	bad := func(i int, mutate func(map[string]any)) []map[string]any { return mutatedItem(objs, i, mutate) }
	asList := func(items []map[string]any) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "List", "items": items}
	}
	tests := map[string]struct {
		items []map[string]any
		want  string
	}{
		"two bad items, the first named": {
			items: mutatedItem(bad(30, func(o map[string]any) { o["apiVersion"] = "v2" }), 200, func(o map[string]any) { o["kind"] = "" }),
			want:  `f items[30]: Pod shop/web-003-4: apiVersion: unsupported "v2" (want "v1")`,
		},
		"wrong kind in a List": {
			items: bad(100, func(o map[string]any) { o["kind"] = "List"; o["items"] = []any{} }),
			want:  "f items[100]: kind: nested List",
		},
		"unknown field": {
			items: bad(77, func(o map[string]any) { o["spek"] = map[string]any{} }),
			want:  `unknown field "spek"`,
		},
	}
	for name, tc := range tests {
		for _, form := range []string{"json", "yaml"} {
			t.Run(name+"/"+form, func(t *testing.T) {
				data := mustJSON(t, asList(tc.items), true)
				if form == "yaml" {
					data = mustYAML(t, asList(tc.items))
				}
				err := NewSetWith(Options{Parallelism: 4}).AddBytes("f", data)
				if err == nil || !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
					t.Errorf("error %v, want one line containing %q", err, tc.want)
				}
			})
		}
	}
	t.Run("duplicate key in a YAML List", func(t *testing.T) {
		data := mustYAML(t, asList(objs))
		i := bytes.Index(data, []byte("  kind: Node\n"))
		dup := slicesConcat(data[:i], []byte("  kind: Node\n"), data[i:])
		_, duplicate, cerr := convertYAML(dup, true)
		if cerr != nil {
			t.Fatal(cerr)
		}
		err := NewSet().AddBytes("f", dup)
		if err == nil || duplicate == "" || !strings.Contains(err.Error(), duplicate) {
			t.Errorf("error %v, want it to name %q", err, duplicate)
		}
	})
}

func slicesConcat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// TestHostileInput: truncated files, a 10 MB line, deep nesting and
// binary noise get one-line errors, not panics or hangs.
func TestHostileInput(t *testing.T) {
	list := mustJSON(t, map[string]any{"apiVersion": "v1", "kind": "List", "items": manyObjects(20)}, false)
	yamlList := mustYAML(t, map[string]any{"apiVersion": "v1", "kind": "List", "items": manyObjects(20)})
	tests := map[string][]byte{
		"truncated JSON List":       list[:len(list)/2],
		"truncated YAML List":       yamlList[:len(yamlList)/2+7],
		"10 MB line":                slicesConcat([]byte(`{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "`), bytes.Repeat([]byte("a"), 10<<20), []byte(`"}}`)),
		"10 MB unclosed string":     slicesConcat([]byte(`{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "`), bytes.Repeat([]byte("a"), 10<<20)),
		"deep JSON nesting":         slicesConcat([]byte(`{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": `), bytes.Repeat([]byte(`{"a": `), 100000), bytes.Repeat([]byte("}"), 100000), []byte("}")),
		"deep JSON arrays in items": slicesConcat([]byte(`{"apiVersion": "v1", "kind": "List", "items": `), bytes.Repeat([]byte("["), 100000), bytes.Repeat([]byte("]"), 100000), []byte("}")),
		"unbalanced brackets":       []byte(`{"apiVersion": "v1", "kind": "List", "items": [{"kind": "Node"]]}`),
		"binary noise":              bytes.Repeat([]byte{0xff, '{', '"', 0x00, '\\'}, 1000),
	}
	for name, data := range tests {
		t.Run(name, func(t *testing.T) {
			err := NewSetWith(Options{Parallelism: 2}).AddBytes("f", data)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrInput) || strings.Contains(err.Error(), "\n") || len(err.Error()) > 2000 {
				t.Errorf("want a one-line input error, got %.300q", err)
			}
		})
	}
}

// TestSelectorKinds: Services and ReplicationControllers are read, and
// ReplicaSets and StatefulSets kept for PodTopologySpread's default
// constraints too (whatif uses them: no line says they are skipped); a
// ReplicationController without a selector gets its template's labels, as
// the API server defaults it.
func TestSelectorKinds(t *testing.T) {
	doc := nodeDoc + `---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: v1
kind: ReplicationController
metadata: {name: legacy, namespace: shop}
spec:
  template:
    metadata: {labels: {app: legacy}}
    spec: {containers: [{name: c, image: i}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web-1, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: i}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: shop}
spec:
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: i}]}
`
	s := NewSet()
	if err := s.AddBytes("f.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	sel := s.Objects.Selectors
	if len(sel.Services) != 1 || len(sel.ReplicationControllers) != 1 || len(sel.ReplicaSets) != 1 || len(sel.StatefulSets) != 1 {
		t.Fatalf("selectors: %d Services, %d ReplicationControllers, %d ReplicaSets, %d StatefulSets; want one each",
			len(sel.Services), len(sel.ReplicationControllers), len(sel.ReplicaSets), len(sel.StatefulSets))
	}
	if len(s.ReplicaSets) != 1 || len(s.StatefulSets) != 1 {
		t.Errorf("the simulator's workloads: %d ReplicaSets, %d StatefulSets; want one each", len(s.ReplicaSets), len(s.StatefulSets))
	}
	if diff := cmp.Diff(map[string]string{"app": "legacy"}, sel.ReplicationControllers[0].Spec.Selector); diff != "" {
		t.Errorf("ReplicationController's defaulted selector (-want +got):\n%s", diff)
	}
	if lines := append(s.SkippedLines(), s.WorkloadLines()...); len(lines) > 0 {
		t.Errorf("kinds in use reported as skipped: %q", lines)
	}
}

func TestSkippedLines(t *testing.T) {
	var b strings.Builder
	b.WriteString(nodeDoc)
	for i := range 5 {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: s%d, namespace: web}\n", i)
	}
	b.WriteString("---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent, namespace: kube-system}\n")
	s := NewSet()
	if err := s.AddBytes("f.yaml", []byte(b.String())); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"skipping 5 v1 ConfigMap objects: kind not used by reprieve (the first: f.yaml#2)",
		"f.yaml#7: skipping apps/v1 DaemonSet kube-system/agent: kind not used by reprieve",
	}
	if diff := cmp.Diff(want, s.SkippedLines()); diff != "" {
		t.Errorf("SkippedLines (-want +got):\n%s", diff)
	}
	if len(s.Skipped) != 6 {
		t.Errorf("Skipped has %d lines, want one per object", len(s.Skipped))
	}
}
