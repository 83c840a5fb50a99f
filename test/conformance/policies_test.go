package conformance

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	"github.com/reprieve/reprieve/internal/whatif"
	"github.com/reprieve/reprieve/test/conformance/gen"
)

// setCost is a victim set's standing under upstream's node-choice criteria,
// with budget violations counted for the set itself; lower is better, in
// field order, except start (later is better).
type setCost struct {
	violations int
	highest    int32
	sum        int64
	count      int
	start      int64
}

func (a setCost) compare(b setCost) int {
	return cmp.Or(cmp.Compare(a.violations, b.violations), cmp.Compare(a.highest, b.highest),
		cmp.Compare(a.sum, b.sum), cmp.Compare(a.count, b.count), cmp.Compare(b.start, a.start))
}

// costOf charges every budget each victim matches, in the decision's order,
// and scores the set as upstream's criteria do.
func costOf(snap *snapshot.Snapshot, pdbs []*policyv1.PodDisruptionBudget, victims []whatif.Victim) setCost {
	allowed := make([]int32, len(pdbs))
	selectors := make([]labels.Selector, len(pdbs))
	for i, b := range pdbs {
		allowed[i] = b.Status.DisruptionsAllowed
		if s, err := metav1.LabelSelectorAsSelector(b.Spec.Selector); err == nil && !s.Empty() {
			selectors[i] = s
		}
	}
	c := setCost{highest: victims[0].Priority, start: math.MaxInt64}
	for _, v := range victims {
		p := snap.Pod(v.Pod).Obj()
		c.sum += int64(v.Priority) + math.MaxInt32 + 1
		c.count++
		violating := false
		for i, b := range pdbs {
			if selectors[i] == nil || b.Namespace != p.Namespace || len(p.Labels) == 0 || !selectors[i].Matches(labels.Set(p.Labels)) {
				continue
			}
			if _, disrupted := b.Status.DisruptedPods[p.Name]; disrupted {
				continue
			}
			if allowed[i]--; allowed[i] < 0 {
				violating = true
			}
		}
		if violating {
			c.violations++
		}
		start := evalTime.UnixNano()
		if v.StartTime != nil {
			start = v.StartTime.UnixNano()
		}
		switch {
		case v.Priority > c.highest:
			c.highest, c.start = v.Priority, start
		case v.Priority == c.highest:
			c.start = min(c.start, start)
		}
	}
	return c
}

// policyOutcome is how one victim policy did on one scenario, compared
// with upstream's choice.
type policyOutcome struct {
	// refused: it does not preempt where upstream does (strict-pdb only).
	refused bool
	// podsSaved is upstream's victim count minus the policy's, and
	// prioritySaved upstream's highest victim priority minus the policy's.
	podsSaved     int
	prioritySaved int64
	// violations are the budgets the policy's victims break.
	violations int
	// candidates and proven count its candidates and those it proved
	// optimal; chosenProven is whether the one it chose is proven.
	candidates, proven int
	chosenProven       bool
	// pending counts, under reschedulable, the victims that would stay
	// pending.
	pending int
}

// policyCheck is what checkPolicies found on one scenario.
type policyCheck struct {
	// preempting: upstream nominates a node.
	preempting bool
	// upViolations and upPending are upstream's budgets broken and (as
	// reschedulable counts them) victims that would stay pending.
	upViolations, upPending int
	outcomes                map[profile.Policy]policyOutcome
}

// comparedPolicies are the policies checked against upstream's.
var comparedPolicies = []profile.Policy{profile.PolicyMinimal, profile.PolicyReschedulable, profile.PolicyStrictPDB}

// checkPolicies runs sc under upstream's policy and every other one and
// reports an error when one does worse than upstream under upstream's own
// node-choice order (fewest budget violations, lowest highest victim
// priority, smallest priority sum, fewest victims, latest start):
// minimal must never be worse; reschedulable must never leave more
// victims unplaceable than upstream's choice and, with as many, never be
// worse; strict-pdb must never break a budget and may only refuse to
// preempt; none may preempt where upstream does not.
func checkPolicies(t *testing.T, sc *gen.Scenario, seed int64, name string) policyCheck {
	t.Helper()
	snap, err := snapshot.New(podsInParts(snapshot.Objects{Nodes: sc.Nodes, Pods: sc.Pods, PDBs: sc.PDBs, PriorityClasses: sc.PriorityClasses,
		Namespaces: sc.Namespaces, PodGroups: sc.PodGroups, CompositePodGroups: sc.CompositePodGroups,
		ResourceSlices: sc.ResourceSlices, DeviceClasses: sc.DeviceClasses, ResourceClaims: sc.ResourceClaims,
		Storage: snapshotStorage(sc)}))
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return policyCheck{}
	}
	pod := snap.Pod(sc.Preemptor.Namespace + "/" + sc.Preemptor.Name)
	decide := func(p profile.Policy) *whatif.Decision {
		d, err := whatif.Evaluate(snap, pod, whatif.Options{Now: evalTime, Seed: uint64(seed), Policy: p})
		if err != nil {
			t.Errorf("%s: %s: %v", name, p, err)
			return nil
		}
		return d
	}
	up := decide(profile.PolicyUpstream)
	if up == nil {
		return policyCheck{}
	}
	out := policyCheck{preempting: up.NominatedNode != "", outcomes: map[profile.Policy]policyOutcome{}}
	var upCost setCost
	if out.preempting {
		upCost = costOf(snap, sc.PDBs, up.Victims)
		out.upViolations = upCost.violations
	}
	for _, p := range comparedPolicies {
		d := decide(p)
		if d == nil {
			continue
		}
		if !out.preempting {
			if d.NominatedNode != "" {
				t.Errorf("%s: upstream does not preempt, %s nominates %q", name, p, d.NominatedNode)
			}
			continue
		}
		if d.Upstream == nil || d.Upstream.NominatedNode != up.NominatedNode {
			t.Errorf("%s: %s reports upstream's choice as %+v, upstream chose %s", name, p, d.Upstream, up.NominatedNode)
		}
		if d.NominatedNode == "" {
			if p != profile.PolicyStrictPDB {
				t.Errorf("%s: %s does not preempt where upstream does", name, p)
			} else if upCost.violations == 0 {
				t.Errorf("%s: strict-pdb refuses to preempt where upstream breaks no budget", name)
			}
			out.outcomes[p] = policyOutcome{refused: true}
			continue
		}
		c := costOf(snap, sc.PDBs, d.Victims)
		o := policyOutcome{podsSaved: upCost.count - c.count, prioritySaved: int64(upCost.highest) - int64(c.highest), violations: c.violations}
		if c.violations != d.NumPDBViolations {
			t.Errorf("%s: %s reports %d budget violations, its victims make %d", name, p, d.NumPDBViolations, c.violations)
		}
		for _, cand := range d.Candidates {
			o.candidates++
			if cand.Proven {
				o.proven++
				if cand.Node == d.NominatedNode {
					o.chosenProven = true
				}
			}
		}
		switch p {
		case profile.PolicyMinimal:
			if c.compare(upCost) > 0 {
				t.Errorf("%s: minimal's %v on %s is worse than upstream's %v on %s", name, c, d.NominatedNode, upCost, up.NominatedNode)
			}
		case profile.PolicyReschedulable:
			u := d.Upstream
			if u == nil || u.UnplaceableVictims == nil {
				t.Errorf("%s: reschedulable does not count upstream's unplaceable victims: %+v", name, u)
				break
			}
			out.upPending = *u.UnplaceableVictims
			for _, v := range d.Victims {
				if v.ReschedulableTo == "" {
					o.pending++
					if !strings.HasPrefix(v.PendingReason, "0/") {
						t.Errorf("%s: reschedulable victim %s has neither a node nor a pending reason: %q", name, v.Pod, v.PendingReason)
					}
				}
			}
			if o.pending > out.upPending || (o.pending == out.upPending && c.compare(upCost) > 0) {
				t.Errorf("%s: reschedulable's %d pending victims, %v on %s, are worse than upstream's %d, %v on %s",
					name, o.pending, c, d.NominatedNode, out.upPending, upCost, up.NominatedNode)
			}
		case profile.PolicyStrictPDB:
			if c.violations > 0 {
				t.Errorf("%s: strict-pdb breaks %d budget(s) on %s", name, c.violations, d.NominatedNode)
			}
			if upCost.violations == 0 && c.compare(upCost) > 0 {
				t.Errorf("%s: strict-pdb's %v on %s is worse than upstream's %v on %s, which breaks no budget", name, c, d.NominatedNode, upCost, up.NominatedNode)
			}
		}
		out.outcomes[p] = o
	}
	return out
}

// quantile is the q-quantile of sorted values (0 when there are none).
func quantile[T cmp.Ordered](sorted []T, q float64) T {
	var zero T
	if len(sorted) == 0 {
		return zero
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

// policyStats sums checkPolicies' findings over scenarios, per policy.
type policyStats struct {
	scenarios, preempting, upBroken, upPending int
	policies                                   map[profile.Policy]*policyTally
}

// policyTally is one policy's share of policyStats.
type policyTally struct {
	fewer, lower, more, higher, refused, broken, candidates, proven, chosenProven, fewerPending, pending int
	// podsSaved and prioritySaved hold the savings of the scenarios where
	// the policy evicts fewer pods, respectively lower-priority ones.
	podsSaved     []int
	prioritySaved []int64
}

func (s *policyStats) add(c policyCheck) {
	s.scenarios++
	if !c.preempting {
		return
	}
	s.preempting++
	s.upPending += c.upPending
	if c.upViolations > 0 {
		s.upBroken++
	}
	if s.policies == nil {
		s.policies = map[profile.Policy]*policyTally{}
	}
	for p, o := range c.outcomes {
		t := s.policies[p]
		if t == nil {
			t = &policyTally{}
			s.policies[p] = t
		}
		if o.refused {
			t.refused++
			continue
		}
		if o.podsSaved > 0 {
			t.fewer++
			t.podsSaved = append(t.podsSaved, o.podsSaved)
		}
		if o.prioritySaved > 0 {
			t.lower++
			t.prioritySaved = append(t.prioritySaved, o.prioritySaved)
		}
		if o.podsSaved < 0 {
			t.more++
		}
		if o.prioritySaved < 0 {
			t.higher++
		}
		if o.violations > 0 {
			t.broken++
		}
		t.candidates += o.candidates
		t.proven += o.proven
		if o.chosenProven {
			t.chosenProven++
		}
		t.pending += o.pending
		if o.pending < c.upPending {
			t.fewerPending++
		}
	}
}

// report is the evidence the README quotes, one line per policy.
func (s *policyStats) report(genProfile gen.Profile) string {
	var b strings.Builder
	fmt.Fprintf(&b, "profile %s: %d scenarios, %d preempting (upstream breaks a budget in %d, leaves %d victims pending)",
		genProfile, s.scenarios, s.preempting, s.upBroken, s.upPending)
	pct := func(n int) string { return fmt.Sprintf("%d (%.1f%%)", n, 100*float64(n)/float64(max(s.preempting, 1))) }
	for _, p := range comparedPolicies {
		t := s.policies[p]
		if t == nil {
			t = &policyTally{}
		}
		slices.Sort(t.podsSaved)
		slices.Sort(t.prioritySaved)
		fmt.Fprintf(&b, "\n  %s: evicts fewer pods in %s, pods saved median %d p90 %d max %d; lower-priority pods in %s, highest priority lower by median %d p90 %d; "+
			"more pods in %d, higher-priority pods in %d; %d of %d candidates and %d of %d choices proven optimal; breaks a budget in %d; refuses %d",
			p, pct(t.fewer), quantile(t.podsSaved, 0.5), quantile(t.podsSaved, 0.9), quantile(t.podsSaved, 1),
			pct(t.lower), quantile(t.prioritySaved, 0.5), quantile(t.prioritySaved, 0.9), t.more, t.higher,
			t.proven, t.candidates, t.chosenProven, s.preempting-t.refused, t.broken, t.refused)
		if p == profile.PolicyReschedulable {
			fmt.Fprintf(&b, "; leaves fewer victims pending in %s (%d pending in all)", pct(t.fewerPending), t.pending)
		}
	}
	return b.String()
}

// TestPoliciesNeverWorse runs every random scenario of every profile under
// upstream's policy and under minimal, reschedulable and strict-pdb, holds
// them to checkPolicies' properties, and logs how often and by how much
// each does better than upstream (the figures the README quotes):
//
//	REPRIEVE_SCENARIOS=1000 go test -run TestPoliciesNeverWorse -v .
func TestPoliciesNeverWorse(t *testing.T) {
	for _, profile := range append(gen.Profiles(), gen.DRA) {
		t.Run(string(profile), func(t *testing.T) {
			t.Parallel()
			var stats policyStats
			for i := range *scenarios {
				seed := *firstSeed + int64(i)
				stats.add(checkPolicies(t, gen.Generate(seed, profile), seed, fmt.Sprintf("%s-%d", profile, seed)))
			}
			t.Log(stats.report(profile))
		})
	}
}
