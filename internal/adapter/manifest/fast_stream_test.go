package manifest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	v1 "k8s.io/api/core/v1"
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
	mutated := func(i int, mutate func(map[string]any)) []map[string]any { return mutatedItem(objs, i, mutate) }
	list := asList(objs, "List")
	jsonList := mustJSON(t, list, true)
	yamlList := mustYAML(t, list)
	// An item per line, as a script writes a List.
	var perLine []string
	for _, o := range objs {
		perLine = append(perLine, string(mustJSON(t, o, false)))
	}
	lineList := []byte(`{"apiVersion": "v1", "kind": "List", "items": [` + "\n" + strings.Join(perLine, ",\n") + "\n]}\n")
	// at40 and yamlAt40 edit the text of the 40th item of the indented
	// JSON List and of the YAML List.
	at40 := func(old, repl string) []byte { return editItem(t, jsonList, "\n        {", 40, old, repl) }
	yamlAt40 := func(old, repl string) []byte { return editItem(t, yamlList, "\n- ", 40, old, repl) }
	cases := map[string]streamCase{
		"YAML List, blank lines in and between items":               {data: bytes.ReplaceAll(bytes.ReplaceAll(yamlList, []byte("\n- "), []byte("\n\n- ")), []byte("\n  metadata:"), []byte("\n\n  metadata:")), streamed: true},
		"YAML List, a block scalar in an item":                      {data: yamlAt40("\n  metadata:\n", "\n  metadata:\n    annotations:\n      a: |\n        - x\n        # y\n\n        z\n"), streamed: true},
		"YAML List, a comment in an item":                           {data: yamlAt40("\n  metadata:\n", "\n# c\n  metadata:\n")},
		"YAML List, an indented comment in an item":                 {data: yamlAt40("\n  metadata:\n", "\n  # c\n  metadata:\n"), streamed: true},
		"YAML List, a key in the first column":                      {data: yamlAt40("\n  metadata:\n", "\nextra: 1\n  metadata:\n")},
		"YAML List, one space of indentation":                       {data: yamlAt40("\n  metadata:\n", "\n metadata:\n")},
		"YAML List, a document end":                                 {data: yamlAt40("\n  metadata:\n", "\n...\n  metadata:\n")},
		"YAML List, a dash line":                                    {data: yamlAt40("\n  metadata:\n", "\n-\n  metadata:\n")},
		"YAML List, a separator in an item":                         {data: yamlAt40("\n  metadata:\n", "\n---\n  metadata:\n")},
		"JSON List":                                                 {data: jsonList, streamed: true},
		"JSON List, an item per line":                               {data: lineList, streamed: true},
		"JSON List, an item per line, CRLF":                         {data: bytes.ReplaceAll(lineList, []byte("\n"), []byte("\r\n")), streamed: true},
		"JSON List, tabs":                                           {data: bytes.ReplaceAll(jsonList, []byte("    "), []byte("\t")), streamed: true},
		"JSON List, an object at the items' indentation in an item": {data: at40(`"metadata": {`, "\"metadata\":\n        {"), streamed: true},
		"JSON List, an array element at the items' indentation":     {data: at40(`"metadata": {`, "\"x\": [{},\n        {}], \"metadata\": {"), streamed: true},
		// Cut where the object starts as the items do, and declined.
		"JSON List, an object at the items' indentation in an item, as an item starts": {data: at40(`"metadata": {`, "\"metadata\":\n        {\n            \"apiVersion\": \"x\",")},
		"JSON List, an array element as an item starts":                                {data: at40(`"metadata": {`, "\"x\": [{},\n        {\n            \"apiVersion\": 1}], \"metadata\": {")},
		// Items that start otherwise than the first: cut together with
		// the one before, then apart by the worker.
		"JSON List, pods written kind first": {data: bytes.ReplaceAll(jsonList, []byte("{\n            \"apiVersion\": \"v1\",\n            \"kind\": \"Pod\","),
			[]byte("{\n            \"kind\": \"Pod\",\n            \"apiVersion\": \"v1\",")), streamed: true},
		"JSON List, one pod written kind first, no comma after it": {data: editItem(t, editItem(t, jsonList, "\n        {", 40, "\"apiVersion\": \"v1\",\n            \"kind\": \"Pod\",",
			"\"kind\": \"Pod\",\n            \"apiVersion\": \"v1\","), "\n        {", 40, "\n        },", "\n        }")},
		// The first item starts otherwise than all others, which are
		// more than firstReach bytes: they are cut by each line.
		"JSON List, only the first item kind first":          {data: firstKindFirst(firstReach + 1<<20), streamed: true},
		"JSON List, no comma between items":                  {data: bytes.Replace(jsonList, []byte("},\n        {"), []byte("}\n        {"), 1)},
		"JSON List, a line like an item's after the items":   {data: bytes.Replace(jsonList, []byte("\"kind\": \"List\""), []byte("\"kind\": \"List\", \"x\": [1,\n        {}]"), 1)},
		"compact JSON List":                                  {data: mustJSON(t, list, false), streamed: true},
		"YAML List":                                          {data: yamlList, streamed: true},
		"JSON List, space around":                            {data: append(append([]byte(" \n\t"), jsonList...), " \n\n"...), streamed: true},
		"YAML List without the last line break":              {data: bytes.TrimSuffix(yamlList, []byte("\n")), streamed: true},
		"YAML List, a long last line without its line break": {data: append(bytes.Clone(yamlList), "x: "+strings.Repeat("y", yamlReaderBuffer)...)}, // YAMLReader drops some such lines: read as it reads them
		"empty JSON List":                                    {data: []byte(`{"apiVersion": "v1", "kind": "List", "items": []}`), streamed: true},
		"JSON List, kind first":                              {data: []byte(`{"kind": "List", "apiVersion": "v1", "items": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}]}`), streamed: true},
		"bad apiVersion in an item, JSON":                    {data: mustJSON(t, asList(mutated(30, func(o map[string]any) { o["apiVersion"] = "v2" }), "List"), true), streamed: true},
		"bad apiVersion in an item, YAML":                    {data: mustYAML(t, asList(mutated(30, func(o map[string]any) { o["apiVersion"] = "v2" }), "List")), streamed: true},
		"wrong kind in a List":                               {data: mustJSON(t, asList(mutated(50, func(o map[string]any) { o["kind"] = "List"; o["items"] = []any{} }), "List"), true), streamed: true},
		"unknown field in an item, JSON":                     {data: mustJSON(t, asList(mutated(77, func(o map[string]any) { o["spek"] = map[string]any{} }), "List"), true), streamed: true},
		"unknown field in an item, YAML":                     {data: mustYAML(t, asList(mutated(77, func(o map[string]any) { o["spek"] = map[string]any{} }), "List")), streamed: true},
		"bad quantity":                                       {data: mustJSON(t, asList(mutated(7, func(o map[string]any) { o["status"] = map[string]any{"allocatable": map[string]any{"cpu": "4x"}} }), "List"), true), streamed: true},
		"an item that is not an object":                      {data: bytes.Replace(jsonList, []byte("\"items\": ["), []byte("\"items\": [\n17,"), 1), streamed: true},
		"unknown field in the List":                          {data: bytes.Replace(jsonList, []byte("\"kind\": \"List\""), []byte("\"kind\": \"List\", \"extra\": 1"), 1), streamed: true},
		"duplicate item":                                     {data: mustJSON(t, asList(append(objs[:len(objs):len(objs)], objs[5]), "List"), true), streamed: true},

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
		"deep nesting":                 {data: []byte(`{"apiVersion": "v1", "kind": "List", "items": [` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `]}`)},
		"deep nesting, unclosed":       {data: []byte(`{"apiVersion": "v1", "kind": "List", "items": [` + strings.Repeat("[", 20000) + `]}`)},
		"a 10 MB line":                 {data: []byte(`{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a", "annotations": {"a": "` + strings.Repeat("x", 10<<20) + `"}}}]}`), streamed: true},
		"a 10 MB YAML line":            {data: []byte("apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: a\n    annotations:\n      a: " + strings.Repeat("x", 10<<20) + "\nkind: List\n"), streamed: true},
	}
	return cases
}

// firstKindFirst is an indented JSON List of namespaces, size bytes or
// more, the first of which has "kind" as its first key, the others
// "apiVersion".
func firstKindFirst(size int) []byte {
	var b bytes.Buffer
	b.WriteString("{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n        {\n            \"kind\": \"Namespace\",\n            \"apiVersion\": \"v1\",\n            \"metadata\": {\"name\": \"ns-first\"}\n        }")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, ",\n        {\n            \"apiVersion\": \"v1\",\n            \"kind\": \"Namespace\",\n            \"metadata\": {\"name\": \"ns-%06d\"}\n        }", i)
	}
	b.WriteString("\n    ],\n    \"kind\": \"List\"\n}\n")
	return b.Bytes()
}

// editItem replaces the first old with repl in item i of a List whose
// items each start after sep.
func editItem(t *testing.T, list []byte, sep string, i int, old, repl string) []byte {
	t.Helper()
	items := bytes.Split(list, []byte(sep))
	edited := bytes.Replace(items[i+1], []byte(old), []byte(repl), 1)
	if bytes.Equal(edited, items[i+1]) {
		t.Fatalf("no %q in item %d", old, i)
	}
	items[i+1] = edited
	return bytes.Join(items, []byte(sep))
}

// TestStreamErrors: the bad inputs around the streaming reader each get
// their one-line error naming the file, the item and the field.
func TestStreamErrors(t *testing.T) {
	dir := t.TempDir()
	cases := streamCases(t)
	tests := map[string]string{
		"truncated JSON":                  "f#1: malformed YAML/JSON: unexpected EOF",
		"truncated YAML":                  "f: kind: missing",
		"wrong kind in a List":            "f items[50]: kind: nested List",
		"a 10 MB line":                    "f items[0]: Namespace a: metadata.annotations: Too long: may not be more than 262144 bytes",
		"a 10 MB YAML line":               "f items[0]: Namespace a: metadata.annotations: Too long: may not be more than 262144 bytes",
		"deep nesting":                    "f#1: malformed YAML/JSON: invalid character '[' exceeded max depth",
		"deep nesting, unclosed":          "f#1: malformed YAML/JSON: invalid character '[' exceeded max depth",
		"bad apiVersion in an item, YAML": `f items[30]: Pod shop/web-003-4: apiVersion: unsupported "v2" (want "v1")`,
		"unknown field in the List":       `f: List: unknown field "extra" (strict decoding; --validate=warn or ignore to accept)`,
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, "f")
			if err := os.WriteFile(path, cases[name].data, 0o644); err != nil {
				t.Fatal(err)
			}
			s := NewSet()
			s.streamMin = 1
			err := s.AddPath(path)
			if err == nil {
				t.Fatal("no error")
			}
			if got := strings.TrimPrefix(err.Error(), dir+"/"); got != want {
				t.Errorf("error\n got: %s\nwant: %s", got, want)
			}
		})
	}
}

// TestCutJSONByLines: the items of a List as kubectl writes it (indented)
// or as a script does (an item per line) are cut by their lines, but for
// the first and the last, which are scanned; a List on one line is
// scanned whole. Either way the items are those arrayElements cuts.
func TestCutJSONByLines(t *testing.T) {
	objs := manyObjects(20)
	list := map[string]any{"apiVersion": "v1", "kind": "List", "items": objs}
	var perLine []string
	for _, o := range objs {
		perLine = append(perLine, string(mustJSON(t, o, false)))
	}
	for name, tc := range map[string]struct {
		data  []byte
		loose int
	}{
		"indented":      {mustJSON(t, list, true), len(objs) - 2},
		"item per line": {[]byte(`{"kind": "List", "items": [` + "\n" + strings.Join(perLine, ",\n") + "\n], \"apiVersion\": \"v1\"}"), len(objs) - 2},
		"one line":      {mustJSON(t, list, false), 0},
	} {
		var got [][]byte
		loose := 0
		rest, err := cutJSONList(context.Background(), bytes.NewReader(tc.data), nil, func(b []byte, l bool) {
			got = append(got, b)
			if l {
				loose++
			}
		}, func([]byte) {}, func() bool { return false })
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var whole struct{ Items []json.RawMessage }
		if err := json.Unmarshal(tc.data, &whole); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(whole.Items) || loose != tc.loose {
			t.Fatalf("%s: %d items, %d loose; want %d, %d", name, len(got), loose, len(whole.Items), tc.loose)
		}
		for i := range got {
			if !bytes.Equal(got[i], whole.Items[i]) {
				t.Errorf("%s: item %d cut as %q, want %q", name, i, got[i], whole.Items[i])
			}
		}
		if !bytes.Contains(rest, []byte(`"items": null`)) && !bytes.Contains(rest, []byte(`"items":null`)) {
			t.Errorf("%s: rest %q", name, rest)
		}
	}
}

// TestCutYAMLInBulk: the items of a YAML List, cut in bulk from the second
// on, are the items the List cutter cuts line by line, and so is the List
// without them.
func TestCutYAMLInBulk(t *testing.T) {
	objs := manyObjects(20)
	data := mustYAML(t, map[string]any{"apiVersion": "v1", "kind": "List", "items": objs})
	var want [][]byte
	c := yamlListCutter{item: func(b []byte) { want = append(want, b) }}
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) > 0 && !cutterLine(&c, line) {
			t.Fatalf("the cutter refuses %q", line)
		}
	}
	wantRest, ok := c.end()
	if !ok {
		t.Fatal("no items")
	}
	var got [][]byte
	loose := 0
	rest, err := cutYAMLList(context.Background(), bufio.NewReaderSize(bytes.NewReader(data), 4096), nil, func(b []byte, l bool) {
		if l {
			loose++
			var ok bool
			if b, ok = yamlItemLines(b); !ok {
				t.Fatalf("item %d: its lines are refused: %q", len(got), b)
			}
		}
		got = append(got, b)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || loose != len(want)-2 {
		t.Fatalf("%d items, %d cut in bulk; want %d, %d", len(got), loose, len(want), len(want)-2)
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("item %d cut as %q, want %q", i, got[i], want[i])
		}
	}
	if !bytes.Equal(rest, wantRest) {
		t.Errorf("the List without its items: %q, want %q", rest, wantRest)
	}
}

// TestConvertLooseYAMLItem: converting a loose item in one reading of its
// lines gives what the cutter's check and the converter give one after the
// other: the same JSON, or the same refusal.
func TestConvertLooseYAMLItem(t *testing.T) {
	pieces := map[string]string{
		"pod":                       "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: a\n    labels:\n      app: x\n  spec:\n    containers:\n    - name: c\n      image: i\n",
		"block scalar":              "- apiVersion: v1\n  kind: ConfigMap\n  data:\n    a: |\n      one\n\n      two\n  metadata:\n    name: a\n",
		"blank line with spaces":    "- kind: Namespace\n   \n  metadata:\n    name: a\n",
		"trailing spaces":           "- kind: Namespace   \n  metadata:\n    name: a  \n",
		"first key only":            "- kind: Namespace\n",
		"one space of indentation":  "- kind: Namespace\n metadata:\n    name: a\n",
		"a key in the first column": "- kind: Namespace\nmetadata:\n  name: a\n",
		"tab after indentation":     "- kind: Namespace\n  metadata:\n  \tname: a\n",
		"tab as indentation":        "- kind: Namespace\n\tmetadata: {}\n",
		"control character":         "- kind: Namespace\n  metadata:\n    name: \x01a\n",
		"carriage return":           "- kind: Namespace\r\n  metadata:\r\n    name: a\r\n",
		"no final line break":       "- kind: Namespace\n  metadata:\n    name: a",
		"comment":                   "- kind: Namespace # the kind\n  metadata:\n    name: a\n",
		"anchor":                    "- kind: &k Namespace\n  metadata:\n    name: *k\n",
		"not a key":                 "- - kind: Namespace\n",
		"a scalar":                  "- plain\n",
		"separator":                 "- kind: Namespace\n---\n",
		"flow mapping":              "- {kind: Namespace}\n",
		"quoted":                    "- kind: \"Namespace\"\n  metadata: {name: 'a'}\n",
	}
	data := mustYAML(t, map[string]any{"apiVersion": "v1", "kind": "List", "items": manyObjects(8)})
	_, items, _ := bytes.Cut(data, []byte("items:\n"))
	for i, item := range bytes.SplitAfter(items, []byte("\n- ")) {
		if i > 0 {
			item = append([]byte("- "), item...)
		}
		item = bytes.TrimSuffix(item, []byte("- "))
		if end := bytes.Index(item, []byte("\nkind: List")); end >= 0 {
			item = item[:end+1]
		}
		pieces[fmt.Sprintf("item %d", i)] = string(item)
	}
	fast := 0
	for name, piece := range pieces {
		// What the fast converter reads once the cutter's check has made
		// a copy of it, it reads in place, in one pass.
		item, ok := yamlItemLines([]byte(piece))
		if !ok {
			continue
		}
		if _, ok := fastYAMLToJSON(item); !ok {
			continue
		}
		fast++
		var scratch yamlScratch
		if _, refused, ok := fastLooseYAMLItem([]byte(piece), &scratch); refused || !ok {
			t.Errorf("%s: read in place: refused %v, converted %v", name, refused, ok)
		}
	}
	if fast < 10 {
		t.Errorf("only %d pieces convert fast", fast)
	}
	for name, piece := range pieces {
		var scratch, oldScratch yamlScratch
		got, _, ok := convertLooseYAMLItem([]byte(piece), true, &scratch)
		var want []byte
		item, wantOK := yamlItemLines([]byte(piece))
		if wantOK {
			want, wantOK = convertYAMLItem(item, true, &oldScratch)
		}
		if ok != wantOK || !bytes.Equal(got, want) {
			t.Errorf("%s: converted to %q, %v; want %q, %v", name, got, ok, want, wantOK)
		}
	}
}

// TestStreamReusesChunks: a List of many megabytes, read into chunks that
// are reused once their items are prepared, loads as it does read whole:
// its objects, and a Simulation early in the file, which the set keeps as
// its bytes (copied out of a chunk that is reused long before the List
// is committed).
func TestStreamReusesChunks(t *testing.T) {
	if testing.Short() {
		t.Skip("writes lists of 6 MB")
	}
	dir := t.TempDir()
	var objs []map[string]any
	for i := range 12000 {
		p := map[string]any{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": fmt.Sprintf("p-%05d", i), "namespace": "default", "labels": map[string]any{"app": fmt.Sprint("a", i%7)},
				"annotations": map[string]any{"note": strings.Repeat("x", 300)}},
			"spec": map[string]any{"nodeName": fmt.Sprintf("n-%d", i%50), "containers": []any{map[string]any{"name": "c", "image": fmt.Sprint("i", i%7),
				"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "64Mi"}}}}},
			"status": map[string]any{"phase": "Running", "podIP": fmt.Sprintf("10.0.%d.%d", i/250, i%250)}}
		if i == 40 {
			p = map[string]any{"apiVersion": SimulationAPIVersion, "kind": "Simulation", "metadata": map[string]any{"name": "early"},
				"spec": map[string]any{"note": strings.Repeat("y", 300)}}
		}
		objs = append(objs, p)
	}
	list := map[string]any{"apiVersion": "v1", "kind": "List", "items": objs}
	for format, data := range map[string][]byte{"json": mustJSON(t, list, true), "yaml": mustYAML(t, list)} {
		if len(data) < 6*streamChunk {
			t.Fatalf("%s: %d bytes, want several chunks", format, len(data))
		}
		path := filepath.Join(dir, "list."+format)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, lean := range []bool{false, true} {
			if streamed, _ := compareLoads(t, format, path, ValidateStrict, lean); streamed != 1 {
				t.Errorf("%s, lean %v: not streamed", format, lean)
			}
		}
		sims := func(streamMin int64) []RawDocument {
			s := NewSetWith(Options{Lean: true})
			s.streamMin = streamMin
			if err := s.AddPath(path); err != nil {
				t.Fatal(err)
			}
			return s.Simulations
		}
		if whole, streamed := sims(math.MaxInt64), sims(1); len(whole) != 1 || !reflect.DeepEqual(whole, streamed) {
			t.Errorf("%s: Simulations %q streamed, want %q", format, streamed, whole)
		}
	}
}

// FuzzIndexLineStart: indexLineStart finds what bytes.Index finds, and
// so does indexAnchored looking for any byte of the line.
func FuzzIndexLineStart(f *testing.F) {
	for _, s := range []string{"", "{", "\n{", "x\n    {", "    {\n    {", "\n   {\n    {", "{{{\n    {{", "\n    \n    {"} {
		f.Add([]byte(s), 4, 0)
	}
	f.Add([]byte("\n    {\n        \"kind\"\n    {\n        \"apiVersion\""), 4, 9)
	f.Fuzz(func(t *testing.T, data []byte, indent, rare int) {
		line := []byte("\n" + strings.Repeat(" ", indent&15) + "{")
		if got, want := indexLineStart(data, line), bytes.Index(data, line); got != want {
			t.Fatalf("indexLineStart(%q, %q) = %d, want %d", data, line, got, want)
		}
		first := append(slices.Clone(line), "\n"+strings.Repeat(" ", indent&15)+"    \"apiVersion\""...)
		rare = rare & 0xffff % len(first)
		if got, want := indexAnchored(data, first, rare), bytes.Index(data, first); got != want {
			t.Fatalf("indexAnchored(%q, %q, %d) = %d, want %d", data, first, rare, got, want)
		}
	})
}

// TestPreparedItemFields holds preparedItem to prepared: keep and
// prepared give back every field, and sameButOwn compares every field but
// the item's own (its name, object and problems), so that no item takes
// the header of the item before it.
func TestPreparedItemFields(t *testing.T) {
	own := map[string]bool{"h.Name": true, "obj": true, "bad": true}
	base := prepared{h: objectHeader{APIVersion: "v1", Kind: "Pod", Name: "a", Namespace: "ns"}, known: true,
		namespaced: true, apiVersion: "v1", ns: "ns", obj: &v1.Pod{}, bad: &problems{}}
	// Each field of prepared, by its index path, changed in a copy.
	var paths [][]int
	var names []string
	var walk func(typ reflect.Type, path []int, name string)
	walk = func(typ reflect.Type, path []int, name string) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			p := append(slices.Clone(path), i)
			if f.Type.Kind() == reflect.Struct {
				walk(f.Type, p, name+f.Name+".")
				continue
			}
			paths, names = append(paths, p), append(names, name+f.Name)
		}
	}
	walk(reflect.TypeFor[prepared](), nil, "")
	for k, path := range paths {
		changed := base
		f := reflect.ValueOf(&changed).Elem().FieldByIndex(path)
		f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
		switch f.Kind() {
		case reflect.String:
			f.SetString(f.String() + "x")
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.Interface:
			f.Set(reflect.ValueOf(&v1.Node{}))
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		default:
			t.Fatalf("prepared.%s is a %v, which this test does not change", names[k], f.Kind())
		}
		if got, want := sameButOwn(&base, &changed), own[names[k]]; got != want {
			t.Errorf("prepared.%s changed: sameButOwn %v, want %v", names[k], got, want)
		}
		// Kept after base, changed comes back whole.
		first := keep(base, nil)
		second := keep(changed, first.like)
		if !reflect.DeepEqual(second.prepared(), changed) || !reflect.DeepEqual(first.prepared(), base) {
			t.Errorf("prepared.%s changed: kept %+v, want %+v", names[k], second.prepared(), changed)
		}
		if shared := second.like == first.like; shared != own[names[k]] {
			t.Errorf("prepared.%s changed: like shared %v, want %v", names[k], shared, own[names[k]])
		}
	}
}

// arrayElements returns the elements of the JSON array data, or false when
// it is not an array it can walk.
func arrayElements(data []byte) ([][]byte, bool) {
	var elems [][]byte
	end := walkArray(data, 0, func(e int) int {
		end := skipValue(data, e)
		if end >= 0 {
			elems = append(elems, data[e:end])
		}
		return end
	})
	if !onlySpaceAfter(data, end) {
		return nil, false
	}
	return elems, true
}
