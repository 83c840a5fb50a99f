package whatif_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
	"github.com/reprieve/reprieve/internal/whatif"
)

var now = rt.BaseTime.Add(24 * time.Hour)

type scenario struct {
	nodes   []*v1.Node
	pods    []*v1.Pod
	pdbs    []*policyv1.PodDisruptionBudget
	classes []*schedulingv1.PriorityClass
	// sels select pods for PodTopologySpread's default constraints.
	sels snapshot.SelectorObjects
	// pod is the preemptor; when it is also in pods it is taken from the snapshot.
	pod  *v1.Pod
	opts whatif.Options
}

type want struct {
	fits       bool
	feasible   []string
	ineligible string
	node       string
	victims    []string
	pdbs       int
	candidates []string
	// statuses maps a node to "Code Plugin: reason, reason" of its filter
	// status, or, prefixed with "dry run: ", of its dry-run status.
	statuses map[string]string
}

func evaluate(t *testing.T, sc scenario) *whatif.Decision {
	t.Helper()
	snap, err := snapshot.New(snapshot.Objects{Nodes: sc.nodes, Pods: sc.pods, PDBs: sc.pdbs, PriorityClasses: sc.classes, Selectors: sc.sels})
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	pod := snap.Pod(sc.pod.Namespace + "/" + sc.pod.Name)
	if pod == nil || pod.Obj() != sc.pod {
		if pod, err = snap.NewPod(sc.pod); err != nil {
			t.Fatalf("pod: %v", err)
		}
	}
	if sc.opts.Now.IsZero() {
		sc.opts.Now = now
	}
	before := deepCopy(sc)
	d, err := whatif.Evaluate(snap, pod, sc.opts)
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(before, deepCopy(sc)) {
		t.Errorf("evaluation modified its input objects")
	}
	return d
}

func deepCopy(sc scenario) []any {
	var out []any
	for _, n := range sc.nodes {
		out = append(out, n.DeepCopy())
	}
	for _, p := range sc.pods {
		out = append(out, p.DeepCopy())
	}
	for _, p := range sc.pdbs {
		out = append(out, p.DeepCopy())
	}
	return append(out, sc.pod.DeepCopy())
}

func check(t *testing.T, d *whatif.Decision, w want) {
	t.Helper()
	got := want{fits: d.Fits, feasible: d.FeasibleNodes, ineligible: d.IneligibleReason, node: d.NominatedNode, pdbs: d.NumPDBViolations}
	if len(got.feasible) == 0 {
		got.feasible = nil
	}
	for _, v := range d.Victims {
		got.victims = append(got.victims, v.Pod)
	}
	for _, c := range d.Candidates {
		got.candidates = append(got.candidates, c.Node)
	}
	slices.Sort(got.candidates)
	if w.statuses != nil {
		got.statuses = map[string]string{}
		for n := range w.statuses {
			s, ok := d.NodeStatuses.Get(n)
			if !ok {
				got.statuses[n] = "(none)"
				continue
			}
			if strings.HasPrefix(w.statuses[n], "dry run: ") && s.Preemption != nil {
				got.statuses[n] = "dry run: " + render(s.Preemption.Code, s.Preemption.Plugin, s.Preemption.Reasons)
			} else {
				got.statuses[n] = render(s.Code, s.Plugin, s.Reasons)
			}
		}
	}
	if diff := cmp.Diff(w, got, cmp.AllowUnexported(want{})); diff != "" {
		t.Errorf("decision mismatch (-want +got):\n%s\nsummary: %s", diff, d.Summary)
	}
}

func render(code, plugin string, reasons []string) string {
	s := code
	if plugin != "" {
		s += " " + plugin
	}
	return s + ": " + strings.Join(reasons, ", ")
}

func node(name, cpu string) *rt.NodeBuilder { return rt.Node(name).CPU(cpu).Memory("32Gi") }

func pod(name string, prio int32, cpu string) *rt.PodBuilder {
	return rt.Pod("default", name).Priority(prio).Req(cpu, "")
}

func TestFilters(t *testing.T) {
	tests := map[string]struct {
		sc   scenario
		want want
	}{
		"fits where there is room": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "2").Obj(), node("n2", "2").Obj(), node("n3", "2").Obj()},
				pods:  []*v1.Pod{pod("a", 0, "1500m").On("n1").Obj()},
				pod:   pod("p", 10, "1").Obj(),
			},
			want: want{fits: true, feasible: []string{"n2", "n3"}, statuses: map[string]string{"n1": "Unschedulable NodeResourcesFit: Insufficient cpu"}},
		},
		"cordoned node is unresolvable unless tolerated": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "2").Unschedulable().Obj(), node("n2", "2").Unschedulable().Obj()},
				pod:   pod("p", 10, "1").Toleration(v1.TaintNodeUnschedulable, "", v1.TaintEffectNoSchedule).Obj(),
			},
			want: want{fits: true, feasible: []string{"n1", "n2"}, statuses: map[string]string{}},
		},
		"cordoned node rejects": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "2").Unschedulable().Obj()},
				pods:  []*v1.Pod{pod("low", 0, "1").On("n1").Obj()},
				pod:   pod("p", 10, "1").Obj(),
			},
			want: want{statuses: map[string]string{"n1": "UnschedulableAndUnresolvable NodeUnschedulable: node(s) were unschedulable"}},
		},
		"taints: NoSchedule and NoExecute reject, PreferNoSchedule does not": {
			sc: scenario{
				nodes: []*v1.Node{
					node("n1", "2").Taint("dedicated", "gpu", v1.TaintEffectNoSchedule).Obj(),
					node("n2", "2").Taint("flaky", "yes", v1.TaintEffectNoExecute).Obj(),
					node("n3", "2").Taint("soft", "yes", v1.TaintEffectPreferNoSchedule).Obj(),
					node("n4", "2").Taint("flaky", "yes", v1.TaintEffectNoExecute).Obj(),
				},
				pod: pod("p", 10, "1").Toleration("flaky", "", "").Obj(),
			},
			want: want{fits: true, feasible: []string{"n2", "n3", "n4"}, statuses: map[string]string{"n1": "UnschedulableAndUnresolvable TaintToleration: node(s) had untolerated taint(s)"}},
		},
		"node selector mismatch is unresolvable": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "2").Label("disk", "ssd").Obj(), node("n2", "2").Label("disk", "hdd").Obj()},
				pod:   pod("p", 10, "1").NodeSelector("disk", "ssd").Obj(),
			},
			want: want{fits: true, feasible: []string{"n1"}, statuses: map[string]string{"n2": "UnschedulableAndUnresolvable NodeAffinity: node(s) didn't match Pod's node affinity/selector"}},
		},
		"metadata.name field affinity restricts nodes before filtering": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "2").Obj(), node("n2", "2").Obj()},
				pod:   pod("p", 10, "1").NodeNameIn("n2").Obj(),
			},
			want: want{fits: true, feasible: []string{"n2"}, statuses: map[string]string{"n1": "UnschedulableAndUnresolvable: node(s) didn't satisfy plugin(s) [NodeAffinity]"}},
		},
		"too many pods is resolvable by preemption": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "8").Pods(1).Obj()},
				pods:  []*v1.Pod{pod("low", 0, "100m").On("n1").Obj()},
				pod:   pod("p", 10, "100m").Obj(),
			},
			want: want{node: "n1", victims: []string{"default/low"}, candidates: []string{"n1"}, statuses: map[string]string{}},
		},
		"a request larger than allocatable is unresolvable": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "2").Obj()},
				pods:  []*v1.Pod{pod("low", 0, "1").On("n1").Obj()},
				pod:   pod("p", 10, "3").Obj(),
			},
			want: want{statuses: map[string]string{"n1": "UnschedulableAndUnresolvable NodeResourcesFit: Insufficient cpu"}},
		},
		"extended resource the node lacks is unresolvable, one it has is not": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "4").Obj(), node("n2", "4").Alloc("example.com/gpu", "1").Obj()},
				pods:  []*v1.Pod{pod("low", 0, "1").ReqRes("example.com/gpu", "1").On("n2").Obj()},
				pod:   pod("p", 10, "1").ReqRes("example.com/gpu", "1").Obj(),
			},
			want: want{node: "n2", victims: []string{"default/low"}, candidates: []string{"n2"},
				statuses: map[string]string{"n1": "UnschedulableAndUnresolvable NodeResourcesFit: Insufficient example.com/gpu"}},
		},
		"init containers count at their maximum, sidecars add up, overhead adds": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "4").Obj(), node("n2", "4").Obj(), node("n3", "4").Obj()},
				pods: []*v1.Pod{
					// 1 + max(init 2, 1) = 2 -> n1 has 2 free.
					pod("a", 100, "1").Init("init", "2", false).On("n1").Obj(),
					// sidecar 1 + container 1 + overhead 1 = 3 -> n2 has 1 free.
					pod("b", 100, "1").Init("side", "1", true).Overhead("1").On("n2").Obj(),
					// pod-level 3 overrides containers -> n3 has 1 free.
					pod("c", 100, "500m").PodLevelCPU("3").On("n3").Obj(),
				},
				pod: pod("p", 10, "2").Obj(),
			},
			want: want{fits: true, feasible: []string{"n1"}, statuses: map[string]string{
				"n2": "Unschedulable NodeResourcesFit: Insufficient cpu",
				"n3": "Unschedulable NodeResourcesFit: Insufficient cpu",
			}},
		},
		"host port conflict is resolvable": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "4").Obj(), node("n2", "4").Obj()},
				pods: []*v1.Pod{
					pod("web", 0, "100m").HostPort(80, v1.ProtocolTCP, "").On("n1").Obj(),
					pod("dns", 100, "100m").HostPort(80, v1.ProtocolTCP, "10.0.0.1").On("n2").Obj(),
				},
				pod: pod("p", 10, "100m").HostPort(80, "", "").Obj(),
			},
			want: want{node: "n1", victims: []string{"default/web"}, candidates: []string{"n1"}, statuses: map[string]string{
				"n2": "dry run: UnschedulableAndUnresolvable: No preemption victims found for incoming pod",
			}},
		},
		"host ports on other protocols and IPs do not conflict": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "4").Obj()},
				pods: []*v1.Pod{
					pod("udp", 0, "100m").HostPort(80, v1.ProtocolUDP, "").On("n1").Obj(),
					pod("ip", 0, "100m").HostPort(81, v1.ProtocolTCP, "10.0.0.1").On("n1").Obj(),
				},
				pod: pod("p", 10, "100m").HostPort(80, v1.ProtocolTCP, "").HostPort(81, v1.ProtocolTCP, "10.0.0.2").Obj(),
			},
			want: want{fits: true, feasible: []string{"n1"}, statuses: map[string]string{}},
		},
		"spread: skew is resolvable by evicting matching pods": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "4").Zone("a").Obj(), node("n2", "4").Zone("b").Obj()},
				pods: []*v1.Pod{
					pod("a1", 0, "100m").Label("app", "x").On("n1").Obj(),
					pod("a2", 0, "100m").Label("app", "x").On("n1").Obj(),
					pod("b1", 100, "100m").Label("app", "x").On("n2").Obj(),
					pod("b2", 100, "100m").Label("app", "x").On("n2").Obj(),
					pod("b3", 100, "100m").Label("app", "x").On("n2").Obj(),
				},
				pod: pod("p", 10, "100m").Label("app", "x").Spread(1, v1.LabelTopologyZone, map[string]string{"app": "x"}).Obj(),
			},
			// n1: 2+1-2 = 1 <= 1 fits; n2: 3+1-2 = 2 > 1.
			want: want{fits: true, feasible: []string{"n1"}, statuses: map[string]string{"n2": "Unschedulable PodTopologySpread: node(s) didn't match pod topology spread constraints"}},
		},
		"spread: a node without the topology key is unresolvable": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "4").Zone("a").Obj(), node("n2", "4").Obj()},
				pod:   pod("p", 10, "100m").Label("app", "x").Spread(1, v1.LabelTopologyZone, map[string]string{"app": "x"}).Obj(),
			},
			want: want{fits: true, feasible: []string{"n1"}, statuses: map[string]string{"n2": "UnschedulableAndUnresolvable PodTopologySpread: node(s) didn't match pod topology spread constraints (missing required label)"}},
		},
		"spread: minDomains above the domain count makes the minimum zero": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "4").Zone("a").Obj(), node("n2", "4").Zone("b").Obj()},
				pods: []*v1.Pod{
					pod("a1", 100, "100m").Label("app", "x").On("n1").Obj(),
					pod("b1", 100, "100m").Label("app", "x").On("n2").Obj(),
				},
				pod: pod("p", 10, "100m").Label("app", "x").SpreadWith(1, v1.LabelTopologyZone, map[string]string{"app": "x"}, func(c *v1.TopologySpreadConstraint) {
					three := int32(3)
					c.MinDomains = &three
				}).Obj(),
			},
			want: want{statuses: map[string]string{
				"n1": "dry run: UnschedulableAndUnresolvable: No preemption victims found for incoming pod",
				"n2": "dry run: UnschedulableAndUnresolvable: No preemption victims found for incoming pod",
			}},
		},
		"anti-affinity of the pod is resolvable by evicting the matching pod": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "4").Obj(), node("n2", "4").Obj()},
				pods: []*v1.Pod{
					pod("db1", 0, "100m").Label("app", "db").On("n1").Obj(),
					pod("db2", 100, "100m").Label("app", "db").On("n2").Obj(),
				},
				pod: pod("p", 10, "100m").PodAntiAffinity(v1.LabelHostname, map[string]string{"app": "db"}).Obj(),
			},
			want: want{node: "n1", victims: []string{"default/db1"}, candidates: []string{"n1"}, statuses: map[string]string{
				"n2": "Unschedulable InterPodAffinity: node(s) didn't match pod anti-affinity rules",
			}},
		},
		"existing pods' anti-affinity is resolvable": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "4").Obj()},
				pods: []*v1.Pod{
					pod("loner", 0, "100m").PodAntiAffinity(v1.LabelHostname, map[string]string{"role": "p"}).On("n1").Obj(),
				},
				pod: pod("p", 10, "100m").Label("role", "p").Obj(),
			},
			want: want{node: "n1", victims: []string{"default/loner"}, candidates: []string{"n1"}, statuses: map[string]string{}},
		},
		"affinity with no match anywhere is unresolvable, self-affinity lets the first pod in": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "4").Zone("a").Obj(), node("n2", "4").Obj()},
				pod:   pod("p", 10, "100m").Label("app", "cache").PodAffinity(v1.LabelTopologyZone, map[string]string{"app": "cache"}).Obj(),
			},
			want: want{fits: true, feasible: []string{"n1"}, statuses: map[string]string{"n2": "UnschedulableAndUnresolvable InterPodAffinity: node(s) didn't match pod affinity rules"}},
		},
		"affinity to pods elsewhere is unresolvable": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "4").Zone("a").Obj(), node("n2", "4").Zone("b").Obj()},
				pods:  []*v1.Pod{pod("cache", 100, "100m").Label("app", "cache").On("n1").Obj()},
				pod:   pod("p", 10, "100m").PodAffinity(v1.LabelTopologyZone, map[string]string{"app": "cache"}).Obj(),
			},
			want: want{fits: true, feasible: []string{"n1"}, statuses: map[string]string{"n2": "UnschedulableAndUnresolvable InterPodAffinity: node(s) didn't match pod affinity rules"}},
		},
		"a nominated pod of higher priority holds its room, a lower one does not": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "2").Obj(), node("n2", "2").Obj()},
				pods: []*v1.Pod{
					pod("big", 20, "2").Nominated("n1").Obj(),
					pod("small", 5, "2").Nominated("n2").Obj(),
				},
				pod: pod("p", 10, "1").Obj(),
			},
			want: want{fits: true, feasible: []string{"n2"}, statuses: map[string]string{"n1": "Unschedulable NodeResourcesFit: Insufficient cpu"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			check(t, evaluate(t, tc.sc), tc.want)
		})
	}
}

func TestPreemption(t *testing.T) {
	tests := map[string]struct {
		sc   scenario
		want want
	}{
		"preemptionPolicy Never is not eligible": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "2").Obj()},
				pods:  []*v1.Pod{pod("low", 0, "2").On("n1").Obj()},
				pod:   pod("p", 10, "1").Never().Obj(),
			},
			want: want{ineligible: "not eligible due to preemptionPolicy=Never.", statuses: map[string]string{"n1": "Unschedulable NodeResourcesFit: Insufficient cpu"}},
		},
		"preemptionPolicy Never from the priority class": {
			sc: scenario{
				nodes:   []*v1.Node{node("n1", "2").Obj()},
				pods:    []*v1.Pod{pod("low", 0, "2").On("n1").Obj()},
				classes: []*schedulingv1.PriorityClass{rt.PriorityClass("patient", 10, false, true)},
				pod:     rt.Pod("default", "p").PriorityClass("patient").Req("1", "").Obj(),
			},
			want: want{ineligible: "not eligible due to preemptionPolicy=Never.", statuses: map[string]string{"n1": "Unschedulable NodeResourcesFit: Insufficient cpu"}},
		},
		"a lower-priority pod terminating by preemption on the nominated node blocks preemption": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "2").Obj(), node("n2", "2").Obj()},
				pods: []*v1.Pod{
					pod("going", 0, "1").TerminatingByPreemption().On("n1").Obj(),
					pod("low", 0, "1").On("n1").Obj(),
					pod("low2", 0, "2").On("n2").Obj(),
				},
				pod: pod("p", 10, "2").Nominated("n1").Obj(),
			},
			want: want{ineligible: "not eligible due to a terminating pod on the nominated node.", statuses: map[string]string{}},
		},
		"a terminating pod on a nominated node that cannot work any more does not block": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "2").Obj(), node("n2", "2").Obj()},
				pods: []*v1.Pod{
					pod("going", 0, "1").TerminatingByPreemption().On("n1").Obj(),
					pod("low2", 0, "2").On("n2").Obj(),
				},
				pod: pod("p", 10, "1").NodeSelector(v1.LabelHostname, "n2").Nominated("n1").Obj(),
			},
			want: want{node: "n2", victims: []string{"default/low2"}, candidates: []string{"n2"}, statuses: map[string]string{}},
		},
		"only strictly lower priorities are victims": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "2").Obj()},
				pods:  []*v1.Pod{pod("peer", 10, "2").On("n1").Obj()},
				pod:   pod("p", 10, "1").Obj(),
			},
			want: want{statuses: map[string]string{"n1": "dry run: UnschedulableAndUnresolvable: No preemption victims found for incoming pod"}},
		},
		"removing every lower-priority pod is not enough": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "2").Obj()},
				pods:  []*v1.Pod{pod("low", 0, "500m").On("n1").Obj(), pod("high", 100, "1500m").On("n1").Obj()},
				pod:   pod("p", 10, "1").Obj(),
			},
			want: want{statuses: map[string]string{"n1": "dry run: Unschedulable NodeResourcesFit: Insufficient cpu"}},
		},
		"victims are the fewest needed, higher priorities reprieved first": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "4").Obj()},
				pods: []*v1.Pod{
					pod("a", 1, "1").On("n1").StartedAt(1).Obj(),
					pod("b", 3, "1").On("n1").StartedAt(1).Obj(),
					pod("c", 2, "1").On("n1").StartedAt(1).Obj(),
					pod("d", 1, "1").On("n1").StartedAt(2).Obj(),
				},
				pod: pod("p", 10, "2").Obj(),
			},
			// Reprieve order b(3), c(2), a(1, older), d(1): b and c stay, a and d go.
			want: want{node: "n1", victims: []string{"default/a", "default/d"}, candidates: []string{"n1"}, statuses: map[string]string{}},
		},
		"older pods of equal priority are reprieved first": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "2").Obj()},
				pods: []*v1.Pod{
					pod("young", 1, "1").On("n1").StartedAt(50).Obj(),
					pod("old", 1, "1").On("n1").StartedAt(5).Obj(),
				},
				pod: pod("p", 10, "1").Obj(),
			},
			want: want{node: "n1", victims: []string{"default/young"}, candidates: []string{"n1"}, statuses: map[string]string{}},
		},
		"budget-protected victims are reprieved first and counted when evicted": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "3").Obj()},
				pods: []*v1.Pod{
					pod("plain", 5, "1").On("n1").Obj(),
					pod("guarded", 1, "1").Label("app", "g").On("n1").Obj(),
					pod("guarded2", 1, "1").Label("app", "g").On("n1").Obj(),
				},
				pdbs: []*policyv1.PodDisruptionBudget{rt.PDB("default", "g", map[string]string{"app": "g"}, 1)},
				pod:  pod("p", 10, "2").Obj(),
			},
			// One of the two guarded pods may go (budget 1); the second breaks it.
			// Violating first: guarded2 (charged second) is reprieved; then plain (5), guarded (1).
			want: want{node: "n1", victims: []string{"default/plain", "default/guarded"}, candidates: []string{"n1"}, statuses: map[string]string{}},
		},
		"fewest PDB violations wins over lower priority": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "2").Obj(), node("n2", "2").Obj()},
				pods: []*v1.Pod{
					pod("guarded", 1, "2").Label("app", "g").On("n1").Obj(),
					pod("plain", 5, "2").On("n2").Obj(),
				},
				pdbs: []*policyv1.PodDisruptionBudget{rt.PDB("default", "g", map[string]string{"app": "g"}, 0)},
				pod:  pod("p", 10, "2").Obj(),
			},
			want: want{node: "n2", victims: []string{"default/plain"}, candidates: []string{"n1", "n2"}, statuses: map[string]string{}},
		},
		"a pod already in disruptedPods is not charged": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "2").Obj(), node("n2", "2").Obj()},
				pods: []*v1.Pod{
					pod("guarded", 1, "2").Label("app", "g").On("n1").Obj(),
					pod("plain", 5, "2").On("n2").Obj(),
				},
				pdbs: []*policyv1.PodDisruptionBudget{rt.PDB("default", "g", map[string]string{"app": "g"}, 0, "guarded")},
				pod:  pod("p", 10, "2").Obj(),
			},
			want: want{node: "n1", victims: []string{"default/guarded"}, candidates: []string{"n1", "n2"}, statuses: map[string]string{}},
		},
		"a budget in another namespace does not apply": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "2").Obj(), node("n2", "2").Obj()},
				pods: []*v1.Pod{
					pod("guarded", 1, "2").Label("app", "g").On("n1").Obj(),
					pod("plain", 5, "2").On("n2").Obj(),
				},
				pdbs: []*policyv1.PodDisruptionBudget{rt.PDB("other", "g", map[string]string{"app": "g"}, 0)},
				pod:  pod("p", 10, "2").Obj(),
			},
			want: want{node: "n1", victims: []string{"default/guarded"}, candidates: []string{"n1", "n2"}, statuses: map[string]string{}},
		},
		"lowest highest-priority victim wins": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "2").Obj(), node("n2", "2").Obj()},
				pods: []*v1.Pod{
					pod("a1", 1, "1").On("n1").Obj(), pod("a2", 1, "1").On("n1").Obj(),
					pod("b1", 2, "2").On("n2").Obj(),
				},
				pod: pod("p", 10, "2").Obj(),
			},
			want: want{node: "n1", victims: []string{"default/a1", "default/a2"}, candidates: []string{"n1", "n2"}, statuses: map[string]string{}},
		},
		"smallest priority sum wins": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "2").Obj(), node("n2", "2").Obj()},
				pods: []*v1.Pod{
					pod("a1", 2, "1").On("n1").Obj(), pod("a2", 2, "1").On("n1").Obj(),
					pod("b1", 2, "1").On("n2").Obj(), pod("b2", -5, "1").On("n2").Obj(),
				},
				pod: pod("p", 10, "2").Obj(),
			},
			want: want{node: "n2", victims: []string{"default/b1", "default/b2"}, candidates: []string{"n1", "n2"}, statuses: map[string]string{}},
		},
		"fewest victims wins": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "2").Obj(), node("n2", "2").Obj()},
				pods: []*v1.Pod{
					pod("a1", 2, "1").On("n1").Obj(), pod("a2", 2, "1").On("n1").Obj(),
					pod("b1", 2, "2").On("n2").Obj(), pod("b2", 2, "0").On("n2").Obj(),
				},
				pod: pod("p", 10, "2").Obj(),
			},
			// n2: b2 requests nothing and is reprieved: one victim against two.
			want: want{node: "n2", victims: []string{"default/b1"}, candidates: []string{"n1", "n2"}, statuses: map[string]string{}},
		},
		"latest start of the highest-priority victims wins": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "2").Obj(), node("n2", "2").Obj()},
				pods: []*v1.Pod{
					pod("old", 2, "2").On("n1").StartedAt(10).Obj(),
					pod("new", 2, "2").On("n2").StartedAt(20).Obj(),
				},
				pod: pod("p", 10, "2").Obj(),
			},
			want: want{node: "n2", victims: []string{"default/new"}, candidates: []string{"n1", "n2"}, statuses: map[string]string{}},
		},
		"unresolvable nodes are never dry-run": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "2").Taint("k", "v", v1.TaintEffectNoSchedule).Obj(), node("n2", "2").Obj()},
				pods:  []*v1.Pod{pod("low1", 0, "2").On("n1").Obj(), pod("low2", 5, "2").On("n2").Obj()},
				pod:   pod("p", 10, "2").Obj(),
			},
			want: want{node: "n2", victims: []string{"default/low2"}, candidates: []string{"n2"}, statuses: map[string]string{"n1": "UnschedulableAndUnresolvable TaintToleration: node(s) had untolerated taint(s)"}},
		},
		"a nominated higher-priority pod keeps its room during the dry run": {
			sc: scenario{
				nodes: []*v1.Node{node("n1", "2").Obj(), node("n2", "2").Obj()},
				pods: []*v1.Pod{
					pod("low1", 0, "1").On("n1").Obj(),
					pod("low2", 0, "2").On("n2").Obj(),
					pod("vip", 50, "1").Nominated("n1").Obj(),
				},
				pod: pod("p", 10, "2").Obj(),
			},
			want: want{node: "n2", victims: []string{"default/low2"}, candidates: []string{"n2"}, statuses: map[string]string{
				"n1": "dry run: Unschedulable NodeResourcesFit: Insufficient cpu",
			}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			check(t, evaluate(t, tc.sc), tc.want)
		})
	}
}

// manyNodes returns n identical full nodes, each with one victim.
func manyNodes(n int) scenario {
	var sc scenario
	for i := range n {
		name := "n" + string(rune('a'+i/26)) + string(rune('a'+i%26))
		sc.nodes = append(sc.nodes, node(name, "1").Obj())
		sc.pods = append(sc.pods, pod("v-"+name, 0, "1").On(name).Obj())
	}
	sc.pod = pod("p", 10, "1").Obj()
	return sc
}

func TestCandidateBudget(t *testing.T) {
	sc := manyNodes(60)
	sc.opts = whatif.Options{Profile: candidateBudget(10, 5), Seed: 7}
	d := evaluate(t, sc)
	if d.DryRun.WantedCandidates != 6 {
		t.Errorf("wanted candidates = %d, want 10%% of 60 = 6", d.DryRun.WantedCandidates)
	}
	if len(d.Candidates) != 6 || d.DryRun.VisitedNodes != 6 {
		t.Errorf("got %d candidates after visiting %d nodes, want the walk to stop at 6", len(d.Candidates), d.DryRun.VisitedNodes)
	}
	again := evaluate(t, sc)
	if diff := cmp.Diff(d, again); diff != "" {
		t.Errorf("same seed gave a different decision:\n%s", diff)
	}
	sc.opts.Seed = 8
	other := evaluate(t, sc)
	if other.DryRun.Offset == d.DryRun.Offset {
		t.Errorf("seeds 7 and 8 gave the same offset %d", d.DryRun.Offset)
	}
	sc.opts.Exhaustive = true
	all := evaluate(t, sc)
	if len(all.Candidates) != 60 || all.DryRun.Offset != 0 {
		t.Errorf("exhaustive: %d candidates from offset %d, want 60 from 0", len(all.Candidates), all.DryRun.Offset)
	}
}

func TestParallelismDoesNotChangeTheDecision(t *testing.T) {
	sc := manyNodes(200)
	// Give some nodes budget-protected victims so both candidate lists fill.
	for i, p := range sc.pods {
		if i%3 == 0 {
			p.Labels["app"] = "g"
		}
	}
	sc.pdbs = []*policyv1.PodDisruptionBudget{rt.PDB("default", "g", map[string]string{"app": "g"}, 0)}
	sc.opts = whatif.Options{Profile: candidateBudget(5, 3), Seed: 3}
	sc.opts.Parallelism = 1
	serial := evaluate(t, sc)
	sc.opts.Parallelism = 8
	parallel := evaluate(t, sc)
	if diff := cmp.Diff(serial, parallel); diff != "" {
		t.Errorf("parallel dry run differs from serial (-serial +parallel):\n%s", diff)
	}
}

func TestTieIsReported(t *testing.T) {
	sc := manyNodes(3)
	d := evaluate(t, sc)
	if d.DecidedBy != "tie" || len(d.TiedNodes) != 3 {
		t.Errorf("DecidedBy=%q TiedNodes=%v, want a three-way tie", d.DecidedBy, d.TiedNodes)
	}
}

func TestMessages(t *testing.T) {
	sc := scenario{
		nodes: []*v1.Node{node("n1", "2").Obj(), node("n2", "2").Taint("k", "v", v1.TaintEffectNoSchedule).Obj()},
		pods:  []*v1.Pod{pod("peer", 10, "2").On("n1").Obj()},
		pod:   pod("p", 10, "1").Obj(),
	}
	d := evaluate(t, sc)
	want := "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling."
	if d.Message != want {
		t.Errorf("message:\n got %q\nwant %q", d.Message, want)
	}
}

// TestSummary checks the one-line summary of a preemption, and that the
// victims' start times are the decision's own copies.
func TestSummary(t *testing.T) {
	guard := func(app string) *policyv1.PodDisruptionBudget {
		return rt.PDB("default", app, map[string]string{"app": app}, 0)
	}
	for name, tc := range map[string]struct {
		victims []*v1.Pod
		pdbs    []*policyv1.PodDisruptionBudget
		want    string
	}{
		"one victim": {
			victims: []*v1.Pod{pod("a", 1, "2").On("n1").StartedAt(5).Obj()},
			want:    "preempts 1 pod on n1",
		},
		"two victims, one budget broken": {
			victims: []*v1.Pod{pod("a", 1, "1").Label("app", "g").On("n1").StartedAt(5).Obj(), pod("b", 1, "1").On("n1").StartedAt(6).Obj()},
			pdbs:    []*policyv1.PodDisruptionBudget{guard("g")},
			want:    "preempts 2 pods on n1, breaking 1 disruption budget",
		},
		"two budgets broken": {
			victims: []*v1.Pod{pod("a", 1, "1").Label("app", "g").On("n1").StartedAt(5).Obj(), pod("b", 1, "1").Label("app", "h").On("n1").StartedAt(6).Obj()},
			pdbs:    []*policyv1.PodDisruptionBudget{guard("g"), guard("h")},
			want:    "preempts 2 pods on n1, breaking 2 disruption budgets",
		},
	} {
		t.Run(name, func(t *testing.T) {
			d := evaluate(t, scenario{nodes: []*v1.Node{node("n1", "2").Obj()}, pods: tc.victims, pdbs: tc.pdbs, pod: pod("p", 10, "2").Obj()})
			if d.Summary != tc.want {
				t.Errorf("summary %q, want %q", d.Summary, tc.want)
			}
			if len(d.Victims) != len(tc.victims) {
				t.Fatalf("%d victims, want %d", len(d.Victims), len(tc.victims))
			}
			for _, v := range d.Victims {
				i := slices.IndexFunc(tc.victims, func(p *v1.Pod) bool { return "default/"+p.Name == v.Pod })
				st := tc.victims[i].Status.StartTime
				if v.StartTime == nil || !v.StartTime.Equal(st) || v.StartTime == st {
					t.Errorf("%s: start time %v, want a copy of %v", v.Pod, v.StartTime, st)
				}
			}
		})
	}
}

// candidateBudget is the default profile with DefaultPreemption's candidate
// budget set.
func candidateBudget(percentage, absolute int32) *profile.Profile {
	return &profile.Profile{Preemption: true, HasPostFilter: true, MinCandidateNodesPercentage: percentage, MinCandidateNodesAbsolute: absolute}
}
