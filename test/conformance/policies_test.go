package conformance

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/reprieve/reprieve/pkg/preemption"
	"github.com/reprieve/reprieve/pkg/snapshot"
	"github.com/reprieve/reprieve/pkg/whatif"
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
		p := snap.Pod(v.Pod).Obj
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

// TestPoliciesNeverWorse runs every random scenario of every profile under
// upstream's policy and under minimal, reschedulable and strict-pdb, and
// checks that minimal's choice is never worse than upstream's under
// upstream's own criteria, that reschedulable's never leaves more victims
// unplaceable than upstream's and with as many is never worse on that
// order, that strict-pdb never breaks a budget, and that they preempt only
// where upstream does. It reports how often and by how much minimal
// does better.
func TestPoliciesNeverWorse(t *testing.T) {
	for _, profile := range append(gen.Profiles(), gen.DRA) {
		t.Run(string(profile), func(t *testing.T) {
			t.Parallel()
			var preempting, fewer, lowerPriority, proven, candidates, strictRefused, fewerPending int
			var savings []int
			for i := range *scenarios {
				seed := *firstSeed + int64(i)
				sc := gen.Generate(seed, profile)
				snap, err := snapshot.New(snapshot.Objects{Nodes: sc.Nodes, Pods: sc.Pods, PDBs: sc.PDBs, PriorityClasses: sc.PriorityClasses,
					Namespaces: sc.Namespaces, PodGroups: sc.PodGroups, CompositePodGroups: sc.CompositePodGroups,
					ResourceSlices: sc.ResourceSlices, DeviceClasses: sc.DeviceClasses, ResourceClaims: sc.ResourceClaims,
					Storage: snapshotStorage(sc)})
				if err != nil {
					t.Fatalf("%s-%d: %v", profile, seed, err)
				}
				pod := snap.Pod(sc.Preemptor.Namespace + "/" + sc.Preemptor.Name)
				decide := func(p preemption.Policy) *whatif.Decision {
					d, err := whatif.Evaluate(snap, pod, whatif.Options{Preemption: preemption.Options{Now: evalTime, Seed: uint64(seed), Policy: p}})
					if err != nil {
						t.Fatalf("%s-%d: %v", profile, seed, err)
					}
					return d
				}
				up, minimal, strict := decide(preemption.Upstream), decide(preemption.Minimal), decide(preemption.StrictPDB)
				name := fmt.Sprintf("%s-%d", profile, seed)
				if up.NominatedNode == "" {
					if minimal.NominatedNode != "" || strict.NominatedNode != "" {
						t.Errorf("%s: upstream does not preempt, minimal nominates %q, strict-pdb %q", name, minimal.NominatedNode, strict.NominatedNode)
					}
					continue
				}
				preempting++
				if minimal.Upstream == nil || minimal.Upstream.NominatedNode != up.NominatedNode {
					t.Errorf("%s: minimal reports upstream's choice as %+v, upstream chose %s", name, minimal.Upstream, up.NominatedNode)
				}
				upCost := costOf(snap, sc.PDBs, up.Victims)
				if minimal.NominatedNode == "" {
					t.Errorf("%s: minimal does not preempt where upstream does", name)
					continue
				}
				minCost := costOf(snap, sc.PDBs, minimal.Victims)
				if minCost.compare(upCost) > 0 {
					t.Errorf("%s: minimal's %v on %s is worse than upstream's %v on %s", name, minCost, minimal.NominatedNode, upCost, up.NominatedNode)
				}
				if minCost.violations != minimal.NumPDBViolations {
					t.Errorf("%s: minimal reports %d budget violations, its victims make %d", name, minimal.NumPDBViolations, minCost.violations)
				}
				if minCost.count < upCost.count {
					fewer++
				}
				if minCost.highest < upCost.highest {
					lowerPriority++
				}
				savings = append(savings, upCost.count-minCost.count)
				for _, c := range minimal.Candidates {
					candidates++
					if c.Proven {
						proven++
					}
				}
				// Reschedulable: never more victims that fit nowhere else
				// than upstream's choice, and with as many, never worse on
				// upstream's order.
				if resched := decide(preemption.Reschedulable); resched.NominatedNode == "" {
					t.Errorf("%s: reschedulable does not preempt where upstream does", name)
				} else if u := resched.Upstream; u == nil || u.UnplaceableVictims == nil {
					t.Errorf("%s: reschedulable does not count upstream's unplaceable victims: %+v", name, u)
				} else {
					pending := 0
					for _, v := range resched.Victims {
						if v.ReschedulableTo == "" {
							pending++
						}
					}
					c := costOf(snap, sc.PDBs, resched.Victims)
					if pending > *u.UnplaceableVictims || (pending == *u.UnplaceableVictims && c.compare(upCost) > 0) {
						t.Errorf("%s: reschedulable's %d pending victims, %v on %s, are worse than upstream's %d, %v on %s",
							name, pending, c, resched.NominatedNode, *u.UnplaceableVictims, upCost, up.NominatedNode)
					}
					if pending < *u.UnplaceableVictims {
						fewerPending++
					}
				}
				if strict.NominatedNode == "" {
					strictRefused++
				} else if c := costOf(snap, sc.PDBs, strict.Victims); c.violations > 0 {
					t.Errorf("%s: strict-pdb breaks %d budget(s) on %s", name, c.violations, strict.NominatedNode)
				}
			}
			slices.Sort(savings)
			quantile := func(q float64) int {
				if len(savings) == 0 {
					return 0
				}
				return savings[min(len(savings)-1, int(q*float64(len(savings))))]
			}
			t.Logf("profile %s: %d scenarios, %d preempting; minimal evicts fewer pods in %d, lower-priority pods in %d; "+
				"pods saved per preemption median %d, p90 %d, max %d; %d of %d candidates proven optimal; strict-pdb refuses %d; "+
				"reschedulable leaves fewer victims pending in %d",
				profile, *scenarios, preempting, fewer, lowerPriority, quantile(0.5), quantile(0.9), quantile(1), proven, candidates, strictRefused, fewerPending)
		})
	}
}
