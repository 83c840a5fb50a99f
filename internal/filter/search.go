package filter

import (
	"fmt"
	"slices"
	"strings"

	"github.com/reprieve/reprieve/internal/snapshot"
)

// Result is the outcome of filtering the incoming pod on every node.
type Result struct {
	// Feasible are the nodes the pod fits on, in snapshot order.
	Feasible []*snapshot.Node
	// Statuses holds the rejection of every other node, by node index.
	Statuses []Status
}

// FilterAll filters the pod on every node of the snapshot, as upstream's
// findNodesThatFitPod does when it examines every node: a PreFilter
// rejection applies to all nodes, nodes outside a PreFilterResult are
// rejected without running filters, and every other node runs the filters
// with nominated pods.
func (c *Cycle) FilterAll() Result {
	res, _ := c.FilterFrom(0, len(c.snap.Nodes))
	return res
}

// FilterFrom filters nodes in snapshot order starting at index start
// (wrapping around) until want nodes are feasible or every node was
// examined, as the scheduler does to spread its search across cycles. It
// returns the result (statuses of unexamined nodes are zero) and how many
// nodes it examined.
func (c *Cycle) FilterFrom(start, want int) (Result, int) {
	nodes := c.snap.Nodes
	res := Result{Statuses: statusList(&c.buffers.statuses, len(nodes))}
	if !c.preFilter.IsSuccess() {
		for i := range nodes {
			res.Statuses[i] = c.preFilter
		}
		return res, len(nodes)
	}
	if len(nodes) >= parallelFilterMin && c.workers > 1 {
		if want >= len(nodes) {
			c.filterParallel(&res)
			return res, len(nodes)
		}
		return res, c.filterChunks(&res, start, want)
	}
	st := c.NewState()
	examined, i := 0, 0
	if len(nodes) > 0 {
		i = start % len(nodes)
	}
	for range nodes {
		if len(res.Feasible) >= want {
			break
		}
		examined++
		if s := c.filterAt(st, i); s.IsSuccess() {
			res.Feasible = append(res.Feasible, nodes[i])
		} else {
			res.Statuses[i] = s
		}
		// The next node, wrapping around (without a division per node).
		if i++; i == len(nodes) {
			i = 0
		}
	}
	return res, examined
}

// filterAt filters the pod on the node of index i, with the nominated
// pods; a node outside the PreFilter result gets its status.
func (c *Cycle) filterAt(st *State, i int) Status {
	n := c.snap.Nodes[i]
	if c.allowedNodes != nil && !c.allowedNodes.Has(n.Name) {
		return c.allowedNodesStatus
	}
	return c.filterWithNominated(st, i, n)
}

// parallelFilterMin is the cluster size from which FilterAll splits the
// nodes between goroutines.
const parallelFilterMin = 512

// filterParallel filters every node, in contiguous ranges on the cycle's
// goroutines, each with its own overlay; feasible nodes keep snapshot order.
func (c *Cycle) filterParallel(res *Result) {
	nodes := c.snap.Nodes
	feasible := make([][]*snapshot.Node, rangeWorkers(c.workers, len(nodes), parallelFilterMin/2))
	forNodeRanges(len(nodes), len(feasible), func(w, lo, hi int) {
		st := c.StateOf()
		for i := lo; i < hi; i++ {
			if s := c.filterAt(&st, i); s.IsSuccess() {
				feasible[w] = append(feasible[w], nodes[i])
			} else {
				res.Statuses[i] = s
			}
		}
	})
	for _, f := range feasible {
		res.Feasible = append(res.Feasible, f...)
	}
}

// filterChunks is FilterFrom's sequential search (from start, until want
// nodes are feasible) done in chunks whose nodes are filtered in parallel.
// Results past the point where the sequential search would have stopped
// are dropped, so the outcome does not depend on the parallelism.
func (c *Cycle) filterChunks(res *Result, start, want int) int {
	nodes := c.snap.Nodes
	n := len(nodes)
	workers := c.workers
	chunk := max(2*want, parallelFilterMin)
	statuses := statusList(&c.buffers.scratch, n)
	examined := 0
	for examined < n && len(res.Feasible) < want {
		size := min(chunk, n-examined)
		forNodeRanges(size, workers, func(_, lo, hi int) {
			st := c.StateOf()
			for k := lo; k < hi; k++ {
				statuses[k] = c.filterAt(&st, (start+examined+k)%n)
			}
		})
		for k := range size {
			i := (start + examined + k) % n
			if statuses[k].IsSuccess() {
				res.Feasible = append(res.Feasible, nodes[i])
			} else {
				res.Statuses[i] = statuses[k]
			}
			if len(res.Feasible) >= want {
				return examined + k + 1
			}
		}
		examined += size
		// Nothing or little fits so far: take bigger steps, so that a
		// search of the whole cluster wakes the workers a few times only.
		chunk *= 2
	}
	return examined
}

// FilterOne filters the pod on one node (with nominated pods), as the
// scheduler does first for a pod's nominated node.
func (c *Cycle) FilterOne(n *snapshot.Node) Status {
	if !c.preFilter.IsSuccess() {
		return c.preFilter
	}
	if c.allowedNodes != nil && !c.allowedNodes.Has(n.Name) {
		return c.allowedNodesStatus
	}
	return c.filterWithNominated(c.NewState(), n.Index, n)
}

// FilterResources runs NodeResourcesFit alone on nv, for callers that know
// it is the only filter a change of the node's pods can affect (see
// ResourcesOnly).
func (c *Cycle) FilterResources(nv *NodeView) Status { return filterResources(&c.request, nv) }

// filterWithNominated runs every filter on node n with the nominated pods
// the pod must yield to, as FilterWithNominatedPods does on a fresh view of
// the node. When only NodeResourcesFit depends on the node's pods, it is
// one check on the node's sums plus the nominated pods' requests: without
// them the pod could only fit better, so upstream's second pass cannot
// fail when the first passed.
func (c *Cycle) filterWithNominated(st *State, i int, n *snapshot.Node) Status {
	if c.plain && uint(i) < uint(len(c.sums)) && c.sums[i].Plain {
		// A plain node: only resources can reject the pod there.
		if s, ok := basicResourcesStatus(&c.request, &c.sums[i].Allocatable, &c.sums[i].Requested); ok {
			return s
		}
	}
	if !c.ResourcesOnly() {
		nv := c.NodeViewOf(n)
		return c.FilterWithNominatedPods(st, &nv, false)
	}
	if s := c.filterStatic(n); !s.IsSuccess() {
		return s
	}
	nv := NodeView{Node: n, NumPods: len(n.Pods), Requested: n.Requested}
	if nominated := c.nominatedPods(n); len(nominated) > 0 {
		nv.Requested = nv.Requested.Clone()
		for _, p := range nominated {
			nv.NumPods++
			nv.Requested.Add(&p.Requests, 1)
		}
	}
	return filterResources(&c.request, &nv)
}

// FitErrorMessage renders upstream's FitError message: "0/N nodes are
// available:" followed by the sorted histogram of the statuses' reasons, or
// the PreFilter rejection.
func FitErrorMessage(numNodes int, preFilter Status, statuses []Status) string {
	msg := fmt.Sprintf("0/%d nodes are available:", numNodes)
	if !preFilter.IsSuccess() {
		return msg + " " + preFilter.Message() + "."
	}
	// Runs of nodes rejected with equal reasons (mostly one slice shared by
	// the filters' common statuses, which compares in one step) are
	// counted once.
	counts := map[string]int{}
	var run []string
	runLength := 0
	for _, s := range statuses {
		if len(run) > 0 && (len(s.Reasons) == len(run) && &s.Reasons[0] == &run[0] || slices.Equal(s.Reasons, run)) {
			runLength++
			continue
		}
		for _, r := range run {
			counts[r] += runLength
		}
		run, runLength = s.Reasons, 1
	}
	for _, r := range run {
		counts[r] += runLength
	}
	parts := make([]string, 0, len(counts))
	for r, n := range counts {
		parts = append(parts, fmt.Sprintf("%d %s", n, r))
	}
	slices.Sort(parts)
	if len(parts) > 0 {
		msg += " " + strings.Join(parts, ", ") + "."
	}
	return msg
}
