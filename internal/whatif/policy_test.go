package whatif_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/reprieve/reprieve/internal/engine/preemption"
	"github.com/reprieve/reprieve/internal/engine/profile"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// TestVictimPolicies shows the policies on the case upstream's greedy
// reprieve gets wrong: the oldest pod, added back first, takes exactly the
// room the preemptor needs, so both younger pods are evicted where evicting
// the oldest alone would do; and a budget that only another node spares.
func TestVictimPolicies(t *testing.T) {
	cluster := func() scenario {
		return scenario{
			nodes: []*v1.Node{node("n1", "4").Obj()},
			pods: []*v1.Pod{
				pod("old", 10, "2").On("n1").StartedAt(1).Label("app", "old").Obj(),
				pod("young-1", 10, "1").On("n1").StartedAt(2).Obj(),
				pod("young-2", 10, "1").On("n1").StartedAt(3).Obj(),
			},
			pod: pod("p", 100, "2").Obj(),
		}
	}
	tests := map[string]struct {
		policy       profile.Policy
		budget       bool
		wantNode     string
		wantVictims  []string
		wantUpstream []string
		wantSummary  string
	}{
		"upstream evicts both young pods": {
			policy: profile.PolicyUpstream, wantNode: "n1", wantVictims: []string{"default/young-1", "default/young-2"},
			wantSummary: "preempts 2 pods on n1",
		},
		"minimal evicts the old pod alone": {
			policy: profile.PolicyMinimal, wantNode: "n1", wantVictims: []string{"default/old"},
			wantUpstream: []string{"default/young-1", "default/young-2"},
			wantSummary:  "preempts 1 pod on n1; upstream would evict 2 pods on n1",
		},
		"minimal prefers two pods to a broken budget": {
			policy: profile.PolicyMinimal, budget: true, wantNode: "n1", wantVictims: []string{"default/young-1", "default/young-2"},
			wantUpstream: []string{"default/young-1", "default/young-2"},
			wantSummary:  "preempts 2 pods on n1; upstream would evict the same",
		},
		"strict-pdb likewise": {
			policy: profile.PolicyStrictPDB, budget: true, wantNode: "n1", wantVictims: []string{"default/young-1", "default/young-2"},
			wantUpstream: []string{"default/young-1", "default/young-2"},
			wantSummary:  "preempts 2 pods on n1; upstream would evict the same",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			sc := cluster()
			if tc.budget {
				sc.pdbs = []*policyv1.PodDisruptionBudget{rt.PDB("default", "old", map[string]string{"app": "old"}, 0)}
			}
			sc.opts.Policy = tc.policy
			d := evaluate(t, sc)
			var victims []string
			for _, v := range d.Victims {
				victims = append(victims, v.Pod)
			}
			if d.NominatedNode != tc.wantNode || !cmp.Equal(victims, tc.wantVictims) {
				t.Errorf("nominated %q victims %v, want %q %v", d.NominatedNode, victims, tc.wantNode, tc.wantVictims)
			}
			if !strings.HasPrefix(d.Summary, tc.wantSummary) {
				t.Errorf("summary %q, want it to start with %q", d.Summary, tc.wantSummary)
			}
			if tc.wantUpstream == nil {
				if d.Upstream != nil || d.Policy != "" {
					t.Errorf("upstream decision reported beside itself: %+v", d.Upstream)
				}
				return
			}
			if d.Upstream == nil || !cmp.Equal(d.Upstream.Victims, tc.wantUpstream) || d.Policy != string(tc.policy) {
				t.Errorf("upstream baseline %+v policy %q, want victims %v", d.Upstream, d.Policy, tc.wantUpstream)
			}
			for _, c := range d.Candidates {
				if !c.Proven {
					t.Errorf("candidate %s not proven optimal on a three-pod node", c.Node)
				}
			}
		})
	}
}

// TestStrictPDBRefuses checks that strict-pdb does not preempt when every
// way to make room breaks a budget, and says so.
func TestStrictPDBRefuses(t *testing.T) {
	sc := scenario{
		nodes: []*v1.Node{node("n1", "2").Obj()},
		pods:  []*v1.Pod{pod("guarded", 10, "2").On("n1").Label("app", "g").Obj()},
		pdbs:  []*policyv1.PodDisruptionBudget{rt.PDB("default", "g", map[string]string{"app": "g"}, 0)},
		pod:   pod("p", 100, "2").Obj(),
	}
	sc.opts.Policy = profile.PolicyStrictPDB
	d := evaluate(t, sc)
	if d.NominatedNode != "" || len(d.Victims) != 0 {
		t.Fatalf("strict-pdb preempted: %s", d.Summary)
	}
	if !strings.Contains(d.Message, preemption.MsgBreaksBudget) || d.Upstream == nil || d.Upstream.NominatedNode != "n1" {
		t.Errorf("message %q upstream %+v: want the budget named as the reason and upstream's choice of n1", d.Message, d.Upstream)
	}
}
