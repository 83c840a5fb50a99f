package loader

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
			data:  nodeDoc + "---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: d, namespace: web}\n",
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

// FuzzLoad feeds arbitrary bytes to the loader and the snapshot builder:
// they may reject input, never panic, and every rejection is one line.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(nodeDoc + "---\n" + podDoc))
	f.Add([]byte(`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"containers":[{"name":"c"}]}}]}`))
	f.Add([]byte("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {selector: {}}\nstatus: {disruptedPods: {a: null}}\n"))
	f.Add([]byte("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: x}\nvalue: -5\nglobalDefault: true\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := NewSet()
		if err := s.AddBytes("fuzz.yaml", data); err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error: %q", err)
			}
			return
		}
		if _, err := s.Build(); err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("multi-line error: %q", err)
		}
	})
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
