package score

import (
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// weightedTerm is a parsed preferred pod (anti-)affinity term.
type weightedTerm struct {
	snapshot.AffinityTerm
	weight int32
}

// preferredTerms parses a pod's preferred (anti-)affinity terms as upstream's
// NewPodInfo does.
func preferredTerms(namespace string, terms []v1.WeightedPodAffinityTerm, field string) ([]weightedTerm, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	plain := make([]v1.PodAffinityTerm, len(terms))
	for i := range terms {
		plain[i] = terms[i].PodAffinityTerm
	}
	parsed, err := snapshot.ParseAffinityTerms(namespace, plain, field)
	if err != nil {
		return nil, err
	}
	out := make([]weightedTerm, len(parsed))
	for i := range parsed {
		out[i] = weightedTerm{AffinityTerm: parsed[i], weight: terms[i].Weight}
	}
	return out, nil
}

func preferredAffinity(a *v1.Affinity) []v1.WeightedPodAffinityTerm {
	if a != nil && a.PodAffinity != nil {
		return a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

func preferredAntiAffinity(a *v1.Affinity) []v1.WeightedPodAffinityTerm {
	if a != nil && a.PodAntiAffinity != nil {
		return a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

const (
	fieldPreferredAffinity     = "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution"
	fieldPreferredAntiAffinity = "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution"
)

// topologyScores sums weights per topology key and value, as upstream's
// scoreMap. A (key, value) entry exists once a term counted for it, even if
// its weights add up to 0.
type topologyScores map[string]map[string]int64

func (m topologyScores) add(key string, node *snapshot.Node, w int64) {
	value, ok := node.Obj.Labels[key]
	if !ok {
		return
	}
	if m[key] == nil {
		m[key] = map[string]int64{}
	}
	m[key][value] += w
}

// scoreInterPodAffinity is the InterPodAffinity plugin's scoring.
//
// PreScore walks the pods of every node of the snapshot (only pods with pod
// affinity or anti-affinity when the incoming pod has no preferred terms;
// nodes without labels are passed over) and, for the existing pod's node's
// domain of each term's topology key, adds:
//
//   - the weight of each preferred affinity term of the incoming pod that
//     selects the existing pod, and minus that of each preferred
//     anti-affinity term (namespace selectors resolved to the snapshot's
//     namespaces first);
//   - hardPodAffinityWeight (1 by default; none when 0) for each required
//     affinity term of the existing pod that selects the incoming pod;
//   - the weight of each preferred affinity term of the existing pod that
//     selects the incoming pod, and minus that of each preferred
//     anti-affinity term.
//
// It skips when no term counted anywhere, and, with
// ignorePreferredTermsOfExistingPods, when the incoming pod has no preferred
// terms. A node scores the sum over the
// recorded domains it is in; NormalizeScore scales min..max to
// 0..MaxNodeScore in float64 (all 0 when min equals max).
func scoreInterPodAffinity(c *cycle) (raw, normalized []int64, skip bool, err error) {
	pod := c.pod
	prefAffinity, prefAnti := preferredAffinity(pod.Affinity()), preferredAntiAffinity(pod.Affinity())
	hasConstraints := len(prefAffinity) > 0 || len(prefAnti) > 0
	if c.cfg.IgnorePreferredTermsOfExistingPods && !hasConstraints {
		return nil, nil, true, nil
	}
	hardWeight := c.cfg.HardPodAffinityWeight

	affinityTerms, err := preferredTerms(pod.Namespace(), prefAffinity, fieldPreferredAffinity)
	if err != nil {
		return nil, nil, false, err
	}
	antiTerms, err := preferredTerms(pod.Namespace(), prefAnti, fieldPreferredAntiAffinity)
	if err != nil {
		return nil, nil, false, err
	}
	resolveNamespaces(c.snap, affinityTerms)
	resolveNamespaces(c.snap, antiTerms)
	nsLabels := c.snap.NamespaceLabels(pod.Namespace())

	scores := topologyScores{}
	for _, n := range c.snap.Nodes {
		pods := n.Pods
		if !hasConstraints {
			pods = n.PodsWithAffinity
		}
		if len(pods) == 0 || len(n.Obj.Labels) == 0 {
			continue
		}
		for _, e := range pods {
			// The incoming pod's terms have their namespace selectors
			// resolved: the existing pod's namespace labels are not needed.
			for i := range affinityTerms {
				if t := &affinityTerms[i]; t.Matches(e, nil) {
					scores.add(t.TopologyKey, n, int64(t.weight*1))
				}
			}
			for i := range antiTerms {
				if t := &antiTerms[i]; t.Matches(e, nil) {
					scores.add(t.TopologyKey, n, int64(t.weight*-1))
				}
			}
			if !e.HasAffinity() {
				continue
			}
			if hardWeight > 0 {
				for i := range e.RequiredAffinity() {
					if t := &e.RequiredAffinity()[i]; t.Matches(pod, nsLabels) {
						scores.add(t.TopologyKey, n, int64(hardWeight*1))
					}
				}
			}
			// Terms that do not parse are dropped, as upstream's PodInfo
			// keeps none of a list that fails to parse.
			existingAffinity, _ := preferredTerms(e.Namespace(), preferredAffinity(e.Affinity()), fieldPreferredAffinity)
			for i := range existingAffinity {
				if t := &existingAffinity[i]; t.Matches(pod, nsLabels) {
					scores.add(t.TopologyKey, n, int64(t.weight*1))
				}
			}
			existingAnti, _ := preferredTerms(e.Namespace(), preferredAntiAffinity(e.Affinity()), fieldPreferredAntiAffinity)
			for i := range existingAnti {
				if t := &existingAnti[i]; t.Matches(pod, nsLabels) {
					scores.add(t.TopologyKey, n, int64(t.weight*-1))
				}
			}
		}
	}
	if len(scores) == 0 {
		return nil, nil, true, nil
	}

	raw = make([]int64, len(c.feasible))
	for i, n := range c.feasible {
		for key, values := range scores {
			if v, ok := n.Obj.Labels[key]; ok {
				raw[i] += values[v]
			}
		}
	}

	var minCount int64 = math.MaxInt64
	var maxCount int64 = math.MinInt64
	for _, s := range raw {
		minCount = min(minCount, s)
		maxCount = max(maxCount, s)
	}
	diff := maxCount - minCount
	normalized = make([]int64, len(raw))
	for i, s := range raw {
		f := float64(0)
		if diff > 0 {
			f = float64(MaxNodeScore) * (float64(s-minCount) / float64(diff))
		}
		normalized[i] = int64(f)
	}
	return raw, normalized, false, nil
}

// resolveNamespaces replaces, in place, each term's non-empty namespace
// selector by the names of the snapshot's namespaces it selects (upstream's
// mergeAffinityTermNamespacesIfNotEmpty). An empty selector ({}) is kept: it
// selects every namespace.
func resolveNamespaces(snap *snapshot.Snapshot, terms []weightedTerm) {
	for i := range terms {
		t := &terms[i]
		if t.NamespaceSelector.Empty() {
			continue
		}
		ns := sets.New(sets.List(t.Namespaces)...)
		ns.Insert(snap.NamespacesMatching(t.NamespaceSelector)...)
		t.Namespaces = ns
		t.NamespaceSelector = labels.Nothing()
	}
}
