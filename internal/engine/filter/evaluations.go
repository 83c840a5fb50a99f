package filter

import "github.com/reprieve/reprieve/internal/engine/snapshot"

// filterPlugins are the default profile's PreFilter and Filter plugins in
// upstream's order (NodeDeclaredFeatures, last, skips every pod reprieve
// models and is left out).
var filterPlugins = [...]string{
	NodeName, NodeUnschedulable, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit,
	VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone,
	PodTopologySpread, InterPodAffinity, DynamicResources,
}

// numFilterPlugins is the length of filterPlugins.
const numFilterPlugins = len(filterPlugins)

// Evaluations counts the calls upstream's framework makes to each PreFilter
// and Filter plugin, as its scheduler_plugin_evaluation_total counts them: a
// PreFilter once per cycle unless it returns Skip, a Filter once per
// RunFilterPlugins call on a node, for each plugin whose PreFilter did not
// skip, up to the plugin that rejects the node. The zero value counts
// nothing yet.
type Evaluations struct {
	PreFilter, Filter [numFilterPlugins]int
}

// EvaluatedPlugins returns the plugins counted by Evaluations, in the order
// of its arrays.
func EvaluatedPlugins() []string { return filterPlugins[:] }

// ran reports, in filterPlugins order, which plugins' PreFilter ran without
// returning Skip, and so which Filters run.
func (c *Cycle) ran() [numFilterPlugins]bool {
	var on [numFilterPlugins]bool
	on[0], on[1], on[2], on[5] = true, true, true, true // no Skip
	on[3] = c.nodeAffinity != nil || c.addedAffinity != nil
	on[4] = len(c.hostPorts) > 0
	if v := c.vol; v != nil {
		on[6], on[7], on[8], on[9] = v.restrictions, v.limits, v.binding != nil, v.zones != nil
	}
	on[10], on[11], on[12] = c.spread != nil, c.affinity != nil, c.dra != nil
	return on
}

func pluginIndex(name string) int {
	for i, p := range filterPlugins {
		if p == name {
			return i
		}
	}
	return -1
}

// CountPreFilter adds the cycle's PreFilter evaluations to e. Upstream stops
// at a PreFilter that answers UnschedulableAndUnresolvable or Error (an
// empty intersection of PreFilterResults is NodeAffinity's, the last plugin
// to return one): that plugin counts, the ones after it do not. The plugins
// of a group whose state is lost with the rejection (the volume plugins
// before the failing one) are not counted.
func (c *Cycle) CountPreFilter(e *Evaluations) {
	on := c.ran()
	last := numFilterPlugins - 1
	if !c.preFilter.IsSuccess() {
		last = pluginIndex(c.preFilter.Plugin)
		if last < 0 {
			last = pluginIndex(NodeAffinity)
		}
		on[last] = true
	}
	for i := 0; i <= last; i++ {
		if on[i] {
			e.PreFilter[i]++
		}
	}
}

// Filters reports whether the Filter plugins run on node n: PreFilter
// passed and n is in its result.
func (c *Cycle) Filters(n *snapshot.Node) bool {
	return c.preFilter.IsSuccess() && (c.allowedNodes == nil || c.allowedNodes.Has(n.Name))
}

// countFilterRuns adds to e k RunFilterPlugins calls that each ended with
// s: every plugin that runs, up to the one that rejected the node.
func (c *Cycle) countFilterRuns(e *Evaluations, s Status, k int) {
	on := c.ran()
	last := numFilterPlugins - 1
	if !s.IsSuccess() {
		if i := pluginIndex(s.Plugin); i >= 0 {
			last = i
		}
	}
	for i := 0; i <= last; i++ {
		if on[i] {
			e.Filter[i] += k
		}
	}
}

// CountFilterWithNominatedPods adds to e the Filter calls of k
// RunFilterPluginsWithNominatedPods on node n that each ended with s: with
// pods nominated to n that the pod yields to, a first run with them
// counted and, when it passes, a second without. A rejection is taken to
// be the first run's (adding pods rarely makes a node fit where it did
// not).
func (c *Cycle) CountFilterWithNominatedPods(e *Evaluations, n *snapshot.Node, s Status, k int) {
	if k == 0 {
		return
	}
	if s.IsSuccess() && len(c.nominatedPods(n)) > 0 {
		k *= 2
	}
	c.countFilterRuns(e, s, k)
}
