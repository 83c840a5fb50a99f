package whatif_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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
			wantSummary: "preempts 1 pod on n0, the victim can run elsewhere; upstream would evict 1 pod on n0 (highest priority 10, priority sum 10, 0 budgets broken, the victim would stay pending)",
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
	if !strings.Contains(d.Summary, "the victim would stay pending") || d.UnplaceableVictims == nil || *d.UnplaceableVictims != 1 {
		t.Errorf("summary %q, unplaceableVictims %v: want the victim counted pending", d.Summary, d.UnplaceableVictims)
	}
}

// TestReschedulableVictimsTogether is the held-out case of three 2-CPU
// victims and one spare node with 2 CPU: each would fit there alone, but
// once the first is bound there the other two stay pending.
func TestReschedulableVictimsTogether(t *testing.T) {
	sc := scenario{
		nodes: []*v1.Node{node("n0", "6").Obj(), node("n1", "2").Obj()},
		pods: []*v1.Pod{
			pod("v1", 10, "2").On("n0").StartedAt(1).Obj(),
			pod("v2", 10, "2").On("n0").StartedAt(2).Obj(),
			pod("v3", 10, "2").On("n0").StartedAt(3).Obj(),
		},
		pod: pod("p", 100, "6").Obj(),
	}
	sc.opts.Policy = profile.PolicyReschedulable
	d := evaluate(t, sc)
	wantVictims := []whatif.Victim{
		{Pod: "default/v1", Node: "n0", Priority: 10, ReschedulableTo: "n1"},
		{Pod: "default/v2", Node: "n0", Priority: 10, PendingReason: "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) the pod was preempted from."},
		{Pod: "default/v3", Node: "n0", Priority: 10, PendingReason: "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) the pod was preempted from."},
	}
	if diff := cmp.Diff(wantVictims, d.Victims, cmpopts.IgnoreFields(whatif.Victim{}, "StartTime")); diff != "" {
		t.Errorf("victims (-want,+got):\n%s", diff)
	}
	if d.UnplaceableVictims == nil || *d.UnplaceableVictims != 2 {
		t.Errorf("unplaceableVictims %v, want 2", d.UnplaceableVictims)
	}
	if d.Upstream == nil || d.Upstream.UnplaceableVictims == nil || *d.Upstream.UnplaceableVictims != 2 {
		t.Errorf("upstream baseline %+v, want 2 unplaceable victims", d.Upstream)
	}
	const wantSummary = "preempts 3 pods on n0, 1 of 3 victims can run elsewhere together, 2 would stay pending; upstream would evict the same"
	if d.Summary != wantSummary {
		t.Errorf("summary %q, want %q", d.Summary, wantSummary)
	}
}
