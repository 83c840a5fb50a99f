package filter

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// TestBasicResourcesStatus checks NodeResourcesFit's shortcut verdicts
// (basicResourcesStatus, the verdicts a plain node's filtering reads) against
// the status built from InsufficientResources, on random requests, node
// allocatables and uses around each other.
func TestBasicResourcesStatus(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	amount := func() int64 { return int64(r.IntN(5)) - 1 }
	seen := map[resourceVerdict]int{}
	for range 20000 {
		req := snapshot.Resources{MilliCPU: amount(), Memory: amount(), EphemeralStorage: amount()}
		node := &snapshot.Node{Allocatable: snapshot.Resources{MilliCPU: amount(), Memory: amount(), EphemeralStorage: amount(), AllowedPods: amount() + 1}}
		nv := NodeView{Node: node, NumPods: r.IntN(4), Requested: snapshot.Resources{MilliCPU: amount(), Memory: amount(), EphemeralStorage: amount()}}
		alloc, used := node.Allocatable.Usage(node.Allocatable.AllowedPods), nv.Requested.Usage(int64(nv.NumPods))
		v := basicResourcesVerdict(&req, &alloc, &used)
		seen[v]++
		got, ok := basicResourcesStatus(&req, &alloc, &used)
		if (v == verdictOther) == ok {
			t.Fatalf("request %+v, allocatable %+v, used %+v: verdict %d but ok %v", req, alloc, used, v, ok)
		}
		if !ok {
			continue
		}
		if diff := cmp.Diff(resourcesStatus(&req, &nv), got); diff != "" {
			t.Fatalf("request %+v, allocatable %+v, used %+v: verdict %d (-built +shortcut):\n%s", req, alloc, used, v, diff)
		}
	}
	for v := verdictOther; v <= verdictCPUAndMemory; v++ {
		if seen[v] == 0 {
			t.Errorf("no case had verdict %d", v)
		}
	}
}
