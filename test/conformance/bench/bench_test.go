package bench

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
	"github.com/reprieve/reprieve/internal/whatif"
	"github.com/reprieve/reprieve/test/conformance/upstream"
)

// benchSizes are the cluster sizes (nodes) of BenchmarkPreemption.
var benchSizes = []int{500, 1000, 5000}

// fixture is one generated cluster with reprieve's snapshot of it.
type fixture struct {
	cluster *Cluster
	snap    *snapshot.Snapshot
	pod     *snapshot.Pod
	offset  int32
}

func newFixture(tb testing.TB, profile Profile, numNodes int) *fixture {
	tb.Helper()
	c := Generate(profile, numNodes)
	snap, err := snapshot.New(snapshot.Objects{Nodes: c.Nodes, Pods: c.Pods})
	if err != nil {
		tb.Fatal(err)
	}
	pod := snap.Pod(PreemptorKey)
	if pod == nil {
		tb.Fatalf("preemptor %s is not in the snapshot", PreemptorKey)
	}
	return &fixture{cluster: c, snap: snap, pod: pod, offset: Offset(numNodes)}
}

func (f *fixture) upstreamInput() upstream.Input {
	return upstream.Input{Nodes: f.cluster.Nodes, Pods: f.cluster.Pods, Preemptor: f.cluster.Preemptor}
}

// reprieveOptions are reprieve's options for the fixture: the fixed offset,
// the default candidate budget and parallelism, a fixed clock.
func (f *fixture) reprieveOptions() whatif.Options {
	offset := int(f.offset)
	return whatif.Options{Offset: &offset, Now: Now}
}

// checkSameDecision evaluates the preemptor with upstream and with reprieve,
// from the same offset with the default candidate budget, and fails tb with
// every difference. Upstream runs with parallelism 1 and its potential
// nodes in snapshot order, so that its dry run is sequential and visits the
// nodes in the order reprieve does: upstream's own order is random (Go map
// iteration), which would make the candidates reached from an offset
// random.
func checkSameDecision(tb testing.TB, f *fixture) {
	tb.Helper()
	checkDecision(tb, f, upstream.EnvOptions{Parallelism: 1, SnapshotOrder: true}, f.offset, 0, f.reprieveOptions())
}

// checkExhaustiveDecision compares the decisions of a dry run of every
// potential node, which depend neither on the order nor on the parallelism:
// upstream runs as configured by default.
func checkExhaustiveDecision(tb testing.TB, f *fixture) {
	tb.Helper()
	checkDecision(tb, f, upstream.EnvOptions{}, 0, int32(len(f.cluster.Nodes)),
		whatif.Options{Exhaustive: true, Now: Now})
}

// checkDecision evaluates the preemptor with upstream (env, from offset, for
// numCandidates candidates) and with reprieve (opts), and fails tb with
// every difference.
func checkDecision(tb testing.TB, f *fixture, env upstream.EnvOptions, offset, numCandidates int32, opts whatif.Options) {
	tb.Helper()
	ctx := context.Background()
	e, err := upstream.NewEnvironment(ctx, f.upstreamInput(), env)
	if err != nil {
		tb.Fatalf("upstream environment: %v", err)
	}
	defer e.Close()
	want, err := e.Evaluate(ctx, offset, numCandidates)
	if err != nil {
		tb.Fatalf("upstream: %v", err)
	}
	got, err := whatif.Evaluate(f.snap, f.pod, opts)
	if err != nil {
		tb.Fatal(err)
	}
	if diffs := compare(want, got); len(diffs) > 0 {
		tb.Fatalf("%d nodes, offset %d: reprieve disagrees with kube-scheduler:\n  %s",
			len(f.cluster.Nodes), offset, strings.Join(diffs, "\n  "))
	}
	if want.Chosen == "" {
		tb.Fatalf("the benchmark cluster does not make upstream preempt: %s", want.PostFilterMessage)
	}
}

// maxNodeDiffs bounds the per-node lines compare prints.
const maxNodeDiffs = 10

// compare lists, one per line, how reprieve's decision differs from
// upstream's result: fits, eligibility, the candidate nodes, each
// candidate's victims (in order) and PDB violations, and the best nodes.
func compare(want *upstream.Result, got *whatif.Decision) []string {
	var diffs []string
	if want.AbortReason != "" {
		return []string{"upstream aborted the cycle: " + want.AbortReason}
	}
	if want.Fits != got.Fits {
		diffs = append(diffs, fmt.Sprintf("fits: upstream %v, reprieve %v", want.Fits, got.Fits))
	}
	if want.Eligible != got.Eligible {
		diffs = append(diffs, fmt.Sprintf("eligible: upstream %v (%q), reprieve %v (%q)", want.Eligible, want.IneligibleReason, got.Eligible, got.IneligibleReason))
	}

	type candidate struct {
		victims          []string
		numPDBViolations int64
	}
	gotCands := make(map[string]candidate, len(got.Candidates))
	for _, c := range got.Candidates {
		gotCands[c.Node] = candidate{c.Victims, int64(c.NumPDBViolations)}
	}
	var onlyUpstream, onlyReprieve, nodeDiffs []string
	for _, node := range sortedKeys(want.Candidates) {
		w := want.Candidates[node]
		g, ok := gotCands[node]
		switch {
		case !ok:
			onlyUpstream = append(onlyUpstream, node)
		case !slices.Equal(w.Victims, g.victims) || w.NumPDBViolations != g.numPDBViolations:
			nodeDiffs = append(nodeDiffs, fmt.Sprintf("%s: upstream victims %v pdbViolations=%d; reprieve victims %v pdbViolations=%d",
				node, w.Victims, w.NumPDBViolations, g.victims, g.numPDBViolations))
		}
	}
	for _, node := range sortedKeys(gotCands) {
		if _, ok := want.Candidates[node]; !ok {
			onlyReprieve = append(onlyReprieve, node)
		}
	}
	if len(onlyUpstream) > 0 || len(onlyReprieve) > 0 {
		diffs = append(diffs, fmt.Sprintf("candidate nodes: %d upstream, %d reprieve; only upstream: %s; only reprieve: %s",
			len(want.Candidates), len(gotCands), abbreviate(onlyUpstream), abbreviate(onlyReprieve)))
	}
	if len(nodeDiffs) > 0 {
		diffs = append(diffs, fmt.Sprintf("victims differ on %d candidate nodes:", len(nodeDiffs)))
		for i, d := range nodeDiffs {
			if i == maxNodeDiffs {
				diffs = append(diffs, fmt.Sprintf("  ... and %d more", len(nodeDiffs)-maxNodeDiffs))
				break
			}
			diffs = append(diffs, "  "+d)
		}
	}

	gotTied := got.TiedNodes
	if len(gotTied) == 0 && got.NominatedNode != "" {
		gotTied = []string{got.NominatedNode}
	}
	if !slices.Equal(want.TiedBest, gotTied) {
		diffs = append(diffs, fmt.Sprintf("best nodes: upstream %v, reprieve %v", want.TiedBest, gotTied))
	}
	if want.Chosen != "" && !slices.Contains(want.TiedBest, got.NominatedNode) {
		diffs = append(diffs, fmt.Sprintf("reprieve nominated %q, not among upstream's best %v", got.NominatedNode, want.TiedBest))
	}
	if c, ok := want.Candidates[got.NominatedNode]; ok {
		var victims []string
		for _, v := range got.Victims {
			victims = append(victims, v.Pod)
		}
		if !slices.Equal(c.Victims, victims) {
			diffs = append(diffs, fmt.Sprintf("victims on the nominated node %s: upstream %v, reprieve %v", got.NominatedNode, c.Victims, victims))
		}
	}
	return diffs
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func abbreviate(names []string) string {
	if len(names) > maxNodeDiffs {
		return fmt.Sprintf("%v and %d more", names[:maxNodeDiffs], len(names)-maxNodeDiffs)
	}
	return fmt.Sprint(names)
}

// TestSameDecision runs BenchmarkPreemption's decision check on the smallest
// clusters, so that plain `go test` exercises it, and compares the
// exhaustive decisions too.
func TestSameDecision(t *testing.T) {
	for _, profile := range Profiles {
		t.Run(string(profile), func(t *testing.T) {
			f := newFixture(t, profile, benchSizes[0])
			t.Run("offset", func(t *testing.T) { checkSameDecision(t, f) })
			t.Run("exhaustive", func(t *testing.T) { checkExhaustiveDecision(t, f) })
		})
	}
}

// BenchmarkPreemption times one evaluation of the preemptor by upstream
// (default parallelism, 16) and by reprieve (default parallelism,
// GOMAXPROCS) on the same cluster from the same dry-run offset, after
// checking that both decide the same.
func BenchmarkPreemption(b *testing.B) {
	for _, profile := range Profiles {
		for _, numNodes := range benchSizes {
			b.Run(fmt.Sprintf("profile=%s/nodes=%d", profile, numNodes), func(b *testing.B) {
				f := newFixture(b, profile, numNodes)
				checkSameDecision(b, f)
				b.Run("impl=upstream", func(b *testing.B) { benchmarkUpstream(b, f) })
				b.Run("impl=reprieve", func(b *testing.B) { benchmarkReprieve(b, f) })
			})
		}
	}
}

func benchmarkUpstream(b *testing.B, f *fixture) {
	ctx := context.Background()
	env, err := upstream.NewEnvironment(ctx, f.upstreamInput(), upstream.EnvOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer env.Close()
	// One evaluation outside the timing, as for reprieve.
	if _, err := env.Evaluate(ctx, f.offset, 0); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	b.ReportAllocs()
	var res *upstream.Result
	cpu := startCPUTime()
	for b.Loop() {
		if res, err = env.Evaluate(ctx, f.offset, 0); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(b)
	if res.Chosen == "" {
		b.Fatalf("upstream did not nominate a node: %s", res.PostFilterMessage)
	}
	b.ReportMetric(float64(len(res.Candidates)), "candidates")
}

func benchmarkReprieve(b *testing.B, f *fixture) {
	opts := f.reprieveOptions()
	// One evaluator for every evaluation, as a scheduler holds one. Two
	// evaluations outside the timing: the first sizes the evaluator, the
	// second computes what the snapshot caches per node on a node's
	// second visit (its importance order), as a scheduler's snapshot has
	// it from earlier cycles.
	var e whatif.Evaluator
	for range 2 {
		if _, err := e.Evaluate(f.snap, f.pod, opts); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	b.ReportAllocs()
	var d *whatif.Decision
	cpu := startCPUTime()
	for b.Loop() {
		var err error
		if d, err = e.Evaluate(f.snap, f.pod, opts); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(b)
	if d.NominatedNode == "" {
		b.Fatalf("reprieve did not nominate a node: %s", d.Summary)
	}
	b.ReportMetric(float64(len(d.Candidates)), "candidates")
}

// memoryNodes is the cluster size of BenchmarkSnapshotMemory.
const memoryNodes = 5000

// BenchmarkSnapshotMemory times building the cluster state each engine
// evaluates on — upstream's scheduler cache plus the snapshot taken from
// it; reprieve's snapshot — and reports the heap it retains per bound pod
// ("B/pod"), beyond the shared input objects.
func BenchmarkSnapshotMemory(b *testing.B) {
	c := Generate(Resources, memoryNodes)
	numPods := memoryNodes * PodsPerNode
	b.Run("impl=upstream", func(b *testing.B) {
		build := func() func() {
			s, err := upstream.BuildSchedulerSnapshot(context.Background(), c.Nodes, c.Pods)
			if err != nil {
				b.Fatal(err)
			}
			if got := s.NumPods(); got != numPods {
				b.Fatalf("upstream snapshot has %d pods, want %d", got, numPods)
			}
			return func() {
				runtime.KeepAlive(s)
				s.Close()
			}
		}
		benchmarkMemory(b, numPods, build)
	})
	b.Run("impl=reprieve", func(b *testing.B) {
		build := func() func() {
			s, err := snapshot.New(snapshot.Objects{Nodes: c.Nodes, Pods: c.Pods})
			if err != nil {
				b.Fatal(err)
			}
			return func() { runtime.KeepAlive(s) }
		}
		benchmarkMemory(b, numPods, build)
	})
}

// benchmarkMemory times build, then measures the heap retained by one
// build until its release function is called and reports it per pod.
func benchmarkMemory(b *testing.B, numPods int, build func() (release func())) {
	b.ReportAllocs()
	for b.Loop() {
		build()()
	}
	b.StopTimer()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	release := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	retained := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	release()
	b.ReportMetric(float64(retained)/float64(numPods), "B/pod")
}

// cpuTime is the process's CPU time (user and system, every thread, the
// garbage collector's included) at the start of a timed loop. Reported per
// operation next to ns/op, it is steadier than wall time on a shared
// machine, and it shows what parallelism costs.
type cpuTime time.Duration

func startCPUTime() cpuTime { return cpuTime(processCPU()) }

func (c cpuTime) report(b *testing.B) {
	b.ReportMetric(float64(processCPU()-time.Duration(c))/float64(b.N), "cpu-ns/op")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
