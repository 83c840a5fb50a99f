package metrics

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	rt "github.com/reprieve/reprieve/internal/reprievetest"
	"github.com/reprieve/reprieve/internal/scheduler"
)

// fakeCluster reflects the scheduler's calls back as informer events.
type fakeCluster struct {
	s       *scheduler.Scheduler
	pods    map[string]*v1.Pod
	bindErr error
}

func key(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

func (f *fakeCluster) update(old, p *v1.Pod) {
	f.pods[key(p)] = p
	f.s.OnPodUpdate(old, p)
}

func (f *fakeCluster) Bind(_ context.Context, pod *v1.Pod, node string) error {
	if f.bindErr != nil {
		return f.bindErr
	}
	old := f.pods[key(pod)]
	p := old.DeepCopy()
	p.Spec.NodeName, p.Status.NominatedNodeName = node, ""
	f.update(old, p)
	return nil
}

func (f *fakeCluster) SetUnschedulable(_ context.Context, pod *v1.Pod, _, _ string, setNominated bool, nominated string) error {
	old := f.pods[key(pod)]
	p := old.DeepCopy()
	if setNominated {
		p.Status.NominatedNodeName = nominated
	}
	f.update(old, p)
	return nil
}

func (f *fakeCluster) Preempt(_ context.Context, victim *v1.Pod, c v1.PodCondition) error {
	old := f.pods[key(victim)]
	p := old.DeepCopy()
	p.Status.Conditions = append(p.Status.Conditions, c)
	now := metav1.Now()
	p.DeletionTimestamp = &now
	f.update(old, p)
	return nil
}

func (f *fakeCluster) ClearNominatedNode(_ context.Context, pod *v1.Pod) error {
	old := f.pods[key(pod)]
	p := old.DeepCopy()
	p.Status.NominatedNodeName = ""
	f.update(old, p)
	return nil
}

func (f *fakeCluster) Event(*v1.Pod, *v1.Pod, string, string, string, string) {}

func (f *fakeCluster) add(p *v1.Pod) {
	p.Spec.SchedulerName = v1.DefaultSchedulerName
	f.pods[key(p)] = p
	f.s.OnPodAdd(p)
}

// world is a scheduler observed by Metrics on a fresh registry.
type world struct {
	s   *scheduler.Scheduler
	f   *fakeCluster
	reg *prometheus.Registry
}

func newWorld(t *testing.T, sample bool, nodes ...*v1.Node) *world {
	t.Helper()
	reg := prometheus.NewRegistry()
	f := &fakeCluster{pods: map[string]*v1.Pod{}}
	var s *scheduler.Scheduler
	m := NewWithOptions(reg, v1.DefaultSchedulerName, Options{
		Pending: func() scheduler.Counts { return s.QueueCounts() },
		Queued:  func() []scheduler.QueuedPodState { return s.QueuedPods() },
		Sample:  func() bool { return sample },
	})
	s = scheduler.New(f, testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), scheduler.Options{Seed: 1, Observer: m})
	f.s = s
	for _, n := range nodes {
		s.OnNodeAdd(n)
	}
	return &world{s: s, f: f, reg: reg}
}

func (w *world) runAll() {
	for w.s.ScheduleOne(context.Background()) {
	}
}

// sample is one series: its labels (name=value, sorted, comma-joined) and
// its value (a counter's or gauge's value, a histogram's count).
type sample map[string]float64

func (w *world) gather(t *testing.T, name string) sample {
	t.Helper()
	families, err := w.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := sample{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			out[labelString(m)] = value(f, m)
		}
	}
	return out
}

func labelString(m *dto.Metric) string {
	var parts []string
	for _, l := range m.GetLabel() {
		parts = append(parts, l.GetName()+"="+l.GetValue())
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

func value(f *dto.MetricFamily, m *dto.Metric) float64 {
	switch f.GetType() {
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue()
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue()
	case dto.MetricType_HISTOGRAM:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return -1
}

// TestPreemptionMetrics drives a preemption through the scheduler and
// checks each metric it moves, with upstream's label values.
func TestPreemptionMetrics(t *testing.T) {
	const prof = "profile=default-scheduler"
	tests := []struct {
		name   string
		metric string
		want   sample
	}{
		{"attempts by result", "scheduler_schedule_attempts_total", sample{
			prof + ",result=unschedulable": 1, prof + ",result=scheduled": 2}},
		{"algorithm latency, one per cycle", "scheduler_scheduling_algorithm_duration_seconds", sample{"": 3}},
		{"extension points by status", "scheduler_framework_extension_point_duration_seconds", sample{
			"extension_point=PreFilter," + prof + ",status=Success":  3,
			"extension_point=Filter," + prof + ",status=Success":     3,
			"extension_point=PostFilter," + prof + ",status=Success": 1,
			"extension_point=PreBind," + prof + ",status=Success":    2,
			"extension_point=Bind," + prof + ",status=Success":       2,
		}},
		{"sampled plugins", "scheduler_plugin_execution_duration_seconds", sample{
			"extension_point=PostFilter,plugin=DefaultPreemption,status=Success": 1,
			"extension_point=Bind,plugin=DefaultBinder,status=Success":           2,
		}},
		{"queue arrivals", "scheduler_queue_incoming_pods_total", sample{
			"event=UnscheduledPodAdd,queue=Active":             2,
			"event=ScheduleAttemptFailure,queue=Unschedulable": 1,
			// The victim's deletion moves the preemptor.
			"event=AssignedPodDelete,queue=Active": 1,
		}},
		{"preemption attempts", "scheduler_preemption_attempts_total", sample{"": 1}},
		{"victims", "scheduler_preemption_victims", sample{"": 1}},
		{"evaluation by status code", "scheduler_preemption_evaluation_duration_seconds", sample{"preemptor=pod,result=Success": 1}},
		{"execution", "scheduler_preemption_execution_duration_seconds", sample{"preemptor=pod,result=success": 1}},
		{"goroutines executed", "scheduler_preemption_goroutines_execution_total", sample{"result=success": 1}},
		{"binding goroutines back to zero", "scheduler_goroutines", sample{"operation=binding": 0}},
		{"attempts to schedule", "scheduler_pod_scheduling_attempts", sample{"": 2}},
		{"no pod is left unschedulable", "scheduler_unschedulable_pods", sample{"plugin=NodeResourcesFit," + prof: 0}},
	}
	w := newWorld(t, true, rt.Node("n1").CPU("2").Obj())
	w.f.add(rt.Pod("ns", "victim").Priority(1).Req("2", "").On("n1").Obj())
	w.f.add(rt.Pod("ns", "urgent").Priority(100).Req("2", "").Obj())
	w.runAll()
	// The victim terminates and is deleted: the preemptor binds.
	victim := w.f.pods["ns/victim"]
	delete(w.f.pods, "ns/victim")
	w.s.OnPodDelete(victim)
	w.f.add(rt.Pod("ns", "small").Priority(1).Req("0", "").Obj())
	w.runAll()
	if got := w.f.pods["ns/urgent"].Spec.NodeName; got != "n1" {
		t.Fatalf("preemptor on %q, want n1", got)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := w.gather(t, tt.metric)
			for k, v := range tt.want {
				if g, ok := got[k]; !ok || g != v {
					t.Errorf("%s{%s} = %v (present %v), want %v; all series: %v", tt.metric, k, g, ok, v, got)
				}
			}
			for k := range got {
				if _, ok := tt.want[k]; !ok {
					t.Errorf("unexpected series %s{%s} = %v", tt.metric, k, got[k])
				}
			}
		})
	}
}

// TestUnschedulablePods checks the gauge counts queued pods by the plugins
// that rejected them, gated pods under SchedulingGates, and forgets pods
// that leave the queue.
func TestUnschedulablePods(t *testing.T) {
	const prof = ",profile=default-scheduler"
	w := newWorld(t, false, rt.Node("n1").CPU("2").Obj(), rt.Node("n2").CPU("2").Taint("k", "v", v1.TaintEffectNoSchedule).Obj())
	big := rt.Pod("ns", "big").Priority(1).Req("8", "").Obj()
	w.f.add(big)
	gated := rt.Pod("ns", "gated").Req("1", "").Obj()
	gated.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/wait"}}
	w.f.add(gated)
	if got := w.gather(t, "scheduler_unschedulable_pods"); got["plugin=SchedulingGates"+prof] != 1 || len(got) != 1 {
		t.Errorf("with a gated pod queued: %v, want SchedulingGates 1", got)
	}
	delete(w.f.pods, "ns/gated")
	w.s.OnPodDelete(gated)
	w.runAll()
	got := w.gather(t, "scheduler_unschedulable_pods")
	want := sample{"plugin=NodeResourcesFit" + prof: 1, "plugin=TaintToleration" + prof: 1, "plugin=SchedulingGates" + prof: 0}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all %v)", k, got[k], v, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("series %v, want %v", got, want)
	}
	if n := len(w.gather(t, "scheduler_plugin_execution_duration_seconds")); n != 0 {
		t.Errorf("unsampled cycles recorded %d plugin series", n)
	}
	// A label update concerns neither plugin that rejected the pod
	// (NodeResourcesFit, TaintToleration): their queueing hints leave it
	// in the unschedulable pool, and no series moves.
	w.s.OnNodeUpdate(rt.Node("n1").CPU("2").Label("x", "y").Obj())
	if got := w.gather(t, "scheduler_queue_incoming_pods_total"); len(got) != 3 {
		t.Errorf("arrivals after a node update: %v, want the UnscheduledPodAdd and ScheduleAttemptFailure series only", got)
	}
	if c := w.s.QueueCounts(); c.Unschedulable != 1 {
		t.Errorf("after a label update the queue holds %+v, want the pod unschedulable", c)
	}
	// A new untainted node may help with the taint (TaintToleration's
	// hint), although the pod does not fit it: it moves on NodeAdd.
	w.s.OnNodeAdd(rt.Node("n3").CPU("1").Obj())
	arrivals := w.gather(t, "scheduler_queue_incoming_pods_total")
	if arrivals["event=NodeAdd,queue=Active"]+arrivals["event=NodeAdd,queue=Backoff"] != 1 {
		t.Errorf("arrivals after a node add: %v, want one NodeAdd", arrivals)
	}
	w.runAll()
	w.s.OnNodeAdd(rt.Node("n4").CPU("1").Obj())
	arrivals = w.gather(t, "scheduler_queue_incoming_pods_total")
	if arrivals["event=NodeAdd,queue=Active"]+arrivals["event=NodeAdd,queue=Backoff"] != 2 {
		t.Errorf("arrivals after a second node add: %v, want two NodeAdd", arrivals)
	}
	// The pod is deleted: its series stay, at zero.
	w.f.pods = map[string]*v1.Pod{}
	w.s.OnPodDelete(big)
	got = w.gather(t, "scheduler_unschedulable_pods")
	if got["plugin=NodeResourcesFit"+prof] != 0 || got["plugin=TaintToleration"+prof] != 0 || len(got) != 3 {
		t.Errorf("after deleting the pod: %v", got)
	}
}

// TestBindErrorStatus checks a refused binding is an Error at Bind and a
// ScheduleAttemptFailure arrival.
func TestBindErrorStatus(t *testing.T) {
	w := newWorld(t, true, rt.Node("n1").CPU("2").Obj())
	w.f.bindErr = context.DeadlineExceeded
	w.f.add(rt.Pod("ns", "p").Req("1", "").Obj())
	w.s.ScheduleOne(context.Background())
	if got := w.gather(t, "scheduler_framework_extension_point_duration_seconds")["extension_point=Bind,profile=default-scheduler,status=Error"]; got != 1 {
		t.Errorf("Bind Error observations = %v, want 1", got)
	}
	if got := w.gather(t, "scheduler_plugin_execution_duration_seconds")["extension_point=Bind,plugin=DefaultBinder,status=Error"]; got != 1 {
		t.Errorf("DefaultBinder Error observations = %v, want 1", got)
	}
	if got := w.gather(t, "scheduler_schedule_attempts_total")["profile=default-scheduler,result=error"]; got != 1 {
		t.Errorf("error attempts = %v, want 1", got)
	}
	arrivals := w.gather(t, "scheduler_queue_incoming_pods_total")
	if arrivals["event=ScheduleAttemptFailure,queue=Backoff"]+arrivals["event=ScheduleAttemptFailure,queue=Active"] != 1 {
		t.Errorf("arrivals after a refused binding: %v", arrivals)
	}
}
