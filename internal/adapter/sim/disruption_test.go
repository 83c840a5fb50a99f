package sim

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprieve/reprieve/internal/adapter/manifest"
	"github.com/reprieve/reprieve/internal/engine/profile"
)

// budgetScenario is two nodes of 2 CPUs full with Deployment web's 4
// replicas of 1 CPU (Ready 20 s after they start, gone 5 s after they are
// deleted) under a budget without a status that allows one unavailable,
// two urgent pods of 1 CPU arriving at 30 s and 40 s, each needing one
// replica evicted, and at 60 s a node of 1 CPU where only a replacement
// may run.
func budgetScenario() string {
	urgent := func(name string) string {
		return "{apiVersion: v1, kind: Pod, metadata: {name: " + name + "}, spec: {priorityClassName: urgent, " +
			"containers: [{name: c, image: i, resources: {requests: {cpu: \"1\"}}}]}}"
	}
	return docs(nodeYAML("n1", "2"), nodeYAML("n2", "2"),
		"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: urgent}\nvalue: 1000\n",
		"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\nspec: {maxUnavailable: 1, selector: {matchLabels: {app: web}}}\n",
		`apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, annotations: {reprieve.dev/ready-seconds: "20"}}
    spec:
      terminationGracePeriodSeconds: 5
      tolerations: [{key: spare, operator: Exists}]
      containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]
`,
		simulationYAML("budget", "10m")+"  actions:\n  - at: 30s\n    create: ["+urgent("urgent-a")+"]\n  - at: 40s\n    create: ["+urgent("urgent-b")+"]\n"+
			"  - at: 60s\n    create: [{apiVersion: v1, kind: Node, metadata: {name: n3}, spec: {taints: [{key: spare, effect: NoSchedule}]}, status: {allocatable: {cpu: \"1\", memory: 8Gi, pods: \"10\"}}}]\n")
}

// TestDisruptionController: the simulated disruption controller gives the
// budget its status once the replicas are Ready (one disruption allowed),
// takes it back while the evicted replica's replacement is not Ready, and
// gives it again then: under strict-pdb the second urgent pod waits for
// that and breaks nothing; under upstream's policy it evicts at once and
// breaks the budget.
func TestDisruptionController(t *testing.T) {
	tests := map[string]struct {
		policy         profile.Policy
		wantViolations int
		// wantSecondLater: urgent-b is bound after the replacement of
		// urgent-a's victim, which runs on the node created at 60 s, is
		// Ready (80 s) and the budget synced (81 s).
		wantSecondLater bool
	}{
		"strict-pdb waits for the budget":      {policy: profile.PolicyStrictPDB, wantViolations: 0, wantSecondLater: true},
		"upstream breaks it while it is spent": {policy: profile.PolicyUpstream, wantViolations: 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			res := runYAMLWith(t, budgetScenario(), Options{Costs: free(), Policy: tc.policy})
			s := res.Summary
			got := [3]int{s.Preemptions, s.PDBViolations, s.PodsPendingAtEnd}
			// One replacement finds no room.
			if diff := cmp.Diff([3]int{2, tc.wantViolations, 1}, got); diff != "" {
				t.Errorf("preemptions, PDB violations, pending at end (-want,+got):\n%s", diff)
			}
			bound := boundAt(res)
			a, b := bound["default/urgent-a"], bound["default/urgent-b"]
			if a < 30 || a > 40 {
				t.Errorf("urgent-a bound at %v s, want soon after 30 s (its victim's budget allowed one)", a)
			}
			if later := b > 81; later != tc.wantSecondLater {
				t.Errorf("urgent-b bound at %v s; after the budget allowed a disruption again (81 s): %v, want %v", b, later, tc.wantSecondLater)
			}
		})
	}
}

// TestDisruptionSyncDelay: until the controller's first sync, the budget
// read without a status allows nothing; spec.disruptionSyncDelay says when
// that sync comes.
func TestDisruptionSyncDelay(t *testing.T) {
	tests := map[string]struct {
		delay string
		// wantBoundBefore bounds when urgent-a (arriving at 30 s) is bound.
		wantBoundBefore float64
	}{
		"default 1s: synced at 21 s, once the replicas are Ready": {wantBoundBefore: 40},
		// Not synced when the urgent pods come (30 s, 40 s): strict-pdb
		// finds no victim, and the pods wait for the scheduler's next try
		// (its 5 minute flush; a budget's change requeues nothing).
		"100s: not synced when the pods come": {delay: "100s", wantBoundBefore: 400},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			doc := budgetScenario()
			if tc.delay != "" {
				doc = strings.Replace(doc, "  end: 10m\n", "  end: 10m\n  disruptionSyncDelay: "+tc.delay+"\n", 1)
			}
			res := runYAMLWith(t, doc, Options{Costs: free(), Policy: profile.PolicyStrictPDB})
			a := boundAt(res)["default/urgent-a"]
			if a >= tc.wantBoundBefore || tc.delay != "" && a < 300 {
				t.Errorf("urgent-a bound at %v s, want before %v s (and after 300 s with a delay of %s)", a, tc.wantBoundBefore, tc.delay)
			}
		})
	}
	set := manifest.NewSet()
	if err := set.AddBytes("s.yaml", []byte(strings.Replace(budgetScenario(), "  end: 10m\n", "  end: 10m\n  disruptionSyncDelay: -1s\n", 1))); err != nil {
		t.Fatal(err)
	}
	_, err := NewScenario(set)
	var ie *manifest.InputError
	if !errors.As(err, &ie) || ie.Field != "spec.disruptionSyncDelay" {
		t.Errorf("a negative delay: %v, want an InputError at spec.disruptionSyncDelay", err)
	}
}
