package score

import (
	"math"

	"github.com/reprieve/reprieve/internal/engine/filter"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// systemDefaultConstraints are PodTopologySpread's constraints for pods
// without any of their own (defaultingType System).
var systemDefaultConstraints = []v1.TopologySpreadConstraint{
	{TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 3},
	{TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 5},
}

// softConstraint is a ScheduleAnyway topology spread constraint.
type softConstraint = filter.SpreadConstraint

// spreadConstraintsForScoring returns the pod's ScheduleAnyway constraints,
// or, when it has no constraints at all, the ScheduleAnyway default
// constraints (the system's, or the profile's with defaultingType List)
// with the pod's default selector (none when that selector is empty).
func spreadConstraintsForScoring(c *cycle) ([]softConstraint, error) {
	defaults := systemDefaultConstraints
	if c.cfg.SpreadListDefaulting {
		defaults = c.cfg.SpreadDefaultConstraints
	}
	return filter.PodSpreadConstraints(c.snap, c.obj, defaults, v1.ScheduleAnyway)
}

// scorePodTopologySpread is the PodTopologySpread plugin's scoring.
//
// PreScore takes the pod's ScheduleAnyway constraints, or the default
// constraints (the system's: hostname maxSkew 3, zone maxSkew 5; or the
// profile's with defaultingType List) with the pod's default selector when
// the pod has no constraints at all; it skips when there are none. Unless
// the system defaults apply, feasible nodes missing any topology key are
// ignored (they score 0). Each constraint's domains
// are the values its key takes on the feasible nodes that are not ignored
// (with the system defaults a node without the zone label falls in the
// domain ""), and its pods are counted over all the snapshot's nodes that
// pass its node inclusion policies; hostname domains are counted per node
// at Score instead.
//
// A node scores round(Σ count × log(domains + 2) + maxSkew - 1) over the
// constraints whose key it has, where domains is the number of domains of
// the constraint (the number of feasible, not ignored nodes for hostname).
// NormalizeScore reverses and scales: MaxNodeScore × (max + min - score) / max,
// MaxNodeScore for all when max is 0, and 0 for ignored nodes.
func scorePodTopologySpread(c *cycle) (raw, normalized []int64, skip bool, err error) {
	if len(c.snap.Nodes) == 0 {
		return nil, nil, true, nil
	}
	pod := c.obj
	// Only the system defaults do not require nodes to have every key, so
	// that nodes without a zone label still get hostname spreading.
	requireAllTopologies := len(pod.Spec.TopologySpreadConstraints) > 0 || c.cfg.SpreadListDefaulting
	cons, err := spreadConstraintsForScoring(c)
	if err != nil {
		return nil, nil, false, err
	}
	if len(cons) == 0 {
		return nil, nil, true, nil
	}

	// 1) Domains of each constraint over the feasible nodes; ignored nodes.
	counts := make([]map[string]int64, len(cons))
	for i := range cons {
		counts[i] = map[string]int64{}
	}
	ignored := make([]bool, len(c.feasible))
	numIgnored := 0
	for i, n := range c.feasible {
		if requireAllTopologies && !filter.NodeHasTopologyKeys(n.Obj.Labels, cons) {
			ignored[i] = true
			numIgnored++
			continue
		}
		for j := range cons {
			if cons[j].TopologyKey == v1.LabelHostname {
				continue
			}
			// Adds the domain with a count of 0 (a missing label is "").
			counts[j][n.Obj.Labels[cons[j].TopologyKey]] += 0
		}
	}
	weights := make([]float64, len(cons))
	for j := range cons {
		size := len(counts[j])
		if cons[j].TopologyKey == v1.LabelHostname {
			size = len(c.feasible) - numIgnored
		}
		weights[j] = math.Log(float64(size + 2))
	}

	// 2) Matching pods per domain, over every node of the snapshot.
	required := nodeaffinity.GetRequiredNodeAffinity(pod)
	for _, n := range c.snap.Nodes {
		if requireAllTopologies && !filter.NodeHasTopologyKeys(n.Obj.Labels, cons) {
			continue
		}
		for j := range cons {
			if !cons[j].Includes(pod, n.Obj, required) {
				continue
			}
			value := n.Obj.Labels[cons[j].TopologyKey]
			if _, ok := counts[j][value]; !ok {
				continue
			}
			counts[j][value] += int64(filter.CountMatching(n.Pods, cons[j].Selector, pod.Namespace, c.opts.SpreadEmptySelectorMatchesAll))
		}
	}

	// 3) Score.
	raw = make([]int64, len(c.feasible))
	for i, n := range c.feasible {
		if ignored[i] {
			continue
		}
		var score float64
		for j := range cons {
			value, ok := n.Obj.Labels[cons[j].TopologyKey]
			if !ok {
				continue
			}
			var cnt int64
			if cons[j].TopologyKey == v1.LabelHostname {
				cnt = int64(filter.CountMatching(n.Pods, cons[j].Selector, pod.Namespace, c.opts.SpreadEmptySelectorMatchesAll))
			} else {
				cnt = counts[j][value]
			}
			score += float64(cnt)*weights[j] + float64(cons[j].MaxSkew-1)
		}
		raw[i] = int64(math.Round(score))
	}

	// 4) NormalizeScore.
	normalized = make([]int64, len(raw))
	var minScore int64 = math.MaxInt64
	var maxScore int64
	for i, s := range raw {
		if ignored[i] {
			continue
		}
		minScore = min(minScore, s)
		maxScore = max(maxScore, s)
	}
	for i, s := range raw {
		switch {
		case ignored[i]:
			normalized[i] = 0
		case maxScore == 0:
			normalized[i] = MaxNodeScore
		default:
			normalized[i] = MaxNodeScore * (maxScore + minScore - s) / maxScore
		}
	}
	return raw, normalized, false, nil
}
