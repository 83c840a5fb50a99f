package whatif

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
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
			m.add(int32(i), int32(k))
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
