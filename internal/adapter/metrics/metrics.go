// Package metrics exposes the scheduler's Prometheus metrics, under
// kube-scheduler's names where reprieve mirrors kube-scheduler's behaviour,
// on a registry the binary owns.
//
// Names, help texts (with component-base's stability annotation), label
// names, label values and buckets are kube-scheduler v1.37.2's: its STABLE
// and BETA sets and the preemption ALPHA metrics.
package metrics

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/score"
	"github.com/reprieve/reprieve/internal/scheduler"
)

// Stability levels, as component-base annotates help texts.
const (
	stable = "STABLE"
	beta   = "BETA"
	alpha  = "ALPHA"
)

// PluginMetricsSamplePercent is the share of cycles whose plugin durations
// are recorded, upstream's pluginMetricsSamplePercent.
const PluginMetricsSamplePercent = 10

// SchedulingGatesPlugin is the PreEnqueue plugin that holds gated pods.
const SchedulingGatesPlugin = "SchedulingGates"

// NodeDeclaredFeaturesPlugin is the default profile's last PreFilter and
// Filter plugin; it skips every pod reprieve models, so its evaluations
// stay at zero.
const NodeDeclaredFeaturesPlugin = "NodeDeclaredFeatures"

func help(level, text string) string { return fmt.Sprintf("[%s] %s", level, text) }

// scheduler_preemption_goroutines_duration_seconds is not served: an alpha
// metric deprecated in 1.37.0, which kube-scheduler 1.37 and 1.38 hide.

// Metrics is a scheduler.DetailObserver that records Prometheus metrics.
type Metrics struct {
	profile string
	// sample decides whether a cycle's plugin durations are recorded.
	sample func() bool

	scheduleAttempts       *prometheus.CounterVec
	attemptDuration        *prometheus.HistogramVec
	algorithmDuration      prometheus.Histogram
	preemptionAttempts     prometheus.Counter
	preemptionVictims      prometheus.Histogram
	pdbViolations          *prometheus.CounterVec
	sliDuration            *prometheus.HistogramVec
	podAttempts            prometheus.Histogram
	extensionPointDuration *prometheus.HistogramVec
	pluginDuration         *prometheus.HistogramVec
	queueIncoming          *prometheus.CounterVec
	goroutines             *prometheus.GaugeVec
	pluginEvaluations      *prometheus.CounterVec
	permitWait             *prometheus.HistogramVec
	preemptionEvalTime     *prometheus.HistogramVec
	preemptionExecTime     *prometheus.HistogramVec
	preemptionGoroutines   *prometheus.CounterVec

	unschedulable *unschedulableCollector
}

var _ scheduler.DetailObserver = (*Metrics)(nil)

// Options are New's optional inputs.
type Options struct {
	// Pending, when set, is sampled for scheduler_pending_pods.
	Pending func() scheduler.Counts
	// Queued, when set, is sampled for scheduler_unschedulable_pods.
	Queued func() []scheduler.QueuedPodState
	// Sample, when set, replaces the random choice of the cycles whose
	// plugin durations are recorded (PluginMetricsSamplePercent).
	Sample func() bool
}

// New registers the metrics on reg (with the Go and process collectors)
// for the named scheduler profile. pending, when not nil, is sampled for
// scheduler_pending_pods.
func New(reg prometheus.Registerer, profile string, pending func() scheduler.Counts) *Metrics {
	return NewWithOptions(reg, profile, Options{Pending: pending})
}

// NewWithOptions is New with every optional input.
func NewWithOptions(reg prometheus.Registerer, profile string, opts Options) *Metrics {
	const ns = "scheduler"
	m := &Metrics{
		profile: profile,
		sample:  opts.Sample,
		scheduleAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "schedule_attempts_total",
			Help: help(stable, "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.")},
			[]string{"result", "profile"}),
		attemptDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "scheduling_attempt_duration_seconds",
			Help: help(stable, "Scheduling attempt latency in seconds (scheduling algorithm + binding)"), Buckets: prometheus.ExponentialBuckets(0.001, 2, 15)},
			[]string{"result", "profile"}),
		algorithmDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "scheduling_algorithm_duration_seconds",
			Help: help(beta, "Scheduling algorithm latency in seconds"), Buckets: prometheus.ExponentialBuckets(0.001, 2, 15)}),
		preemptionAttempts: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "preemption_attempts_total",
			Help: help(stable, "Total preemption attempts in the cluster till now")}),
		preemptionVictims: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "preemption_victims",
			Help: help(stable, "Number of selected preemption victims for preemption initiated by a single pod"), Buckets: prometheus.ExponentialBuckets(1, 2, 7)}),
		pdbViolations: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "preemption_pdb_violations_total",
			Help: help(alpha, "Total number of pod disruption budget violations caused by preemption.")}, []string{"preemptor"}),
		sliDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "pod_scheduling_sli_duration_seconds",
			Help:    help(beta, "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might involve multiple scheduling attempts."),
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 20)}, []string{"attempts"}),
		podAttempts: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "pod_scheduling_attempts",
			Help: help(stable, "Number of attempts to successfully schedule a pod."), Buckets: prometheus.ExponentialBuckets(1, 2, 5)}),
		extensionPointDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "framework_extension_point_duration_seconds",
			Help: help(stable, "Latency for running all plugins of a specific extension point."), Buckets: prometheus.ExponentialBuckets(0.0001, 2, 12)},
			[]string{"extension_point", "status", "profile"}),
		pluginDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "plugin_execution_duration_seconds",
			Help: help(beta, "Duration for running a plugin at a specific extension point."), Buckets: prometheus.ExponentialBuckets(0.00001, 1.5, 20)},
			[]string{"plugin", "extension_point", "status"}),
		queueIncoming: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "queue_incoming_pods_total",
			Help: help(stable, "Number of pods added to scheduling queues by event and queue type.")}, []string{"queue", "event"}),
		goroutines: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "goroutines",
			Help: help(beta, "Number of running goroutines split by the work they do such as binding.")}, []string{"operation"}),
		pluginEvaluations: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "plugin_evaluation_total",
			Help: help(beta, "Number of attempts to schedule pods by each plugin and the extension point (available only in PreFilter, Filter, PreScore, and Score).")},
			[]string{"plugin", "extension_point", "profile"}),
		permitWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "permit_wait_duration_seconds",
			Help: help(beta, "Duration of waiting on permit."), Buckets: prometheus.ExponentialBuckets(0.001, 2, 15)}, []string{"result"}),
		preemptionEvalTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "preemption_evaluation_duration_seconds",
			Help: help(alpha, "Duration in seconds for identifying the target preemption victims."), Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)},
			[]string{"preemptor", "result"}),
		preemptionExecTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "preemption_execution_duration_seconds",
			Help: help(alpha, "Duration in seconds for preempting the target preemption victims. With async preemption enabled, preemption execution does not block the scheduling of other pods."), Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)},
			[]string{"preemptor", "result"}),
		preemptionGoroutines: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "preemption_goroutines_execution_total",
			Help: help(alpha, "Number of preemption goroutines executed.")}, []string{"result"}),
	}
	m.instrumentPlugins()
	m.unschedulable = &unschedulableCollector{
		desc: prometheus.NewDesc(ns+"_unschedulable_pods",
			help(beta, "The number of unschedulable pods broken down by plugin name. A pod will increment the gauge for all plugins that caused it to not schedule and so this metric have meaning only when broken down by plugin."),
			[]string{"plugin", "profile"}, nil),
		queued:   opts.Queued,
		rejected: map[string]rejection{},
		seen:     map[series]bool{},
	}
	reg.MustRegister(m.scheduleAttempts, m.attemptDuration, m.algorithmDuration, m.preemptionAttempts, m.preemptionVictims,
		m.pdbViolations, m.sliDuration, m.podAttempts, m.extensionPointDuration, m.pluginDuration, m.queueIncoming,
		m.goroutines, m.pluginEvaluations, m.permitWait, m.preemptionEvalTime, m.preemptionExecTime,
		m.preemptionGoroutines, m.unschedulable,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if opts.Pending != nil {
		pending := opts.Pending
		// Upstream's STABLE gauge, one series per queue.
		for queue, count := range map[string]func(c scheduler.Counts) int{
			"active":        func(c scheduler.Counts) int { return c.Active },
			"backoff":       func(c scheduler.Counts) int { return c.Backoff },
			"unschedulable": func(c scheduler.Counts) int { return c.Unschedulable },
			"gated":         func(c scheduler.Counts) int { return c.Gated },
		} {
			reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Name: "pending_pods",
				Help:        help(stable, "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulableEntities that the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never attempted to schedule because they are gated; 'incomplete' means number of pods in incompletePodGroupPods; 'pending' means number of pods in pendingPodGroupPods."),
				ConstLabels: prometheus.Labels{"queue": queue}},
				func() float64 { return float64(count(pending())) }))
		}
	}
	return m
}

// instrumentPlugins creates the plugin_evaluation_total series of the
// default profile's plugins at zero, as upstream's framework does for the
// plugins of each extension point when it builds a profile.
func (m *Metrics) instrumentPlugins() {
	filters := append(slices.Clone(filter.EvaluatedPlugins()), NodeDeclaredFeaturesPlugin)
	for _, point := range []string{"PreFilter", "Filter"} {
		for _, p := range filters {
			m.pluginEvaluations.WithLabelValues(p, point, m.profile)
		}
	}
	for _, p := range score.DefaultPlugins() {
		if p.Name != score.ImageLocality && p.Name != score.DynamicResources {
			m.pluginEvaluations.WithLabelValues(p.Name, "PreScore", m.profile)
		}
		m.pluginEvaluations.WithLabelValues(p.Name, "Score", m.profile)
	}
}

func (m *Metrics) sampled() bool {
	if m.sample != nil {
		return m.sample()
	}
	return rand.IntN(100) < PluginMetricsSamplePercent
}

// Attempt implements scheduler.Observer.
func (m *Metrics) Attempt(_ *v1.Pod, result scheduler.AttemptResult, d time.Duration) {
	m.scheduleAttempts.WithLabelValues(string(result), m.profile).Inc()
	m.attemptDuration.WithLabelValues(string(result), m.profile).Observe(d.Seconds())
}

// Scheduled implements scheduler.Observer.
func (m *Metrics) Scheduled(_ *v1.Pod, _ string, attempts int, sinceFirst time.Duration) {
	label := strconv.Itoa(attempts)
	if attempts >= 16 {
		label = "16+"
	}
	m.sliDuration.WithLabelValues(label).Observe(sinceFirst.Seconds())
	m.podAttempts.Observe(float64(attempts))
}

// Preemption implements scheduler.Observer. The evaluation's duration is
// recorded from the cycle's report (Cycle), with its status code.
func (m *Metrics) Preemption(_ *v1.Pod, node string, victims []*v1.Pod, numPDBViolations int, _ time.Duration) {
	m.preemptionAttempts.Inc()
	if node != "" {
		m.preemptionVictims.Observe(float64(len(victims)))
		if numPDBViolations > 0 {
			m.pdbViolations.WithLabelValues("pod").Add(float64(numPDBViolations))
		}
	}
}

// Cycle implements scheduler.DetailObserver.
func (m *Metrics) Cycle(pod *v1.Pod, r scheduler.CycleReport) {
	m.algorithmDuration.Observe(r.Algorithm.Seconds())
	for _, ep := range r.ExtensionPoints {
		m.extensionPointDuration.WithLabelValues(ep.Name, ep.Status, r.Profile).Observe(ep.Duration.Seconds())
	}
	m.plugins(r.Plugins)
	// Counted on every cycle, not sampled, as upstream's instrumented
	// plugins count.
	for _, e := range r.Evaluations {
		m.pluginEvaluations.WithLabelValues(e.Plugin, e.ExtensionPoint, r.Profile).Add(float64(e.Count))
	}
	if r.PostFilter != "" {
		for _, ep := range r.ExtensionPoints {
			if ep.Name == "PostFilter" {
				m.preemptionEvalTime.WithLabelValues("pod", r.PostFilter).Observe(ep.Duration.Seconds())
			}
		}
	}
	m.unschedulable.record(pod.Namespace+"/"+pod.Name, r.Profile, r.UnschedulablePlugins)
}

func (m *Metrics) plugins(runs []scheduler.PluginRun) {
	if len(runs) == 0 || !m.sampled() {
		return
	}
	for _, p := range runs {
		m.pluginDuration.WithLabelValues(p.Plugin, p.ExtensionPoint, p.Status).Observe(p.Duration.Seconds())
	}
}

// Binding implements scheduler.DetailObserver.
func (m *Metrics) Binding(_ *v1.Pod, profile string, runs []scheduler.ExtensionPointRun, plugins []scheduler.PluginRun) {
	for _, ep := range runs {
		m.extensionPointDuration.WithLabelValues(ep.Name, ep.Status, profile).Observe(ep.Duration.Seconds())
	}
	m.plugins(plugins)
}

// QueueIncoming implements scheduler.DetailObserver.
func (m *Metrics) QueueIncoming(queue, event string) {
	m.queueIncoming.WithLabelValues(queue, event).Inc()
}

// Goroutines implements scheduler.DetailObserver.
func (m *Metrics) Goroutines(operation string, delta int) {
	m.goroutines.WithLabelValues(operation).Add(float64(delta))
}

// PreemptionExecuted implements scheduler.DetailObserver.
func (m *Metrics) PreemptionExecuted(_ *v1.Pod, result string, d time.Duration) {
	m.preemptionExecTime.WithLabelValues("pod", result).Observe(d.Seconds())
	m.preemptionGoroutines.WithLabelValues(result).Inc()
}

// rejection is the outcome of a pod's last failed cycle.
type rejection struct {
	profile string
	plugins []string
}

// unschedulableCollector serves scheduler_unschedulable_pods as upstream
// keeps it: every queued pod outside a cycle counts once for each plugin
// that rejected it in its last cycle, a gated pod for SchedulingGates.
type unschedulableCollector struct {
	desc   *prometheus.Desc
	queued func() []scheduler.QueuedPodState

	mu       sync.Mutex
	rejected map[string]rejection
	// seen are the series served once: as a GaugeVec's, they stay at 0.
	seen map[series]bool
}

// series is one plugin and profile of scheduler_unschedulable_pods.
type series struct{ plugin, profile string }

func (u *unschedulableCollector) record(key, profile string, plugins []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(plugins) == 0 {
		delete(u.rejected, key)
		return
	}
	u.rejected[key] = rejection{profile: profile, plugins: plugins}
	for _, p := range plugins {
		u.seen[series{p, profile}] = true
	}
}

// Describe implements prometheus.Collector.
func (u *unschedulableCollector) Describe(ch chan<- *prometheus.Desc) { ch <- u.desc }

// Collect implements prometheus.Collector.
func (u *unschedulableCollector) Collect(ch chan<- prometheus.Metric) {
	if u.queued == nil {
		return
	}
	queued := u.queued()
	counts := map[series]int{}
	present := make(map[string]bool, len(queued))
	u.mu.Lock()
	for _, q := range queued {
		present[q.Key] = true
		if q.InFlight {
			continue
		}
		if q.Gated {
			counts[series{SchedulingGatesPlugin, q.Profile}]++
			continue
		}
		if r, ok := u.rejected[q.Key]; ok {
			for _, p := range r.plugins {
				counts[series{p, r.profile}]++
			}
		}
	}
	// Pods the queue no longer holds were scheduled or deleted.
	for key := range u.rejected {
		if !present[key] {
			delete(u.rejected, key)
		}
	}
	for s := range counts {
		u.seen[s] = true
	}
	out := make(map[series]int, len(u.seen))
	for s := range u.seen {
		out[s] = counts[s]
	}
	u.mu.Unlock()
	for s, n := range out {
		if m, err := prometheus.NewConstMetric(u.desc, prometheus.GaugeValue, float64(n), s.plugin, s.profile); err == nil {
			ch <- m
		}
	}
}
