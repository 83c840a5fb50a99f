package scheduler

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	fwk "k8s.io/kube-scheduler/framework"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/engine/score"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// TestNodeActionLabels checks the event labels against kube-scheduler's
// own ClusterEvent.Label, which names scheduler_queue_incoming_pods_total's
// event values.
func TestNodeActionLabels(t *testing.T) {
	for ours, theirs := range map[NodeAction]fwk.ActionType{
		NodeAdd:                    fwk.Add,
		NodeDelete:                 fwk.Delete,
		NodeUpdateAllocatable:      fwk.UpdateNodeAllocatable,
		NodeUpdateLabel:            fwk.UpdateNodeLabel,
		NodeUpdateTaint:            fwk.UpdateNodeTaint,
		NodeUpdateCondition:        fwk.UpdateNodeCondition,
		NodeUpdateAnnotation:       fwk.UpdateNodeAnnotation,
		NodeUpdatePreemptionPolicy: fwk.UpdateNodePreemptionPolicy,
	} {
		want := fwk.ClusterEvent{Resource: fwk.Node, ActionType: theirs}.Label()
		if got := ours.Label(); got != want {
			t.Errorf("label %q, upstream %q", got, want)
		}
	}
}

func TestNodeUpdateEvents(t *testing.T) {
	base := func() *rt.NodeBuilder { return rt.Node("n").CPU("2").Label("zone", "a") }
	tests := map[string]struct {
		old, node *v1.Node
		want      []NodeAction
	}{
		"nothing changed":       {base().Obj(), base().Obj(), nil},
		"allocatable":           {base().Obj(), base().Memory("1Gi").Obj(), []NodeAction{NodeUpdateAllocatable}},
		"label":                 {base().Obj(), base().Label("disk", "ssd").Obj(), []NodeAction{NodeUpdateLabel}},
		"taint":                 {base().Obj(), base().Taint("k", "v", v1.TaintEffectNoSchedule).Obj(), []NodeAction{NodeUpdateTaint}},
		"becomes unschedulable": {base().Obj(), base().Unschedulable().Obj(), nil},
		"becomes schedulable":   {base().Unschedulable().Obj(), base().Obj(), []NodeAction{NodeUpdateTaint}},
		"condition":             {base().Obj(), withCondition(base().Obj(), v1.NodeReady, v1.ConditionTrue), []NodeAction{NodeUpdateCondition}},
		"heartbeat only":        {withCondition(base().Obj(), v1.NodeReady, v1.ConditionTrue), heartbeat(withCondition(base().Obj(), v1.NodeReady, v1.ConditionTrue)), nil},
		"annotation":            {base().Obj(), annotate(base().Obj()), []NodeAction{NodeUpdateAnnotation}},
		"label and allocatable": {base().Obj(), base().CPU("4").Label("disk", "ssd").Obj(), []NodeAction{NodeUpdateAllocatable, NodeUpdateLabel}},
		"cordon lifted with its taint": {base().Unschedulable().Taint(v1.TaintNodeUnschedulable, "", v1.TaintEffectNoSchedule).Obj(), base().Obj(),
			[]NodeAction{NodeUpdateTaint, NodeUpdateTaint}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, NodeUpdateEvents(tt.old, tt.node)); diff != "" {
				t.Errorf("events (-want,+got):\n%s", diff)
			}
		})
	}
}

func withCondition(n *v1.Node, typ v1.NodeConditionType, status v1.ConditionStatus) *v1.Node {
	n.Status.Conditions = append(n.Status.Conditions, v1.NodeCondition{Type: typ, Status: status})
	return n
}

func heartbeat(n *v1.Node) *v1.Node {
	n.Status.Conditions[0].LastHeartbeatTime.Time = t0.Add(time.Minute)
	return n
}

func annotate(n *v1.Node) *v1.Node {
	n.Annotations = map[string]string{"example.com/a": "b"}
	return n
}

// queueEvents records the queue arrivals a DetailObserver is told of.
type queueEvents struct {
	arrivals map[string]int // "queue/event"
}

func (q *queueEvents) Attempt(*v1.Pod, AttemptResult, time.Duration)             {}
func (q *queueEvents) Scheduled(*v1.Pod, string, int, time.Duration)             {}
func (q *queueEvents) Preemption(*v1.Pod, string, []*v1.Pod, int, time.Duration) {}
func (q *queueEvents) Cycle(*v1.Pod, CycleReport)                                {}
func (q *queueEvents) Binding(*v1.Pod, string, []ExtensionPointRun, []PluginRun) {}
func (q *queueEvents) Goroutines(string, int)                                    {}
func (q *queueEvents) PreemptionExecuted(*v1.Pod, string, time.Duration)         {}
func (q *queueEvents) QueueIncoming(queue, event string)                         { q.arrivals[queue+"/"+event]++ }

// TestNodeUpdateQueueingHints fails a pod on one node, rejected by one
// plugin, then updates the node: the pod moves (on the event the update is
// named by) only when the rejecting plugin's queueing hint says the change
// may help.
func TestNodeUpdateQueueingHints(t *testing.T) {
	node := func() *rt.NodeBuilder { return rt.Node("n1").CPU("1").Label("zone", "a") }
	pod := func() *rt.PodBuilder { return rt.Pod("ns", "p").Req("2", "") }
	tests := map[string]struct {
		node     *v1.Node
		existing []*v1.Pod
		pod      *v1.Pod
		// wantRejector is the plugin that rejected the pod.
		wantRejector string
		update       *v1.Node
		// wantMoved is the arrival the update causes ("" for none).
		wantMoved string
	}{
		"NodeResourcesFit: more CPU that fits": {
			node: node().Obj(), pod: pod().Obj(), wantRejector: "NodeResourcesFit",
			update: node().CPU("4").Obj(), wantMoved: "Backoff/NodeUpdateNodeAllocatable",
		},
		"NodeResourcesFit: more CPU, still too little": {
			node: node().Obj(), pod: pod().Obj(), wantRejector: "NodeResourcesFit",
			update: node().CPU("1500m").Obj(),
		},
		"NodeResourcesFit: more memory, which it does not request": {
			node: node().CPU("1").Obj(), pod: pod().Obj(), wantRejector: "NodeResourcesFit",
			update: node().Memory("8Gi").Obj(),
		},
		"NodeResourcesFit: a label does not help": {
			node: node().Obj(), pod: pod().Obj(), wantRejector: "NodeResourcesFit",
			update: node().Label("disk", "ssd").Obj(),
		},
		"NodeAffinity: the label it selects": {
			node: node().CPU("4").Obj(), pod: pod().NodeSelector("disk", "ssd").Obj(), wantRejector: "NodeAffinity",
			update: node().CPU("4").Label("disk", "ssd").Obj(), wantMoved: "Backoff/NodeUpdateNodeLabel",
		},
		"NodeAffinity: another label": {
			node: node().CPU("4").Obj(), pod: pod().NodeSelector("disk", "ssd").Obj(), wantRejector: "NodeAffinity",
			update: node().CPU("4").Label("disk", "hdd").Obj(),
		},
		"TaintToleration: taint removed": {
			node: node().CPU("4").Taint("k", "v", v1.TaintEffectNoSchedule).Obj(), pod: pod().Obj(), wantRejector: "TaintToleration",
			update: node().CPU("4").Obj(), wantMoved: "Backoff/NodeUpdateNodeTaint",
		},
		"TaintToleration: another untolerated taint added": {
			node: node().CPU("4").Taint("k", "v", v1.TaintEffectNoSchedule).Obj(), pod: pod().Obj(), wantRejector: "TaintToleration",
			update: node().CPU("4").Taint("k", "v", v1.TaintEffectNoSchedule).Taint("k2", "v", v1.TaintEffectNoExecute).Obj(),
		},
		"TaintToleration: a condition does not help": {
			node: node().CPU("4").Taint("k", "v", v1.TaintEffectNoSchedule).Obj(), pod: pod().Obj(), wantRejector: "TaintToleration",
			update: withCondition(node().CPU("4").Taint("k", "v", v1.TaintEffectNoSchedule).Obj(), v1.NodeReady, v1.ConditionTrue),
		},
		"NodeUnschedulable: uncordoned": {
			node: node().CPU("4").Unschedulable().Obj(), pod: pod().Obj(), wantRejector: "NodeUnschedulable",
			update: node().CPU("4").Obj(), wantMoved: "Backoff/NodeUpdateNodeTaint",
		},
		"NodeUnschedulable: an annotation does not help": {
			node: node().CPU("4").Unschedulable().Obj(), pod: pod().Obj(), wantRejector: "NodeUnschedulable",
			update: annotate(node().CPU("4").Unschedulable().Obj()),
		},
		"NodePorts: registers node additions only": {
			node:         node().CPU("4").Obj(),
			existing:     []*v1.Pod{rt.Pod("ns", "web").HostPort(80, v1.ProtocolTCP, "").On("n1").Obj()},
			pod:          pod().HostPort(80, v1.ProtocolTCP, "").Obj(),
			wantRejector: "NodePorts",
			update:       node().CPU("8").Label("disk", "ssd").Obj(),
		},
		"InterPodAffinity: the node gains the topology key": {
			node:         node().CPU("4").Obj(),
			existing:     []*v1.Pod{rt.Pod("ns", "db").Label("app", "db").On("n1").Obj()},
			pod:          pod().PodAffinity("rack", map[string]string{"app": "db"}).Obj(),
			wantRejector: "InterPodAffinity",
			update:       node().CPU("4").Label("rack", "r1").Obj(), wantMoved: "Backoff/NodeUpdateNodeLabel",
		},
		"InterPodAffinity: an unrelated label": {
			node:         node().CPU("4").Obj(),
			existing:     []*v1.Pod{rt.Pod("ns", "db").Label("app", "db").On("n1").Obj()},
			pod:          pod().PodAffinity("rack", map[string]string{"app": "db"}).Obj(),
			wantRejector: "InterPodAffinity",
			update:       node().CPU("4").Label("disk", "ssd").Obj(),
		},
		"PodTopologySpread: a node losing the topology key": {
			node:         node().CPU("4").Obj(),
			pod:          pod().Spread(1, "rack", map[string]string{"app": "web"}).Label("app", "web").Obj(),
			wantRejector: "PodTopologySpread",
			update:       node().CPU("4").Label("rack", "r1").Obj(), wantMoved: "Backoff/NodeUpdateNodeLabel",
		},
		"PodTopologySpread: an allocatable change": {
			node:         node().CPU("4").Obj(),
			pod:          pod().Spread(1, "rack", map[string]string{"app": "web"}).Label("app", "web").Obj(),
			wantRejector: "PodTopologySpread",
			update:       node().CPU("8").Obj(),
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			obs := &queueEvents{arrivals: map[string]int{}}
			c := NewCore(testingclock.NewFakeClock(t0), Options{Seed: 1, Parallelism: 1, Observer: obs})
			c.OnNodeAdd(tt.node)
			for _, p := range tt.existing {
				c.OnPodAdd(p)
			}
			p := tt.pod
			p.Spec.SchedulerName = v1.DefaultSchedulerName
			c.OnPodAdd(p)
			a := c.Cycle()
			if a == nil || a.Failure == nil {
				t.Fatalf("the pod was not rejected: %s", describe(a))
			}
			if a.Preemption != nil {
				c.PreemptionDone(a.Preemption, false)
			}
			c.FailureDone(a.Failure)
			qp := c.queue.pods["ns/p"]
			if diff := cmp.Diff([]string{tt.wantRejector}, qp.rejectors); diff != "" {
				t.Fatalf("rejectors (-want,+got):\n%s", diff)
			}
			clear(obs.arrivals)
			c.OnNodeUpdate(tt.update)
			want := map[string]int{}
			if tt.wantMoved != "" {
				want[tt.wantMoved] = 1
			}
			if diff := cmp.Diff(want, obs.arrivals); diff != "" {
				t.Errorf("arrivals (-want,+got):\n%s", diff)
			}
			if moved := qp.where != inUnschedulable; moved != (tt.wantMoved != "") {
				t.Errorf("moved out of the unschedulable pool: %v, want %v", moved, tt.wantMoved != "")
			}
		})
	}
}

// TestNodeAddQueueingHints checks node additions go through the same hints:
// a new node too small for the pod leaves it where it is.
func TestNodeAddQueueingHints(t *testing.T) {
	obs := &queueEvents{arrivals: map[string]int{}}
	c := NewCore(testingclock.NewFakeClock(t0), Options{Seed: 1, Parallelism: 1, Observer: obs})
	c.OnNodeAdd(rt.Node("n1").CPU("1").Obj())
	p := rt.Pod("ns", "p").Req("2", "").Obj()
	p.Spec.SchedulerName = v1.DefaultSchedulerName
	c.OnPodAdd(p)
	c.FailureDone(c.Cycle().Failure)
	clear(obs.arrivals)
	c.OnNodeAdd(rt.Node("n2").CPU("1").Obj())
	if len(obs.arrivals) != 0 {
		t.Errorf("a node too small moved the pod: %v", obs.arrivals)
	}
	big := rt.Node("n3").Obj()
	big.Status.Allocatable[v1.ResourceCPU] = resource.MustParse("2")
	c.OnNodeAdd(big)
	if diff := cmp.Diff(map[string]int{"Backoff/NodeAdd": 1}, obs.arrivals); diff != "" {
		t.Errorf("arrivals after a node that fits (-want,+got):\n%s", diff)
	}
}

// TestNodeUpdateDuringCycle updates the node while the pod's cycle is in
// flight: an update that concerns none of the plugins that reject the pod
// in that cycle leaves it in the unschedulable pool, one that may help
// sends it to backoff, as upstream replays the events an in-flight pod
// missed against its queueing hints.
func TestNodeUpdateDuringCycle(t *testing.T) {
	tests := map[string]struct {
		update      *v1.Node
		wantBackoff bool
	}{
		"an annotation":         {update: annotate(rt.Node("n1").CPU("1").Obj())},
		"a label":               {update: rt.Node("n1").CPU("1").Label("disk", "ssd").Obj()},
		"CPU that makes it fit": {update: rt.Node("n1").CPU("4").Obj(), wantBackoff: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := NewCore(testingclock.NewFakeClock(t0), Options{Seed: 1, Parallelism: 1})
			c.OnNodeAdd(rt.Node("n1").CPU("1").Obj())
			p := rt.Pod("ns", "p").Req("2", "").Obj()
			p.Spec.SchedulerName = v1.DefaultSchedulerName
			c.OnPodAdd(p)
			a := c.Cycle()
			c.OnNodeUpdate(tt.update)
			c.FailureDone(a.Failure)
			qp := c.queue.pods["ns/p"]
			if got := qp.where == inBackoff || qp.where == inActive; got != tt.wantBackoff {
				t.Errorf("after the cycle the pod is in queue %d, want backoff %v", qp.where, tt.wantBackoff)
			}
		})
	}
}

// TestDefaultSpreadQueueingHints: a pod without constraints of its own that
// a profile's DoNotSchedule default constraint rejected (a Service selects
// it) moves when a node gains the default constraint's topology key, not
// on another label: PodTopologySpread's hint reads the default constraints.
func TestDefaultSpreadQueueingHints(t *testing.T) {
	for name, tt := range map[string]struct {
		update    *v1.Node
		wantMoved string
	}{
		"the default constraint's key": {update: rt.Node("n1").CPU("4").Label("rack", "r1").Obj(), wantMoved: "Backoff/NodeUpdateNodeLabel"},
		"another label":                {update: rt.Node("n1").CPU("4").Label("disk", "ssd").Obj()},
	} {
		t.Run(name, func(t *testing.T) {
			obs := &queueEvents{arrivals: map[string]int{}}
			prof := profile.Profile{SchedulerName: v1.DefaultSchedulerName, Preemption: true, HasPostFilter: true, Score: score.DefaultConfig(),
				Filter: filter.Options{SpreadDefaultConstraints: []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "rack", WhenUnsatisfiable: v1.DoNotSchedule}}}}
			c := NewCore(testingclock.NewFakeClock(t0), Options{Seed: 1, Parallelism: 1, Observer: obs, Profiles: []profile.Profile{prof}})
			c.OnSelector(func(s *snapshot.Snapshot) { s.SetService(rt.Service("ns", "web", map[string]string{"app": "web"})) })
			c.OnNodeAdd(rt.Node("n1").CPU("4").Obj())
			p := rt.Pod("ns", "p").Label("app", "web").Obj()
			p.Spec.SchedulerName = v1.DefaultSchedulerName
			c.OnPodAdd(p)
			a := c.Cycle()
			if a == nil || a.Failure == nil {
				t.Fatalf("the pod was not rejected: %s", describe(a))
			}
			if a.Preemption != nil {
				c.PreemptionDone(a.Preemption, false)
			}
			c.FailureDone(a.Failure)
			qp := c.queue.pods["ns/p"]
			if diff := cmp.Diff([]string{"PodTopologySpread"}, qp.rejectors); diff != "" {
				t.Fatalf("rejectors (-want,+got):\n%s", diff)
			}
			clear(obs.arrivals)
			c.OnNodeUpdate(tt.update)
			want := map[string]int{}
			if tt.wantMoved != "" {
				want[tt.wantMoved] = 1
			}
			if diff := cmp.Diff(want, obs.arrivals); diff != "" {
				t.Errorf("arrivals (-want,+got):\n%s", diff)
			}
		})
	}
}
