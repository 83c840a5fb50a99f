package conformance

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	"github.com/reprieve/reprieve/internal/whatif"
	"github.com/reprieve/reprieve/test/conformance/gen"
	"github.com/reprieve/reprieve/test/conformance/upstream"
)

var (
	scenarios   = flag.Int("scenarios", envInt("REPRIEVE_SCENARIOS", 500), "random scenarios per profile")
	firstSeed   = flag.Int64("seed", envInt64("REPRIEVE_SEED", 1), "seed of the first scenario")
	failuresDir = flag.String("failures", "failures", "folder for the files of failing scenarios")
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func envInt64(name string, def int64) int64 {
	if v, err := strconv.ParseInt(os.Getenv(name), 10, 64); err == nil {
		return v
	}
	return def
}

// release is the kube-scheduler release compared (REPRIEVE_KUBE_VERSION,
// default this module's own, 1.37): reprieve decides with its Semantics.
// For another release, upstream answers through runner processes of that
// release (REPRIEVE_UPSTREAM_RUNNER, built from test/conformance138 or
// test/conformance136): its k8s.io/api cannot share this binary.
var (
	release = profile.Release137
	remote  *upstream.Remote
)

func TestMain(m *testing.M) {
	flag.Parse()
	if v := os.Getenv("REPRIEVE_KUBE_VERSION"); v != "" {
		r, err := profile.ParseRelease(v)
		if err != nil {
			fmt.Fprintln(os.Stderr, "REPRIEVE_KUBE_VERSION:", err)
			os.Exit(2)
		}
		release = r
	}
	if path := os.Getenv("REPRIEVE_UPSTREAM_RUNNER"); path != "" {
		r, err := upstream.StartRemote(path, 2)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		remote = r
	} else if release != profile.Release137 {
		fmt.Fprintf(os.Stderr, "REPRIEVE_KUBE_VERSION=%s needs REPRIEVE_UPSTREAM_RUNNER, a runner of that release\n", release)
		os.Exit(2)
	}
	code := m.Run()
	if remote != nil {
		remote.Close()
	}
	os.Exit(code)
}

// evalTime is the evaluation time on both sides; generated start times are
// before it.
var evalTime = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// TestDifferential compares reprieve with upstream kube-scheduler on random
// scenarios of every profile.
func TestDifferential(t *testing.T) {
	for _, profile := range gen.Profiles() {
		t.Run(string(profile), func(t *testing.T) {
			t.Parallel()
			var compared, preempting atomic.Int64
			seeds := make(chan int64)
			var wg sync.WaitGroup
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for seed := range seeds {
						sc := gen.Generate(seed, profile)
						if compareScenario(t, sc, fmt.Sprintf("%s-%d", profile, seed)) {
							preempting.Add(1)
						}
						compared.Add(1)
					}
				}()
			}
			for i := range *scenarios {
				if t.Failed() && i > 50 {
					break
				}
				seeds <- *firstSeed + int64(i)
			}
			close(seeds)
			wg.Wait()
			t.Logf("profile %s: %d scenarios (seeds %d..%d) agree; %d needed preemption and nominated a node",
				profile, compared.Load(), *firstSeed, *firstSeed+int64(*scenarios)-1, preempting.Load())
		})
	}
}

// compareScenario runs both engines on sc and reports every disagreement.
// It returns whether upstream nominated a node.
func compareScenario(t *testing.T, sc *gen.Scenario, name string) bool {
	t.Helper()
	want, err := runUpstream(sc, profile.Features{})
	if err != nil {
		t.Errorf("%s: upstream: %v", name, err)
		return false
	}
	got, err := runReprieve(sc, profile.Features{})
	if err != nil {
		t.Errorf("%s: reprieve: %v", name, err)
		return false
	}
	if diffs := compare(want, got, nil); len(diffs) > 0 {
		path := saveFailure(t, sc, name, want, got)
		t.Errorf("%s: reprieve disagrees with kube-scheduler:\n  %s\nreplay: reprieve whatif --snapshot %s --pod %s/%s --explain",
			name, strings.Join(diffs, "\n  "), path, sc.Preemptor.Namespace, sc.Preemptor.Name)
	}
	return want.Chosen != ""
}

// runUpstream runs kube-scheduler on sc with the feature gates f stands for
// (none: upstream's defaults).
func runUpstream(sc *gen.Scenario, f profile.Features) (*upstream.Result, error) {
	in := upstreamInput(sc)
	if f != (profile.Features{}) {
		in.FeatureGates = f.Gates()
	}
	if remote != nil {
		return remote.Run(in)
	}
	return upstream.Run(context.Background(), in)
}

// upstreamInput is the scenario as upstream's runner takes it: every kind
// reaches the scheduler through its informers.
func upstreamInput(sc *gen.Scenario) upstream.Input {
	return upstream.Input{
		Nodes: sc.Nodes, Pods: sc.Pods, PDBs: sc.PDBs, PriorityClasses: sc.PriorityClasses,
		Namespaces: sc.Namespaces, Preemptor: sc.Preemptor,
		PodGroups: sc.PodGroups, CompositePodGroups: sc.CompositePodGroups,
		ResourceSlices: sc.ResourceSlices, DeviceClasses: sc.DeviceClasses, ResourceClaims: sc.ResourceClaims,
		Storage:  upstreamStorage(sc),
		Services: sc.Selectors.Services, ReplicationControllers: sc.Selectors.ReplicationControllers,
		ReplicaSets: sc.Selectors.ReplicaSets, StatefulSets: sc.Selectors.StatefulSets,
	}
}

// snapshotObjects is the scenario as reprieve's snapshot takes it, every
// other cluster's pods in parts (podsInParts).
func snapshotObjects(sc *gen.Scenario) snapshot.Objects {
	return podsInParts(snapshot.Objects{Nodes: sc.Nodes, Pods: sc.Pods, PDBs: sc.PDBs, PriorityClasses: sc.PriorityClasses, Namespaces: sc.Namespaces,
		PodGroups: sc.PodGroups, CompositePodGroups: sc.CompositePodGroups,
		ResourceSlices: sc.ResourceSlices, DeviceClasses: sc.DeviceClasses, ResourceClaims: sc.ResourceClaims,
		Storage: snapshotStorage(sc),
		Selectors: snapshot.SelectorObjects{Services: sc.Selectors.Services, ReplicationControllers: sc.Selectors.ReplicationControllers,
			ReplicaSets: sc.Selectors.ReplicaSets, StatefulSets: sc.Selectors.StatefulSets}})
}

// podsInParts gives every other cluster's pods (those with an odd number
// of pods) to the snapshot in parts, as a lean load keeps them, pods of one
// shape sharing it: the engine must decide alike on both.
func podsInParts(objs snapshot.Objects) snapshot.Objects {
	if len(objs.Pods)%2 == 0 {
		return objs
	}
	shapes := map[string]*v1.Pod{}
	for _, p := range objs.Pods {
		parts := snapshot.SplitPod(p.DeepCopy())
		key, err := json.Marshal(parts.Shape)
		if err != nil {
			panic(err)
		}
		if shape, ok := shapes[string(key)]; ok {
			parts.Shape = shape
		} else {
			shapes[string(key)] = parts.Shape
		}
		objs.PodParts = append(objs.PodParts, parts)
	}
	objs.Pods = nil
	return objs
}

func runReprieve(sc *gen.Scenario, f profile.Features) (*whatif.Decision, error) {
	snap, err := snapshot.New(snapshotObjects(sc))
	if err != nil {
		return nil, err
	}
	pod := snap.Pod(sc.Preemptor.Namespace + "/" + sc.Preemptor.Name)
	if pod == nil {
		return nil, fmt.Errorf("preemptor missing from the snapshot")
	}
	f.Semantics = release.Semantics()
	return whatif.Evaluate(snap, pod, whatif.Options{Exhaustive: true, Now: evalTime, Features: f})
}

// status is a node status in comparable form: reasons sorted, since upstream
// lists missing scalar resources in map order.
type status struct {
	Code    string
	Plugin  string
	Reasons []string
}

func norm(code, plugin string, reasons []string) status {
	r := slices.Clone(reasons)
	slices.Sort(r)
	if len(r) == 0 {
		r = nil
	}
	return status{code, plugin, r}
}

// compare lists the differences between upstream's result and reprieve's
// decision, each as one line. canon, when not nil, rewrites both sides'
// victim lists before they are compared (see unitCanon).
func compare(want *upstream.Result, got *whatif.Decision, canon func([]string) []string) []string {
	if canon == nil {
		canon = func(s []string) []string { return s }
	}
	var diffs []string
	add := func(what string, w, g any) {
		if d := cmp.Diff(w, g); d != "" {
			diffs = append(diffs, fmt.Sprintf("%s (-upstream +reprieve): %s", what, strings.Join(strings.Fields(d), " ")))
		}
	}
	if want.AbortReason != "" {
		diffs = append(diffs, "upstream aborted the cycle: "+want.AbortReason)
		return diffs
	}
	add("fits", want.Fits, got.Fits)
	add("feasible nodes", nonEmpty(want.FeasibleNodes), nonEmpty(got.FeasibleNodes))

	// Filter statuses of every non-feasible node.
	wantFilter, gotFilter := map[string]status{}, map[string]status{}
	for n, s := range want.NodeStatuses {
		wantFilter[n] = norm(s.Code, s.Plugin, s.Reasons)
	}
	for n, s := range got.NodeStatuses.Map() {
		gotFilter[n] = norm(s.Code, s.Plugin, s.Reasons)
	}
	if !want.Fits {
		// Candidates are not in reprieve's nodeStatuses; take their filter
		// status from upstream's side for the comparison of the others.
		for _, c := range got.Candidates {
			if s, ok := wantFilter[c.Node]; ok {
				gotFilter[c.Node] = s
			}
		}
	}
	add("filter statuses", wantFilter, gotFilter)
	if want.Fits {
		return append(diffs, comparePlacement(want, got)...)
	}

	add("eligible", want.Eligible, got.Eligible)
	add("ineligible reason", want.IneligibleReason, got.IneligibleReason)
	if !want.Eligible {
		return diffs
	}
	var gotPotential []string
	for n, s := range got.NodeStatuses.Map() {
		if s.Code == "Unschedulable" {
			gotPotential = append(gotPotential, n)
		}
	}
	for _, c := range got.Candidates {
		gotPotential = append(gotPotential, c.Node)
	}
	slices.Sort(gotPotential)
	add("potential nodes", nonEmpty(want.PotentialNodes), nonEmpty(gotPotential))

	type cand struct {
		Victims          []string
		NumPDBViolations int64
	}
	wantCands, gotCands := map[string]cand{}, map[string]cand{}
	for n, c := range want.Candidates {
		wantCands[n] = cand{canon(c.Victims), c.NumPDBViolations}
	}
	for _, c := range got.Candidates {
		gotCands[c.Node] = cand{canon(c.Victims), int64(c.NumPDBViolations)}
	}
	add("candidates", wantCands, gotCands)

	wantDry, gotDry := map[string]status{}, map[string]status{}
	for n, s := range want.DryRunStatuses {
		wantDry[n] = norm(s.Code, s.Plugin, s.Reasons)
	}
	for n, s := range got.NodeStatuses.Map() {
		if p := s.Preemption; p != nil {
			gotDry[n] = norm(p.Code, p.Plugin, p.Reasons)
		}
	}
	add("dry-run statuses", wantDry, gotDry)

	gotTied := got.TiedNodes
	if len(gotTied) == 0 && got.NominatedNode != "" {
		gotTied = []string{got.NominatedNode}
	}
	add("best candidates", nonEmpty(want.TiedBest), nonEmpty(gotTied))
	if want.Chosen != "" && !slices.Contains(want.TiedBest, got.NominatedNode) {
		diffs = append(diffs, fmt.Sprintf("chosen node %q is not among upstream's best %v", got.NominatedNode, want.TiedBest))
	}
	if want.Chosen != "" {
		if c, ok := want.Candidates[got.NominatedNode]; ok {
			var victims []string
			for _, v := range got.Victims {
				victims = append(victims, v.Pod)
			}
			add("victims on the chosen node", canon(c.Victims), canon(victims))
			add("numPDBViolations", c.NumPDBViolations, int64(got.NumPDBViolations))
		}
	}
	return diffs
}

// comparePlacement compares where a pod that fits is bound: reprieve's node
// must be one of upstream's best, with upstream's score, and its runner-up
// must have upstream's score too; a scoring failure must be one on both
// sides.
func comparePlacement(want *upstream.Result, got *whatif.Decision) []string {
	p := got.Placement
	switch {
	case p == nil:
		return []string{"reprieve places the pod nowhere"}
	case want.ScoreError != "" || p.Error != "":
		if want.ScoreError != p.Error {
			return []string{fmt.Sprintf("scoring error: upstream %q, reprieve %q", want.ScoreError, p.Error)}
		}
		return nil
	}
	var diffs []string
	if !slices.Contains(want.BestNodes, p.Node) {
		diffs = append(diffs, fmt.Sprintf("placement: reprieve binds to %s, upstream to one of %v (scores %v; reprieve's %d, runner-up %s %d)",
			p.Node, want.BestNodes, want.Scores, p.Score, p.RunnerUp, p.RunnerUpScore))
	}
	if want.Scores == nil {
		return diffs
	}
	if s, ok := want.Scores[p.Node]; !ok || s != p.Score {
		diffs = append(diffs, fmt.Sprintf("placement: %s scores %d, upstream %d (%v)", p.Node, p.Score, s, want.Scores))
	}
	if p.RunnerUp != "" {
		if s := want.Scores[p.RunnerUp]; s != p.RunnerUpScore {
			diffs = append(diffs, fmt.Sprintf("placement: runner-up %s scores %d, upstream %d (%v)", p.RunnerUp, p.RunnerUpScore, s, want.Scores))
		}
	}
	return diffs
}

func nonEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// saveFailure writes the scenario and both answers and returns the
// scenario's path.
func saveFailure(t *testing.T, sc *gen.Scenario, name string, want *upstream.Result, got *whatif.Decision) string {
	dir, err := filepath.Abs(*failuresDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := sc.YAML()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".yaml")
	write := func(p string, b []byte) {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(path, data)
	w, _ := json.MarshalIndent(want, "", "  ")
	write(filepath.Join(dir, name+".upstream.json"), w)
	g, _ := json.MarshalIndent(got, "", "  ")
	write(filepath.Join(dir, name+".reprieve.json"), g)
	return path
}
