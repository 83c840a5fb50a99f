package whatif

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/preemption"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// TestNodeStatusesRuns checks that NodeStatuses, which keeps runs of
// consecutive nodes rejected alike, yields every node added, in order, with
// its own status, and merges only consecutive nodes of one status.
func TestNodeStatusesRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		numNodes := 1 + r.IntN(60)
		m := NodeStatuses{}
		for i := range numNodes {
			m.names = append(m.names, fmt.Sprintf("n%02d", i))
		}
		for k := range 1 + r.IntN(3) {
			m.distinct = append(m.distinct, &NodeStatus{Code: "Unschedulable", Reasons: []string{fmt.Sprint("reason ", k)}})
		}
		type entry struct {
			node   string
			status *NodeStatus
		}
		var want []entry
		wantRuns := 0
		last, lastStatus := -2, -1
		for i := range numNodes {
			if r.IntN(4) == 0 {
				continue // feasible or a candidate: no status
			}
			k := r.IntN(len(m.distinct))
			if r.IntN(3) > 0 && lastStatus >= 0 {
				k = lastStatus // most nodes are rejected as the one before
			}
			m.add(int32(i), int32(k), 1)
			want = append(want, entry{m.names[i], m.distinct[k]})
			if last != i-1 || lastStatus != k {
				wantRuns++
			}
			last, lastStatus = i, k
		}
		var got []entry
		for name, s := range m.All() {
			got = append(got, entry{name, s})
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(entry{})); diff != "" {
			t.Fatalf("trial %d: All (-want +got):\n%s", trial, diff)
		}
		if m.Len() != len(want) || len(m.runs) != wantRuns {
			t.Fatalf("trial %d: Len %d in %d runs, want %d in %d", trial, m.Len(), len(m.runs), len(want), wantRuns)
		}
		// Stopping early stops.
		n := 0
		for range m.All() {
			if n++; n == 2 {
				break
			}
		}
		if n != min(2, len(want)) {
			t.Fatalf("trial %d: All went on after break", trial)
		}
	}
}

// TestNodeStatusesMatchesEachNode checks nodeStatuses, which takes runs of
// nodes rejected with the very same statuses in one step and shares equal
// statuses, against the plain answer node by node: random filter statuses
// (shared ones, equal copies, successes) with random candidates and dry-run
// statuses among them.
func TestNodeStatusesMatchesEachNode(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var objs snapshot.Objects
	for i := range 120 {
		objs.Nodes = append(objs.Nodes, rt.Node(fmt.Sprintf("n%03d", i)).CPU("1").Obj())
	}
	snap, err := snapshot.New(objs)
	if err != nil {
		t.Fatal(err)
	}
	shared := []filter.Status{
		{Code: filter.Unschedulable, Plugin: filter.NodeResourcesFit, Reasons: []string{"Insufficient cpu"}},
		{Code: filter.UnschedulableAndUnresolvable, Plugin: filter.NodeResourcesFit, Reasons: []string{"Insufficient cpu"}},
		{Code: filter.UnschedulableAndUnresolvable, Plugin: filter.TaintToleration, Reasons: []string{"node(s) had untolerated taint(s)"}},
	}
	status := func() filter.Status {
		switch k := r.IntN(10); {
		case k < 5:
			return shared[r.IntN(len(shared))]
		case k < 7:
			s := shared[r.IntN(len(shared))] // the same, in a slice of its own
			s.Reasons = slices.Clone(s.Reasons)
			return s
		case k < 8:
			return filter.Status{Code: filter.Unschedulable, Plugin: filter.NodeResourcesFit, Reasons: []string{"Insufficient cpu", fmt.Sprint("Insufficient ", r.IntN(3))}}
		}
		return filter.Status{}
	}
	for trial := range 300 {
		statuses := make([]filter.Status, len(snap.Nodes))
		for i := range statuses {
			statuses[i] = status()
		}
		res := &preemption.Result{}
		for i, n := range snap.Nodes {
			if statuses[i].IsSuccess() {
				continue
			}
			switch r.IntN(8) {
			case 0:
				res.Candidates = append(res.Candidates, &preemption.Candidate{Node: n})
			case 1:
				res.NodeStatuses = append(res.NodeStatuses, preemption.NodeStatus{Node: n, Status: status()})
			}
		}
		// The dry run visits nodes from an offset, wrapping around.
		off := r.IntN(len(res.NodeStatuses) + 1)
		res.NodeStatuses = append(res.NodeStatuses[off:], res.NodeStatuses[:off]...)

		want := map[string]NodeStatus{}
		for i, n := range snap.Nodes {
			s := statuses[i]
			if s.IsSuccess() || slices.ContainsFunc(res.Candidates, func(c *preemption.Candidate) bool { return c.Node == n }) {
				continue
			}
			ns := NodeStatus{Code: s.Code.String(), Plugin: s.Plugin, Reasons: ownReasons(s.Reasons)}
			for _, d := range res.NodeStatuses {
				if d.Node == n {
					ns.Preemption = &PreemptionStatus{Code: d.Status.Code.String(), Plugin: d.Status.Plugin, Reasons: ownReasons(d.Status.Reasons)}
				}
			}
			want[n.Name] = ns
		}
		got := nodeStatuses(snap, filter.Result{Statuses: statuses}, res)
		if diff := cmp.Diff(want, got.Map()); diff != "" {
			t.Fatalf("trial %d (-each node +nodeStatuses):\n%s", trial, diff)
		}
		if got.Len() != len(want) {
			t.Fatalf("trial %d: Len %d, want %d", trial, got.Len(), len(want))
		}
		names := slices.Collect(func(yield func(string) bool) {
			for name := range got.All() {
				if !yield(name) {
					return
				}
			}
		})
		if !slices.IsSorted(names) {
			t.Fatalf("trial %d: All is not in node order: %v", trial, names)
		}
	}
}

// TestNodeStatusesMarshalJSON holds NodeStatuses' own encoding to
// encoding/json's of the map it stands for (Map), byte for byte: names in
// any order, shared and distinct statuses, names that need escaping, and
// a name given twice.
func TestNodeStatusesMarshalJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	odd := []string{"a<b", "é-node", "q\"uote", "tab\there", "z", "A", "node-10", "node-9", ""}
	for trial := range 300 {
		m := NodeStatuses{}
		for range r.IntN(40) {
			name := fmt.Sprintf("node-%d", r.IntN(1000))
			if r.IntN(8) == 0 {
				name = odd[r.IntN(len(odd))]
			}
			m.names = append(m.names, name)
		}
		for k := range 1 + r.IntN(4) {
			ns := &NodeStatus{Code: "Unschedulable", Plugin: "NodeResourcesFit", Reasons: []string{fmt.Sprint("Insufficient cpu <", k, ">")}}
			if k%2 == 1 {
				ns.Preemption = &PreemptionStatus{Code: "Unschedulable", Reasons: []string{"No victims & none"}}
			}
			m.distinct = append(m.distinct, ns)
		}
		for i := range m.names {
			if r.IntN(4) > 0 {
				m.add(int32(i), int32(r.IntN(len(m.distinct))), 1)
			}
		}
		want, err := json.Marshal(m.Map())
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.MarshalJSON() // not through json.Marshal, which would escape what it lets through
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("trial %d: names %q:\n got %s\nwant %s", trial, m.names, got, want)
		}
	}
}
