package conformance

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/adapter/manifest"
	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/whatif"
	"github.com/reprieve/reprieve/test/conformance/gen"
)

// workloadGates are the feature gates of the pod-group tests, on both
// sides: GenericWorkload and CompositePodGroup (upstream also needs
// TopologyAwareWorkloadScheduling for the latter, which Features.Gates
// adds).
var workloadGates = profile.Features{GenericWorkload: true, CompositePodGroup: true}

// upstreamReruns is how many more times a disagreeing scenario is run
// upstream to see whether upstream itself answers differently from run to
// run (its pod-group state and critical paths are built in map order).
const upstreamReruns = 24

// workloadStats counts the outcomes of pod-group scenarios.
type workloadStats struct {
	compared, preempting, groupVictims, exact, nondeterministic atomic.Int64
}

// TestDifferentialWorkload compares reprieve with upstream kube-scheduler on
// random scenarios of the Workload profile — pods in PodGroups and nested
// CompositePodGroups across nodes, disruption modes, budgets over group
// members — with the GenericWorkload and CompositePodGroup gates on both
// sides, with GenericWorkload alone (where CompositePodGroups are ignored),
// and with the gates off (where pod groups are ignored).
//
// Upstream is not deterministic where it walks maps: a group's members come
// in map order (which decides the order of budget charges and of
// PodTopologySpread's critical-path updates), and so does the first build
// of the critical paths. When reprieve disagrees with upstream's first
// answer, upstream is run again; a scenario where one of upstream's answers
// is reprieve's counts as agreeing, and is reported.
func TestDifferentialWorkload(t *testing.T) {
	for _, f := range []profile.Features{workloadGates, {GenericWorkload: true}, {}} {
		// Gates off, groups are ignored on both sides.
		t.Run(gatesName(f), func(t *testing.T) {
			var st workloadStats
			seeds := make(chan int64)
			var wg sync.WaitGroup
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for seed := range seeds {
						sc := gen.Generate(seed, gen.Workload)
						compareWorkloadScenario(t, sc, fmt.Sprintf("%s-%d", gen.Workload, seed), f, &st)
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
			t.Logf("profile %s, gates %v: %d scenarios (seeds %d..%d) agree; %d needed preemption and nominated a node, %d of them evicting a pod group whole; %d agree with upstream's first answer, %d with another of upstream's answers (upstream varies from run to run)",
				gen.Workload, f.Gates(), st.compared.Load(), *firstSeed, *firstSeed+int64(*scenarios)-1, st.preempting.Load(), st.groupVictims.Load(), st.exact.Load(), st.nondeterministic.Load())
		})
	}
}

// compareWorkloadScenario is compareScenario with feature gates f, group
// members compared as sets, and upstream re-run on a disagreement.
func compareWorkloadScenario(t *testing.T, sc *gen.Scenario, name string, f profile.Features, st *workloadStats) {
	t.Helper()
	want, err := runUpstream(sc, f)
	if err != nil {
		t.Errorf("%s: upstream: %v", name, err)
		return
	}
	got, err := runReprieve(sc, f)
	if err != nil {
		t.Errorf("%s: reprieve: %v", name, err)
		return
	}
	canon := unitCanon(sc, f)
	diffs := compare(want, got, canon)
	if len(diffs) == 0 {
		st.exact.Add(1)
	} else {
		for range upstreamReruns {
			again, err := runUpstream(sc, f)
			if err != nil {
				t.Errorf("%s: upstream: %v", name, err)
				return
			}
			if len(compare(again, got, canon)) == 0 {
				st.nondeterministic.Add(1)
				t.Logf("%s: reprieve agrees with one of upstream's answers, not its first: %s", name, strings.Join(diffs, "; "))
				want, diffs = again, nil
				break
			}
		}
	}
	if len(diffs) > 0 {
		path := saveFailure(t, sc, name, want, got)
		gates := []string{}
		for g, on := range f.Gates() {
			gates = append(gates, fmt.Sprintf("%s=%v", g, on))
		}
		slices.Sort(gates)
		t.Errorf("%s: reprieve disagrees with kube-scheduler (%d runs):\n  %s\nreplay: reprieve whatif --feature-gates %s --snapshot %s --pod %s/%s --explain",
			name, upstreamReruns+1, strings.Join(diffs, "\n  "), strings.Join(gates, ","), path, sc.Preemptor.Namespace, sc.Preemptor.Name)
		return
	}
	st.compared.Add(1)
	if want.Chosen != "" {
		st.preempting.Add(1)
		if len(got.VictimGroups) > 0 {
			st.groupVictims.Add(1)
		}
	}
}

// unitCanon returns a function that sorts, in a victim list, each run of
// consecutive pods that belong to the same group evicted whole: upstream
// lists a group's members in map order. The groups are worked out from the
// scenario independently of reprieve, as upstream's getHighestAllAncestor
// finds them under the gates f.
func unitCanon(sc *gen.Scenario, f profile.Features) func([]string) []string {
	if !f.GenericWorkload {
		return nil
	}
	type node struct {
		parent string // key of the parent CompositePodGroup, "" for a root
		all    bool
	}
	pgs, cpgs := map[string]node{}, map[string]node{}
	for _, pg := range sc.PodGroups {
		n := node{all: pg.Spec.DisruptionMode != nil && pg.Spec.DisruptionMode.All != nil}
		if p := pg.Spec.ParentCompositePodGroupName; p != nil && f.CompositePodGroup {
			n.parent = namespaceOf(pg.Namespace) + "/" + *p
		}
		pgs[namespaceOf(pg.Namespace)+"/"+pg.Name] = n
	}
	for _, cpg := range sc.CompositePodGroups {
		n := node{all: cpg.Spec.DisruptionMode != nil && cpg.Spec.DisruptionMode.All != nil}
		if p := cpg.Spec.ParentCompositePodGroupName; p != nil {
			n.parent = namespaceOf(cpg.Namespace) + "/" + *p
		}
		cpgs[namespaceOf(cpg.Namespace)+"/"+cpg.Name] = n
	}
	unit := map[string]string{}
	for _, p := range sc.Pods {
		sg := p.Spec.SchedulingGroup
		if sg == nil || sg.PodGroupName == nil {
			continue
		}
		key, highest := namespaceOf(p.Namespace)+"/"+*sg.PodGroupName, ""
		n, ok := pgs[key]
		seen := map[string]bool{}
		for depth := 0; ok && depth < 4 && !seen[key]; depth++ {
			seen[key] = true
			if n.all {
				highest = key
			}
			if n.parent == "" {
				break
			}
			key = n.parent
			n, ok = cpgs[key]
		}
		if highest != "" {
			unit[namespaceOf(p.Namespace)+"/"+p.Name] = highest
		}
	}
	return func(victims []string) []string {
		out := slices.Clone(victims)
		for i := 0; i < len(out); {
			j := i + 1
			if u := unit[out[i]]; u != "" {
				for j < len(out) && unit[out[j]] == u {
					j++
				}
				slices.Sort(out[i:j])
			}
			i = j
		}
		return out
	}
}

func namespaceOf(ns string) string {
	if ns == "" {
		return v1.NamespaceDefault
	}
	return ns
}

// upstreamWorkloadCasesDir holds the pod-group cases ported from
// kube-scheduler's own tests, run with the pod-group gates.
var upstreamWorkloadCasesDir = filepath.Join("testdata", "upstream-workload")

// TestUpstreamWorkloadCases runs every ported upstream pod-group case with
// the GenericWorkload and CompositePodGroup gates on both sides.
func TestUpstreamWorkloadCases(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(upstreamWorkloadCasesDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no scenario files in %s", upstreamWorkloadCasesDir)
	}
	var st workloadStats
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			lines := bytes.SplitN(data, []byte("\n"), 3)
			if len(lines) < 3 || !bytes.HasPrefix(lines[0], []byte("# Upstream: ")) || !bytes.HasPrefix(lines[1], []byte("# Checks: ")) {
				t.Errorf("%s: the file must begin with a \"# Upstream: \" line and a \"# Checks: \" line", path)
			}
			sc, err := gen.Parse(data)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			compareWorkloadScenario(t, sc, name, workloadGates, &st)
			if want := expectedOutcome(data); want != "" {
				got, err := runReprieve(sc, workloadGates)
				if err != nil {
					t.Fatal(err)
				}
				if o := outcome(got); o != want {
					t.Errorf("%s: outcome %q, the case expects %q", name, o, want)
				}
			}
		})
	}
}

// expectedOutcome reads the optional "# Expect: " third comment line of a
// ported case: what upstream's test asserts, in outcome's form.
func expectedOutcome(data []byte) string {
	lines := bytes.SplitN(data, []byte("\n"), 4)
	if len(lines) >= 3 && bytes.HasPrefix(lines[2], []byte("# Expect: ")) {
		return string(bytes.TrimPrefix(lines[2], []byte("# Expect: ")))
	}
	return ""
}

// outcome summarises a decision as "node: victims (pdb N)", "ineligible:
// reason" or "none".
func outcome(d *whatif.Decision) string {
	switch {
	case d.Fits:
		return "fits"
	case !d.Eligible:
		return "ineligible: " + d.IneligibleReason
	case d.NominatedNode == "":
		return "none"
	}
	var victims []string
	for _, v := range d.Victims {
		victims = append(victims, v.Pod)
	}
	slices.Sort(victims)
	return fmt.Sprintf("%s: %s (pdb %d)", d.NominatedNode, strings.Join(victims, " "), d.NumPDBViolations)
}

// TestGangExamples runs the bundled gang examples through both engines,
// with the pod-group gates and without: reprieve's examples tell what
// kube-scheduler does.
func TestGangExamples(t *testing.T) {
	for _, name := range []string{"spare-the-gang", "evict-the-gang"} {
		for _, f := range []profile.Features{{}, {GenericWorkload: true}, workloadGates} {
			t.Run(name+"/"+gatesName(f), func(t *testing.T) {
				set, err := manifest.Load(filepath.Join("..", "..", "examples", "gang", "cluster.yaml"), filepath.Join("..", "..", "examples", "gang", name+".yaml"))
				if err != nil {
					t.Fatal(err)
				}
				o := set.Objects
				sc := &gen.Scenario{Nodes: o.Nodes, Pods: o.Pods, PDBs: o.PDBs, PriorityClasses: o.PriorityClasses, Namespaces: o.Namespaces,
					PodGroups: o.PodGroups, CompositePodGroups: o.CompositePodGroups, Preemptor: o.Pods[len(o.Pods)-1]}
				want, err := runUpstream(sc, f)
				if err != nil {
					t.Fatal(err)
				}
				got, err := runReprieve(sc, f)
				if err != nil {
					t.Fatal(err)
				}
				if diffs := compare(want, got, unitCanon(sc, f)); len(diffs) > 0 {
					t.Errorf("reprieve disagrees with kube-scheduler:\n  %s", strings.Join(diffs, "\n  "))
				}
				t.Logf("%s", got.Summary)
			})
		}
	}
}

// gatesName names a set of features for test names.
func gatesName(f profile.Features) string {
	switch {
	case !f.GenericWorkload:
		return "gates-off"
	case !f.CompositePodGroup:
		return "GenericWorkload"
	}
	return "GenericWorkload+CompositePodGroup"
}
