package upstream

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"k8s.io/utils/ptr"
)

// Builders. Every node has 4 CPUs and room for 32 pods; every pod asks only
// for CPU. Bound pods get distinct start times so that upstream's victim
// order never depends on time.Now().

func node(name string) *st.NodeWrapper {
	return st.MakeNode().Name(name).Label(v1.LabelHostname, name).Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4"})
}

func pod(name string, priority int32, cpu string) *st.PodWrapper {
	return st.MakePod().Name(name).Namespace("default").Priority(priority).Req(map[v1.ResourceName]string{v1.ResourceCPU: cpu})
}

// bound is a running pod on nodeName that started at second `started`.
func bound(name string, priority int32, cpu, nodeName string, started int64) *st.PodWrapper {
	return pod(name, priority, cpu).Node(nodeName).Phase(v1.PodRunning).StartTime(metav1.NewTime(time.Unix(started, 0)))
}

func priorityClass(name string, value int32) *schedulingv1.PriorityClass {
	return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
}

// withClass returns the pod with spec.priorityClassName set (and no priority,
// as a user would create it).
func withClass(w *st.PodWrapper, class string) *v1.Pod {
	p := w.Obj()
	p.Spec.PriorityClassName = class
	return p
}

func nodes(ws ...*st.NodeWrapper) []*v1.Node {
	out := make([]*v1.Node, len(ws))
	for i, w := range ws {
		out[i] = w.Obj()
	}
	return out
}

func pods(ws ...*st.PodWrapper) []*v1.Pod {
	out := make([]*v1.Pod, len(ws))
	for i, w := range ws {
		out[i] = w.Obj()
	}
	return out
}

func insufficientCPU() Status {
	return Status{Code: "Unschedulable", Plugin: "NodeResourcesFit", Reasons: []string{"Insufficient cpu"}}
}

// missingPVC is what the first PreFilter plugin that looks at volumes says
// about a claim that does not exist.
var missingPVC = Status{Code: "UnschedulableAndUnresolvable", Plugin: "VolumeRestrictions", Reasons: []string{`persistentvolumeclaim "data" not found`}}

func TestRun(t *testing.T) {
	tests := map[string]struct {
		in   Input
		want *Result
	}{
		"fits on the node with room": {
			in: Input{
				Nodes: nodes(node("n1"), node("n2")),
				Pods: pods(
					bound("full", 0, "4", "n1", 1),
					bound("half", 0, "2", "n2", 2),
				),
				Preemptor: pod("p", 100, "2").Obj(),
			},
			want: &Result{
				FeasibleNodes: []string{"n2"},
				NodeStatuses:  map[string]Status{"n1": insufficientCPU()},
				Fits:          true,
				BestNodes:     []string{"n2"},
			},
		},
		"resources only: the node with lower-priority victims wins": {
			in: Input{
				Nodes: nodes(node("n1"), node("n2")),
				Pods: pods(
					bound("a1", 100, "2", "n1", 1),
					bound("a2", 100, "2", "n1", 2),
					bound("b-low", 50, "3", "n2", 3),
					bound("b-high", 200, "1", "n2", 4),
				),
				Preemptor: pod("p", 1000, "3").Obj(),
			},
			want: &Result{
				FeasibleNodes:  []string{},
				NodeStatuses:   map[string]Status{"n1": insufficientCPU(), "n2": insufficientCPU()},
				Eligible:       true,
				PotentialNodes: []string{"n1", "n2"},
				Candidates: map[string]Candidate{
					// Same priority: the older pod (a1) is more important,
					// so it comes first.
					"n1": {Victims: []string{"default/a1", "default/a2"}},
					// b-high is reprieved: 1+3 CPUs fit.
					"n2": {Victims: []string{"default/b-low"}},
				},
				DryRunStatuses: map[string]Status{},
				TiedBest:       []string{"n2"},
				Chosen:         "n2",
			},
		},
		"preemptionPolicy Never from the PriorityClass: not eligible": {
			in: Input{
				Nodes: nodes(node("n1")),
				Pods:  pods(bound("low", 0, "4", "n1", 1)),
				PriorityClasses: []*schedulingv1.PriorityClass{{
					ObjectMeta:       metav1.ObjectMeta{Name: "polite"},
					Value:            1000,
					PreemptionPolicy: ptr.To(v1.PreemptNever),
				}},
				Preemptor: withClass(st.MakePod().Name("p").Namespace("default").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}), "polite"),
			},
			want: &Result{
				FeasibleNodes:     []string{},
				NodeStatuses:      map[string]Status{"n1": insufficientCPU()},
				IneligibleReason:  "not eligible due to preemptionPolicy=Never.",
				PotentialNodes:    []string{},
				Candidates:        map[string]Candidate{},
				DryRunStatuses:    map[string]Status{},
				TiedBest:          []string{},
				PostFilterMessage: "preemption: not eligible due to preemptionPolicy=Never.",
			},
		},
		"PDB violation outweighs victim priority": {
			in: Input{
				Nodes: nodes(node("n1"), node("n2")),
				Pods: pods(
					bound("db", 10, "4", "n1", 1).Label("app", "db"),
					bound("web", 500, "4", "n2", 2).Label("app", "web"),
				),
				PDBs: []*policyv1.PodDisruptionBudget{
					st.MakePDB().Name("db").Namespace("default").MatchLabel("app", "db").DisruptionsAllowed(0).Obj(),
				},
				Preemptor: pod("p", 1000, "1").Obj(),
			},
			want: &Result{
				FeasibleNodes:  []string{},
				NodeStatuses:   map[string]Status{"n1": insufficientCPU(), "n2": insufficientCPU()},
				Eligible:       true,
				PotentialNodes: []string{"n1", "n2"},
				Candidates: map[string]Candidate{
					"n1": {Victims: []string{"default/db"}, NumPDBViolations: 1},
					"n2": {Victims: []string{"default/web"}},
				},
				DryRunStatuses: map[string]Status{},
				TiedBest:       []string{"n2"},
				Chosen:         "n2",
			},
		},
		"untolerated taint: UnschedulableAndUnresolvable, not a potential node": {
			in: Input{
				Nodes: nodes(
					node("tainted").Taints([]v1.Taint{{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectNoSchedule}}),
					node("n2"),
				),
				Pods:      pods(bound("low", 0, "4", "n2", 1)),
				Preemptor: pod("p", 1000, "1").Obj(),
			},
			want: &Result{
				FeasibleNodes: []string{},
				NodeStatuses: map[string]Status{
					"tainted": {Code: "UnschedulableAndUnresolvable", Plugin: "TaintToleration", Reasons: []string{"node(s) had untolerated taint(s)"}},
					"n2":      insufficientCPU(),
				},
				Eligible:       true,
				PotentialNodes: []string{"n2"},
				Candidates:     map[string]Candidate{"n2": {Victims: []string{"default/low"}}},
				DryRunStatuses: map[string]Status{},
				TiedBest:       []string{"n2"},
				Chosen:         "n2",
			},
		},
		"a nominated higher-priority pod blocks its node": {
			in: Input{
				Nodes: nodes(node("n1"), node("n2")),
				Pods: pods(
					pod("nominated", 2000, "3").NominatedNodeName("n1"),
					bound("low", 0, "4", "n2", 1),
				),
				Preemptor: pod("p", 1000, "2").Obj(),
			},
			want: &Result{
				FeasibleNodes:  []string{},
				NodeStatuses:   map[string]Status{"n1": insufficientCPU(), "n2": insufficientCPU()},
				Eligible:       true,
				PotentialNodes: []string{"n1", "n2"},
				Candidates:     map[string]Candidate{"n2": {Victims: []string{"default/low"}}},
				DryRunStatuses: map[string]Status{
					"n1": {Code: "UnschedulableAndUnresolvable", Reasons: []string{"No preemption victims found for incoming pod"}},
				},
				TiedBest: []string{"n2"},
				Chosen:   "n2",
			},
		},
		"a nominated lower-priority pod does not block its node": {
			in: Input{
				Nodes: nodes(node("n1"), node("n2")),
				Pods: pods(
					pod("nominated", 10, "3").NominatedNodeName("n1"),
					bound("low", 0, "4", "n2", 1),
				),
				Preemptor: pod("p", 1000, "2").Obj(),
			},
			want: &Result{
				FeasibleNodes: []string{"n1"},
				NodeStatuses:  map[string]Status{"n2": insufficientCPU()},
				Fits:          true,
				BestNodes:     []string{"n1"},
			},
		},
		"a victim of an earlier preemption still terminating on the nominated node: not eligible": {
			in: Input{
				Nodes: nodes(node("n1"), node("n2")),
				Pods: pods(
					bound("leaving", 0, "4", "n1", 1).Terminating().Condition(v1.DisruptionTarget, v1.ConditionTrue, v1.PodReasonPreemptionByScheduler),
					bound("low", 0, "4", "n2", 2),
				),
				Preemptor: pod("p", 1000, "1").NominatedNodeName("n1").Obj(),
			},
			want: &Result{
				FeasibleNodes:     []string{},
				NodeStatuses:      map[string]Status{"n1": insufficientCPU(), "n2": insufficientCPU()},
				IneligibleReason:  "not eligible due to a terminating pod on the nominated node.",
				PotentialNodes:    []string{},
				Candidates:        map[string]Candidate{},
				DryRunStatuses:    map[string]Status{},
				TiedBest:          []string{},
				PostFilterMessage: "preemption: not eligible due to a terminating pod on the nominated node.",
			},
		},
		"the preemptor's own nomination does not block it": {
			in: Input{
				Nodes: nodes(node("n1")),
				Pods:  pods(pod("p", 1000, "3").NominatedNodeName("n1")),
				// The same pod, listed in Pods as well.
				Preemptor: pod("p", 1000, "3").NominatedNodeName("n1").Obj(),
			},
			want: &Result{
				FeasibleNodes: []string{"n1"},
				NodeStatuses:  map[string]Status{},
				Fits:          true,
				BestNodes:     []string{"n1"},
			},
		},
		"PreFilter rejection: every node gets its status": {
			in: Input{
				Nodes:     nodes(node("n1"), node("n2")),
				Pods:      pods(bound("low", 0, "4", "n1", 1)),
				Preemptor: pod("p", 1000, "1").PVC("data").Obj(),
			},
			want: &Result{
				PreFilterStatus: &missingPVC,
				FeasibleNodes:   []string{},
				NodeStatuses:    map[string]Status{"n1": missingPVC, "n2": missingPVC},
				Eligible:        true,
				PotentialNodes:  []string{},
				Candidates:      map[string]Candidate{},
				DryRunStatuses:  map[string]Status{},
				TiedBest:        []string{},
				// With no potential node, upstream reports every node as
				// absent.
				PostFilterMessage: "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
			},
		},
		"nodes cut by a PreFilterResult get the absent-node status": {
			in: Input{
				Nodes:     nodes(node("n1"), node("n2")),
				Pods:      pods(bound("low", 0, "4", "n1", 1)),
				Preemptor: pod("p", 1000, "1").NodeAffinityIn("metadata.name", []string{"n1"}, st.NodeSelectorTypeMatchFields).Obj(),
			},
			want: &Result{
				FeasibleNodes: []string{},
				NodeStatuses: map[string]Status{
					"n1": insufficientCPU(),
					"n2": {Code: "UnschedulableAndUnresolvable", Reasons: []string{"node(s) didn't satisfy plugin(s) [NodeAffinity]"}},
				},
				Eligible:       true,
				PotentialNodes: []string{"n1"},
				Candidates:     map[string]Candidate{"n1": {Victims: []string{"default/low"}}},
				DryRunStatuses: map[string]Status{},
				TiedBest:       []string{"n1"},
				Chosen:         "n1",
			},
		},
		"no victim fits anywhere: PostFilter message": {
			in: Input{
				Nodes: nodes(node("n1"), node("n2")),
				Pods: pods(
					bound("high1", 5000, "4", "n1", 1),
					bound("high2", 5000, "4", "n2", 2),
				),
				Preemptor: pod("p", 1000, "2").Obj(),
			},
			want: &Result{
				FeasibleNodes:  []string{},
				NodeStatuses:   map[string]Status{"n1": insufficientCPU(), "n2": insufficientCPU()},
				Eligible:       true,
				PotentialNodes: []string{"n1", "n2"},
				Candidates:     map[string]Candidate{},
				DryRunStatuses: map[string]Status{
					"n1": {Code: "UnschedulableAndUnresolvable", Reasons: []string{"No preemption victims found for incoming pod"}},
					"n2": {Code: "UnschedulableAndUnresolvable", Reasons: []string{"No preemption victims found for incoming pod"}},
				},
				TiedBest:          []string{},
				PostFilterMessage: "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
			},
		},
		"request above allocatable: no potential node": {
			in: Input{
				Nodes:     nodes(node("n1"), node("n2")),
				Pods:      pods(bound("low", 0, "4", "n1", 1)),
				Preemptor: pod("p", 1000, "5").Obj(),
			},
			want: &Result{
				FeasibleNodes: []string{},
				NodeStatuses: map[string]Status{
					"n1": {Code: "UnschedulableAndUnresolvable", Plugin: "NodeResourcesFit", Reasons: []string{"Insufficient cpu"}},
					"n2": {Code: "UnschedulableAndUnresolvable", Plugin: "NodeResourcesFit", Reasons: []string{"Insufficient cpu"}},
				},
				Eligible:          true,
				PotentialNodes:    []string{},
				Candidates:        map[string]Candidate{},
				DryRunStatuses:    map[string]Status{},
				TiedBest:          []string{},
				PostFilterMessage: "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Run(context.Background(), tc.in)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Run (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestRunTiedCandidates checks that identical nodes are all reported as tied
// and that upstream's pick is one of them (Run fails otherwise), also when
// victims have no start time and upstream substitutes time.Now().
func TestRunTiedCandidates(t *testing.T) {
	tests := map[string]Input{
		"with start times": {
			Nodes: nodes(node("n1"), node("n2"), node("n3")),
			Pods: pods(
				bound("a", 0, "4", "n1", 1),
				bound("b", 0, "4", "n2", 1),
				bound("c", 0, "4", "n3", 1),
			),
			Preemptor: pod("p", 1000, "1").Obj(),
		},
		"without start times": {
			Nodes: nodes(node("n1"), node("n2"), node("n3")),
			Pods: pods(
				pod("a", 0, "4").Node("n1"),
				pod("b", 0, "4").Node("n2"),
				pod("c", 0, "4").Node("n3"),
			),
			Preemptor: pod("p", 1000, "1").Obj(),
		},
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			for range 5 {
				got, err := Run(context.Background(), in)
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				if diff := cmp.Diff([]string{"n1", "n2", "n3"}, got.TiedBest); diff != "" {
					t.Errorf("TiedBest (-want,+got):\n%s", diff)
				}
			}
		})
	}
}

// TestRunFeatureGates checks the FeatureGates hook: the gate is in force
// during Run and restored afterwards.
func TestRunFeatureGates(t *testing.T) {
	const gate = "SchedulerAsyncPreemption"
	before := utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(gate))
	in := Input{
		Nodes:        nodes(node("n1")),
		Pods:         pods(bound("low", 0, "4", "n1", 1)),
		Preemptor:    pod("p", 1000, "1").Obj(),
		FeatureGates: map[string]bool{gate: !before},
	}
	got, err := Run(context.Background(), in)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff("n1", got.Chosen); diff != "" {
		t.Errorf("Chosen (-want,+got):\n%s", diff)
	}
	if after := utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(gate)); after != before {
		t.Errorf("%s = %v after Run, want %v restored", gate, after, before)
	}

	in.FeatureGates = map[string]bool{"NoSuchGate": true}
	if _, err := Run(context.Background(), in); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("Run with an unknown feature gate: error = %v, want ErrInvalidInput", err)
	}
}

func TestRunInvalidInput(t *testing.T) {
	tests := map[string]Input{
		"unknown priority class": {
			Nodes:     nodes(node("n1")),
			Preemptor: withClass(st.MakePod().Name("p"), "nope"),
		},
		"bound preemptor": {
			Nodes:     nodes(node("n1")),
			Preemptor: st.MakePod().Name("p").Node("n1").Obj(),
		},
		"duplicate pods": {
			Nodes:     nodes(node("n1")),
			Pods:      pods(bound("a", 0, "1", "n1", 1), bound("a", 0, "1", "n1", 2)),
			Preemptor: pod("p", 0, "1").Obj(),
		},
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Run(context.Background(), in)
			if !errors.Is(err, ErrInvalidInput) {
				t.Errorf("Run error = %v, want ErrInvalidInput", err)
			}
		})
	}
}

func TestPriorityResolver(t *testing.T) {
	classes := []*schedulingv1.PriorityClass{
		priorityClass("high", 1000),
		{ObjectMeta: metav1.ObjectMeta{Name: "default-b"}, Value: 20, GlobalDefault: true},
		{ObjectMeta: metav1.ObjectMeta{Name: "default-a"}, Value: 10, GlobalDefault: true, PreemptionPolicy: ptr.To(v1.PreemptNever)},
	}
	type resolved struct {
		ClassName string
		Priority  int32
		Policy    v1.PreemptionPolicy
	}
	tests := map[string]struct {
		pod  *v1.Pod
		want resolved
	}{
		"named class": {
			pod:  withClass(st.MakePod().Name("p"), "high"),
			want: resolved{"high", 1000, v1.PreemptLowerPriority},
		},
		"system class is implied": {
			pod:  withClass(st.MakePod().Name("p"), "system-node-critical"),
			want: resolved{"system-node-critical", 2000001000, v1.PreemptLowerPriority},
		},
		"lowest global default wins, with its policy": {
			pod:  st.MakePod().Name("p").Obj(),
			want: resolved{"default-a", 10, v1.PreemptNever},
		},
		"explicit priority and policy are kept": {
			pod:  st.MakePod().Name("p").Priority(7).PreemptionPolicy(v1.PreemptLowerPriority).Obj(),
			want: resolved{"default-a", 7, v1.PreemptLowerPriority},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if err := newPriorityResolver(classes).resolve(tc.pod); err != nil {
				t.Fatal(err)
			}
			got := resolved{tc.pod.Spec.PriorityClassName, *tc.pod.Spec.Priority, *tc.pod.Spec.PreemptionPolicy}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("resolve (-want,+got):\n%s", diff)
			}
		})
	}
	t.Run("no classes", func(t *testing.T) {
		p := st.MakePod().Name("p").Obj()
		if err := newPriorityResolver(nil).resolve(p); err != nil {
			t.Fatal(err)
		}
		got := resolved{p.Spec.PriorityClassName, *p.Spec.Priority, *p.Spec.PreemptionPolicy}
		if diff := cmp.Diff(resolved{"", 0, v1.PreemptLowerPriority}, got); diff != "" {
			t.Errorf("resolve (-want,+got):\n%s", diff)
		}
	})
}

// smallCluster is 10 nodes with 5 bound pods each; nothing fits, so the
// dry run visits every node.
func smallCluster() Input {
	in := Input{Preemptor: pod("p", 1000, "2").Obj()}
	for i := range 10 {
		name := fmt.Sprintf("n%d", i)
		in.Nodes = append(in.Nodes, node(name).Obj())
		for j := range 5 {
			in.Pods = append(in.Pods, bound(fmt.Sprintf("%s-p%d", name, j), int32(i*10+j), "800m", name, int64(i*5+j)).Obj())
		}
	}
	return in
}

// TestRunNoLeaks runs sequentially and concurrently and checks that the
// goroutines Run starts are gone afterwards and that results are stable.
func TestRunNoLeaks(t *testing.T) {
	in := smallCluster()
	first, err := Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	// Let the first run's stragglers (metrics, process-wide caches) settle.
	time.Sleep(200 * time.Millisecond)
	before := runtime.NumGoroutine()

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 5 {
				got, err := Run(context.Background(), in)
				if err != nil {
					t.Error(err)
					return
				}
				if diff := cmp.Diff(first, got); diff != "" {
					t.Errorf("Run is not stable (-first,+got):\n%s", diff)
					return
				}
			}
		})
	}
	wg.Wait()

	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if after := runtime.NumGoroutine(); after > before {
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		t.Errorf("goroutines: %d before, %d after\n%s", before, after, buf[:n])
	}
}

// TestEnvironment checks that an Environment evaluates as Run does, that
// repeated evaluations agree, and that the dry run honours the offset and
// the candidate budget.
func TestEnvironment(t *testing.T) {
	ctx := context.Background()
	in := smallCluster()
	want, err := Run(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	env, err := NewEnvironment(ctx, in, EnvOptions{Parallelism: 1, SnapshotOrder: true})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()

	t.Run("exhaustive is Run", func(t *testing.T) {
		for range 3 {
			got, err := env.Evaluate(ctx, 0, int32(len(in.Nodes)))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("Evaluate(0, all) differs from Run (-Run,+Evaluate):\n%s", diff)
			}
		}
	})
	// Every node is a candidate; in snapshot order the dry run reaches the
	// budget's worth of nodes from the offset, wrapping around.
	tests := map[string]struct {
		offset, numCandidates int32
		wantCandidates        []string
	}{
		"offset and budget":           {offset: 3, numCandidates: 2, wantCandidates: []string{"n3", "n4"}},
		"wraps around":                {offset: 9, numCandidates: 3, wantCandidates: []string{"n0", "n1", "n9"}},
		"offset beyond the nodes":     {offset: 13, numCandidates: 1, wantCandidates: []string{"n3"}},
		"default budget is all of 10": {offset: 5, numCandidates: 0, wantCandidates: []string{"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := env.Evaluate(ctx, tc.offset, tc.numCandidates)
			if err != nil {
				t.Fatal(err)
			}
			var gotCandidates []string
			for n := range got.Candidates {
				gotCandidates = append(gotCandidates, n)
			}
			slices.Sort(gotCandidates)
			if diff := cmp.Diff(tc.wantCandidates, gotCandidates); diff != "" {
				t.Errorf("candidates (-want,+got):\n%s", diff)
			}
			if !slices.Contains(got.TiedBest, got.Chosen) {
				t.Errorf("chosen %q is not among the best %v", got.Chosen, got.TiedBest)
			}
		})
	}
	t.Run("negative offset", func(t *testing.T) {
		if _, err := env.Evaluate(ctx, -1, 0); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("Evaluate error = %v, want ErrInvalidInput", err)
		}
	})
}

func BenchmarkRun(b *testing.B) {
	in := smallCluster()
	for b.Loop() {
		if _, err := Run(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRunDefaultSpreading: the Services and controllers of the input reach
// PodTopologySpread's default constraints through the informers. n1 runs
// two small pods of the preemptor's app, n2 one larger pod of another:
// resources alone prefer n1; a Service selecting the app, or the
// ReplicaSet controlling the preemptor, spreads it to n2 (system defaults,
// scored); with a DoNotSchedule default on the hostname, n1 is filtered.
func TestRunDefaultSpreading(t *testing.T) {
	web := map[string]string{"app": "web"}
	in := func() Input {
		return Input{
			Nodes: nodes(node("n1"), node("n2")),
			Pods: pods(
				bound("w1", 0, "100m", "n1", 1).Labels(web),
				bound("w2", 0, "100m", "n1", 2).Labels(web),
				bound("x", 0, "1", "n2", 3),
			),
			Preemptor: pod("p", 0, "500m").Labels(web).Obj(),
		}
	}
	service := []*v1.Service{{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}, Spec: v1.ServiceSpec{Selector: web}}}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1", UID: "uid-rs"},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: web}}}
	hostname := []byte(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: PodTopologySpread
    args: {defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule}]}
`)
	tests := map[string]struct {
		in           func(in *Input)
		config       []byte
		wantFeasible []string
		wantBest     []string
	}{
		"resources alone": {in: func(*Input) {}, wantFeasible: []string{"n1", "n2"}, wantBest: []string{"n1"}},
		"a Service":       {in: func(in *Input) { in.Services = service }, wantFeasible: []string{"n1", "n2"}, wantBest: []string{"n2"}},
		"the controlling ReplicaSet": {
			in: func(in *Input) {
				in.ReplicaSets = []*appsv1.ReplicaSet{rs}
				yes := true
				in.Preemptor.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &yes}}
			},
			wantFeasible: []string{"n1", "n2"}, wantBest: []string{"n2"},
		},
		"a DoNotSchedule default": {in: func(in *Input) { in.Services = service }, config: hostname, wantFeasible: []string{"n2"}, wantBest: []string{"n2"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			input := in()
			tc.in(&input)
			env, err := NewEnvironment(t.Context(), input, EnvOptions{Config: tc.config})
			if err != nil {
				t.Fatal(err)
			}
			defer env.Close()
			res, err := env.Evaluate(t.Context(), 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantFeasible, res.FeasibleNodes); diff != "" {
				t.Errorf("feasible nodes (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantBest, res.BestNodes); diff != "" {
				t.Errorf("best nodes (-want,+got):\n%s (scores %v)", diff, res.Scores)
			}
		})
	}
}
