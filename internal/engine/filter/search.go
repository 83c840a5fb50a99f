package filter

import (
	"slices"
	"strconv"
	"strings"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
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
	// A search of every node writes every status: the list need not be
	// cleared first.
	res := Result{Statuses: statusList(&c.buffers.statuses, len(nodes), want < len(nodes))}
	if !c.preFilter.IsSuccess() {
		for i := range nodes {
			res.Statuses[i] = c.preFilter
		}
		return res, len(nodes)
	}
	if len(nodes) >= c.parallelMin() && c.workers > 1 {
		if want >= len(nodes) {
			c.filterParallel(&res)
			return res, len(nodes)
		}
		return res, c.filterChunks(&res, start, want)
	}
	st := c.NewState()
	i := 0
	if len(nodes) > 0 {
		i = start % len(nodes)
	}
	// From start to the end, then from the first node to start.
	var examined, more int
	res.Feasible, examined = c.filterRange(st, i, len(nodes), want, res.Statuses, res.Feasible)
	if examined == len(nodes)-i {
		res.Feasible, more = c.filterRange(st, 0, i, want, res.Statuses, res.Feasible)
		examined += more
	}
	return res, examined
}

// filterRange filters the pod on the nodes of indexes [lo, hi) in order,
// with the nominated pods, storing each node's status in statuses (by node
// index), until feasible holds want nodes. It returns feasible with the
// nodes that fit appended and how many nodes it examined. A plain node's
// verdict is read off the snapshot's sums without building a Status.
func (c *Cycle) filterRange(st *State, lo, hi, want int, statuses []Status, feasible []*snapshot.Node) ([]*snapshot.Node, int) {
	nodes, statuses := c.snap.Nodes[lo:hi], statuses[lo:hi:hi]
	var sums []snapshot.NodeSums
	if c.plain && len(c.sums) == len(c.snap.Nodes) {
		sums = c.sums[lo:hi:hi]
	}
	req := &c.request
	for k, n := range nodes {
		if len(feasible) >= want {
			return feasible, k
		}
		v := verdictOther
		if sums != nil && sums[k].Plain {
			// basicResourcesVerdict, inlined.
			s := &sums[k]
			short := shortageOf(req, &s.Allocatable, &s.Requested)
			if short&(shortCPU|shortMemory) != 0 {
				short |= beyondOf(req, &s.Allocatable)
			}
			v = shortageVerdicts[short]
		}
		switch v {
		case verdictFits:
			statuses[k] = Status{}
			feasible = append(feasible, n)
		case verdictOther:
			if statuses[k] = c.filterAt(st, lo+k); statuses[k].IsSuccess() {
				feasible = append(feasible, n)
			}
		default:
			statuses[k] = *verdictStatuses[v]
		}
	}
	return feasible, len(nodes)
}

// filterInto filters the pod on the node of index i, with the nominated
// pods, stores the node's status in *s (Success when it fits) and reports
// whether it fits. A plain node's verdict is read off the snapshot's sums
// without building a Status.
func (c *Cycle) filterInto(st *State, i int, s *Status) bool {
	switch v := c.plainVerdict(i); v {
	case verdictFits:
		*s = Status{}
		return true
	case verdictOther:
		*s = c.filterAt(st, i)
		return s.IsSuccess()
	default:
		*s = *verdictStatuses[v]
		return false
	}
}

// plainVerdict is NodeResourcesFit's verdict on the node of index i when
// the cycle and the node are plain (see snapshot.NodeSums): then it is the
// node's verdict with its nominated pods (it has none). Otherwise, and for
// the uncommon verdicts, it is verdictOther.
func (c *Cycle) plainVerdict(i int) resourceVerdict {
	if !c.plain || uint(i) >= uint(len(c.sums)) || !c.sums[i].Plain {
		return verdictOther
	}
	return basicResourcesVerdict(&c.request, &c.sums[i].Allocatable, &c.sums[i].Requested)
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

// parallelPlainMin is parallelFilterMin for a plain cycle (see
// snapshot.NodeSums), whose nodes mostly take a few nanoseconds each: a
// goroutine is worth it from half as many nodes, some tens of
// microseconds of work, more than waking an idle processor for it costs
// (tens of microseconds on a small virtual machine).
const parallelPlainMin = 1 << 15

// parallelMin is the cluster size from which the cycle filters nodes on
// several goroutines.
func (c *Cycle) parallelMin() int {
	if c.plain {
		return parallelPlainMin
	}
	return parallelFilterMin
}

// filterParallel filters every node, in contiguous ranges on the cycle's
// goroutines, each with its own overlay; feasible nodes keep snapshot order.
func (c *Cycle) filterParallel(res *Result) {
	nodes := c.snap.Nodes
	feasible := make([][]*snapshot.Node, rangeWorkers(c.workers, len(nodes), c.parallelMin()/2))
	forNodeRanges(len(nodes), len(feasible), func(w, lo, hi int) {
		st := c.StateOf()
		feasible[w], _ = c.filterRange(&st, lo, hi, hi-lo+1, res.Statuses, nil)
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
	chunk := max(2*want, c.parallelMin())
	statuses := statusList(&c.buffers.scratch, n, false)
	examined := 0
	for examined < n && len(res.Feasible) < want {
		size := min(chunk, n-examined)
		forNodeRanges(size, workers, func(_, lo, hi int) {
			st := c.StateOf()
			for k := lo; k < hi; k++ {
				c.filterInto(&st, (start+examined+k)%n, &statuses[k])
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
	switch v := c.plainVerdict(i); v {
	case verdictOther:
	case verdictFits:
		return Status{}
	default:
		// A plain node: only resources can reject the pod there.
		return *verdictStatuses[v]
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
	msg := "0/" + strconv.Itoa(numNodes) + " nodes are available:"
	if !preFilter.IsSuccess() {
		return msg + " " + preFilter.Message() + "."
	}
	var h reasonHistogram
	// Runs of nodes rejected with equal reasons (mostly one slice shared by
	// the filters' common statuses, which compares in one step) are
	// counted once.
	var run []string
	runLength := 0
	for _, s := range statuses {
		if len(run) > 0 && (len(s.Reasons) == len(run) && &s.Reasons[0] == &run[0] || slices.Equal(s.Reasons, run)) {
			runLength++
			continue
		}
		h.addAll(run, runLength)
		run, runLength = s.Reasons, 1
	}
	h.addAll(run, runLength)
	parts := h.parts()
	if len(parts) > 0 {
		msg += " " + strings.Join(parts, ", ") + "."
	}
	return msg
}

// reasonHistogram counts nodes by reason. The few reasons most messages
// have are kept in a list; a map takes over beyond maxListedReasons.
type reasonHistogram struct {
	list     []reasonCount
	byReason map[string]int // index in list, once it is long
}

type reasonCount struct {
	reason string
	n      int
}

// maxListedReasons is how many distinct reasons are looked up by going
// through the list; more are indexed by a map.
const maxListedReasons = 16

func (h *reasonHistogram) addAll(reasons []string, n int) {
	for _, r := range reasons {
		h.add(r, n)
	}
}

func (h *reasonHistogram) add(reason string, n int) {
	if h.byReason != nil {
		if i, ok := h.byReason[reason]; ok {
			h.list[i].n += n
			return
		}
		h.byReason[reason] = len(h.list)
	} else {
		for i := range h.list {
			if h.list[i].reason == reason {
				h.list[i].n += n
				return
			}
		}
		if len(h.list) == maxListedReasons {
			h.byReason = make(map[string]int, 2*maxListedReasons)
			for i, rc := range h.list {
				h.byReason[rc.reason] = i
			}
			h.byReason[reason] = len(h.list)
		}
	}
	h.list = append(h.list, reasonCount{reason, n})
}

// parts renders each reason as "N reason", sorted as strings (as upstream
// sorts them).
func (h *reasonHistogram) parts() []string {
	parts := make([]string, len(h.list))
	for i, rc := range h.list {
		parts[i] = strconv.Itoa(rc.n) + " " + rc.reason
	}
	slices.Sort(parts)
	return parts
}
