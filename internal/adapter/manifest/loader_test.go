package manifest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

const nodeDoc = `apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
`

const podDoc = `apiVersion: v1
kind: Pod
metadata: {name: p1}
spec:
  nodeName: n1
  containers: [{name: c, image: i, resources: {requests: {cpu: 500m}}}]
`

func TestLoadForms(t *testing.T) {
	list := `apiVersion: v1
kind: List
items:
- ` + indent(nodeDoc) + `
- ` + indent(podDoc)
	podList := `{"apiVersion": "v1", "kind": "PodList", "items": [{"metadata": {"name": "p2", "namespace": "x"}, "spec": {"containers": [{"name": "c"}]}}]}`
	tests := map[string]struct {
		data         string
		nodes, pods  int
		skipped      int
		podNamespace string
	}{
		"multi-document YAML": {data: nodeDoc + "---\n" + podDoc, nodes: 1, pods: 1, podNamespace: "default"},
		"kind List":           {data: list, nodes: 1, pods: 1, podNamespace: "default"},
		"typed list in JSON":  {data: podList, pods: 1, podNamespace: "x"},
		"empty documents":     {data: "---\n---\n" + nodeDoc + "---\n", nodes: 1},
		"other kinds are skipped": {
			data:  nodeDoc + "---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d, namespace: web}\n",
			nodes: 1, skipped: 1,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := NewSet()
			if err := s.AddBytes("f.yaml", []byte(tc.data)); err != nil {
				t.Fatal(err)
			}
			if len(s.Objects.Nodes) != tc.nodes || len(s.Objects.Pods) != tc.pods || len(s.Skipped) != tc.skipped {
				t.Fatalf("got %d nodes %d pods %d skipped, want %d %d %d", len(s.Objects.Nodes), len(s.Objects.Pods), len(s.Skipped), tc.nodes, tc.pods, tc.skipped)
			}
			if tc.pods > 0 && s.Objects.Pods[0].Namespace != tc.podNamespace {
				t.Errorf("namespace = %q, want %q", s.Objects.Pods[0].Namespace, tc.podNamespace)
			}
		})
	}
}

func indent(doc string) string {
	return strings.ReplaceAll(strings.TrimSpace(doc), "\n", "\n  ")
}

func TestBadInput(t *testing.T) {
	tests := map[string]struct {
		data string
		want string
	}{
		"malformed YAML":         {data: "apiVersion: v1\nkind: Node\nmetadata: {name: [\n", want: "f.yaml#1: malformed YAML/JSON"},
		"not an object":          {data: "- a\n- b\n", want: "f.yaml: expected a Kubernetes object"},
		"missing kind":           {data: "apiVersion: v1\nmetadata: {name: x}\n", want: "f.yaml: kind: missing"},
		"missing apiVersion":     {data: "kind: Node\nmetadata: {name: x}\n", want: "f.yaml: Node x: apiVersion: missing"},
		"wrong apiVersion":       {data: "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: x}\n", want: `f.yaml: PodDisruptionBudget default/x: apiVersion: unsupported "policy/v1beta1" (want "policy/v1")`},
		"missing name":           {data: "apiVersion: v1\nkind: Node\nmetadata: {}\n", want: "f.yaml: Node: metadata.name: missing"},
		"invalid quantity":       {data: "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: lots}}\n", want: "f.yaml: Node n1: status.allocatable.cpu: quantities must match the regular expression"},
		"name of the wrong type": {data: "apiVersion: v1\nkind: Node\nmetadata: {name: 12}\n", want: "f.yaml: metadata.name: cannot use number as string"},
		"invalid request":        {data: "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {memory: 1Gb}}}]}\n", want: "f.yaml: Pod default/p: spec.containers[0].resources.requests.memory: quantities must match"},
		"wrong type":             {data: "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: oops}\n", want: "f.yaml: Pod default/p: spec.containers: cannot use string as []v1.Container"},
		"pod without container":  {data: "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {}\n", want: "f.yaml: Pod default/p: spec.containers: Required value: a pod needs at least one container"},
		"invalid PDB selector": {
			data: "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {selector: {matchExpressions: [{key: a, operator: Bogus}]}}\n",
			want: `f.yaml: PodDisruptionBudget default/b: spec.selector.matchExpressions[0].operator: Invalid value: "Bogus": not a valid selector operator`,
		},
		"invalid affinity selector": {
			data: nodeDoc + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: k, labelSelector: {matchExpressions: [{key: a, operator: In}]}}]}}\n",
			want: "f.yaml#2: Pod default/p: spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0].values: Required value",
		},
		"duplicate":   {data: nodeDoc + "---\n" + nodeDoc, want: "f.yaml#2: Node n1: metadata.name: duplicate object (first defined in f.yaml#1)"},
		"nested list": {data: "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: List, items: []}\n", want: "f.yaml items[0]: kind: nested List"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := NewSet()
			err := s.AddBytes("f.yaml", []byte(tc.data))
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if !errors.Is(err, ErrInput) {
				t.Errorf("error %v is not ErrInput", err)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error:\n got %q\nwant prefix %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans several lines: %q", err)
			}
		})
	}
}

func TestBuildErrorsNameTheFile(t *testing.T) {
	tests := map[string]struct {
		data string
		want string
	}{
		"pod on a missing node": {data: podDoc, want: `f.yaml: Pod default/p1: spec.nodeName: node "n1" does not exist in the snapshot`},
		"unknown priority class": {
			data: nodeDoc + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {priorityClassName: gold, containers: [{name: c}]}\n",
			want: `f.yaml#2: Pod default/p: spec.priorityClassName: PriorityClass "gold" not found`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := NewSet()
			if err := s.AddBytes("f.yaml", []byte(tc.data)); err != nil {
				t.Fatal(err)
			}
			_, err := s.Build()
			if err == nil || !errors.Is(err, ErrInput) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error:\n got %v\nwant prefix %q (and ErrInput)", err, tc.want)
			}
		})
	}
}

func TestParsePod(t *testing.T) {
	pending := strings.Replace(podDoc, "  nodeName: n1\n", "", 1)
	if p, namespaced, err := ParsePod("p.yaml", []byte(pending)); err != nil || namespaced || p.Namespace != "default" {
		t.Errorf("one pending pod without namespace: %v %v %v", p, namespaced, err)
	}
	if _, namespaced, err := ParsePod("p.yaml", []byte(strings.Replace(pending, "{name: p1}", "{name: p1, namespace: x}", 1))); err != nil || !namespaced {
		t.Errorf("pod with a namespace: namespaced=%v err=%v", namespaced, err)
	}
	for name, tc := range map[string]struct{ data, want string }{
		"two pods":  {pending + "---\n" + strings.Replace(pending, "p1", "p2", 1), "p.yaml: 2 Pods found; the file must hold exactly one Pod"},
		"no pod":    {nodeDoc, "p.yaml: no Pod found"},
		"pod+node":  {pending + "---\n" + nodeDoc, "p.yaml: the file must hold exactly one Pod and nothing else"},
		"bound pod": {podDoc, "p.yaml: Pod default/p1: spec.nodeName: the pod is already bound"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := ParsePod("p.yaml", []byte(tc.data))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %v, want prefix %q", err, tc.want)
			}
		})
	}
}

func TestLoadDirectory(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "b-pods.yaml"), []byte(podDoc), 0o644))
	must(os.WriteFile(filepath.Join(dir, "a-nodes.yml"), []byte(nodeDoc), 0o644))
	must(os.WriteFile(filepath.Join(dir, "README.md"), []byte("# not a manifest"), 0o644))
	s, err := Load(dir)
	must(err)
	snap, err := s.Build()
	must(err)
	if len(snap.Nodes) != 1 || len(snap.Nodes[0].Pods) != 1 {
		t.Fatalf("got %d nodes, want 1 with 1 pod", len(snap.Nodes))
	}
	if got := s.Origin(s.Objects.Pods[0]); got != filepath.Join(dir, "b-pods.yaml") {
		t.Errorf("origin = %q", got)
	}
	if _, err := Load(t.TempDir()); err == nil || !errors.Is(err, ErrInput) {
		t.Errorf("empty directory: error %v, want ErrInput", err)
	}
}

func TestInputSize(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, size int) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.yaml", 10)
	write("sub/b.json", 20)
	write("sub/deeper/c.YML", 5)
	write("sub/README.md", 1000) // not read by AddPath
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		paths []string
		want  int64
	}{
		{name: "file", paths: []string{a}, want: 10},
		{name: "directory: its manifests only", paths: []string{filepath.Join(dir, "sub")}, want: 25},
		{name: "symlink to a file", paths: []string{link}, want: 10},
		{name: "missing and stdin count nothing", paths: []string{filepath.Join(dir, "missing"), "-", a}, want: 10},
		{name: "none", want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := InputSize(tt.paths...); got != tt.want {
				t.Errorf("InputSize = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestPodGroupKinds(t *testing.T) {
	data := `apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: train}
spec:
  parentCompositePodGroupName: job
  schedulingPolicy: {gang: {minCount: 2}}
  disruptionMode: {all: {}}
  priorityClassName: batch
---
apiVersion: scheduling.k8s.io/v1alpha3
kind: CompositePodGroup
metadata: {name: job, namespace: ml}
spec:
  workloadRef: {workloadName: job, templateName: t}
  schedulingPolicy: {basic: {}}
  disruptionMode: {all: {}}
---
apiVersion: v1
kind: Pod
metadata: {name: w0}
spec:
  schedulingGroup: {podGroupName: train}
  containers: [{name: c}]
`
	s := NewSet()
	if err := s.AddBytes("f.yaml", []byte(data)); err != nil {
		t.Fatal(err)
	}
	o := s.Objects
	if len(o.PodGroups) != 1 || len(o.CompositePodGroups) != 1 || len(o.Pods) != 1 || len(s.Skipped) != 0 {
		t.Fatalf("got %d PodGroups %d CompositePodGroups %d pods %d skipped", len(o.PodGroups), len(o.CompositePodGroups), len(o.Pods), len(s.Skipped))
	}
	if pg := o.PodGroups[0]; pg.Namespace != "default" || pg.Spec.DisruptionMode == nil || pg.Spec.DisruptionMode.All == nil || *pg.Spec.ParentCompositePodGroupName != "job" {
		t.Errorf("PodGroup decoded as %+v", pg)
	}
	if cpg := o.CompositePodGroups[0]; cpg.Namespace != "ml" {
		t.Errorf("CompositePodGroup namespace %q", cpg.Namespace)
	}
	// The PodGroup's class does not exist: the error names the file.
	_, err := s.Build()
	if err == nil || !strings.HasPrefix(err.Error(), `f.yaml#1: PodGroup default/train: spec.priorityClassName: PriorityClass "batch" not found`) {
		t.Errorf("Build error %v", err)
	}

	bad := []struct{ data, want string }{
		{"apiVersion: scheduling.k8s.io/v1alpha3\nkind: PodGroup\nmetadata: {name: g}\n", `f.yaml: PodGroup default/g: apiVersion: unsupported "scheduling.k8s.io/v1alpha3" (want "scheduling.k8s.io/v1beta1")`},
		{"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {schedulingGroup: {}, containers: [{name: c}]}\n", "f.yaml: Pod default/p: spec.schedulingGroup.podGroupName: Required value: missing"},
	}
	for _, tc := range bad {
		err := NewSet().AddBytes("f.yaml", []byte(tc.data))
		if err == nil || !errors.Is(err, ErrInput) || err.Error() != tc.want {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}

// TestStrictDecoding checks unknown, duplicate and mis-cased fields under
// each --validate mode, in YAML and in JSON.
func TestStrictDecoding(t *testing.T) {
	tests := map[string]struct {
		data string
		want string // the problem, named with its path
	}{
		"unknown pod field":      {data: "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeSelectr: {disk: ssd}\n  containers: [{name: c}]\n", want: `unknown field "spec.nodeSelectr"`},
		"unknown node status":    {data: "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatabel: {cpu: 4}}\n", want: `unknown field "status.allocatabel"`},
		"mis-cased field":        {data: "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeselector: {a: b}, containers: [{name: c}]}\n", want: `unknown field "spec.nodeselector"`},
		"duplicate YAML key":     {data: "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable: {cpu: 4}\n  allocatable: {cpu: 64}\n", want: `duplicate field "status.allocatable"`},
		"duplicate in a list":    {data: "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources: {requests: {cpu: 1, cpu: 2}}\n", want: `duplicate field "spec.containers[0].resources.requests.cpu"`},
		"duplicate JSON key":     {data: `{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4", "cpu": "64"}}}`, want: `duplicate field "status.allocatable.cpu"`},
		"unknown field in JSON":  {data: `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "imag": "x"}]}}`, want: `unknown field "spec.containers[0].imag"`},
		"unknown field of List":  {data: "apiVersion: v1\nkind: List\nitemz: []\nitems: []\n", want: `unknown field "itemz"`},
		"unknown field in items": {data: "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: n1, labelz: {}}}\n", want: `unknown field "metadata.labelz"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := NewSet().AddBytes("f.yaml", []byte(tc.data))
			if err == nil || !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("strict: error %v, want one line containing %q", err, tc.want)
			}
			warn := NewSetWith(Options{Validation: ValidateWarn})
			if err := warn.AddBytes("f.yaml", []byte(tc.data)); err != nil {
				t.Fatalf("warn: %v", err)
			}
			if len(warn.Warnings) != 1 || !strings.Contains(warn.Warnings[0], tc.want) {
				t.Errorf("warn: warnings %q, want one containing %q", warn.Warnings, tc.want)
			}
			ignore := NewSetWith(Options{Validation: ValidateIgnore})
			if err := ignore.AddBytes("f.yaml", []byte(tc.data)); err != nil || len(ignore.Warnings) != 0 {
				t.Errorf("ignore: %v, warnings %q", err, ignore.Warnings)
			}
		})
	}
}

func TestParseFieldValidation(t *testing.T) {
	for in, want := range map[string]FieldValidation{"": ValidateStrict, "strict": ValidateStrict, "true": ValidateStrict, "warn": ValidateWarn, "Ignore": ValidateIgnore, "false": ValidateIgnore} {
		if got, err := ParseFieldValidation(in); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	if _, err := ParseFieldValidation("maybe"); err == nil {
		t.Error("maybe accepted")
	}
}

// TestAdmission checks that loaded objects are defaulted and validated as
// the API server would, each refusal naming file, object and field.
func TestAdmission(t *testing.T) {
	s := NewSet()
	doc := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {limits: {cpu: \"3\"}}}]}\n"
	if err := s.AddBytes("f.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	p := s.Objects.Pods[0]
	if got := p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU]; got.String() != "3" {
		t.Errorf("cpu request %s, want 3 (from the limit)", got.String())
	}
	if p.Spec.SchedulerName != v1.DefaultSchedulerName {
		t.Errorf("schedulerName %q", p.Spec.SchedulerName)
	}
	pc := func(name string, def bool) string {
		return fmt.Sprintf("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: %s}\nvalue: 10\nglobalDefault: %v\n", name, def)
	}
	bad := map[string]struct{ data, want string }{
		"negative cpu":      {"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {cpu: \"-1\"}}}]}\n", `f.yaml: Pod default/p: spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0`},
		"1e30 memory":       {"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {memory: 1e30}}}]}\n", "f.yaml: Pod default/p: spec.containers[0].resources.requests[memory]: Invalid value: \"1e+30\": must be at most"},
		"negative capacity": {"apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacity: {cpu: \"-4\"}}\n", `f.yaml: Node n1: status.capacity[cpu]: Invalid value: "-4"`},
		"two defaults":      {pc("a", true) + "---\n" + pc("b", false) + "---\n" + pc("c", true), "f.yaml#3: PriorityClass c: globalDefault: Forbidden: PriorityClass a is already marked as default"},
		"huge exponent":     {"apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"1e-10000000\"}}\n", "f.yaml: Node n1: status.allocatable.cpu: quantity \"1e-10000000\" has an exponent out of range"},
		"long quantity":     {"apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"0." + strings.Repeat("0", 100) + "1\"}}\n", "f.yaml: Node n1: status.allocatable.cpu: quantity of 103 characters is too long"},
		"selector mismatch": {"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {selector: {matchLabels: {app: a}}, template: {metadata: {labels: {app: b}}, spec: {containers: [{name: c}]}}}\n", "f.yaml: Deployment default/d: spec.template.metadata.labels: Invalid value"},
	}
	for name, tc := range bad {
		t.Run(name, func(t *testing.T) {
			err := NewSet().AddBytes("f.yaml", []byte(tc.data))
			if err == nil || !errors.Is(err, ErrInput) || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error:\n got %v\nwant prefix %q", err, tc.want)
			}
		})
	}
}

func TestStdinAndMissingFiles(t *testing.T) {
	s, err := LoadWith(Options{Stdin: strings.NewReader(nodeDoc)}, "-")
	if err != nil || len(s.Objects.Nodes) != 1 || s.Origin(s.Objects.Nodes[0]) != StdinName {
		t.Fatalf("stdin: %v", err)
	}
	if _, err := LoadWith(Options{Stdin: strings.NewReader(nodeDoc)}, "-", "-"); err == nil || !strings.Contains(err.Error(), "more than once") {
		t.Errorf("stdin twice: %v", err)
	}
	pending := strings.Replace(podDoc, "  nodeName: n1\n", "", 1)
	p, ps, err := LoadPodSet(Options{Stdin: strings.NewReader(pending)}, "-")
	if err != nil || p.Name != "p1" || ps.NamespaceGiven(p) {
		t.Errorf("pod from stdin: %v %v", p, err)
	}
	_, err = Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, ErrInput) || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "nope.yaml: cannot read: no such file or directory") {
		t.Errorf("missing file: %v", err)
	}
}

// TestNodeSums checks that bound pods whose requests each fit but together
// overflow the scheduler's arithmetic are refused.
func TestNodeSums(t *testing.T) {
	bound := func(name, cpu string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec: {nodeName: n1, containers: [{name: c, resources: {requests: {cpu: %q}}}]}\n", name, cpu)
	}
	s := NewSet()
	if err := s.AddBytes("f.yaml", []byte(nodeDoc+"---\n"+bound("a", "5000000000000000")+"---\n"+bound("b", "5000000000000000"))); err != nil {
		t.Fatal(err)
	}
	_, err := s.Build()
	if err == nil || !errors.Is(err, ErrInput) || !strings.HasPrefix(err.Error(), `f.yaml#3: Pod default/b: spec.nodeName: the pods bound to node "n1" together request more cpu than the scheduler can count`) {
		t.Errorf("error %v", err)
	}
	s = NewSet()
	if err := s.AddBytes("f.yaml", []byte(nodeDoc+"---\n"+bound("a", "4000000000000000")+"---\n"+bound("b", "4000000000000000"))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Build(); err != nil {
		t.Errorf("sums that fit refused: %v", err)
	}
}

// setPods returns the pods of s whole, in order, whether s keeps them
// whole or in parts (a lean set), with the objects s keeps them as.
func setPods(s *Set) ([]*v1.Pod, []any) {
	var pods []*v1.Pod
	var given []any
	for p, g := range s.Objects.AllPods() {
		pods = append(pods, p.DeepCopy())
		given = append(given, g)
	}
	return pods, given
}

// podOf returns a prepared object as a whole pod, or nil when it is not a
// pod.
func podOf(obj any) *v1.Pod {
	switch o := obj.(type) {
	case *v1.Pod:
		return o
	case *snapshot.PodParts:
		return o.Pod()
	}
	return nil
}
