package preemption

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// TestParallelDryRunMatchesSequential checks that a dry run shared out
// between goroutines decides exactly as one on the caller's goroutine
// alone, on a cluster big enough for the resources-only walk to share its
// nodes out: the same candidates with the same victims and budget
// violations in the same order, the same statuses of the other nodes and
// the same choice (from upstream's offset with a candidate budget of 400,
// and exhaustively).
func TestParallelDryRunMatchesSequential(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(11, 12))
	var objs snapshot.Objects
	for i := range 1200 {
		name := fmt.Sprintf("n%04d", i)
		objs.Nodes = append(objs.Nodes, rt.Node(name).CPU("4").Memory("16Gi").Obj())
		for j := range 1 + r.IntN(8) {
			objs.Pods = append(objs.Pods, rt.Pod("default", fmt.Sprintf("p-%s-%d", name, j)).Priority(int32(r.IntN(4))*50).
				Req(fmt.Sprintf("%dm", 250*(1+r.IntN(4))), "1Gi").StartedAt(r.IntN(100)).Label("app", fmt.Sprint(r.IntN(3))).On(name).Obj())
		}
	}
	objs.PDBs = []*policyv1.PodDisruptionBudget{rt.PDB("default", "app-0", map[string]string{"app": "0"}, 3)}
	preemptor := rt.Pod("default", "p").Priority(120).Req("3", "1Gi").Obj()
	type outcome struct {
		Candidates []string
		Statuses   []string
		Chosen     string
	}
	run := func(parallelism int, exhaustive bool) outcome {
		c := newCycle(t, objs, preemptor, parallelism)
		res, err := Evaluate(c, c.FilterAll(), Options{Now: now, Exhaustive: exhaustive, MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 400})
		if err != nil {
			t.Fatal(err)
		}
		var o outcome
		for _, cand := range res.Candidates {
			s := fmt.Sprintf("%s pdb=%d", cand.Node.Name, cand.NumPDBViolations)
			for _, v := range cand.Victims {
				s += " " + v.Pod.Key
			}
			o.Candidates = append(o.Candidates, s)
		}
		for _, ns := range res.NodeStatuses {
			o.Statuses = append(o.Statuses, ns.Node.Name+": "+ns.Status.Message())
		}
		if res.Chosen != nil {
			o.Chosen = res.Chosen.Node.Name
		}
		return o
	}
	for _, exhaustive := range []bool{false, true} {
		seq, par := run(1, exhaustive), run(4, exhaustive)
		if diff := cmp.Diff(seq, par); diff != "" {
			t.Errorf("exhaustive %v: parallel differs (-sequential +parallel):\n%s", exhaustive, diff)
		}
		if len(seq.Candidates) < 300 || len(seq.Statuses) == 0 || seq.Chosen == "" {
			t.Errorf("exhaustive %v: %d candidates, %d other statuses, chosen %q: the test cluster does not exercise the dry run",
				exhaustive, len(seq.Candidates), len(seq.Statuses), seq.Chosen)
		}
	}
}
