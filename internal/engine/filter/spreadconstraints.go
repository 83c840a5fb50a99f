package filter

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// SpreadConstraint is a topology spread constraint as PodTopologySpread
// uses it, filtering (DoNotSchedule) or scoring (ScheduleAnyway): upstream's
// defaults applied and matchLabelKeys merged into the selector.
type SpreadConstraint struct {
	MaxSkew            int32
	TopologyKey        string
	Selector           labels.Selector
	MinDomains         int32
	NodeAffinityPolicy v1.NodeInclusionPolicy
	NodeTaintsPolicy   v1.NodeInclusionPolicy
}

// SpreadConstraints returns the constraints of cons with the given
// whenUnsatisfiable action, as upstream's filterTopologySpreadConstraints
// does; podLabels feed matchLabelKeys.
func SpreadConstraints(cons []v1.TopologySpreadConstraint, podLabels map[string]string, action v1.UnsatisfiableConstraintAction) ([]SpreadConstraint, error) {
	var out []SpreadConstraint
	for _, c := range cons {
		if c.WhenUnsatisfiable != action {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil {
			return nil, err
		}
		if len(c.MatchLabelKeys) > 0 {
			matchLabels := labels.Set{}
			for _, k := range c.MatchLabelKeys {
				if v, ok := podLabels[k]; ok {
					matchLabels[k] = v
				}
			}
			if len(matchLabels) > 0 {
				sel = mergeLabelSetWithSelector(matchLabels, sel)
			}
		}
		sc := SpreadConstraint{
			MaxSkew:            c.MaxSkew,
			TopologyKey:        c.TopologyKey,
			Selector:           sel,
			MinDomains:         1,
			NodeAffinityPolicy: v1.NodeInclusionPolicyHonor,
			NodeTaintsPolicy:   v1.NodeInclusionPolicyIgnore,
		}
		if c.MinDomains != nil {
			sc.MinDomains = *c.MinDomains
		}
		if c.NodeAffinityPolicy != nil {
			sc.NodeAffinityPolicy = *c.NodeAffinityPolicy
		}
		if c.NodeTaintsPolicy != nil {
			sc.NodeTaintsPolicy = *c.NodeTaintsPolicy
		}
		out = append(out, sc)
	}
	return out, nil
}

// PodSpreadConstraints are the constraints with the given
// whenUnsatisfiable action that PodTopologySpread applies to obj, as
// upstream's getConstraints (DoNotSchedule, PreFilter) and
// initPreScoreState (ScheduleAnyway) take them: the pod's own, or, when it
// has none at all, those of defaults (the profile's default constraints)
// with the pod's default selector (Snapshot.DefaultSelector) — none when
// that selector is empty.
func PodSpreadConstraints(snap *snapshot.Snapshot, obj *v1.Pod, defaults []v1.TopologySpreadConstraint, action v1.UnsatisfiableConstraintAction) ([]SpreadConstraint, error) {
	if len(obj.Spec.TopologySpreadConstraints) > 0 {
		return SpreadConstraints(obj.Spec.TopologySpreadConstraints, obj.Labels, action)
	}
	cons, err := SpreadConstraints(defaults, obj.Labels, action)
	if err != nil || len(cons) == 0 {
		return nil, err
	}
	sel := snap.DefaultSelector(obj)
	if sel.Empty() {
		return nil, nil
	}
	for i := range cons {
		cons[i].Selector = sel
	}
	return cons, nil
}

// mergeLabelSetWithSelector adds matchLabels to a selector as upstream does;
// a selector without requirements (labels.Nothing) is returned unchanged.
func mergeLabelSetWithSelector(matchLabels labels.Set, s labels.Selector) labels.Selector {
	merged := labels.SelectorFromSet(matchLabels)
	reqs, ok := s.Requirements()
	if !ok {
		return s
	}
	for _, r := range reqs {
		merged = merged.Add(r)
	}
	return merged
}

// Includes applies the constraint's nodeAffinityPolicy and nodeTaintsPolicy:
// whether node counts for pod, whose required node affinity is required.
func (c *SpreadConstraint) Includes(pod *v1.Pod, node *v1.Node, required nodeaffinity.RequiredNodeAffinity) bool {
	if c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor {
		// Parsing errors are ignored, as upstream does.
		if ok, _ := required.Match(node); !ok {
			return false
		}
	}
	if c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor {
		if _, untolerated := corev1helpers.FindMatchingUntoleratedTaint(logger, node.Spec.Taints, pod.Spec.Tolerations, DoNotScheduleTaint, false); untolerated {
			return false
		}
	}
	return true
}

// NodeHasTopologyKeys reports whether the node has every constraint's key.
func NodeHasTopologyKeys(nodeLabels map[string]string, cons []SpreadConstraint) bool {
	for _, c := range cons {
		if _, ok := nodeLabels[c.TopologyKey]; !ok {
			return false
		}
	}
	return true
}

// CountMatching counts the pods a constraint counts over existing pods:
// same namespace, not terminating, selected. An empty selector counts
// nothing (while PreFilterExtension updates still match everything, as
// upstream v1.37), or with emptyMatchesAll every such pod (v1.38).
func CountMatching(pods []*snapshot.Pod, sel labels.Selector, ns string, emptyMatchesAll bool) int {
	if sel.Empty() && !emptyMatchesAll {
		return 0
	}
	n := 0
	for _, p := range pods {
		if p.Terminating() || p.Namespace() != ns {
			continue
		}
		if sel.Matches(p.Labels()) {
			n++
		}
	}
	return n
}

// DoNotScheduleTaint selects the taints filtering honours: NoSchedule and
// NoExecute.
func DoNotScheduleTaint(t *v1.Taint) bool {
	return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
}
