// Package metrics exposes the scheduler's Prometheus metrics, under
// kube-scheduler's names where reprieve mirrors kube-scheduler's behaviour,
// on a registry the binary owns.
package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/pkg/scheduler"
)

// Metrics is a scheduler.Observer that records Prometheus metrics.
type Metrics struct {
	profile string

	scheduleAttempts   *prometheus.CounterVec
	attemptDuration    *prometheus.HistogramVec
	preemptionAttempts prometheus.Counter
	preemptionVictims  prometheus.Histogram
	pdbViolations      *prometheus.CounterVec
	sliDuration        *prometheus.HistogramVec
	podAttempts        prometheus.Histogram
	preemptionEvalTime *prometheus.HistogramVec
}

var _ scheduler.Observer = (*Metrics)(nil)

// New registers the metrics on reg (with the Go and process collectors)
// for the named scheduler profile. pending, when not nil, is sampled for
// scheduler_pending_pods.
func New(reg prometheus.Registerer, profile string, pending func() scheduler.Counts) *Metrics {
	const ns = "scheduler"
	m := &Metrics{
		profile: profile,
		scheduleAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "schedule_attempts_total",
			Help: "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem."},
			[]string{"result", "profile"}),
		attemptDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "scheduling_attempt_duration_seconds",
			Help: "Scheduling attempt latency in seconds (scheduling algorithm + binding)", Buckets: prometheus.ExponentialBuckets(0.001, 2, 15)},
			[]string{"result", "profile"}),
		preemptionAttempts: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "preemption_attempts_total",
			Help: "Total preemption attempts in the cluster till now"}),
		preemptionVictims: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "preemption_victims",
			Help: "Number of selected preemption victims for preemption initiated by a single pod", Buckets: prometheus.ExponentialBuckets(1, 2, 7)}),
		pdbViolations: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "preemption_pdb_violations_total",
			Help: "Total number of pod disruption budget violations caused by preemption."}, []string{"preemptor"}),
		sliDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "pod_scheduling_sli_duration_seconds",
			Help:    "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might involve multiple scheduling attempts.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 20)}, []string{"attempts"}),
		podAttempts: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "pod_scheduling_attempts",
			Help: "Number of attempts to successfully schedule a pod.", Buckets: prometheus.ExponentialBuckets(1, 2, 5)}),
		preemptionEvalTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "preemption_evaluation_duration_seconds",
			Help: "Duration in seconds for identifying the target preemption victims.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)},
			[]string{"preemptor", "result"}),
	}
	reg.MustRegister(m.scheduleAttempts, m.attemptDuration, m.preemptionAttempts, m.preemptionVictims, m.pdbViolations,
		m.sliDuration, m.podAttempts, m.preemptionEvalTime,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if pending != nil {
		// Upstream's STABLE gauge, one series per queue.
		for queue, count := range map[string]func(c scheduler.Counts) int{
			"active":        func(c scheduler.Counts) int { return c.Active },
			"backoff":       func(c scheduler.Counts) int { return c.Backoff },
			"unschedulable": func(c scheduler.Counts) int { return c.Unschedulable },
			"gated":         func(c scheduler.Counts) int { return c.Gated },
		} {
			reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Name: "pending_pods",
				Help:        "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never attempted to schedule because they are gated.",
				ConstLabels: prometheus.Labels{"queue": queue}},
				func() float64 { return float64(count(pending())) }))
		}
	}
	return m
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

// Preemption implements scheduler.Observer.
func (m *Metrics) Preemption(_ *v1.Pod, node string, victims []*v1.Pod, numPDBViolations int, evaluation time.Duration) {
	m.preemptionAttempts.Inc()
	result := "Unschedulable"
	if node != "" {
		result = "Success"
		m.preemptionVictims.Observe(float64(len(victims)))
		if numPDBViolations > 0 {
			m.pdbViolations.WithLabelValues("pod").Add(float64(numPDBViolations))
		}
	}
	m.preemptionEvalTime.WithLabelValues("pod", result).Observe(evaluation.Seconds())
}
