package sim

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/reprieve/reprieve/internal/scheduler"
)

// Event is a Kubernetes event as the simulation recorded it.
type Event struct {
	// Time is the virtual time since the start.
	Time      time.Duration `json:"-"`
	At        string        `json:"at"`
	Type      string        `json:"type"`
	Reason    string        `json:"reason"`
	Action    string        `json:"action,omitempty"`
	Namespace string        `json:"namespace,omitempty"`
	// Object is "kind/name", as kubectl prints it.
	Object string `json:"object"`
	// Related is another object the event is about, "kind/name" (a
	// victim's preemptor), in RelatedNamespace.
	Related          string `json:"related,omitempty"`
	RelatedNamespace string `json:"relatedNamespace,omitempty"`
	Message          string `json:"message"`
	// Series is set when a FailedScheduling event happened again: as
	// client-go's event recorder sends an event like one it sent less than
	// six minutes before (same object, type, reason, action, related object
	// and message) as a series of the first, with a count and the last
	// time, a pod retried alike until the end is one event. Other events
	// happen a bounded number of times and are each kept (the report's
	// timelines read cordons and evictions from them).
	Series *EventSeries `json:"series,omitempty"`
}

// EventSeries is how often an event happened, as events.k8s.io's
// EventSeries: Count times in all (the first included), the last at Last.
type EventSeries struct {
	Count int `json:"count"`
	// Last is the virtual time since the start of the last occurrence;
	// LastObservedAt prints it as Event.At does.
	Last           time.Duration `json:"-"`
	LastObservedAt string        `json:"lastObservedAt"`
}

// LastTime is when the event last happened: Series.Last, or Time when it
// happened once.
func (e *Event) LastTime() time.Duration {
	if e.Series != nil {
		return e.Series.Last
	}
	return e.Time
}

// seriesWindow is how long after an event client-go's recorder still
// counts a like event into its series (finishTime in
// k8s.io/client-go/tools/events): a pod retried every five minutes that
// fails alike each time is one event whatever the length of the run.
const seriesWindow = 6 * time.Minute

// reasonFailedScheduling is the reason of the scheduler's event for a pod
// that did not fit, the one event repeated at every retry.
const reasonFailedScheduling = "FailedScheduling"

// eventKey is what makes events alike (client-go's eventKey, with the
// type and message).
type eventKey struct {
	typ, reason, action, namespace, object, related, relatedNamespace, message string
}

// PodHistory is what happened to one pod.
type PodHistory struct {
	Pod      string `json:"pod"`
	Priority int32  `json:"priority"`
	// Times since the start, in seconds; nil when it did not happen.
	Created     float64  `json:"created"`
	Bound       *float64 `json:"bound,omitempty"`
	Node        string   `json:"node,omitempty"`
	Preempted   *float64 `json:"preempted,omitempty"`
	Terminating *float64 `json:"terminating,omitempty"`
	Finished    *float64 `json:"finished,omitempty"`
	Gone        *float64 `json:"gone,omitempty"`
	// Replacement marks a pod a controller created to replace a preempted one.
	Replacement bool         `json:"replacement,omitempty"`
	Nominations []Nomination `json:"nominations,omitempty"`
	// PreemptedBy is the preemptor (namespace/name) when Preempted is set.
	PreemptedBy string `json:"preemptedBy,omitempty"`
	// Unschedulable is the last FailedScheduling message of the pod while
	// it was pending.
	Unschedulable string `json:"unschedulable,omitempty"`
	// Claims are the pod's PersistentVolumeClaims (namespace/name).
	Claims []string `json:"claims,omitempty"`
}

// Nomination is a period a pending pod was nominated to a node.
type Nomination struct {
	Node string   `json:"node"`
	From float64  `json:"from"`
	To   *float64 `json:"to,omitempty"`
	// Outcome is "bound" (the pod got that node), "lost" (cleared or moved
	// elsewhere) or "open" at the end.
	Outcome string `json:"outcome"`
}

// NodeHistory is a node's lifetime.
type NodeHistory struct {
	Name    string   `json:"name"`
	Added   float64  `json:"added"`
	Removed *float64 `json:"removed,omitempty"`
}

// Sample is the number of pending pods from a time on.
type Sample struct {
	At      float64 `json:"at"`
	Pending int     `json:"pending"`
}

// Summary are the headline numbers of a run.
type Summary struct {
	Scenario           string `json:"scenario"`
	Seed               uint64 `json:"seed"`
	Duration           string `json:"duration"`
	PodsCreated        int    `json:"podsCreated"`
	PodsScheduled      int    `json:"podsScheduled"`
	PodsPendingAtEnd   int    `json:"podsPendingAtEnd"`
	SchedulingAttempts int    `json:"schedulingAttempts"`
	PreemptionAttempts int    `json:"preemptionAttempts"`
	Preemptions        int    `json:"preemptions"`
	// Victims counts the victims of every preemption, a pod chosen again
	// by a later preemption (while it terminates) each time; PodsPreempted
	// counts the distinct pods preempted.
	Victims             int             `json:"victims"`
	PodsPreempted       int             `json:"podsPreempted"`
	PDBViolations       int             `json:"pdbViolations"`
	GroupDisruptions    int             `json:"groupDisruptions"`
	NominationsLost     int             `json:"nominationsLost"`
	PreemptionCascades  int             `json:"preemptionCascades"`
	VictimRuntimeLostS  float64         `json:"victimRuntimeLostSeconds"`
	TimeToSchedule      []PriorityWaits `json:"timeToSchedule"`
	PeakPending         int             `json:"peakPending"`
	SchedulingCyclesRun int             `json:"schedulingCycles"`
	// Costs is the cost model the run's times include.
	Costs CostsSummary `json:"costs"`
}

// CostsSummary is the cost model of a run, as the summary states it.
type CostsSummary struct {
	// CycleSeconds is the virtual time of one scheduling cycle.
	CycleSeconds float64 `json:"cycleSeconds"`
	// APIQPS and APIBurst rate-limit the scheduler's API calls; APIQPS is
	// negative when they are not limited.
	APIQPS   float64 `json:"apiQPS"`
	APIBurst int     `json:"apiBurst"`
}

// String says what the model costs, for a summary's header.
func (c CostsSummary) String() string {
	cycle := time.Duration(math.Round(c.CycleSeconds * 1e9)).String()
	if c.APIQPS < 0 {
		return fmt.Sprintf("%s per scheduling cycle, API calls not rate-limited", cycle)
	}
	return fmt.Sprintf("%s per scheduling cycle, API calls at %s/s with a burst of %d", cycle, strconv.FormatFloat(c.APIQPS, 'f', -1, 64), c.APIBurst)
}

// PriorityWaits are time-to-schedule percentiles for pods of one priority.
type PriorityWaits struct {
	Priority  int32   `json:"priority"`
	Scheduled int     `json:"scheduled"`
	P50       float64 `json:"p50Seconds"`
	P90       float64 `json:"p90Seconds"`
	P99       float64 `json:"p99Seconds"`
}

// recorder collects events, histories and counters. It is the scheduler's
// Observer too.
type recorder struct {
	start  time.Time
	events []Event
	// series are the events that a like event would join: their index in
	// events, by key; pruned every seriesWindow of virtual time.
	series    map[eventKey]int
	lastPrune time.Duration
	pods      map[string]*PodHistory // the latest pod of each name
	hist      []*PodHistory          // every pod, in creation order
	nodes     []*NodeHistory
	pending   []Sample
	nPend     int

	attempts, scheduled, preemptionAttempts, preemptions, victims, pdbViolations, nominationsLost, cascades int
	runtimeLost                                                                                             time.Duration
	waits                                                                                                   map[int32][]time.Duration
	replacements                                                                                            map[string]bool
	peak                                                                                                    int
	isPending                                                                                               map[string]bool
	awaitingBind                                                                                            map[*PodHistory]bool
}

func newRecorder(start time.Time) *recorder {
	return &recorder{start: start, series: map[eventKey]int{}, pods: map[string]*PodHistory{}, waits: map[int32][]time.Duration{}, replacements: map[string]bool{}, isPending: map[string]bool{},
		awaitingBind: map[*PodHistory]bool{}}
}

func (r *recorder) at(t time.Time) float64 { return t.Sub(r.start).Seconds() }

func ptr(f float64) *float64 { return &f }

// event records e; a FailedScheduling event like one recorded less than
// seriesWindow before it is the next of that one's series.
func (r *recorder) event(e Event) {
	r.pruneSeries(e.Time)
	key := eventKey{e.Type, e.Reason, e.Action, e.Namespace, e.Object, e.Related, e.RelatedNamespace, e.Message}
	if i, ok := r.series[key]; ok && e.Time-r.events[i].LastTime() <= seriesWindow {
		first := &r.events[i]
		if first.Series == nil {
			first.Series = &EventSeries{Count: 1}
		}
		first.Series.Count++
		first.Series.Last = e.Time
	} else {
		e.At = FormatOffset(e.Time)
		if e.Reason == reasonFailedScheduling {
			r.series[key] = len(r.events)
		}
		r.events = append(r.events, e)
	}
	name, ok := strings.CutPrefix(e.Object, "pod/")
	if !ok {
		return
	}
	h := r.pods[e.Namespace+"/"+name]
	if h == nil {
		return
	}
	switch e.Reason {
	case reasonFailedScheduling:
		if h.Bound == nil {
			h.Unschedulable = e.Message
		}
	case "Preempted":
		if rel, ok := strings.CutPrefix(e.Related, "pod/"); ok {
			h.PreemptedBy = e.RelatedNamespace + "/" + rel
		}
	}
}

// pruneSeries forgets, once every seriesWindow of virtual time, the
// events that no like event can join any more, so that the index holds
// the events of the last two windows at most.
func (r *recorder) pruneSeries(now time.Duration) {
	if now-r.lastPrune < seriesWindow {
		return
	}
	r.lastPrune = now
	for k, i := range r.series {
		if now-r.events[i].LastTime() > seriesWindow {
			delete(r.series, k)
		}
	}
}

// finishedEvents returns the events with their series' last times printed.
func (r *recorder) finishedEvents() []Event {
	for i := range r.events {
		if s := r.events[i].Series; s != nil {
			s.LastObservedAt = FormatOffset(s.Last)
		}
	}
	return r.events
}

func (r *recorder) node(name string, t time.Time) {
	r.nodes = append(r.nodes, &NodeHistory{Name: name, Added: r.at(t)})
}

func (r *recorder) nodeRemoved(name string, t time.Time) {
	for i := len(r.nodes) - 1; i >= 0; i-- {
		if r.nodes[i].Name == name && r.nodes[i].Removed == nil {
			r.nodes[i].Removed = ptr(r.at(t))
			return
		}
	}
}

// setPending marks a pod pending or not and samples the count on change.
func (r *recorder) setPending(key string, pending bool, t time.Time) {
	if r.isPending[key] == pending {
		return
	}
	if pending {
		r.isPending[key] = true
		r.nPend++
	} else {
		delete(r.isPending, key)
		r.nPend--
	}
	r.peak = max(r.peak, r.nPend)
	at := r.at(t)
	if n := len(r.pending); n > 0 && r.pending[n-1].At == at {
		r.pending[n-1].Pending = r.nPend
		return
	}
	r.pending = append(r.pending, Sample{At: at, Pending: r.nPend})
}

func (r *recorder) podCreated(p *v1.Pod, t time.Time) {
	key := p.Namespace + "/" + p.Name
	h := &PodHistory{Pod: key, Priority: corev1helpers.PodPriority(p), Created: r.at(t), Replacement: r.replacements[key]}
	for _, v := range p.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			h.Claims = append(h.Claims, p.Namespace+"/"+v.PersistentVolumeClaim.ClaimName)
		}
	}
	r.pods[key] = h
	r.hist = append(r.hist, h)
	if p.Spec.NodeName == "" {
		r.setPending(key, true, t)
	}
}

func (r *recorder) replacement(key string) { r.replacements[key] = true }

func (r *recorder) podBound(p *v1.Pod, node string, t time.Time) {
	h := r.pods[p.Namespace+"/"+p.Name]
	if h == nil {
		return
	}
	h.Bound, h.Node = ptr(r.at(t)), node
	r.setPending(h.Pod, false, t)
	if r.awaitingBind[h] {
		delete(r.awaitingBind, h)
		r.recordWait(h)
	}
}

func (r *recorder) nominated(p *v1.Pod, node string, t time.Time) {
	if h := r.pods[p.Namespace+"/"+p.Name]; h != nil {
		h.Nominations = append(h.Nominations, Nomination{Node: node, From: r.at(t), Outcome: "open"})
	}
}

// nominationEnded closes the pod's open nomination: bound is the node the
// pod was bound to ("" when the nomination was cleared or replaced).
func (r *recorder) nominationEnded(p *v1.Pod, bound string, t time.Time) {
	h := r.pods[p.Namespace+"/"+p.Name]
	if h == nil || len(h.Nominations) == 0 {
		return
	}
	n := &h.Nominations[len(h.Nominations)-1]
	if n.Outcome != "open" {
		return
	}
	n.To = ptr(r.at(t))
	if bound == n.Node {
		n.Outcome = "bound"
	} else {
		n.Outcome = "lost"
		r.nominationsLost++
	}
}

func (r *recorder) preempted(p *v1.Pod, t time.Time) {
	h := r.pods[p.Namespace+"/"+p.Name]
	if h == nil {
		return
	}
	h.Preempted = ptr(r.at(t))
	if p.Status.StartTime != nil {
		// A pod that says it started after now (spec.start set before it)
		// ran for no time.
		r.runtimeLost = satAddDuration(r.runtimeLost, max(t.Sub(p.Status.StartTime.Time), 0))
	}
}

func (r *recorder) podTerminating(p *v1.Pod, t time.Time) {
	if h := r.pods[p.Namespace+"/"+p.Name]; h != nil {
		h.Terminating = ptr(r.at(t))
	}
}

func (r *recorder) podFinished(p *v1.Pod, t time.Time) {
	if h := r.pods[p.Namespace+"/"+p.Name]; h != nil {
		h.Finished = ptr(r.at(t))
	}
}

func (r *recorder) podGone(p *v1.Pod, t time.Time) {
	h := r.pods[p.Namespace+"/"+p.Name]
	if h == nil {
		return
	}
	h.Gone = ptr(r.at(t))
	if h.Bound == nil {
		r.setPending(h.Pod, false, t)
		r.nominationEnded(p, "", t)
	}
}

// Attempt implements scheduler.Observer.
func (r *recorder) Attempt(*v1.Pod, scheduler.AttemptResult, time.Duration) { r.attempts++ }

// Scheduled implements scheduler.Observer.
func (r *recorder) Scheduled(p *v1.Pod, _ string, _ int, _ time.Duration) {
	r.scheduled++
	h := r.pods[p.Namespace+"/"+p.Name]
	switch {
	case h == nil:
	case h.Bound != nil:
		r.recordWait(h)
	default:
		// The binding waits for the pod's volumes (VolumeBinding's
		// PreBind): the wait ends when the pod is bound.
		r.awaitingBind[h] = true
	}
}

func (r *recorder) recordWait(h *PodHistory) {
	wait := time.Duration((*h.Bound - h.Created) * float64(time.Second))
	r.waits[h.Priority] = append(r.waits[h.Priority], wait)
}

// Preemption implements scheduler.Observer.
func (r *recorder) Preemption(p *v1.Pod, node string, victims []*v1.Pod, numPDBViolations int, _ time.Duration) {
	r.preemptionAttempts++
	if node == "" {
		return
	}
	r.preemptions++
	r.victims += len(victims)
	r.pdbViolations += numPDBViolations
	if h := r.pods[p.Namespace+"/"+p.Name]; h != nil && h.Replacement {
		r.cascades++
	}
}

func (r *recorder) summary(name string, seed uint64, d time.Duration, costs CostModel) Summary {
	s := Summary{
		Costs:    CostsSummary{CycleSeconds: costs.Cycle.Seconds(), APIQPS: costs.QPS, APIBurst: costs.Burst},
		Scenario: name, Seed: seed, Duration: d.String(),
		PodsCreated: len(r.hist), PodsScheduled: r.scheduled, PodsPendingAtEnd: r.nPend,
		SchedulingAttempts: r.attempts, SchedulingCyclesRun: r.attempts, PreemptionAttempts: r.preemptionAttempts,
		Preemptions: r.preemptions, Victims: r.victims, PDBViolations: r.pdbViolations,
		NominationsLost: r.nominationsLost, PreemptionCascades: r.cascades,
		VictimRuntimeLostS: r.runtimeLost.Seconds(), PeakPending: r.peak,
		TimeToSchedule: []PriorityWaits{},
	}
	for _, h := range r.hist {
		if h.Preempted != nil {
			s.PodsPreempted++
		}
	}
	prios := make([]int32, 0, len(r.waits))
	for p := range r.waits {
		prios = append(prios, p)
	}
	slices.SortFunc(prios, func(a, b int32) int { return cmp.Compare(b, a) })
	for _, p := range prios {
		w := slices.Clone(r.waits[p])
		slices.Sort(w)
		s.TimeToSchedule = append(s.TimeToSchedule, PriorityWaits{Priority: p, Scheduled: len(w),
			P50: percentile(w, 50).Seconds(), P90: percentile(w, 90).Seconds(), P99: percentile(w, 99).Seconds()})
	}
	return s
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}

func (r *recorder) histories() []PodHistory {
	out := make([]PodHistory, 0, len(r.hist))
	for _, h := range r.hist {
		out = append(out, *h)
	}
	return out
}

// FormatOffset prints a virtual time offset as h:mm:ss.sss, as the event
// log does.
func FormatOffset(d time.Duration) string {
	ms := d.Milliseconds()
	h := ms / 3600000
	m := ms / 60000 % 60
	s := ms / 1000 % 60
	return fmtInt(h, 1) + ":" + fmtInt(m, 2) + ":" + fmtInt(s, 2) + "." + fmtInt(ms%1000, 3)
}

func fmtInt(v int64, width int) string {
	b := []byte{}
	for v > 0 || len(b) < width {
		b = append([]byte{byte('0' + v%10)}, b...)
		v /= 10
	}
	return string(b)
}
