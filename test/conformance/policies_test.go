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

	"github.com/reprieve/reprieve/internal/engine/filter"
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

// victimCost scores victims, given in importance order, as upstream's
// node-choice criteria score a candidate: every budget each matches is
// charged in that order, and a victim at which some budget goes negative
// is a violation.
func victimCost(pdbs []*policyv1.PodDisruptionBudget, victims []*snapshot.Pod) setCost {
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
		p := v.Obj()
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
		if st := p.Status.StartTime; st != nil {
			start = st.UnixNano()
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

// costOf scores a decision's victims, in its order (victimCost).
func costOf(snap *snapshot.Snapshot, pdbs []*policyv1.PodDisruptionBudget, victims []whatif.Victim) setCost {
	pods := make([]*snapshot.Pod, len(victims))
	for i, v := range victims {
		pods[i] = snap.Pod(v.Pod)
	}
	return victimCost(pdbs, pods)
}

// maxBruteForcePods is the most potential victims of a node the brute
// force enumerates the subsets of.
const maxBruteForcePods = 12

// nodeOptimum is the brute force on one node.
type nodeOptimum struct {
	// best is the cost of the best victim set that makes the preemptor
	// fit, nil when none does; enumerated is false when the node has
	// more than maxBruteForcePods potential victims (best is nil then).
	best       *setCost
	enumerated bool
	// fits reports whether evicting the named pods makes room.
	fits func(victims []string) bool
}

// bruteForce enumerates every subset of the pods of node below the
// preemptor's priority. A subset makes room when the preemptor passes
// every filter, with the pods nominated there, on the node as upstream's
// dry run reaches it for that subset: every potential victim removed,
// the others added back, most important first. It shares no code with the
// policies' search but the filter cycle, whose verdicts TestDifferential
// holds to kube-scheduler's.
func bruteForce(c *filter.Cycle, pdbs []*policyv1.PodDisruptionBudget, node *snapshot.Node) nodeOptimum {
	prio := c.Pod().Priority
	var pods []*snapshot.Pod
	for _, p := range node.Pods {
		if p.Priority < prio {
			pods = append(pods, p)
		}
	}
	// Most important first: higher priority, then the earlier start (a
	// pod that has not started counts as starting now).
	start := func(p *snapshot.Pod) int64 {
		if s, ok := p.StartNanos(); ok {
			return s
		}
		return evalTime.UnixNano()
	}
	slices.SortStableFunc(pods, func(a, b *snapshot.Pod) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(start(a), start(b)))
	})
	fitsMask := func(mask int) bool {
		st, nv := c.StateOf(), c.NodeViewOf(node)
		for _, p := range pods {
			c.RemovePod(&st, &nv, p, node)
		}
		for i, p := range pods {
			if mask&(1<<i) == 0 {
				c.AddPod(&st, &nv, p, node)
			}
		}
		return c.FilterWithNominatedPods(&st, &nv, false).IsSuccess()
	}
	o := nodeOptimum{enumerated: len(pods) <= maxBruteForcePods}
	o.fits = func(victims []string) bool {
		mask := 0
		for _, v := range victims {
			i := slices.IndexFunc(pods, func(p *snapshot.Pod) bool { return p.Key == v })
			if i < 0 {
				return false
			}
			mask |= 1 << i
		}
		return mask != 0 && fitsMask(mask)
	}
	if !o.enumerated {
		return o
	}
	victims := make([]*snapshot.Pod, 0, len(pods))
	for mask := 1; mask < 1<<len(pods); mask++ {
		if !fitsMask(mask) {
			continue
		}
		victims = victims[:0]
		for i, p := range pods {
			if mask&(1<<i) != 0 {
				victims = append(victims, p)
			}
		}
		if sc := victimCost(pdbs, victims); o.best == nil || sc.compare(*o.best) < 0 {
			o.best = &sc
		}
	}
	return o
}

// clusterOptimum is the brute force over every potential node of a
// scenario: the best victim set of the cluster, and the best that breaks
// no budget (nil when there is none), when every node was enumerated.
type clusterOptimum struct {
	nodes            map[string]nodeOptimum
	best, bestStrict *setCost
	// complete: every potential node was enumerated.
	complete bool
}

func bruteForceCluster(snap *snapshot.Snapshot, pod *snapshot.Pod, pdbs []*policyv1.PodDisruptionBudget) clusterOptimum {
	c := filter.NewCycle(snap, pod, filter.Options{Parallelism: 1})
	fr := c.FilterAll()
	out := clusterOptimum{nodes: map[string]nodeOptimum{}, complete: true}
	for i, n := range snap.Nodes {
		if fr.Statuses[i].Code != filter.Unschedulable {
			continue
		}
		o := bruteForce(c, pdbs, n)
		out.nodes[n.Name] = o
		if !o.enumerated {
			out.complete = false
			continue
		}
		if o.best == nil {
			continue
		}
		if out.best == nil || o.best.compare(*out.best) < 0 {
			out.best = o.best
		}
		if o.best.violations == 0 && (out.bestStrict == nil || o.best.compare(*out.bestStrict) < 0) {
			out.bestStrict = o.best
		}
	}
	return out
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
	// beyond: it nominates a node upstream's dry run drops (removing
	// every lower-priority pod there breaks what the pod needs); alone:
	// upstream nominates no node at all.
	beyond, alone bool
	// checked: the brute force binds the policy's choice (minimal: the
	// best set of the cluster; strict-pdb: the best that breaks no
	// budget; none when there is none), as it enumerated every potential
	// node and no work bound cut the policy's search; optimal: the choice
	// is the brute force's.
	checked, optimal bool
}

// policyCheck is what checkPolicies found on one scenario.
type policyCheck struct {
	// preempting: upstream nominates a node.
	preempting bool
	// upViolations and upPending are upstream's budgets broken and (as
	// reschedulable counts them) victims that would stay pending.
	upViolations, upPending int
	// bruteForced: the pod fits nowhere, may preempt, and the brute force
	// enumerated every potential node; tooBig counts the potential nodes
	// it could not enumerate.
	bruteForced bool
	tooBig      int
	outcomes    map[profile.Policy]policyOutcome
}

// comparedPolicies are the policies checked against upstream's.
var comparedPolicies = []profile.Policy{profile.PolicyMinimal, profile.PolicyReschedulable, profile.PolicyStrictPDB}

// checkPolicies runs sc under upstream's policy and every other one and
// reports an error when one breaks its promise. Against upstream's choice,
// under upstream's own node-choice order (fewest budget violations,
// lowest highest victim priority, smallest priority sum, fewest victims,
// latest start): minimal must never be worse; reschedulable must never
// leave more victims unplaceable than upstream's choice and, with as many,
// never be worse; strict-pdb must never break a budget and may only
// refuse to preempt when every set breaks one. Against the brute force
// over every subset of every potential node's lower-priority pods
// (bruteForceCluster), unless a work bound cut the search off: minimal
// chooses the best set of the cluster, strict-pdb the best that breaks no
// budget, each proven candidate of theirs is its node's best, and no
// policy preempts where no set makes room; every policy's victims make
// room. A policy may preempt where upstream does not only on a node
// upstream's dry run drops.
func checkPolicies(t *testing.T, sc *gen.Scenario, seed int64, name string) policyCheck {
	t.Helper()
	snap, err := snapshot.New(snapshotObjects(sc))
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
	var opt clusterOptimum
	if up.Eligible && !up.Fits && up.DryRun != nil {
		opt = bruteForceCluster(snap, pod, sc.PDBs)
		out.bruteForced = opt.complete
		for _, o := range opt.nodes {
			if !o.enumerated {
				out.tooBig++
			}
		}
	}
	costOfNames := func(names []string) setCost {
		pods := make([]*snapshot.Pod, len(names))
		for i, n := range names {
			pods[i] = snap.Pod(n)
		}
		return victimCost(sc.PDBs, pods)
	}
	for _, p := range comparedPolicies {
		d := decide(p)
		if d == nil {
			continue
		}
		var want *setCost // the brute force's optimum for p, when it binds p
		if p != profile.PolicyReschedulable && opt.complete && d.Search != nil && len(d.Search.CutOff) == 0 {
			want = opt.best
			if p == profile.PolicyStrictPDB {
				want = opt.bestStrict
			}
		}
		checked := p != profile.PolicyReschedulable && opt.complete && d.Search != nil && len(d.Search.CutOff) == 0
		if d.NominatedNode == "" {
			switch {
			case want != nil:
				t.Errorf("%s: %s does not preempt, the brute force finds %v", name, p, *want)
			case !out.preempting:
			case p != profile.PolicyStrictPDB:
				t.Errorf("%s: %s does not preempt where upstream does", name, p)
			case upCost.violations == 0:
				t.Errorf("%s: strict-pdb refuses to preempt where upstream breaks no budget", name)
			}
			out.outcomes[p] = policyOutcome{refused: out.preempting, checked: checked, optimal: checked && want == nil}
			continue
		}
		var victims []string
		for _, v := range d.Victims {
			victims = append(victims, v.Pod)
		}
		if o, ok := opt.nodes[d.NominatedNode]; !ok || !o.fits(victims) {
			t.Errorf("%s: %s's victims %v make no room on %s (a potential node: %v)", name, p, victims, d.NominatedNode, ok)
		}
		c := costOf(snap, sc.PDBs, d.Victims)
		o := policyOutcome{violations: c.violations, beyond: d.Search != nil && slices.Contains(d.Search.BeyondUpstream, d.NominatedNode), checked: checked}
		if c.violations != d.NumPDBViolations {
			t.Errorf("%s: %s reports %d budget violations, its victims make %d", name, p, d.NumPDBViolations, c.violations)
		}
		if !out.preempting {
			if !o.beyond {
				t.Errorf("%s: upstream does not preempt, %s nominates %q, which upstream's dry run does not drop", name, p, d.NominatedNode)
			}
			if d.Upstream == nil || d.Upstream.NominatedNode != "" {
				t.Errorf("%s: %s reports upstream's choice as %+v, upstream does not preempt", name, p, d.Upstream)
			}
			o.alone = true
		} else {
			o.podsSaved, o.prioritySaved = upCost.count-c.count, int64(upCost.highest)-int64(c.highest)
			if d.Upstream == nil || d.Upstream.NominatedNode != up.NominatedNode {
				t.Errorf("%s: %s reports upstream's choice as %+v, upstream chose %s", name, p, d.Upstream, up.NominatedNode)
			}
		}
		for _, cand := range d.Candidates {
			o.candidates++
			if !cand.Proven {
				continue
			}
			o.proven++
			if cand.Node == d.NominatedNode {
				o.chosenProven = true
			}
			nodeOpt := opt.nodes[cand.Node]
			if p != profile.PolicyReschedulable && nodeOpt.enumerated && (nodeOpt.best == nil || costOfNames(cand.Victims).compare(*nodeOpt.best) != 0) {
				t.Errorf("%s: %s's candidate %s (%v) is proven, the brute force finds %v there", name, p, cand.Node, costOfNames(cand.Victims), nodeOpt.best)
			}
		}
		switch {
		case !checked:
		case want == nil:
			t.Errorf("%s: %s chose %v on %s, the brute force finds no set", name, p, c, d.NominatedNode)
		case c.compare(*want) != 0:
			t.Errorf("%s: %s chose %v on %s, the brute force finds %v", name, p, c, d.NominatedNode, *want)
		default:
			o.optimal = true
		}
		switch p {
		case profile.PolicyMinimal:
			if out.preempting && c.compare(upCost) > 0 {
				t.Errorf("%s: minimal's %v on %s is worse than upstream's %v on %s", name, c, d.NominatedNode, upCost, up.NominatedNode)
			}
		case profile.PolicyReschedulable:
			u := d.Upstream
			if u == nil || (out.preempting && u.UnplaceableVictims == nil) || d.UnplaceableVictims == nil {
				t.Errorf("%s: reschedulable does not count the unplaceable victims: %+v, upstream's %+v", name, d.UnplaceableVictims, u)
				break
			}
			for _, v := range d.Victims {
				if v.ReschedulableTo == "" {
					o.pending++
					if !strings.HasPrefix(v.PendingReason, "0/") {
						t.Errorf("%s: reschedulable victim %s has neither a node nor a pending reason: %q", name, v.Pod, v.PendingReason)
					}
				}
			}
			if o.pending != *d.UnplaceableVictims {
				t.Errorf("%s: reschedulable counts %d unplaceable victims, %d have no node", name, *d.UnplaceableVictims, o.pending)
			}
			if !out.preempting {
				break
			}
			out.upPending = *u.UnplaceableVictims
			if o.pending > out.upPending || (o.pending == out.upPending && c.compare(upCost) > 0) {
				t.Errorf("%s: reschedulable's %d pending victims, %v on %s, are worse than upstream's %d, %v on %s",
					name, o.pending, c, d.NominatedNode, out.upPending, upCost, up.NominatedNode)
			}
		case profile.PolicyStrictPDB:
			if c.violations > 0 {
				t.Errorf("%s: strict-pdb breaks %d budget(s) on %s", name, c.violations, d.NominatedNode)
			}
			if out.preempting && upCost.violations == 0 && c.compare(upCost) > 0 {
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
	// bruteForced counts the scenarios the brute force enumerated whole,
	// tooBig the potential nodes it could not.
	bruteForced, tooBig int
	policies            map[profile.Policy]*policyTally
}

// policyTally is one policy's share of policyStats.
type policyTally struct {
	fewer, lower, more, higher, refused, broken, candidates, proven, chosenProven, fewerPending, pending int
	// beyond counts its choices on a node upstream's dry run drops, alone
	// those where upstream does not preempt at all; checked the scenarios
	// where the brute force binds its choice, optimal those where the
	// choice is the brute force's, optimalBeyond those among them on a
	// node upstream's dry run drops.
	beyond, alone, checked, optimal, optimalBeyond int
	// podsSaved and prioritySaved hold the savings of the scenarios where
	// the policy evicts fewer pods, respectively lower-priority ones.
	podsSaved     []int
	prioritySaved []int64
}

func (s *policyStats) add(c policyCheck) {
	s.scenarios++
	if c.bruteForced {
		s.bruteForced++
	}
	s.tooBig += c.tooBig
	if s.policies == nil {
		s.policies = map[profile.Policy]*policyTally{}
	}
	if c.preempting {
		s.preempting++
		s.upPending += c.upPending
		if c.upViolations > 0 {
			s.upBroken++
		}
	}
	for p, o := range c.outcomes {
		t := s.policies[p]
		if t == nil {
			t = &policyTally{}
			s.policies[p] = t
		}
		if o.checked {
			t.checked++
		}
		if o.optimal {
			t.optimal++
			if o.beyond {
				t.optimalBeyond++
			}
		}
		if o.refused {
			t.refused++
			continue
		}
		if o.beyond {
			t.beyond++
		}
		if o.alone {
			t.alone++
		}
		if o.alone || !c.preempting {
			// Nothing of upstream's to compare with.
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
	fmt.Fprintf(&b, "profile %s: %d scenarios, %d preempting (upstream breaks a budget in %d, leaves %d victims pending); brute force over every subset of every potential node in %d (%d nodes of more than %d potential victims not enumerated)",
		genProfile, s.scenarios, s.preempting, s.upBroken, s.upPending, s.bruteForced, s.tooBig, maxBruteForcePods)
	pct := func(n int) string { return fmt.Sprintf("%d (%.1f%%)", n, 100*float64(n)/float64(max(s.preempting, 1))) }
	for _, p := range comparedPolicies {
		t := s.policies[p]
		if t == nil {
			t = &policyTally{}
		}
		slices.Sort(t.podsSaved)
		slices.Sort(t.prioritySaved)
		fmt.Fprintf(&b, "\n  %s: evicts fewer pods in %s, pods saved median %d p90 %d max %d; lower-priority pods in %s, highest priority lower by median %d p90 %d; "+
			"more pods in %d, higher-priority pods in %d; %d of %d candidates and %d of %d choices proven optimal; breaks a budget in %d; refuses %d; "+
			"chooses a node upstream's dry run drops in %d (%d where upstream does not preempt)",
			p, pct(t.fewer), quantile(t.podsSaved, 0.5), quantile(t.podsSaved, 0.9), quantile(t.podsSaved, 1),
			pct(t.lower), quantile(t.prioritySaved, 0.5), quantile(t.prioritySaved, 0.9), t.more, t.higher,
			t.proven, t.candidates, t.chosenProven, s.preempting-t.refused, t.broken, t.refused, t.beyond, t.alone)
		if p != profile.PolicyReschedulable {
			fmt.Fprintf(&b, "; equals the brute force's optimum in %d of %d scenarios checked (%d on a node upstream's dry run drops)", t.optimal, t.checked, t.optimalBeyond)
		} else {
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
	for _, profile := range append(gen.Profiles(), gen.DRA, gen.Dependent) {
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
