// Package bench times upstream kube-scheduler v1.37.2's preemption
// evaluation against reprieve's whatif engine on the same generated
// clusters, after checking that both reach the same decision. Run it with
//
//	go test -run XXX -bench . -benchtime 5x ./bench/
//
// `go test ./bench/` (no -bench) only runs the decision checks on the
// smallest clusters.
package bench

import (
	"fmt"
	"math/rand/v2"
	"time"

	v1 "k8s.io/api/core/v1"

	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// Profile selects what, besides resources, constrains the preemptor.
type Profile string

const (
	// Resources: every node is full of small low-priority pods; the
	// preemptor needs a quarter of a node, so every node needs about 8
	// victims.
	Resources Profile = "resources"
	// Constraints: Resources plus required pod anti-affinity both ways
	// (every 10th pod repels the preemptor; the preemptor repels app-3)
	// and a zone topology spread constraint on the preemptor.
	Constraints Profile = "constraints"
)

// Profiles are all profiles, in benchmark order.
var Profiles = []Profile{Resources, Constraints}

// Shape of the generated clusters.
const (
	PodsPerNode = 30
	numZones    = 3
	numApps     = 20
	// maxStartMinutes bounds the pods' start times after rt.BaseTime.
	maxStartMinutes = 600
	// PreemptorKey is the preemptor's namespace/name.
	PreemptorKey = "default/urgent"
)

// Now is the evaluation time of both engines: after every start time.
var Now = rt.BaseTime.Add(24 * time.Hour)

// Cluster is a generated cluster. Pods holds the bound pods followed by the
// pending preemptor.
type Cluster struct {
	Nodes     []*v1.Node
	Pods      []*v1.Pod
	Preemptor *v1.Pod
}

// Generate returns numNodes nodes of 4 CPUs, 64Gi and 110 pods, labelled
// with their hostname and one of three zones, each full with PodsPerNode
// pods of priority 0–4 asking for 4000m/PodsPerNode CPU and 1Gi, labelled
// app=app-0..19 and started at distinct-ish times; and the preemptor
// default/urgent (priority 100, 1 CPU, 1Gi, app=urgent). The same
// arguments always give the same cluster.
func Generate(profile Profile, numNodes int) *Cluster {
	r := rand.New(rand.NewPCG(20260, uint64(numNodes)))
	c := &Cluster{}
	cpu := fmt.Sprintf("%dm", 4000/PodsPerNode)
	for i := range numNodes {
		name := fmt.Sprintf("node-%05d", i)
		c.Nodes = append(c.Nodes, rt.Node(name).CPU("4").Memory("64Gi").Zone(fmt.Sprintf("zone-%d", i%numZones)).Obj())
		for j := range PodsPerNode {
			p := rt.Pod("default", fmt.Sprintf("p-%05d-%02d", i, j)).
				Priority(int32(r.IntN(5))).
				Req(cpu, "1Gi").
				On(name).
				StartedAt(r.IntN(maxStartMinutes)).
				Label("app", fmt.Sprintf("app-%d", r.IntN(numApps)))
			if profile == Constraints && j%10 == 0 {
				p.PodAntiAffinity(v1.LabelHostname, map[string]string{"app": "urgent"})
			}
			c.Pods = append(c.Pods, p.Obj())
		}
	}
	p := rt.Pod("default", "urgent").Priority(100).Req("1", "1Gi").Label("app", "urgent")
	if profile == Constraints {
		p.PodAntiAffinity(v1.LabelHostname, map[string]string{"app": "app-3"}).
			Spread(2, v1.LabelTopologyZone, map[string]string{"app": "urgent"})
	}
	c.Preemptor = p.Obj()
	c.Pods = append(c.Pods, c.Preemptor)
	return c
}

// Offset is the fixed dry-run offset both engines use on a cluster of
// numNodes nodes: a seeded position among them.
func Offset(numNodes int) int32 {
	return int32(rand.New(rand.NewPCG(7, uint64(numNodes))).IntN(numNodes))
}
