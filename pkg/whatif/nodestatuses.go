package whatif

import (
	"encoding/json"
	"iter"
	"reflect"
	"slices"

	"github.com/reprieve/reprieve/internal/filter"
	"github.com/reprieve/reprieve/internal/preemption"
	"github.com/reprieve/reprieve/internal/snapshot"
)

// nodeStatuses is the rejection of every node that is neither feasible nor
// a candidate: its filter status, and its dry-run status when it was dry-run.
func nodeStatuses(snap *snapshot.Snapshot, fr filter.Result, res *preemption.Result) NodeStatuses {
	isCandidate := make([]bool, len(snap.Nodes))
	if res != nil {
		for _, c := range res.Candidates {
			isCandidate[c.Node.Index] = true
		}
	}
	out := NodeStatuses{names: snap.NodeNames()}
	// Most nodes share a handful of rejections; so do their NodeStatus
	// values: shared indexes them in out.distinct.
	var shared []int32
	last := int32(-1)                // the status of the last node without a dry-run status
	var lastStatus *filter.Status    // and its filter status (set with last)
	var dryRun map[int]filter.Status // by node index
	if res != nil && len(res.NodeStatuses) > 0 {
		dryRun = make(map[int]filter.Status, len(res.NodeStatuses))
		for _, ns := range res.NodeStatuses {
			dryRun[ns.Node.Index] = ns.Status
		}
	}
	for i := range snap.Nodes {
		s := &fr.Statuses[i]
		if s.IsSuccess() || isCandidate[i] {
			continue
		}
		var pre *PreemptionStatus
		if dryRun != nil {
			if p, ok := dryRun[i]; ok {
				pre = &PreemptionStatus{Code: p.Code.String(), Plugin: p.Plugin, Reasons: ownReasons(p.Reasons)}
			}
		}
		k := int32(-1)
		if pre == nil {
			if last >= 0 && (sameReasons(lastStatus, s) || sameStatus(out.distinct[last], s)) {
				// Most often a node is rejected just as the one before,
				// often with its very statuses (the filters share their
				// common reasons).
				k = last
			} else {
				for _, j := range shared {
					if sameStatus(out.distinct[j], s) {
						k = j
						break
					}
				}
			}
		}
		if k < 0 {
			k = int32(len(out.distinct))
			out.distinct = append(out.distinct, &NodeStatus{Code: s.Code.String(), Plugin: s.Plugin, Reasons: ownReasons(s.Reasons), Preemption: pre})
			if pre == nil && len(shared) < maxSharedStatuses {
				shared = append(shared, k)
			}
		}
		out.add(int32(i), k)
		if pre == nil {
			last, lastStatus = k, s
		}
	}
	return out
}

// parallelExplainNodes is the cluster size from which Evaluate explains
// the rejected nodes on a goroutine of its own.
const parallelExplainNodes = 1000

// maxSharedStatuses bounds the distinct rejections nodeStatuses shares.
const maxSharedStatuses = 8

// sameStatus reports whether ns, which has no preemption status, says what
// the filter status s says. The reasons of the filters' common statuses
// are shared strings, which compare in one step.
func sameStatus(ns *NodeStatus, s *filter.Status) bool {
	return ns.Plugin == s.Plugin && ns.Code == s.Code.String() && slices.Equal(ns.Reasons, s.Reasons)
}

// sameReasons reports whether two filter statuses say the same because
// they share one slice of reasons.
func sameReasons(a, b *filter.Status) bool {
	return a.Code == b.Code && a.Plugin == b.Plugin && len(a.Reasons) == len(b.Reasons) && len(a.Reasons) > 0 && &a.Reasons[0] == &b.Reasons[0]
}

// NodeStatuses says, node by node, why nodes were rejected. It lists the
// nodes in the scheduler's order, compactly (runs of consecutive nodes
// rejected alike, each run as node indexes and an index into the distinct
// statuses, which nodes rejected alike share), so that it is cheap to
// build for thousands of nodes. It encodes as a JSON object keyed by node
// name, in name order.
type NodeStatuses struct {
	names    []string // node names by index
	runs     []statusRun
	len      int // nodes in runs
	distinct []*NodeStatus
}

// statusRun is count nodes of NodeStatuses, from names[first] on, all with
// status distinct[status].
type statusRun struct{ first, count, status int32 }

// add appends node, with status distinct[status], after the nodes before
// it.
func (m *NodeStatuses) add(node, status int32) {
	m.len++
	if k := len(m.runs) - 1; k >= 0 {
		if r := &m.runs[k]; r.status == status && r.first+r.count == node {
			r.count++
			return
		}
	}
	m.runs = append(m.runs, statusRun{first: node, count: 1, status: status})
}

// Len returns how many nodes have a status.
func (m NodeStatuses) Len() int { return m.len }

// All yields each node's name and status, in the scheduler's node order.
// Nodes rejected alike share one NodeStatus, which must not be modified.
func (m NodeStatuses) All() iter.Seq2[string, *NodeStatus] {
	return func(yield func(string, *NodeStatus) bool) {
		for _, r := range m.runs {
			s := m.distinct[r.status]
			for _, name := range m.names[r.first : r.first+r.count] {
				if !yield(name, s) {
					return
				}
			}
		}
	}
}

// Get returns the status of the named node.
func (m NodeStatuses) Get(node string) (NodeStatus, bool) {
	for name, s := range m.All() {
		if name == node {
			return *s, true
		}
	}
	return NodeStatus{}, false
}

// Map returns the statuses as a map.
func (m NodeStatuses) Map() map[string]NodeStatus {
	out := make(map[string]NodeStatus, m.len)
	for name, s := range m.All() {
		out[name] = *s
	}
	return out
}

// Equal reports whether m and o give the same nodes the same statuses.
func (m NodeStatuses) Equal(o NodeStatuses) bool {
	return reflect.DeepEqual(m.Map(), o.Map())
}

// MarshalJSON encodes the statuses as an object keyed by node name.
func (m NodeStatuses) MarshalJSON() ([]byte, error) {
	return json.Marshal(m.Map())
}

// UnmarshalJSON decodes an object keyed by node name, in name order.
func (m *NodeStatuses) UnmarshalJSON(b []byte) error {
	var raw map[string]NodeStatus
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	names := make([]string, 0, len(raw))
	for n := range raw {
		names = append(names, n)
	}
	slices.Sort(names)
	*m = NodeStatuses{names: names, distinct: make([]*NodeStatus, len(names))}
	for i, n := range names {
		ns := raw[n]
		m.distinct[i] = &ns
		m.add(int32(i), int32(i))
	}
	return nil
}
