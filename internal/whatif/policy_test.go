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
	"github.com/reprieve/reprieve/internal/whatif"
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

// TestMinimalSearchesBeyondUpstream is the held-out case of a preemptor with
// required affinity to app=db pods in its zone. On n-a, upstream's dry run
// removes every lower-priority pod, the zone's db pods with them, and drops
// the node; yet evicting the guard alone (priority -1, whose anti-affinity
// keeps the preemptor away) makes room. Upstream evicts the four batch pods
// of n-b instead and breaks their budget.
func TestMinimalSearchesBeyondUpstream(t *testing.T) {
	sc := scenario{
		nodes: []*v1.Node{node("n-a", "6").Zone("zone-a").Obj(), node("n-b", "5").Zone("zone-b").Obj()},
		pods: []*v1.Pod{
			pod("db-0", 0, "1").Label("app", "db").On("n-a").StartedAt(1).Obj(),
			pod("db-1", 0, "1").Label("app", "db").On("n-a").StartedAt(2).Obj(),
			pod("guard", -1, "1").PodAntiAffinity(v1.LabelHostname, map[string]string{"app": "web"}).On("n-a").StartedAt(3).Obj(),
			pod("db-b", 1000, "1").Label("app", "db").On("n-b").StartedAt(1).Obj(),
			pod("batch-1", 0, "1").Label("app", "batch").On("n-b").StartedAt(2).Obj(),
			pod("batch-2", 0, "1").Label("app", "batch").On("n-b").StartedAt(3).Obj(),
			pod("batch-3", 0, "1").Label("app", "batch").On("n-b").StartedAt(4).Obj(),
			pod("batch-4", 0, "1").Label("app", "batch").On("n-b").StartedAt(5).Obj(),
		},
		pdbs: []*policyv1.PodDisruptionBudget{rt.PDB("default", "batch", map[string]string{"app": "batch"}, 3)},
		pod:  pod("web", 100, "4").Label("app", "web").PodAffinity(v1.LabelTopologyZone, map[string]string{"app": "db"}).Obj(),
	}
	upstreamVictims := []string{"default/batch-1", "default/batch-2", "default/batch-3", "default/batch-4"}
	tests := map[string]struct {
		policy      profile.Policy
		wantNode    string
		wantVictims []string
	}{
		"upstream evicts four pods on n-b": {policy: profile.PolicyUpstream, wantNode: "n-b", wantVictims: upstreamVictims},
		"minimal evicts the guard on n-a":  {policy: profile.PolicyMinimal, wantNode: "n-a", wantVictims: []string{"default/guard"}},
		"strict-pdb likewise":              {policy: profile.PolicyStrictPDB, wantNode: "n-a", wantVictims: []string{"default/guard"}},
		"reschedulable likewise":           {policy: profile.PolicyReschedulable, wantNode: "n-a", wantVictims: []string{"default/guard"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			sc := sc
			sc.opts.Policy = tc.policy
			d := evaluate(t, sc)
			var victims []string
			for _, v := range d.Victims {
				victims = append(victims, v.Pod)
			}
			if d.NominatedNode != tc.wantNode || !cmp.Equal(victims, tc.wantVictims) {
				t.Fatalf("nominated %q victims %v, want %q %v (%s)", d.NominatedNode, victims, tc.wantNode, tc.wantVictims, d.Summary)
			}
			if tc.policy == profile.PolicyUpstream {
				return
			}
			if d.Upstream == nil || d.Upstream.NominatedNode != "n-b" || !cmp.Equal(d.Upstream.Victims, upstreamVictims) {
				t.Errorf("upstream baseline %+v, want n-b %v", d.Upstream, upstreamVictims)
			}
			wantSearch := &whatif.PolicySearch{Searched: []string{"n-a", "n-b"}, BeyondUpstream: []string{"n-a"},
				NodeLimit: preemption.MaxPolicyNodes, StepLimit: preemption.MaxSearchSteps, BeyondStepLimit: preemption.MaxBeyondSteps}
			if tc.policy == profile.PolicyReschedulable {
				wantSearch.PlacementLimit = preemption.MaxPlacementWork
			}
			if diff := cmp.Diff(wantSearch, d.Search); diff != "" {
				t.Errorf("search (-want,+got):\n%s", diff)
			}
			if !strings.Contains(d.Summary, "a node upstream's dry run drops") {
				t.Errorf("summary %q does not say upstream drops n-a", d.Summary)
			}
			if _, ok := d.NodeStatuses.Get("n-a"); ok {
				t.Errorf("n-a, a candidate, has a rejection status")
			}
			for _, c := range d.Candidates {
				if !c.Proven {
					t.Errorf("candidate %s not proven on a node of three pods", c.Node)
				}
			}
		})
	}
}
