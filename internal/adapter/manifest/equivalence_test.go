package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// The fast path (fast.go) must read every input as the general path does:
// the same objects, workloads, Simulations, skipped lines, warnings and
// origins, or the same error. TestFastMatchesGeneral holds it to that on
// the inputs the loader's tests know — kubectl's Lists in JSON and YAML,
// written well and badly (streamCases), the many forms of one snapshot,
// the bad inputs of the fuzzers' seeds and their corpora — under each
// --validate mode, lean and not; FuzzFastMatchesGeneral on any input.

// TestFastMatchesGeneral reads each input with the general path, and with
// the fast path read whole and streamed (as a file and as bytes), under
// each --validate mode, lean and not; the inputs meant for the streaming
// reader must be streamed.
func TestFastMatchesGeneral(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range equivalenceCases(t) {
		path := filepath.Join(dir, strings.ReplaceAll(name, "/", "_"))
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, v := range []FieldValidation{ValidateStrict, ValidateWarn, ValidateIgnore} {
			want := 0
			if tc.streamed || tc.streamedIgnoring && v == ValidateIgnore {
				want = 1
			}
			for _, lean := range []bool{false, true} {
				if got, _ := compareLoads(t, name, path, v, lean); tc.checkStreamed && got != want {
					t.Errorf("%s, %s, lean %v: streamed %d inputs, want %d", name, v, lean, got, want)
				}
			}
		}
	}
}

// FuzzFastMatchesGeneral: whatever the input, the fast path reads it as
// the general path does; and what the general path refuses is refused in
// one line of ErrInput, what it accepts builds a snapshot or is refused
// so, and no pod it accepts requests a negative amount.
func FuzzFastMatchesGeneral(f *testing.F) {
	for _, in := range badInputs {
		f.Add([]byte(in))
	}
	for _, in := range badJSON {
		f.Add([]byte(in))
	}
	for _, in := range fuzzSeeds {
		f.Add([]byte(in))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "f")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		compareLoads(t, "fuzz", path, ValidateStrict, false)
		compareLoads(t, "fuzz", path, ValidateIgnore, false)
		compareLoads(t, "fuzz", path, ValidateStrict, true)
		checkAccepted(t, data)
	})
}

// fuzzSeeds are inputs around the streaming reader and the memo, seeding
// FuzzFastMatchesGeneral besides badInputs and badJSON.
var fuzzSeeds = []string{
	nodeDoc + "---\n" + podDoc,
	`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"containers":[{"name":"c"}]}}]}`,
	"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {selector: {}}\nstatus: {disruptedPods: {a: null}}\n",
	"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: x}\nvalue: -5\nglobalDefault: true\n",
	`{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}]}`,
	"apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: a\nkind: List\n",
	"apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: a\n  spec:\n    containers:\n    - name: c\n      image: i\n      resources:\n        requests:\n          cpu: 1\nkind: List\n",
	`{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "n"}, "spec": {"nodeName": "x", "containers": [{"name": "c", "image": "i", "env": [{"name": "A"}]}]}}, 1]}`,
	"{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n        {\n            \"apiVersion\": \"v1\",\n            \"kind\": \"Namespace\",\n            \"metadata\": {\"name\": \"a\"}\n        },\n        {\n            \"apiVersion\": \"v1\",\n            \"kind\": \"Namespace\",\n            \"metadata\": {\"name\": \"b\"}\n        },\n        {\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"c\"}}\n    ],\n    \"kind\": \"List\"\n}\n",
	"{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [\n{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"a\"}},\n{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\":\n{\"name\": \"b\"}},\n{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"c\"}}\n]}",
	// Items that start otherwise than the first (cut with the one before,
	// then apart), and an object inside one that starts as they do.
	"{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n        {\n            \"apiVersion\": \"v1\",\n            \"kind\": \"Namespace\",\n            \"metadata\": {\"name\": \"a\"}\n        },\n        {\n            \"kind\": \"Namespace\",\n            \"apiVersion\": \"v1\",\n            \"metadata\": {\"name\": \"b\"}\n        },\n        {\n            \"kind\": \"Namespace\",\n            \"apiVersion\": \"v1\",\n            \"metadata\": {\"name\": \"c\"}\n        },\n        {\n            \"apiVersion\": \"v1\",\n            \"kind\": \"Namespace\",\n            \"metadata\": {\"name\": \"d\"}\n        },\n        {\n            \"apiVersion\": \"v1\",\n            \"kind\": \"Namespace\",\n            \"metadata\": {\"name\": \"e\"}\n        }\n    ],\n    \"kind\": \"List\"\n}\n",
	"{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n        {\n            \"apiVersion\": \"v1\",\n            \"kind\": \"Namespace\",\n            \"metadata\": {\"name\": \"a\"}\n        },\n        {\n            \"apiVersion\": \"v1\",\n            \"kind\": \"Namespace\",\n            \"metadata\":\n        {\n            \"apiVersion\": \"v1\", \"name\": \"b\"}\n        },\n        {\n            \"apiVersion\": \"v1\",\n            \"kind\": \"Namespace\",\n            \"metadata\": {\"name\": \"c\"}\n        }\n    ],\n    \"kind\": \"List\"\n}\n",
}

// outOfOrder are documents whose keys are not in order, with more than one
// problem: the general path converts YAML to JSON with its keys in order
// (sigs.k8s.io/yaml), and the decoder meets the problems in that order.
var outOfOrder = map[string]string{
	"YAML, unknown fields out of order": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  zeta: 1\n  containers: [{name: c, image: i}]\n  alpha: 2\n",
	"YAML, wrong types out of order":    "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  priority: x\n  containers: [{name: c, image: i}]\n  hostname: 5\n",
	"YAML, keys out of order":           "kind: Node\nmetadata: {name: n, labels: {b: \"1\", a: \"2\"}}\napiVersion: v1\nstatus: {capacity: {memory: 1Gi, cpu: \"2\"}}\n",
	"YAML List, unknown fields out of order": "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n  spec:\n    zeta: 1\n    containers: [{name: c, image: i}]\n    alpha: 2\n" +
		"- kind: Namespace\n  metadata:\n    zz: 1\n    name: n\n    aa: 2\n  apiVersion: v1\nzebra: 1\nalpha: 2\n",
}

// equivalenceCase is an input, and whether the streaming reader reads it
// (streamedIgnoring: only under --validate=ignore), when checkStreamed.
type equivalenceCase struct {
	data                                      []byte
	checkStreamed, streamed, streamedIgnoring bool
}

// equivalenceCases are the inputs TestFastMatchesGeneral reads.
func equivalenceCases(t *testing.T) map[string]equivalenceCase {
	cases := map[string]equivalenceCase{}
	for name, tc := range streamCases(t) {
		cases[name] = equivalenceCase{data: tc.data, checkStreamed: true, streamed: tc.streamed, streamedIgnoring: tc.streamedIgnoring}
	}
	for name, data := range snapshotForms(t, 60) {
		cases["form: "+name] = equivalenceCase{data: data}
	}
	for i, in := range badInputs {
		cases["bad input "+strconv.Itoa(i)] = equivalenceCase{data: []byte(in)}
	}
	for i, in := range badJSON {
		cases["bad JSON "+strconv.Itoa(i)] = equivalenceCase{data: []byte(in)}
	}
	for i, in := range fuzzSeeds {
		cases["seed "+strconv.Itoa(i)] = equivalenceCase{data: []byte(in)}
	}
	for name, in := range outOfOrder {
		cases[name] = equivalenceCase{data: []byte(in)}
	}
	for name, data := range corpusInputs(t) {
		cases["corpus "+name] = equivalenceCase{data: data}
	}
	return cases
}

// snapshotForms are the same objects (n nodes and their pods) as a JSON
// List (compact and indented), a YAML List, the same with a comment, with
// CRLF line ends, one YAML document per object, and concatenated JSON
// objects.
func snapshotForms(t *testing.T, n int) map[string][]byte {
	objs := manyObjects(n)
	list := map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}, "items": objs}
	yamlList := mustYAML(t, list)
	var perObject, concatenated bytes.Buffer
	for _, o := range objs {
		perObject.WriteString("---\n")
		perObject.Write(mustYAML(t, o))
		concatenated.Write(mustJSON(t, o, true))
		concatenated.WriteString("\n")
	}
	return map[string][]byte{
		"JSON List":               mustJSON(t, list, false),
		"indented JSON List":      mustJSON(t, list, true),
		"YAML List":               yamlList,
		"YAML List with comment":  append([]byte("# kept whole\n"), yamlList...),
		"YAML document per item":  perObject.Bytes(),
		"concatenated JSON":       concatenated.Bytes(),
		"YAML List, CRLF endings": bytes.ReplaceAll(yamlList, []byte("\n"), []byte("\r\n")),
	}
}

// corpusInputs are the inputs of the fuzzers' corpora (testdata/fuzz)
// that take one []byte, by fuzzer and file.
func corpusInputs(t *testing.T) map[string][]byte {
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	inputs := map[string][]byte{}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(text)), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[1], "[]byte(") {
			continue
		}
		s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		inputs[filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f)] = []byte(s)
	}
	return inputs
}

// compareLoads reads the file path under v, lean or not, with the general
// path, and with the fast path read whole, streamed from the file and
// streamed from its bytes, and fails on any difference. It returns how
// many inputs the streaming reader read (of the file streamed), and how
// many pods the memos made from a template (of the fast reads).
func compareLoads(t *testing.T, name, path string, v FieldValidation, lean bool) (streamed, hits int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	load := func(general bool, streamMin int64, asBytes bool) (*Set, string) {
		s := NewSetWith(Options{Validation: v, Parallelism: 3, Lean: lean, general: general})
		s.streamMin = streamMin
		if asBytes {
			err = s.AddBytes(path, data)
		} else {
			err = s.AddPath(path)
		}
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("%s, %s: the error is not one line: %q", name, v, err)
			}
			return s, err.Error()
		}
		return s, ""
	}
	// The reference of a file read, and of its bytes added (which are not
	// checked as a file's, read.go).
	generalFile, generalFileErr := load(true, 0, false)
	generalBytes, generalBytesErr := load(true, 0, true)
	ways := []struct {
		how       string
		streamMin int64
		asBytes   bool
	}{
		{"fast, whole", math.MaxInt64, false},
		{"fast, streamed", 1, false},
		{"fast, streamed bytes", 1, true},
	}
	for _, way := range ways {
		general, generalErr := generalFile, generalFileErr
		if way.asBytes {
			general, generalErr = generalBytes, generalBytesErr
		}
		fast, fastErr := load(false, way.streamMin, way.asBytes)
		hits += fast.fast.memoHits()
		switch way.how {
		case "fast, whole":
			if fast.fast.streamed != 0 {
				t.Fatalf("%s: read whole, yet streamed", name)
			}
		case "fast, streamed":
			streamed = fast.fast.streamed
		}
		if generalErr != fastErr {
			t.Errorf("%s, %s, lean %v: errors differ:\ngeneral: %s\n%s: %s", name, v, lean, generalErr, way.how, fastErr)
		}
		if generalErr != "" {
			continue
		}
		if diff := diffSets(general, fast); diff != "" {
			t.Errorf("%s, %s, lean %v: the sets differ (-general +%s):\n%s", name, v, lean, way.how, diff)
		}
	}
	return streamed, hits
}

// diffSets returns what differs between two sets read from the same
// input: their objects, workloads, Simulations (as JSON values), skipped
// lines, warnings, and the origin of each object.
func diffSets(a, b *Set) string {
	opts := cmp.Options{cmpopts.EquateEmpty(), cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })}
	type workloads struct {
		Objects                snapshot.Objects
		Deployments            any
		ReplicaSets            any
		Jobs                   any
		StatefulSets           any
		ResourceClaimTemplates any
		Simulations            []any
		Skipped, SkippedLines  []string
		Warnings, Workloads    []string
		Origins, Given         []string
	}
	of := func(s *Set) workloads {
		w := workloads{Objects: s.Objects, Deployments: s.Deployments, ReplicaSets: s.ReplicaSets, Jobs: s.Jobs,
			StatefulSets: s.StatefulSets, ResourceClaimTemplates: s.ResourceClaimTemplates,
			Skipped: s.Skipped, SkippedLines: s.SkippedLines(), Warnings: s.Warnings, Workloads: s.WorkloadLines()}
		for _, sim := range s.Simulations {
			var v any
			if err := json.Unmarshal(sim.Data, &v); err != nil {
				v = string(sim.Data)
			}
			w.Simulations = append(w.Simulations, []any{sim.Source, v})
		}
		for _, obj := range setObjects(s) {
			w.Origins = append(w.Origins, s.Origin(obj))
			w.Given = append(w.Given, strconv.FormatBool(s.NamespaceGiven(obj)))
		}
		return w
	}
	return cmp.Diff(of(a), of(b), opts)
}

// setObjects returns every object of s: those of its Objects (Storage's
// too) and its workloads, in order.
func setObjects(s *Set) []any {
	var objs []any
	var add func(v reflect.Value)
	add = func(v reflect.Value) {
		for i := range v.NumField() {
			switch f := v.Field(i); f.Kind() {
			case reflect.Slice:
				for j := range f.Len() {
					objs = append(objs, f.Index(j).Interface())
				}
			case reflect.Struct:
				add(f)
			}
		}
	}
	add(reflect.ValueOf(s.Objects))
	for _, l := range []any{s.Deployments, s.ReplicaSets, s.Jobs, s.StatefulSets, s.ResourceClaimTemplates} {
		v := reflect.ValueOf(l)
		for j := range v.Len() {
			objs = append(objs, v.Index(j).Interface())
		}
	}
	return slices.Clip(objs)
}

// checkAccepted loads data with the general path: a refusal is one line
// of ErrInput, and what is accepted builds a snapshot (or is refused in
// one line) whose pods request no negative amount.
func checkAccepted(t *testing.T, data []byte) {
	s := NewSetWith(Options{general: true})
	if err := s.AddBytes("f", data); err != nil {
		if !errors.Is(err, ErrInput) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("bad error %q", err)
		}
		return
	}
	for _, p := range s.Objects.Pods {
		r := snapshot.IncomingPodRequests(p)
		if r.MilliCPU < 0 || r.Memory < 0 || r.EphemeralStorage < 0 {
			t.Fatalf("pod %s accepted with negative requests %+v", p.Name, r)
		}
		for _, sc := range r.Scalars {
			if sc.Value < 0 {
				t.Fatalf("pod %s accepted with negative %s", p.Name, sc.Name)
			}
		}
	}
	if _, err := s.Build(); err != nil && strings.Contains(err.Error(), "\n") {
		t.Fatalf("bad build error %q", err)
	}
}
