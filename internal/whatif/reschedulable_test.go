package whatif_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/whatif"
)

// TestReschedulablePlacements shows, per victim, where it would go or why
// it would stay pending: minimal evicts the younger of two equal pods,
// which is pinned to its node; reschedulable evicts the other, which fits
// on n1.
func TestReschedulablePlacements(t *testing.T) {
	tests := map[string]struct {
		policy      profile.Policy
		wantVictims []whatif.Victim
		wantSummary string
		wantExplain string
	}{
		"minimal says nothing of placements": {
			policy:      profile.PolicyMinimal,
			wantVictims: []whatif.Victim{{Pod: "default/pinned", Node: "n0", Priority: 10}},
			wantSummary: "preempts 1 pod on n0; upstream would evict the same",
		},
		"reschedulable evicts the pod that can go elsewhere": {
			policy:      profile.PolicyReschedulable,
			wantVictims: []whatif.Victim{{Pod: "default/free", Node: "n0", Priority: 10, ReschedulableTo: "n1"}},
			wantSummary: "preempts 1 pod on n0, every victim can run elsewhere; upstream would evict 1 pod on n0 (highest priority 10, priority sum 10, 0 budgets broken, 1 victim would stay pending)",
			wantExplain: "\nRESCHED   victim default/free could run on n1\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			sc := scenario{
				nodes: []*v1.Node{node("n0", "2").Obj(), node("n1", "1").Obj()},
				pods: []*v1.Pod{
					pod("free", 10, "1").On("n0").Obj(),
					pod("pinned", 10, "1").NodeNameIn("n0").On("n0").Obj(),
				},
				pod: pod("p", 100, "1").NodeNameIn("n0").Obj(),
			}
			sc.opts.Policy = tc.policy
			d := evaluate(t, sc)
			if diff := cmp.Diff(tc.wantVictims, d.Victims); diff != "" {
				t.Errorf("victims (-want,+got):\n%s", diff)
			}
			if d.Summary != tc.wantSummary {
				t.Errorf("summary %q, want %q", d.Summary, tc.wantSummary)
			}
			var buf bytes.Buffer
			if err := whatif.WritePlacements(&buf, d); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantExplain, buf.String()); diff != "" {
				t.Errorf("explanation (-want,+got):\n%s", diff)
			}
			js, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(js), `"reschedulableTo":"n1"`); got != (tc.policy == profile.PolicyReschedulable) {
				t.Errorf("JSON has reschedulableTo: %v, want %v: %s", got, !got, js)
			}
		})
	}
}

// TestReschedulablePendingReason checks the reason given for a victim that
// fits nowhere else.
func TestReschedulablePendingReason(t *testing.T) {
	sc := scenario{
		nodes: []*v1.Node{node("n0", "1").Obj(), node("n1", "1").Obj()},
		pods: []*v1.Pod{
			pod("pinned", 10, "1").NodeNameIn("n0").On("n0").Obj(),
			pod("big", 1000, "1").On("n1").Obj(),
		},
		pod: pod("p", 100, "1").NodeNameIn("n0").Obj(),
	}
	sc.opts.Policy = profile.PolicyReschedulable
	d := evaluate(t, sc)
	want := []whatif.Victim{{Pod: "default/pinned", Node: "n0", Priority: 10,
		PendingReason: "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) the pod was preempted from."}}
	if diff := cmp.Diff(want, d.Victims); diff != "" {
		t.Errorf("victims (-want,+got):\n%s", diff)
	}
	if !strings.Contains(d.Summary, "1 victim would stay pending") {
		t.Errorf("summary %q does not count the pending victim", d.Summary)
	}
}
