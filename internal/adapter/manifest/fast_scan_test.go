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
	sjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

func TestSkipValue(t *testing.T) {
	tests := map[string]struct {
		data string
		want int // index past the value, -1 for none
	}{
		"string":                 {data: `"abc" x`, want: 5},
		"escaped quote":          {data: `"a\"b" x`, want: 6},
		"escaped backslash":      {data: `"a\\" x`, want: 5},
		"backslash then quote":   {data: `"a\\\"" x`, want: 7},
		"object with brackets":   {data: `{"a": "}]", "b": [1, {"c": "{"}]} tail`, want: 33},
		"nested":                 {data: ` [[[]], {}]`, want: 11},
		"number":                 {data: `-1.5e3,`, want: 6},
		"literal at end":         {data: `true`, want: 4},
		"unclosed object":        {data: `{"a": 1`, want: -1},
		"unclosed string":        {data: `"abc`, want: -1},
		"unclosed string inside": {data: `{"a": "b}`, want: -1},
		"delimiter":              {data: `, 1`, want: -1},
		"empty":                  {data: `  `, want: -1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := skipValue([]byte(tc.data), 0); got != tc.want {
				t.Errorf("skipValue(%q) = %d, want %d", tc.data, got, tc.want)
			}
		})
	}
}

// TestScanHeader holds the scanner to the decoder it stands in for: where
// it answers, it answers as sigs.k8s.io/json does (case-sensitive keys, the
// last of duplicates); where it cannot, it says so.
func TestScanHeader(t *testing.T) {
	tests := map[string]struct {
		data string
		ok   bool
	}{
		"plain":               {data: `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "n", "labels": {"kind": "x"}}, "spec": {"kind": "y"}}`, ok: true},
		"duplicate kind":      {data: `{"kind": "Pod", "apiVersion": "v1", "kind": "Node", "metadata": {"name": "a", "name": "b"}}`, ok: true},
		"mis-cased key":       {data: `{"Kind": "Pod", "apiVersion": "v1", "metadata": {"Name": "a"}}`, ok: true},
		"no metadata":         {data: `{"kind": "Pod", "apiVersion": "v1"}`, ok: true},
		"empty object":        {data: `{}`, ok: true},
		"escaped kind":        {data: `{"kind": "P\u006fd", "apiVersion": "v1"}`},
		"escaped key":         {data: `{"k\u0069nd": "Pod"}`},
		"number name":         {data: `{"kind": "Node", "metadata": {"name": 12}}`},
		"null metadata":       {data: `{"kind": "Node", "metadata": null}`},
		"trailing garbage":    {data: `{"kind": "Node"} x`},
		"missing colon":       {data: `{"kind" "Node"}`},
		"not an object":       {data: `["kind"]`},
		"truncated":           {data: `{"kind": "Node", "metadata": {"name": "a"`},
		"trailing comma":      {data: `{"kind": "Node",}`},
		"unicode in a string": {data: `{"kind": "Node", "metadata": {"name": "nœud"}}`, ok: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, ok := scanHeader([]byte(tc.data))
			if ok != tc.ok {
				t.Fatalf("scanHeader ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			var want header
			if err := sjson.UnmarshalCaseSensitivePreserveInts([]byte(tc.data), &want); err != nil {
				t.Fatalf("the decoder refuses what the scanner read: %v", err)
			}
			if got.Kind != want.Kind || got.APIVersion != want.APIVersion || got.Name != want.Name || got.Namespace != want.Namespace {
				t.Errorf("scanHeader = %+v, decoder %+v", got.TypeMeta, want.TypeMeta)
			}
		})
	}
}

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
	if len(yamlList) < splitListSize {
		t.Fatalf("the YAML List is %d bytes, too small to be cut into items", len(yamlList))
	}
	if _, ok := splitYAMLList(yamlList); !ok {
		t.Fatal("the YAML List is not cut into items")
	}
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
// duplicate key in a YAML List cut into items is named as in a List
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
	t.Run("duplicate key in a YAML List cut into items", func(t *testing.T) {
		data := mustYAML(t, asList(objs))
		i := bytes.Index(data, []byte("  kind: Node\n"))
		dup := slicesConcat(data[:i], []byte("  kind: Node\n"), data[i:])
		d, cerr := convertYAMLWith(dup, true, nil)
		if cerr != nil {
			t.Fatal(cerr)
		}
		err := NewSet().AddBytes("f", dup)
		if err == nil || d.duplicate == "" || !strings.Contains(err.Error(), d.duplicate) {
			t.Errorf("error %v, want it to name %q", err, d.duplicate)
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

// FuzzScanHeader: wherever the scanner reads a header, the decoder reads
// the same one.
func FuzzScanHeader(f *testing.F) {
	f.Add([]byte(`{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "n"}}`))
	f.Add([]byte(`{"kind": "Pod", "kind": "Node", "metadata": {"name": "a\\"}, "x": [{"}": "]"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := scanHeader(data)
		if !ok {
			return
		}
		var want header
		if err := sjson.UnmarshalCaseSensitivePreserveInts(data, &want); err != nil {
			// The scanner does not validate values it skips; the
			// decoder of the whole object refuses them later.
			return
		}
		if got.Kind != want.Kind || got.APIVersion != want.APIVersion || got.Name != want.Name || got.Namespace != want.Namespace {
			t.Fatalf("scanHeader = %+v %q/%q, decoder %+v %q/%q", got.TypeMeta, got.Namespace, got.Name, want.TypeMeta, want.Namespace, want.Name)
		}
	})
}

// FuzzYAMLListSplit: a YAML List cut into items converts to the items the
// whole document converts to.
func FuzzYAMLListSplit(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- kind: Node\n  metadata:\n    name: a\n- kind: Pod\n  spec: |\n    text\n     more\nmetadata: {}\n"))
	f.Add([]byte("kind: List\nitems:\n- &a {x: 1}\n- *a\n"))
	f.Add([]byte("kind: List\nitems:\n- a: \"multi\n  line\"\n-\n  b: 2\n"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		l, ok := splitYAMLList(doc)
		if !ok {
			return
		}
		c, ok := NewSet().convertYAMLList(l, true)
		if !ok {
			return
		}
		whole, err := yaml.YAMLToJSONStrict(doc)
		if err != nil {
			t.Fatalf("the parts convert, the whole does not: %v", err)
		}
		var w struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(whole, &w); err != nil {
			// Not a mapping as a whole: the parts must not pass for a
			// List either (addConvertedList then converts it whole).
			if h, ok := scanHeader(c.rest); ok && isListKind(h.Kind) && h.APIVersion != "" {
				t.Fatalf("whole is no List (%v), the parts are: %s", err, c.rest)
			}
			return
		}
		if len(w.Items) != len(c.items) {
			t.Fatalf("%d items whole, %d cut", len(w.Items), len(c.items))
		}
		for i := range w.Items {
			var a, b any
			_ = json.Unmarshal(w.Items[i], &a)
			_ = json.Unmarshal(c.items[i], &b)
			if !cmp.Equal(a, b) {
				t.Fatalf("item %d: whole %s, cut %s", i, w.Items[i], c.items[i])
			}
		}
	})
}

// FuzzFastYAML: wherever the fast converter answers, it answers what
// sigs.k8s.io/yaml does, and the strict conversion accepts the document.
func FuzzFastYAML(f *testing.F) {
	seeds := []string{
		"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels:\n    app: web\nspec:\n  containers:\n  - name: c\n    image: img:1\n    ports:\n    - containerPort: 8080\n    args: ['a''b', \"c\"]\n",
		"a: |\n  line one\n   indented\n\n  last\nb: |-\n  x\nc: ~\nd: 10.0.0.1\ne: 100m\nf: 0755\ng: yes\nh: 1e3\ni: 2026-01-01\nj: -5\nk: {}\nl: []\n",
		"- a\n- - b\n- c: d\n  e: f\n-\n  g: h\n",
		"key: value # comment\nother: \"q\\\"uote\"\n",
		"a: &x 1\nb: *x\n",
		"a:\n- 1\n- 2\nb: c:d\n",
		// Cases the fuzzer found: a key with trailing space, a literal
		// block without a final line break.
		"A :", "A :\n", "A: |\n 0", "A: |\n 0\n",
		"b1: 0b1c2d3e\nb2: 0b+1\nb3: 0b\nb4: 0b_1\nb5: 0b-0\nb6: 0b2\nb7: 0b11111111111111111111111111111111111111111111111111111111111111111\nb8: 0B1\n",
		// Flow collections on one line.
		"r: {cpu: 100m, memory: 1Gi}\nl: {app: a1}\ns: [a, 'b''c', \"d\", 10, -3, true, ~, null, {}, [x, [z]]]\nm: {\"k\": {'q': v}}\n",
		"- {a: 1, b: [2, 3]}\n- [ a ,b ]\n- {a: 1, a: 2}\n- {a: 1,}\n- [a: b]\n- {a: b c}\n- {a: yes}\n- {a: 1.5}\n- {a: x:y}\n- {a: }\n- {a:b}\n",
		"a: {b: c}  # comment\nb: {c: d,\n  e: f}\nc: [a #b]\nd: [\"a\"b]\ne: {0x1: a}\nf: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[x]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
		"uid: 6f1e0c2a-0000-4000-8000-000000000001\nboot: 0b1c2d3e\nhex: 0x1F\nbin: 0b101\nu: 1_000\nf: 1.5e3\nd: 2026-01-01T00:00:00Z\nbig: 99999999999999999999\noct: 0755\ne: 6e2\nx: 6e\nv: 1.2.3\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	items := kubectlSnapshot(1, 1)["items"].([]any)
	f.Add(mustYAML(f, items[0]))
	f.Add(mustYAML(f, items[1]))
	f.Fuzz(func(t *testing.T, doc []byte) {
		fast, ok := fastYAMLToJSON(doc)
		if !ok {
			return
		}
		generic, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatalf("fast converter accepts what the generic one refuses (%v): %s", err, fast)
		}
		if _, err := yaml.YAMLToJSONStrict(doc); err != nil {
			t.Fatalf("fast converter accepts what the strict one refuses (%v)", err)
		}
		var a, b any
		if err := json.Unmarshal(fast, &a); err != nil {
			t.Fatalf("fast converter wrote invalid JSON %s: %v", fast, err)
		}
		if err := json.Unmarshal(generic, &b); err != nil {
			t.Fatal(err)
		}
		if !cmp.Equal(a, b) {
			t.Fatalf("fast %s\ngeneric %s", fast, generic)
		}
	})
}

func TestSkippedLines(t *testing.T) {
	var b strings.Builder
	b.WriteString(nodeDoc)
	for i := range 5 {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Service\nmetadata: {name: s%d, namespace: web}\n", i)
	}
	b.WriteString("---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent, namespace: kube-system}\n")
	s := NewSet()
	if err := s.AddBytes("f.yaml", []byte(b.String())); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"skipping 5 v1 Service objects: kind not used by reprieve (the first: f.yaml#2)",
		"f.yaml#7: skipping apps/v1 DaemonSet kube-system/agent: kind not used by reprieve",
	}
	if diff := cmp.Diff(want, s.SkippedLines()); diff != "" {
		t.Errorf("SkippedLines (-want +got):\n%s", diff)
	}
	if len(s.Skipped) != 6 {
		t.Errorf("Skipped has %d lines, want one per object", len(s.Skipped))
	}
}

// TestFastYAMLFlow: the flow collections the fast converter reads give
// the generic converter's JSON, and those it does not read decline.
func TestFastYAMLFlow(t *testing.T) {
	tests := []struct {
		doc  string
		read bool
	}{
		{"r: {cpu: 100m, memory: 1Gi}\n", true},
		{"s: [a, 'b''c', \"d\", 10, -3, true, ~, null, {}, [x, [z]]]\n", true},
		{"m: {\"k\": {'q': v}, l: []}\n", true},
		{"- {a: 1, b: [2, 3]}\n- [ a ,b ]\n", true},
		{"a: {a: 1, a: 2}\n", false}, // a duplicate key: the generic path names it
		{"a: {a: 1,}\n", false},
		{"a: [a: b]\n", false},
		{"a: {a: b c}\n", false},
		{"a: {a: yes}\n", false},
		{"a: {a: 1.5}\n", false},
		{"a: {a: x:y}\n", false},
		{"a: {a: }\n", false},
		{"a: {a:b}\n", false},
		{"a: {b: c}  # comment\n", false},
		{"a: {b: c,\n  d: e}\n", false},
		{"a: [\"a\"b]\n", false},
		{"a: " + strings.Repeat("[", maxFlowDepth+1) + "x" + strings.Repeat("]", maxFlowDepth+1) + "\n", false},
	}
	for _, tt := range tests {
		fast, ok := fastYAMLToJSON([]byte(tt.doc))
		if ok != tt.read {
			t.Errorf("%q: read %v, want %v", tt.doc, ok, tt.read)
			continue
		}
		if !ok {
			continue
		}
		generic, err := yaml.YAMLToJSON([]byte(tt.doc))
		if err != nil {
			t.Fatalf("%q: %v", tt.doc, err)
		}
		var a, b any
		if err := json.Unmarshal(fast, &a); err != nil {
			t.Fatalf("%q: fast wrote %s: %v", tt.doc, fast, err)
		}
		if err := json.Unmarshal(generic, &b); err != nil {
			t.Fatal(err)
		}
		if !cmp.Equal(a, b) {
			t.Errorf("%q: fast %s, generic %s", tt.doc, fast, generic)
		}
	}
}

// skipValueByByte is skipValue as it was written first, a byte at a
// time: FuzzSkipValue holds the faster one to it.
func skipValueByByte(data []byte, i int) int {
	i = skipSpace(data, i)
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		for i++; i < len(data); i++ {
			switch data[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return -1
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				for i++; i < len(data) && data[i] != '"'; i++ {
					if data[i] == '\\' {
						i++
					}
				}
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	case '}', ']', ',', ':':
		return -1
	}
	if !literalByte[data[i]] {
		return -1
	}
	for ; i < len(data); i++ {
		if !literalByte[data[i]] {
			return i
		}
	}
	return i
}

func FuzzSkipValue(f *testing.F) {
	for _, s := range []string{`"a"`, `"a\"b"`, `"a\\"`, `"a\\\"b" x`, `{"a": [1, {"b": "}"}]}`, `[1, 2`, "{\n        \"a\": [\n                1,  \"x\"\n        ]\n}", `{"a\\": "\\\\"}`, `"\`, `["\\\\\"]"]`, ` 12, 3`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := skipValue(data, 0), skipValueByByte(data, 0); got != want {
			t.Fatalf("skipValue(%q) = %d, byte by byte %d", data, got, want)
		}
	})
}

// BenchmarkSkipValue skips a List of pods and nodes as kubectl writes
// them, indented: skipValue, and the byte-by-byte walk it replaced.
func BenchmarkSkipValue(b *testing.B) {
	data, err := json.MarshalIndent(kubectlSnapshot(20, 10), "", "    ")
	if err != nil {
		b.Fatal(err)
	}
	for _, skip := range []struct {
		name string
		f    func([]byte, int) int
	}{{"skipValue", skipValue}, {"byte-by-byte", skipValueByByte}} {
		b.Run(skip.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if skip.f(data, 0) != len(data) {
					b.Fatal("not skipped whole")
				}
			}
		})
	}
}

// BenchmarkFastYAML converts the pods of a kubectl List, one by one, as a
// streaming worker does (its scratch and block memo).
func BenchmarkFastYAML(b *testing.B) {
	items := kubectlSnapshot(10, 10)["items"].([]any)
	var docs [][]byte
	for _, item := range items {
		docs = append(docs, mustYAML(b, item))
	}
	scratch := yamlScratch{blocks: newYAMLBlocks()}
	var size int64
	for _, d := range docs {
		size += int64(len(d))
	}
	b.SetBytes(size)
	for b.Loop() {
		for _, d := range docs {
			out, ok := fastYAMLToJSONWith(d, &scratch)
			if !ok {
				b.Fatalf("declined:\n%s", d)
			}
			scratch.recycle(out)
		}
	}
}

// printableByByte is printable a byte at a time: FuzzPrintable holds the
// word-at-a-time one to it.
func printableByByte(doc []byte) bool {
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		switch {
		case c >= 0x20 && c < 0x7f:
		case c == '\t' || c == '\n' || c == '\r':
		case c < 0x20 || c == 0x7f:
			return false
		case c == 0xc2 && i+1 < len(doc) && doc[i+1] >= 0x80 && doc[i+1] <= 0xa0:
			return false
		case c == 0xe2 && i+2 < len(doc) && doc[i+1] == 0x80 && (doc[i+2] == 0xa8 || doc[i+2] == 0xa9):
			return false
		case c == 0xef && i+2 < len(doc) && doc[i+1] == 0xbb && doc[i+2] == 0xbf:
			return false
		case c == 0xef && i+2 < len(doc) && doc[i+1] == 0xbf && (doc[i+2] == 0xbe || doc[i+2] == 0xbf):
			return false
		}
	}
	return true
}

func FuzzPrintable(f *testing.F) {
	for _, s := range []string{"", "abcdefgh", "abcdefghi\x7f", "abcdefg\x1f", "12345678\u0085", "aaaaaaaa\u2028bbbbbbbb", "\ufeffaaaaaaaaaa", "aaaaaaa\u00e9aaaaaaaa", "aaaaaaaa\x00", "~~~~~~~~ \t\n\r", "\xff\xff\xff\xff\xff\xff\xff\xff",
		"abc\ndefg\nhijklmno", "\n\n\n\n\n\n\n\n", "aaa\n\x0baaaa", "aaaaaaa\n\x0b", "\x0a\x0b\x0c\x0d\x0e\x09\x0a\x0a", "a\n\x7fa\naaaa", "\x0a\x8a\x0a\x0a\x0a\x0a\x0a\x0a"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if got, want := printable(doc), printableByByte(doc); got != want {
			t.Fatalf("printable(%q) = %v, byte by byte %v", doc, got, want)
		}
	})
}
