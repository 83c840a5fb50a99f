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
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/reprieve/reprieve/pkg/config"
	"github.com/reprieve/reprieve/pkg/filter"
	"github.com/reprieve/reprieve/pkg/preemption"
	"github.com/reprieve/reprieve/pkg/score"
	"github.com/reprieve/reprieve/pkg/snapshot"
)

// Decision is the answer for one pod. Its JSON form is documented in the
// README and kept stable: fields are only ever added.
type Decision struct {
	// Pod is "namespace/name" of the pod asked about.
	Pod string `json:"pod"`
	// Priority is the pod's resolved priority.
	Priority int32 `json:"priority"`
	// Fits reports whether the pod fits somewhere without preemption.
	Fits bool `json:"fits"`
	// FeasibleNodes are the nodes it fits on, sorted.
	FeasibleNodes []string `json:"feasibleNodes"`
	// Placement is where kube-scheduler would bind a pod that fits.
	Placement *Placement `json:"placement,omitempty"`
	// Eligible reports whether the pod may preempt (only when !Fits).
	Eligible bool `json:"eligible"`
	// IneligibleReason is upstream's reason when it may not.
	IneligibleReason string `json:"ineligibleReason,omitempty"`
	// NominatedNode is the node preemption picks, "" when none.
	NominatedNode string `json:"nominatedNode,omitempty"`
	// Victims are the pods evicted to make room on NominatedNode, most
	// important first. With the GenericWorkload gate they include every
	// member of a pod group evicted whole, on whichever node it runs.
	Victims []Victim `json:"victims"`
	// VictimGroups are the pod groups evicted whole, most important first
	// (only with the GenericWorkload gate).
	VictimGroups []VictimGroup `json:"victimGroups,omitempty"`
	// DisruptedWorkloads counts the evicted units that affect pod groups:
	// groups evicted whole and pods of pod groups evicted on their own
	// (only with the GenericWorkload gate).
	DisruptedWorkloads int `json:"disruptedWorkloads,omitempty"`
	// NumPDBViolations counts the victims whose eviction breaks a budget.
	NumPDBViolations int `json:"numPDBViolations"`
	// DecidedBy names the criterion that made NominatedNode win over the
	// other candidates, or "tie" when several were equally good and one was
	// picked at random (seeded), as upstream does.
	DecidedBy string `json:"decidedBy,omitempty"`
	// TiedNodes are the candidates tied for best, sorted (only on a tie).
	TiedNodes []string `json:"tiedNodes,omitempty"`
	// Candidates are every node the dry run made a candidate, in upstream's
	// order (without PDB violations first).
	Candidates []Candidate `json:"candidates"`
	// NodeStatuses holds, for every node that is neither feasible nor a
	// candidate, why it was rejected.
	NodeStatuses NodeStatuses `json:"nodeStatuses"`
	// DryRun describes how much of the cluster the dry run examined.
	DryRun *DryRun `json:"dryRun,omitempty"`
	// Summary is the one-line decision for people.
	Summary string `json:"summary"`
	// Message is the message of the FailedScheduling event the scheduler
	// would record (empty when the pod fits).
	Message string `json:"message,omitempty"`
	// Warnings lists parts of the pod the engine does not model.
	Warnings []string `json:"warnings,omitempty"`
	// Policy is the victim policy that decided, when it is not upstream's
	// (Options.Policy); Upstream is then what kube-scheduler
	// itself would have done, for comparison.
	Policy   string          `json:"policy,omitempty"`
	Upstream *PolicyBaseline `json:"upstream,omitempty"`
}

// PolicyBaseline is kube-scheduler's own preemption choice, beside the
// decision of another victim policy.
type PolicyBaseline struct {
	// NominatedNode is the node upstream would nominate, "" when none.
	NominatedNode string `json:"nominatedNode,omitempty"`
	// Victims are the pods upstream would evict there.
	Victims []string `json:"victims"`
	// NumPDBViolations is upstream's count of budget-breaking victims.
	NumPDBViolations int `json:"numPDBViolations"`
	// Score is the standing of upstream's choice under the node-choice
	// criteria.
	Score *Score `json:"score,omitempty"`
	// UnplaceableVictims, under the reschedulable policy, counts upstream's
	// victims that could run nowhere else right after the eviction.
	UnplaceableVictims *int `json:"unplaceableVictims,omitempty"`
}

// Placement is the node a fresh kube-scheduler binds a pod that fits to: it
// examines the nodes in order until it has found as many feasible nodes as
// percentageOfNodesToScore asks for (all of them in a cluster of up to 100
// nodes), scores those with the default profile's score plugins and takes
// the best (ties resolved as upstream's score heap resolves them).
type Placement struct {
	// Node is the node the pod would be bound to.
	Node string `json:"node"`
	// Score is its total score; 0 when it was the only node examined,
	// which upstream does not score.
	Score int64 `json:"score"`
	// RunnerUp is the best of the other scored nodes and RunnerUpScore its
	// total score ("" when no other node was scored).
	RunnerUp      string `json:"runnerUp,omitempty"`
	RunnerUpScore int64  `json:"runnerUpScore,omitempty"`
	// ScoredNodes is how many feasible nodes were scored.
	ScoredNodes int `json:"scoredNodes"`
	// Error is the PreScore error upstream would fail the cycle with.
	Error string `json:"error,omitempty"`
}

// Victim is a pod preemption would evict.
type Victim struct {
	// Pod is "namespace/name".
	Pod      string `json:"pod"`
	Node     string `json:"node"`
	Priority int32  `json:"priority"`
	// StartTime is the pod's status.startTime, if it has started.
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// PDBs are the budgets ("namespace/name") this eviction would break.
	PDBs []string `json:"pdbs,omitempty"`
	// Group is the pod group the pod is evicted with, when it is evicted
	// as a member of a group evicted whole.
	Group *GroupRef `json:"group,omitempty"`
	// Holds are the volume resources the victim holds on the nominated
	// node that the pod needs (a ReadWriteOncePod claim, an attach slot,
	// a conflicting inline disk).
	Holds []Hold `json:"holds,omitempty"`
	// ReschedulableTo and PendingReason say, under the reschedulable
	// policy, where the victim could run right after the eviction, or why
	// it would stay pending (see preemption.Placement).
	ReschedulableTo string `json:"reschedulableTo,omitempty"`
	PendingReason   string `json:"pendingReason,omitempty"`
}

// GroupRef names a PodGroup or CompositePodGroup.
type GroupRef struct {
	// Kind is "PodGroup" or "CompositePodGroup".
	Kind string `json:"kind"`
	// Name is "namespace/name".
	Name string `json:"name"`
}

// String returns "Kind namespace/name".
func (g GroupRef) String() string { return g.Kind + " " + g.Name }

// VictimGroup is a pod group evicted whole: its highest ancestor group
// whose disruption mode is All, with all of its scheduled pods.
type VictimGroup struct {
	// Kind is "PodGroup" or "CompositePodGroup".
	Kind string `json:"kind"`
	// Name is "namespace/name".
	Name string `json:"name"`
	// Priority is the group's priority as preemption sees it (that of the
	// root of its hierarchy).
	Priority int32 `json:"priority"`
	// Members are its pods and their nodes, in upstream's order.
	Members []GroupMember `json:"members"`
	// Nodes are the nodes it spans, sorted.
	Nodes []string `json:"nodes"`
}

// GroupMember is a pod of a group evicted whole.
type GroupMember struct {
	Pod  string `json:"pod"`
	Node string `json:"node"`
}

// Candidate is a node where preemption would make the pod fit.
type Candidate struct {
	Node string `json:"node"`
	// Victims are "namespace/name", most important first.
	Victims []string `json:"victims"`
	// VictimGroups are the groups evicted whole, as "Kind namespace/name".
	VictimGroups     []string `json:"victimGroups,omitempty"`
	NumPDBViolations int      `json:"numPDBViolations"`
	// Score is the node's standing under upstream's ordered criteria.
	Score Score `json:"score"`
	// Proven reports, under a victim policy other than upstream's, that
	// no better victim set exists on the node (false: the search reached
	// its work bound and kept the best set it found).
	Proven bool `json:"proven,omitempty"`
}

// Score is a candidate's values for upstream's ordered node-choice criteria;
// lower is better for each, compared in field order.
type Score struct {
	NumPDBViolations int   `json:"numPDBViolations"`
	HighestPriority  int32 `json:"highestPriority"`
	SumPriorities    int64 `json:"sumPriorities"`
	NumVictims       int   `json:"numVictims"`
	// EarliestStart is the earliest start among the highest-priority
	// victims; later is better.
	EarliestStart metav1.Time `json:"earliestStart"`
}

// NodeStatus is why a node was rejected.
type NodeStatus struct {
	// Code is "Unschedulable" (preemption might help) or
	// "UnschedulableAndUnresolvable" (it cannot).
	Code    string   `json:"code"`
	Plugin  string   `json:"plugin,omitempty"`
	Reasons []string `json:"reasons"`
	// Preemption is the dry-run outcome on this node, when it was dry-run
	// and did not become a candidate.
	Preemption *PreemptionStatus `json:"preemption,omitempty"`
}

// PreemptionStatus is why the dry run could not use a node.
type PreemptionStatus struct {
	Code    string   `json:"code"`
	Plugin  string   `json:"plugin,omitempty"`
	Reasons []string `json:"reasons"`
}

// DryRun describes the dry run's reach.
type DryRun struct {
	// PotentialNodes is how many nodes preemption could help on.
	PotentialNodes int `json:"potentialNodes"`
	// Offset is where the dry run started among them (random, seeded).
	Offset int `json:"offset"`
	// WantedCandidates is the candidate budget.
	WantedCandidates int `json:"wantedCandidates"`
	// VisitedNodes is how many it evaluated before it had enough.
	VisitedNodes int `json:"visitedNodes"`
}

// ReasonPreemptionDisabled is the IneligibleReason of a pod whose profile
// does not enable DefaultPreemption.
const ReasonPreemptionDisabled = "the profile does not enable DefaultPreemption at postFilter"

// Options configures Evaluate. With Now set, the zero value is
// kube-scheduler's default profile with v1.37's default feature gates.
type Options struct {
	// Now is the evaluation time, required (the engine never reads the
	// clock): pods without a start time count as starting then.
	Now time.Time
	// Seed seeds the dry run's random offset and its final tie-break, and
	// the tie-break among equally scored nodes.
	Seed uint64
	// Parallelism bounds the goroutines of an evaluation, the caller's
	// included: 1 runs it on the caller's goroutine alone; 0 means
	// GOMAXPROCS.
	Parallelism int
	// Profile is the scheduling profile that decides (config.Config's
	// Profile for the pod's schedulerName); nil is the default profile.
	Profile *config.Profile
	// Features are the feature gates that change preemption
	// (config.ParseFeatureGates); the zero value is v1.37's default.
	Features config.Features
	// Policy chooses the victims; the zero value is upstream's.
	Policy config.Policy
	// ReplicaSets select the pods PodTopologySpread's default constraints
	// count when a pod that fits is placed, as upstream's DefaultSelector
	// combines them; none disables those constraints.
	ReplicaSets []*appsv1.ReplicaSet
	// Exhaustive dry-runs every potential node, from offset 0, instead of
	// upstream's candidate budget from a random offset; Offset, when not
	// nil, replaces the random offset (modulo the potential nodes). Both
	// serve comparisons with a run of upstream's whose offset is known.
	Exhaustive bool
	Offset     *int
}

// ErrNoClock is Evaluate's error when Options.Now is not set.
var ErrNoClock = preemption.ErrNoClock

// engineOptions are Options resolved into the engine's own.
type engineOptions struct {
	filter                   filter.Options
	preemption               preemption.Options
	score                    score.Options
	percentageOfNodesToScore int32
	noPreemption             bool
}

// resolve turns o into the engine's options, with the profile's arguments.
func (o Options) resolve() engineOptions {
	e := engineOptions{
		preemption: preemption.Options{Now: o.Now, Seed: o.Seed, Features: o.Features, Policy: o.Policy,
			Exhaustive: o.Exhaustive, Offset: o.Offset},
		score: score.Options{DefaultSelector: replicaSetSelectors(o.ReplicaSets)},
	}
	if p := o.Profile; p != nil {
		e.filter = p.Filter
		e.preemption.MinCandidateNodesPercentage = p.MinCandidateNodesPercentage
		e.preemption.MinCandidateNodesAbsolute = p.MinCandidateNodesAbsolute
		e.score.Config = p.Score
		e.percentageOfNodesToScore = p.PercentageOfNodesToScore
		e.noPreemption = !p.Preemption
	}
	e.filter.Parallelism = o.Parallelism
	e.filter.DRAPreemption = o.Features.DRAPreemption
	return e
}

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
		d.Placement = place(snap, pod, fr.Feasible, opts)
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
	if c.Parallelism() > 1 && len(snap.Nodes) >= parallelExplainNodes {
		explained.Go(func() { d.NodeStatuses = nodeStatuses(snap, fr, res) })
	} else {
		d.NodeStatuses = nodeStatuses(snap, fr, res)
	}
	describePreemption(d, res, snap, options.Now.UnixNano())
	describeHolds(d, c, res)
	if options.Features.DRAPreemption {
		describeDeviceHolds(d, snap, pod, res)
	}
	explained.Wait()
	return d, nil
}

// replicaSetSelectors gives PodTopologySpread's default constraints the
// selectors of the ReplicaSets that select a pod, as upstream's
// DefaultSelector combines them (every requirement of every matching
// ReplicaSet of the pod's namespace); nil when none selects it.
func replicaSetSelectors(rss []*appsv1.ReplicaSet) score.Selectors {
	if len(rss) == 0 {
		return nil
	}
	return func(pod *v1.Pod) labels.Selector {
		var sel labels.Selector
		for _, rs := range rss {
			if rs.Namespace != pod.Namespace || rs.Spec.Selector == nil {
				continue
			}
			s, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
			if err != nil || s.Empty() || !s.Matches(labels.Set(pod.Labels)) {
				continue
			}
			reqs, _ := s.Requirements()
			if sel == nil {
				sel = labels.NewSelector()
			}
			sel = sel.Add(reqs...)
		}
		return sel
	}
}

// place is schedulePod for a pod that fits on the feasible nodes, given in
// snapshot order: the first ones up to upstream's number of feasible nodes
// to find are scored, and the best is taken.
func place(snap *snapshot.Snapshot, pod *snapshot.Pod, feasible []*snapshot.Node, opts engineOptions) *Placement {
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
	plugins, err := score.ScorePlugins(snap, pod, feasible, opts.score)
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
	if res.Policy != config.PolicyUpstream {
		d.Policy = string(res.Policy)
		d.Upstream = &PolicyBaseline{Victims: []string{}}
		if u := res.Upstream; u != nil {
			d.Upstream.NominatedNode, d.Upstream.NumPDBViolations = u.Node.Name, u.NumPDBViolations
			var c Candidate
			candidate(&c, u, now, make([]string, len(u.Victims)))
			d.Upstream.Victims, d.Upstream.Score = c.Victims, &c.Score
			d.Upstream.UnplaceableVictims = unplaceable(res.Policy, u)
		}
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
	for i, v := range chosen.Victims {
		vic := Victim{Pod: v.Pod.Key, Node: v.Pod.NodeName(), Priority: v.Pod.Priority, StartTime: v.Pod.StartTime().DeepCopy(), Group: groupOf[v]}
		placeVictim(&vic, chosen, i)
		for _, pdb := range chosen.Broken[v] {
			vic.PDBs = append(vic.PDBs, pdb.Namespace+"/"+pdb.Name)
		}
		d.Victims = append(d.Victims, vic)
	}
	d.DisruptedWorkloads = chosen.DisruptedWorkloads()
	d.Summary = fmt.Sprintf("preempts %d %s on %s", len(d.Victims), plural(len(d.Victims), "pod", "pods"), d.NominatedNode)
	switch groups := d.VictimGroups; len(groups) {
	case 0:
	case 1:
		n := len(groups[0].Nodes)
		d.Summary += fmt.Sprintf(", evicting %s %s whole (%d %s)", groups[0].Kind, groups[0].Name, n, plural(n, "node", "nodes"))
	default:
		d.Summary += fmt.Sprintf(", evicting %d pod groups whole", len(groups))
	}
	if d.NumPDBViolations > 0 {
		d.Summary += fmt.Sprintf(", breaking %d disruption %s", d.NumPDBViolations, plural(d.NumPDBViolations, "budget", "budgets"))
	}
	d.Summary += pendingSummary(res.Policy, chosen)
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
func warnings(pod *snapshot.Pod, f config.Features) []string {
	var out []string
	if f.GenericWorkload && pod.HasSchedulingGroup() {
		out = append(out, fmt.Sprintf("schedulingGroup: the pod belongs to pod group %q; kube-scheduler schedules and preempts for pod groups in a pod-group cycle, which is not modelled: the pod is evaluated on its own", pod.PodGroupName()))
	}
	if len(pod.Obj.Spec.SchedulingGates) > 0 {
		out = append(out, "schedulingGates: the pod is gated and the scheduler would not try it until the gates are removed")
	}
	return out
}

// ownReasons copies reasons for a Decision, which owns its memory: the
// filters share the reasons of their common statuses between evaluations.
func ownReasons(reasons []string) []string {
	return append(make([]string, 0, len(reasons)), reasons...)
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
