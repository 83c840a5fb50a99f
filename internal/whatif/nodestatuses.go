package whatif

import (
	"encoding/json"
	"iter"
	"reflect"
	"slices"
	"strings"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/preemption"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// nodeStatuses is the rejection of every node that is neither feasible nor
// a candidate: its filter status, and its dry-run status when it was dry-run.
func nodeStatuses(snap *snapshot.Snapshot, fr filter.Result, res *preemption.Result) NodeStatuses {
	out := NodeStatuses{names: snap.NodeNames()}
	statuses := fr.Statuses
	// visits says, by node index, what the dry run made of each node:
	// nothing, a candidate, or res.NodeStatuses[k] (visit k+1).
	var visits []visit
	if res != nil && len(res.Candidates)+len(res.NodeStatuses) > 0 {
		visits = make([]visit, len(statuses))
		for k, ns := range res.NodeStatuses {
			visits[ns.Node.Index] = visit(k + 1)
		}
		for _, c := range res.Candidates {
			visits[c.Node.Index] = visitCandidate
		}
	}
	// Most nodes share a handful of rejections; so do their NodeStatus
	// values: shared indexes them in out.distinct.
	var shared []int32
	last := int32(-1)             // the status of the last node without a dry-run status
	var lastStatus *filter.Status // and its filter status (set with last)
	for i := 0; i < len(statuses); i++ {
		v := visitNone
		if visits != nil {
			v = visits[i]
		}
		s := &statuses[i]
		if s.IsSuccess() || v == visitCandidate {
			continue
		}
		var pre *PreemptionStatus
		if v > visitNone {
			p := &res.NodeStatuses[v-1].Status
			pre = &PreemptionStatus{Code: p.Code.String(), Plugin: p.Plugin, Reasons: ownReasons(p.Reasons)}
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
		if pre != nil {
			out.add(int32(i), k, 1)
			continue
		}
		last, lastStatus = k, s
		// The next nodes rejected with the very same statuses that the
		// dry run did not visit take the same in one step.
		j := i + 1
		for j < len(statuses) && (visits == nil || visits[j] == visitNone) && sameReasons(s, &statuses[j]) {
			j++
		}
		out.add(int32(i), k, int32(j-i))
		i = j - 1
	}
	return out
}

// visit is what the dry run made of a node: visitNone, visitCandidate, or
// k+1 for the node of the dry run's NodeStatuses[k].
type visit int32

const (
	visitCandidate visit = -1
	visitNone      visit = 0
)

// parallelExplainNodes is the cluster size from which Evaluate explains
// the rejected nodes on a goroutine of its own; parallelExplainPlainNodes
// is the same for a pod only resources can reject, whose rejections mostly
// come in long runs of nodes rejected alike, a few nanoseconds a node: the
// goroutine only pays for waking an idle processor (tens of microseconds
// on a small virtual machine) on much bigger clusters.
const (
	parallelExplainNodes      = 1000
	parallelExplainPlainNodes = 20000
)

// explainInParallel reports whether Evaluate explains the rejected nodes
// of c's cycle on a goroutine of its own.
func explainInParallel(c *filter.Cycle) bool {
	n := len(c.Snapshot().Nodes)
	if c.ResourcesOnly() {
		return c.Parallelism() > 1 && n >= parallelExplainPlainNodes
	}
	return c.Parallelism() > 1 && n >= parallelExplainNodes
}

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
	return len(a.Reasons) == len(b.Reasons) && len(a.Reasons) > 0 && &a.Reasons[0] == &b.Reasons[0] && a.Code == b.Code && a.Plugin == b.Plugin
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

// add appends count nodes from node on, each with status
// distinct[status], after the nodes before them.
func (m *NodeStatuses) add(node, status, count int32) {
	m.len += int(count)
	if k := len(m.runs) - 1; k >= 0 {
		if r := &m.runs[k]; r.status == status && r.first+r.count == node {
			r.count += count
			return
		}
	}
	m.runs = append(m.runs, statusRun{first: node, count: count, status: status})
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

// MarshalJSON encodes the statuses as an object keyed by node name, in
// name order, as encoding/json encodes Map's map, without making the map:
// each distinct status is encoded once, however many nodes share it (at
// 5,000 nodes the map and its encoding were most of what printing a
// decision allocated).
func (m NodeStatuses) MarshalJSON() ([]byte, error) {
	type entry struct {
		name   string
		key    []byte // the name encoded, or nil when it is written as it is
		status int32
	}
	entries := make([]entry, 0, m.len)
	for _, r := range m.runs {
		for i := r.first; i < r.first+r.count; i++ {
			entries = append(entries, entry{name: m.names[i], status: r.status})
		}
	}
	slices.SortStableFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	// As in a map, a name given twice keeps its last status. Each key and
	// each distinct status is encoded once, and the object's size added up.
	kept := entries[:0]
	values := make([][]byte, len(m.distinct))
	size := 2
	for i, e := range entries {
		if i+1 < len(entries) && entries[i+1].name == e.name {
			continue
		}
		if !plainName(e.name) {
			var err error
			if e.key, err = json.Marshal(e.name); err != nil {
				return nil, err
			}
		}
		if values[e.status] == nil {
			b, err := json.Marshal(*m.distinct[e.status])
			if err != nil {
				return nil, err
			}
			values[e.status] = b
		}
		size += len(e.name) + 2 + len(e.key) + 2 + len(values[e.status])
		kept = append(kept, e)
	}
	out := make([]byte, 0, size)
	out = append(out, '{')
	for i, e := range kept {
		if i > 0 {
			out = append(out, ',')
		}
		if e.key != nil {
			out = append(out, e.key...)
		} else {
			out = append(append(append(out, '"'), e.name...), '"')
		}
		out = append(append(out, ':'), values[e.status]...)
	}
	return append(out, '}'), nil
}

// plainName reports whether name encodes as a JSON string as it is: it
// holds only letters, digits, '-', '.' and '_' (every node name does).
func plainName(name string) bool {
	for i := range len(name) {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
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
		m.add(int32(i), int32(i), 1)
	}
	return nil
}
