package manifest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// badInputs are the inputs of issue 13 and their neighbours, seeding the
// fuzzers.
var badInputs = []string{
	nodeDoc,
	podDoc,
	nodeDoc + "---\n" + podDoc,
	"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {limits: {cpu: \"3\"}}}]}\n",
	"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {cpu: \"-1\", memory: \"-5Gi\"}}}]}\n",
	"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {cpu: \"1e20\", memory: 1e30}}}]}\n",
	"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {cpu: \"9223372036854776\"}}}]}\n",
	"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {cpu: \"1e-10000000\"}}}]}\n",
	"apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacity: {cpu: \"-4\"}, allocatable: {cpu: \"-4\"}}\n",
	"apiVersion: v1\nkind: Pod\nmetadata: {name: Bad_Name}\nspec: {tolerations: [{key: k, operator: Maybe}], containers: [{name: c}, {name: c}]}\n",
	"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: -3, selector: {matchLabels: {app: a}}, template: {metadata: {labels: {app: b}}, spec: {containers: [{name: c}]}}}\n",
	"apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {parallelism: -2, template: {spec: {restartPolicy: Never, containers: [{name: c}]}}}\n",
	"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: a}\nvalue: 1\nglobalDefault: true\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: b}\nvalue: 2\nglobalDefault: true\n",
	"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeSelectr: {a: b}, containers: [{name: c}]}\n",
	"apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatabel: {cpu: 4}, allocatable: {cpu: 1, cpu: 2}}\n",
	"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: n1}}\n- {apiVersion: v1, kind: List, items: []}\n",
	"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {minAvailable: 150%, maxUnavailable: 1, selector: {matchExpressions: [{key: a, operator: Bogus}]}}\n",
	"a: &a [*a, *a]\nb: *a\n",
	"---\n---\n",
	"- a\n- b\n",
}

var badJSON = []string{
	`{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4", "cpu": "64"}}}`,
	`{"apiVersion": "v1", "kind": "PodList", "items": [{"metadata": {"name": "p", "namespace": "x"}, "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": 3}}}]}}]}`,
	`{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": 1e20}}}]}}`,
	`{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "imag": "x"}], "priority": 99999999999}}`,
	`{"kind": "Node"}{"kind": "Pod"}`,
}

// FuzzQuantities fuzzes the quantities of a node and of two pods bound to
// it: whatever is accepted is non-negative, and the snapshot built from it
// counts what the pods request without wrapping around.
func FuzzQuantities(f *testing.F) {
	for _, q := range [][3]string{{"4", "3", "1Gi"}, {"-4", "-1", "-5Gi"}, {"4", "1e20", "1e30"}, {"4", "9223372036854775", "9223372036854775807"},
		{"4", "9223372036854776", "9223372036854775808"}, {"1e-10000000", "0.0001", "1Ei"}, {"4", "5000000000000000", "8Ei"}} {
		f.Add(q[0], q[1], q[2])
	}
	f.Fuzz(func(t *testing.T, alloc, cpu, mem string) {
		pod := func(name string) string {
			return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec: {nodeName: n1, containers: [{name: c, resources: {limits: {cpu: %q, memory: %q}}}]}\n", name, cpu, mem)
		}
		doc := fmt.Sprintf("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: %q, memory: %q, pods: \"10\"}}\n---\n", alloc, mem) + pod("a") + "---\n" + pod("b")
		s := NewSet()
		if err := s.AddBytes("f", []byte(doc)); err != nil {
			if !errors.Is(err, ErrInput) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("bad error %q", err)
			}
			return
		}
		for _, q := range []string{alloc, cpu, mem} {
			if v, err := resource.ParseQuantity(q); err == nil && v.Sign() < 0 {
				t.Fatalf("negative quantity %q accepted", q)
			}
		}
		snap, err := s.Build()
		if err != nil {
			if !errors.Is(err, ErrInput) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("bad build error %q", err)
			}
			return
		}
		n := snap.Node("n1")
		if n == nil {
			t.Fatal("node lost")
		}
		for _, p := range s.Objects.Pods {
			r := snapshot.AssignedPodRequests(p)
			if r.MilliCPU < 0 || r.Memory < 0 {
				t.Fatalf("pod %s counts negative requests %+v", p.Name, r)
			}
		}
	})
}
