// Package whatif answers, for one pod and a cluster snapshot, what
// kube-scheduler v1.37.2 would do: where the pod fits, or which node
// preemption would nominate, which pods it would evict, which disruption
// budgets would break, and why every other node was rejected. It is the
// engine behind `reprieve whatif`; its Decision is the stable JSON output.
package whatif

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/preemption"
	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/engine/score"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// ReasonPreemptionDisabled is the IneligibleReason of a pod whose profile
// does not enable DefaultPreemption.
const ReasonPreemptionDisabled = "the profile does not enable DefaultPreemption at postFilter"

// Evaluator evaluates pods one after another, reusing its memory: the
// filter statuses and the dry run's victims of one evaluation serve the
// next. The zero value is ready; it must not be used by two goroutines at
// once. Decisions own all their memory and stay valid.
type Evaluator struct {
	filter     filter.Buffers
	preemption preemption.Evaluator
}

// Evaluate decides for pod over snap with memory of its own; see
// Evaluator.Evaluate.
func Evaluate(snap *Snapshot, pod *Pod, opts Options) (*Decision, error) {
	var e Evaluator
	return e.Evaluate(snap, pod, opts)
}

// Evaluate decides for pod over snap. The pod may be part of the snapshot
// (a pending pod) or prepared with snap.NewPod. The error is for options
// that cannot be evaluated (ErrNoClock); every answer about the
// pod, even "cannot evaluate", is a Decision.
func (e *Evaluator) Evaluate(snap *Snapshot, pod *Pod, options Options) (*Decision, error) {
	if options.Now.IsZero() {
		return nil, ErrNoClock
	}
	opts := options.resolve()
	fopts := opts.filter
	fopts.Buffers = &e.filter
	c := filter.NewCycle(snap, pod, fopts)
	fr := c.FilterAll()
	d := &Decision{
		Pod:           pod.Key,
		Priority:      pod.Priority,
		FeasibleNodes: make([]string, 0, len(fr.Feasible)),
		Victims:       []Victim{},
		Candidates:    []Candidate{},
		Warnings:      warnings(pod, options.Features),
	}
	for _, n := range fr.Feasible {
		d.FeasibleNodes = append(d.FeasibleNodes, n.Name)
	}
	slices.Sort(d.FeasibleNodes)
	if len(fr.Feasible) > 0 {
		d.Fits = true
		d.Placement = place(snap, pod, c, fr.Feasible, opts)
		d.Summary = fmt.Sprintf("fits on %d %s: %s; kube-scheduler would bind it to %s", len(fr.Feasible), plural(len(fr.Feasible), "node", "nodes"),
			abbreviate(d.FeasibleNodes, 5), d.Placement.Node)
		d.NodeStatuses = nodeStatuses(snap, fr, nil)
		return d, nil
	}
	if pf := c.PreFilterStatus(); pf.Code == filter.Error {
		d.Summary = "cannot evaluate: " + pf.Message()
		d.Message = pf.Message()
		d.NodeStatuses = nodeStatuses(snap, fr, nil)
		return d, nil
	}

	if opts.noPreemption {
		// No PostFilter runs: the message is the filters' alone.
		d.IneligibleReason = ReasonPreemptionDisabled
		d.Summary = "preemption cannot help: " + ReasonPreemptionDisabled
		d.Message = filter.FitErrorMessage(len(snap.Nodes), c.PreFilterStatus(), fr.Statuses)
		d.NodeStatuses = nodeStatuses(snap, fr, nil)
		return d, nil
	}
	res, err := e.preemption.Evaluate(c, fr, opts.preemption)
	if err != nil {
		return nil, err
	}
	d.Message = preemption.FailedSchedulingMessage(c, fr, res)
	// The rejections do not depend on the rest of the decision: on a big
	// cluster they are explained on a goroutine of their own meanwhile.
	var explained sync.WaitGroup
	if explainInParallel(c) {
		explained.Go(func() { d.NodeStatuses = nodeStatuses(snap, fr, res) })
	} else {
		d.NodeStatuses = nodeStatuses(snap, fr, res)
	}
	describePreemption(d, res, snap, options.Now.UnixNano())
	describeHolds(d, c, res)
	describeDeviceHolds(d, c, res)
	explained.Wait()
	return d, nil
}

// place is schedulePod for a pod that fits on the feasible nodes, given in
// snapshot order: its nominated node when it is feasible (upstream tries it
// first and takes it unscored); else the first ones up to upstream's
// number of feasible nodes to find are scored, and the best is taken.
func place(snap *snapshot.Snapshot, pod *snapshot.Pod, c *filter.Cycle, feasible []*snapshot.Node, opts engineOptions) *Placement {
	if nnn := pod.Obj().Status.NominatedNodeName; nnn != "" && slices.ContainsFunc(feasible, func(n *snapshot.Node) bool { return n.Name == nnn }) {
		return &Placement{Node: nnn}
	}
	want := score.NumFeasibleNodesToFindPercentage(len(snap.Nodes), opts.percentageOfNodesToScore)
	if opts.score.Config != nil && !opts.score.Config.HasScorePlugins() {
		want = 1
	}
	feasible = feasible[:min(len(feasible), want)]
	p := &Placement{ScoredNodes: len(feasible)}
	if len(feasible) == 1 {
		p.Node, p.ScoredNodes = feasible[0].Name, 0
		return p
	}
	sopts := opts.score
	sopts.Devices = c
	plugins, err := score.ScorePlugins(snap, pod, feasible, sopts)
	if err != nil {
		p.Error = err.Error()
	}
	scores := score.Total(plugins, len(feasible))
	best := score.SelectHost(feasible, scores)
	runnerUp := -1
	for i, n := range feasible {
		if n == best {
			p.Node, p.Score = n.Name, scores[i]
		} else if runnerUp < 0 || scores[i] > scores[runnerUp] {
			runnerUp = i
		}
	}
	p.RunnerUp, p.RunnerUpScore = feasible[runnerUp].Name, scores[runnerUp]
	return p
}

// describePreemption fills the preemption part of d from the dry run.
func describePreemption(d *Decision, res *preemption.Result, snap *snapshot.Snapshot, now int64) {
	d.Eligible = res.Eligible
	d.IneligibleReason = res.IneligibleReason
	if !res.Eligible {
		d.Summary = "preemption cannot help: " + res.IneligibleReason
		return
	}
	if res.Policy != profile.PolicyUpstream {
		d.Policy = string(res.Policy)
		d.Upstream = &PolicyBaseline{Victims: []string{}}
		if u := res.Upstream; u != nil {
			d.Upstream.NominatedNode, d.Upstream.NumPDBViolations = u.Node.Name, u.NumPDBViolations
			var c Candidate
			candidate(&c, u, now, make([]string, len(u.Victims)))
			d.Upstream.Victims, d.Upstream.Score = c.Victims, &c.Score
			d.Upstream.UnplaceableVictims = unplaceable(res.Policy, u)
		}
		d.Search = policySearch(res)
		defer func() { d.Summary += upstreamComparison(d) }()
	}
	d.DryRun = &DryRun{PotentialNodes: len(res.PotentialNodes), Offset: res.Offset, WantedCandidates: res.NumCandidates, VisitedNodes: len(res.Visited)}
	d.Candidates = make([]Candidate, len(res.Candidates))
	numVictims := 0
	for _, cand := range res.Candidates {
		numVictims += len(cand.Victims)
	}
	names := make([]string, numVictims) // every candidate's victims, in turn
	for i, cand := range res.Candidates {
		names = candidate(&d.Candidates[i], cand, now, names)
	}
	switch {
	case res.Chosen != nil:
	case res.Err != nil:
		d.Summary = "preemption failed: " + res.Err.Error()
		return
	default:
		d.Summary = "preemption cannot help: " + summarizeReasons(res)
		return
	}
	chosen := res.Chosen
	d.NominatedNode = chosen.Node.Name
	d.NumPDBViolations = chosen.NumPDBViolations
	d.DecidedBy = res.DecidedBy
	if len(res.Best) > 1 {
		for _, b := range res.Best {
			d.TiedNodes = append(d.TiedNodes, b.Node.Name)
		}
		slices.Sort(d.TiedNodes)
	}
	var groupOf map[*preemption.Victim]*GroupRef
	for _, u := range chosen.Units {
		if u.Group == nil {
			continue
		}
		if groupOf == nil {
			groupOf = map[*preemption.Victim]*GroupRef{}
		}
		ref := &GroupRef{Kind: u.Group.Kind.String(), Name: u.Group.Key}
		vg := VictimGroup{Kind: ref.Kind, Name: ref.Name, Priority: u.Priority, Members: []GroupMember{}, Nodes: []string{}}
		for _, m := range u.Members {
			groupOf[m] = ref
			vg.Members = append(vg.Members, GroupMember{Pod: m.Pod.Key, Node: m.Pod.NodeName()})
		}
		for _, n := range u.Nodes {
			vg.Nodes = append(vg.Nodes, n.Name)
		}
		slices.Sort(vg.Nodes)
		d.VictimGroups = append(d.VictimGroups, vg)
	}
	d.Victims = make([]Victim, 0, len(chosen.Victims))
	starts := make([]metav1.Time, len(chosen.Victims)) // the victims' own copies
	for i, v := range chosen.Victims {
		vic := Victim{Pod: v.Pod.Key, Node: v.Pod.NodeName(), Priority: v.Pod.Priority, Group: groupOf[v]}
		if st := v.Pod.StartTime(); st != nil {
			starts[i] = *st
			vic.StartTime = &starts[i]
		}
		placeVictim(&vic, chosen, i)
		for _, pdb := range chosen.Broken[v] {
			vic.PDBs = append(vic.PDBs, pdb.Namespace+"/"+pdb.Name)
		}
		d.Victims = append(d.Victims, vic)
	}
	d.DisruptedWorkloads = chosen.DisruptedWorkloads()
	d.Summary = "preempts " + count(len(d.Victims), "pod", "pods") + " on " + d.NominatedNode
	switch groups := d.VictimGroups; len(groups) {
	case 0:
	case 1:
		d.Summary += ", evicting " + groups[0].Kind + " " + groups[0].Name + " whole (" + count(len(groups[0].Nodes), "node", "nodes") + ")"
	default:
		d.Summary += ", evicting " + strconv.Itoa(len(groups)) + " pod groups whole"
	}
	if d.NumPDBViolations > 0 {
		d.Summary += ", breaking " + count(d.NumPDBViolations, "disruption budget", "disruption budgets")
	}
	if d.Search != nil && slices.Contains(d.Search.BeyondUpstream, d.NominatedNode) {
		d.Summary += ", a node upstream's dry run drops (removing every lower-priority pod there breaks what the pod needs)"
	}
	d.UnplaceableVictims = unplaceable(res.Policy, chosen)
	d.Summary += pendingSummary(res.Policy, chosen)
}

// policySearch describes the reach of a victim policy's search.
func policySearch(res *preemption.Result) *PolicySearch {
	names := func(nodes []*snapshot.Node) []string {
		out := make([]string, len(nodes))
		for i, n := range nodes {
			out[i] = n.Name
		}
		slices.Sort(out)
		return out
	}
	s := &PolicySearch{Searched: names(res.Searched), NotSearched: len(res.PotentialNodes) - len(res.Searched),
		NodeLimit: preemption.MaxPolicyNodes, StepLimit: preemption.MaxSearchSteps, BeyondStepLimit: preemption.MaxBeyondSteps}
	if len(res.Beyond) > 0 {
		s.BeyondUpstream = names(res.Beyond)
	}
	if len(res.CutOff) > 0 {
		s.CutOff = names(res.CutOff)
	}
	if res.Policy == profile.PolicyReschedulable {
		s.PlacementLimit = preemption.MaxPlacementWork
	}
	return s
}

// candidate fills out from c, taking the names of its victims from the front
// of names, and returns the rest of names.
func candidate(out *Candidate, c *preemption.Candidate, now int64, names []string) (rest []string) {
	score := c.Score(now)
	*out = Candidate{Node: c.Node.Name, NumPDBViolations: c.NumPDBViolations, Score: Score{
		NumPDBViolations: score.NumPDBViolations,
		HighestPriority:  score.HighestPriority,
		SumPriorities:    score.SumPriorities,
		NumVictims:       score.NumVictims,
		EarliestStart:    metav1.NewTime(time.Unix(0, score.EarliestStart).UTC()),
	}}
	out.Proven = c.Proven
	n := len(c.Victims)
	out.Victims = names[:n:n]
	for i, v := range c.Victims {
		out.Victims[i] = v.Pod.Key
	}
	for _, u := range c.Units {
		if u.Group != nil {
			out.VictimGroups = append(out.VictimGroups, GroupRef{Kind: u.Group.Kind.String(), Name: u.Group.Key}.String())
		}
	}
	return names[n:]
}

// upstreamComparison says what upstream would have done instead, for the
// summary of a decision under another victim policy.
func upstreamComparison(d *Decision) string {
	u := d.Upstream
	if u.NominatedNode == "" {
		return "; upstream would not preempt"
	}
	if u.NominatedNode == d.NominatedNode && slices.Equal(u.Victims, victimNames(d)) {
		return "; upstream would evict the same"
	}
	return fmt.Sprintf("; upstream would evict %d %s on %s (highest priority %d, priority sum %d, %d %s broken%s)",
		len(u.Victims), plural(len(u.Victims), "pod", "pods"), u.NominatedNode, u.Score.HighestPriority, u.Score.SumPriorities,
		u.NumPDBViolations, plural(u.NumPDBViolations, "budget", "budgets"), upstreamPending(u))
}

func victimNames(d *Decision) []string {
	out := make([]string, len(d.Victims))
	for i, v := range d.Victims {
		out[i] = v.Pod
	}
	return out
}

// summarizeReasons says in a few words why no node could be preempted on.
func summarizeReasons(res *preemption.Result) string {
	if len(res.PotentialNodes) == 0 {
		return "every node is rejected for reasons removing pods cannot fix"
	}
	counts := map[string]int{}
	for _, s := range res.NodeStatuses {
		counts[s.Status.Message()]++
	}
	type rc struct {
		r string
		n int
	}
	var list []rc
	for r, n := range counts {
		list = append(list, rc{r, n})
	}
	slices.SortFunc(list, func(a, b rc) int { return cmp.Or(-cmp.Compare(a.n, b.n), cmp.Compare(a.r, b.r)) })
	var parts []string
	for _, x := range list {
		parts = append(parts, fmt.Sprintf("%s (%d %s)", x.r, x.n, plural(x.n, "node", "nodes")))
	}
	return strings.Join(parts, "; ")
}

// warnings lists what the engine leaves out for this pod.
func warnings(pod *snapshot.Pod, f profile.Features) []string {
	var out []string
	if f.GenericWorkload && pod.HasSchedulingGroup() {
		out = append(out, fmt.Sprintf("schedulingGroup: the pod belongs to pod group %q; kube-scheduler schedules and preempts for pod groups in a pod-group cycle, which is not modelled: the pod is evaluated on its own", pod.PodGroupName()))
	}
	if len(pod.SchedulingGates()) > 0 {
		out = append(out, "schedulingGates: the pod is gated and the scheduler would not try it until the gates are removed")
	}
	return out
}

// ownReasons copies reasons for a Decision, which owns its memory: the
// filters share the reasons of their common statuses between evaluations.
func ownReasons(reasons []string) []string {
	return append(make([]string, 0, len(reasons)), reasons...)
}

// count is n and the noun for it: "1 pod", "3 pods".
func count(n int, one, many string) string {
	return strconv.Itoa(n) + " " + plural(n, one, many)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func abbreviate(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:max], ", ") + fmt.Sprintf(" and %d more", len(names)-max)
}
