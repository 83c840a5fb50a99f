package preemption

import (
	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// Counter counts the Filter plugin calls of DefaultPreemption's dry run as
// upstream's scheduler_plugin_evaluation_total counts them: every fit check
// of the victim walk (SelectVictimsOnNode) is one
// RunFilterPluginsWithNominatedPods on the node, which runs every Filter
// plugin whose PreFilter did not skip up to the one that rejects the node,
// twice when pods the preemptor yields to are nominated there and the
// first pass succeeds (filter.Cycle.CountFilterWithNominatedPods).
//
// The counts are those of the walk itself, not of a replay. Only nodes the
// dry run visited count: a node evaluated in parallel beyond the point
// where a sequential walk stops does not, so the counts are those of
// upstream run with one goroutine. A victim policy's search after
// upstream's dry run (Options.Policy) is not counted, and neither is a dry
// run whose PreFilter did not succeed (reprieve keeps no partial cycle
// state for it).
//
// Give a Counter to an evaluation through Options.Counter; nil costs
// nothing. The zero value is ready. Its memory is reused from one
// evaluation to the next; it must not serve two evaluations at once.
type Counter struct {
	// Evaluations accumulates the dry run's Filter counts of every
	// evaluation the Counter served, on top of whatever the caller put
	// there (the scheduler seeds it with the cycle's own PreFilter and
	// Filter counts and reads the sum back); the Counter adds no
	// PreFilter counts itself and never resets it.
	Evaluations filter.Evaluations

	// nodes are the counting fit checkers of the dry run in progress, by
	// snapshot node index; a node's entry counts for this run only if its
	// run is the Counter's.
	nodes []countingFit
	run   uint64
}

// countingFit wraps a walk's fit checker and counts the plugin calls
// upstream would have made for each of its fit checks on one node.
type countingFit struct {
	inner fitChecker
	c     *filter.Cycle
	node  *snapshot.Node
	units *unitList
	// run is the Counter's run this entry was last prepared for.
	run   uint64
	count filter.Evaluations
	// why holds each check's status (here rather than on the stack: it
	// would escape through the interface).
	why filter.Status
}

var (
	_ fitChecker     = (*countingFit)(nil)
	_ removerOfAll   = (*countingFit)(nil)
	_ reprieverOfAll = (*countingFit)(nil)
)

func (f *countingFit) remove(u int) { f.inner.remove(u) }
func (f *countingFit) add(u int)    { f.inner.add(u) }

// removeAll keeps the inner checker's fast removal of every unit.
func (f *countingFit) removeAll() { removeAll(f.inner, f.units.len()) }

// reprieveAll keeps the resources-only checker's reprieve loop: each unit
// of order was one fit check, passed unless the unit was evicted again,
// and rejected by NodeResourcesFit, the one filter that checker answers
// for. Any other checker is counted check by check.
func (f *countingFit) reprieveAll(order, evicted []int32) []int32 {
	sums, ok := f.inner.(*sumsFit)
	if !ok {
		return reprieveEach(f, order, evicted)
	}
	before := len(evicted)
	evicted = sums.reprieveAll(order, evicted)
	rejected := len(evicted) - before
	f.c.CountFilterWithNominatedPods(&f.count, f.node, filter.Status{}, len(order)-rejected)
	f.c.CountFilterWithNominatedPods(&f.count, f.node, filter.Status{Code: filter.Unschedulable, Plugin: filter.NodeResourcesFit}, rejected)
	return evicted
}

// fits asks the inner checker, always for the status of a rejection (the
// resources-only checker derives it only when asked), and counts the
// filter run that status ends.
func (f *countingFit) fits(why *filter.Status) bool {
	f.why = filter.Status{}
	ok := f.inner.fits(&f.why)
	if ok {
		f.why = filter.Status{}
	}
	f.c.CountFilterWithNominatedPods(&f.count, f.node, f.why, 1)
	if !ok && why != nil {
		*why = f.why
	}
	return ok
}

// begin readies the Counter for a dry run of cycle c and returns it; it
// returns nil, so that nothing is counted, for a nil Counter or a cycle
// whose PreFilter did not succeed.
func (k *Counter) begin(c *filter.Cycle) *Counter {
	if k == nil || !c.PreFilterStatus().IsSuccess() {
		return nil
	}
	k.run++
	if n := len(c.Snapshot().Nodes); len(k.nodes) < n {
		k.nodes = append(k.nodes, make([]countingFit, n-len(k.nodes))...)
	}
	return k
}

// counted returns fit, wrapped to count its checks when the dry run
// counts. Each node has its own wrapper, so workers walking different
// nodes never share one.
func (d *dryRun) counted(node *snapshot.Node, units *unitList, fit fitChecker) fitChecker {
	k := d.counter
	if k == nil {
		return fit
	}
	f := &k.nodes[node.Index]
	*f = countingFit{inner: fit, c: d.c, node: node, units: units, run: k.run}
	return f
}

// countVisited adds the counts of the visited nodes to the Counter and
// stops counting: what runs after upstream's dry run is not counted.
func (d *dryRun) countVisited(visited []*snapshot.Node) {
	k := d.counter
	if k == nil {
		return
	}
	d.counter = nil
	for _, n := range visited {
		f := &k.nodes[n.Index]
		if f.run != k.run {
			// Not prepared in this run: the node failed before its walk.
			continue
		}
		for i, v := range f.count.Filter {
			k.Evaluations.Filter[i] += v
		}
	}
}
