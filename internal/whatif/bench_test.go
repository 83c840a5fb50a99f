package whatif_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
	"github.com/reprieve/reprieve/internal/whatif"
)

// benchCluster returns nodes of 4 CPUs each full with podsPerNode pods of
// low, varied priorities, and a preemptor that needs a quarter of a node.
func benchCluster(nodes, podsPerNode int, constraints bool) (snapshot.Objects, *v1.Pod) {
	r := rand.New(rand.NewPCG(1, 2))
	var objs snapshot.Objects
	cpu := 4000 / podsPerNode
	for i := range nodes {
		name := fmt.Sprintf("node-%05d", i)
		objs.Nodes = append(objs.Nodes, rt.Node(name).CPU("4").Memory("64Gi").Zone(fmt.Sprintf("zone-%d", i%3)).Obj())
		for j := range podsPerNode {
			b := rt.Pod("default", fmt.Sprintf("p-%05d-%02d", i, j)).Priority(int32(r.IntN(5))).
				Req(fmt.Sprintf("%dm", cpu), "1Gi").On(name).StartedAt(r.IntN(600)).Label("app", fmt.Sprintf("app-%d", r.IntN(20)))
			if constraints && j%10 == 0 {
				b.PodAntiAffinity(v1.LabelHostname, map[string]string{"app": "urgent"})
			}
			objs.Pods = append(objs.Pods, b.Obj())
		}
	}
	p := rt.Pod("default", "urgent").Priority(100).Req("1", "1Gi").Label("app", "urgent")
	if constraints {
		p.PodAntiAffinity(v1.LabelHostname, map[string]string{"app": "app-3"}).Spread(2, v1.LabelTopologyZone, map[string]string{"app": "urgent"})
	}
	return objs, p.Obj()
}

// withSpare adds a tenth as many spare nodes, empty and with half a CPU:
// too small for the preemptor, room for any victim, so that every victim
// of every set can be tried elsewhere.
func withSpare(objs snapshot.Objects, nodes int) snapshot.Objects {
	for i := range max(nodes/10, 1) {
		objs.Nodes = append(objs.Nodes, rt.Node(fmt.Sprintf("spare-%04d", i)).CPU("500m").Memory("64Gi").Zone(fmt.Sprintf("zone-%d", i%3)).Obj())
	}
	return objs
}

func benchmarkWhatif(b *testing.B, nodes int, constraints bool) {
	benchmarkPolicy(b, nodes, constraints, false, profile.PolicyUpstream)
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchmarkPolicy(b *testing.B, nodes int, constraints, spare bool, policy profile.Policy) {
	objs, podObj := benchCluster(nodes, 30, constraints)
	if spare {
		objs = withSpare(objs, nodes)
	}
	snap, pod := benchSnapshot(b, objs, podObj)
	opts := whatif.Options{Now: now, Policy: policy}
	// One evaluator for every evaluation, as a scheduler or a whatif of
	// many pods holds it; the first two evaluations warm it up (the
	// second caches the visited nodes' importance orders, see
	// snapshot.Node.CachedImportanceOrder). BenchmarkWhatifCold measures
	// the first.
	var e whatif.Evaluator
	for range 2 {
		if d, err := e.Evaluate(snap, pod, opts); err != nil || d.NominatedNode == "" {
			b.Fatalf("benchmark cluster does not need preemption: %v %v", d, err)
		}
	}
	// The cluster's and the snapshot's garbage is collected here, not
	// in the timed loop: at -benchtime 50x that collection was most of
	// what a warm evaluation measured.
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	var d *whatif.Decision
	var err error
	cpu := cpuTime(b)
	for b.Loop() {
		if d, err = e.Evaluate(snap, pod, opts); err != nil {
			b.Fatal(err)
		}
	}
	// On a shared machine wall time also counts waiting for a core.
	b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
	if policy != profile.PolicyUpstream {
		proven := 0
		for _, c := range d.Candidates {
			if c.Proven {
				proven++
			}
		}
		b.ReportMetric(100*float64(proven)/float64(max(len(d.Candidates), 1)), "%proven")
		b.ReportMetric(float64(len(d.Candidates)), "candidates")
	}
}

func BenchmarkWhatif(b *testing.B) {
	for _, nodes := range []int{500, 5000} {
		b.Run(fmt.Sprintf("resources/nodes=%d", nodes), func(b *testing.B) { benchmarkWhatif(b, nodes, false) })
		b.Run(fmt.Sprintf("constraints/nodes=%d", nodes), func(b *testing.B) { benchmarkWhatif(b, nodes, true) })
	}
}

// BenchmarkPolicies measures the victim policies beside upstream's (the
// binary's defaults otherwise): every potential node is searched up to
// 1,000 of them, the visited ones beyond. The clusters are full, so no
// victim fits elsewhere; "spare" adds a tenth as many small empty nodes
// where every victim does, reschedulable's worst case (each victim tried
// elsewhere needs its own filter cycle, and the work bound is reached).
func BenchmarkPolicies(b *testing.B) {
	for _, nodes := range []int{500, 5000} {
		for _, p := range profile.Policies() {
			b.Run(fmt.Sprintf("%s/resources/nodes=%d", p, nodes), func(b *testing.B) { benchmarkPolicy(b, nodes, false, false, p) })
			b.Run(fmt.Sprintf("%s/constraints/nodes=%d", p, nodes), func(b *testing.B) { benchmarkPolicy(b, nodes, true, false, p) })
			b.Run(fmt.Sprintf("%s/constraints+spare/nodes=%d", p, nodes), func(b *testing.B) { benchmarkPolicy(b, nodes, true, true, p) })
		}
	}
}

// BenchmarkSnapshot measures building a snapshot and reports its memory per pod.
func BenchmarkSnapshot(b *testing.B) {
	objs, _ := benchCluster(5000, 30, false)
	b.ReportAllocs()
	var snap *snapshot.Snapshot
	for b.Loop() {
		var err error
		if snap, err = snapshot.New(objs); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	var before, after runtime.MemStats
	snap = nil
	runtime.GC()
	runtime.ReadMemStats(&before)
	snap, _ = snapshot.New(objs)
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(objs.Pods)), "snapshot-B/pod")
	runtime.KeepAlive(snap)
}
