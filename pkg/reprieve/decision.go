package reprieve

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/whatif"
)

// Decision is kube-scheduler's answer for one pod. It encodes to the JSON
// `reprieve whatif -o json` prints, byte for byte; fields are only ever
// added.
type Decision struct {
	// Pod is "namespace/name" of the pod asked about, Priority its
	// resolved priority.
	Pod      string `json:"pod"`
	Priority int32  `json:"priority"`
	// Fits reports whether the pod fits somewhere without preemption, on
	// FeasibleNodes (sorted); Placement is then where it would be bound.
	Fits          bool       `json:"fits"`
	FeasibleNodes []string   `json:"feasibleNodes"`
	Placement     *Placement `json:"placement,omitempty"`
	// Eligible reports whether the pod may preempt (only when !Fits);
	// IneligibleReason is upstream's reason when it may not.
	Eligible         bool   `json:"eligible"`
	IneligibleReason string `json:"ineligibleReason,omitempty"`
	// NominatedNode is the node preemption picks, "" when none.
	NominatedNode string `json:"nominatedNode,omitempty"`
	// Victims are the pods evicted to make room, most important first.
	// With the GenericWorkload gate they include every member of a pod
	// group evicted whole (VictimGroups), on whichever node it runs, and
	// DisruptedWorkloads counts the evicted units that affect pod groups.
	Victims            []Victim      `json:"victims"`
	VictimGroups       []VictimGroup `json:"victimGroups,omitempty"`
	DisruptedWorkloads int           `json:"disruptedWorkloads,omitempty"`
	// NumPDBViolations counts the victims whose eviction breaks a budget.
	NumPDBViolations int `json:"numPDBViolations"`
	// DecidedBy names the criterion that made NominatedNode win over the
	// other candidates, or "tie" when it was picked at random (seeded)
	// among TiedNodes.
	DecidedBy string   `json:"decidedBy,omitempty"`
	TiedNodes []string `json:"tiedNodes,omitempty"`
	// Candidates are every node the dry run made a candidate, in
	// upstream's order.
	Candidates []Candidate `json:"candidates"`
	// NodeStatuses holds, by node name, why every node that is neither
	// feasible nor a candidate was rejected.
	NodeStatuses map[string]NodeStatus `json:"nodeStatuses"`
	// DryRun describes how much of the cluster the dry run examined.
	DryRun *DryRun `json:"dryRun,omitempty"`
	// Summary is the one-line decision for people; Message the message of
	// the FailedScheduling event the scheduler would record ("" when the
	// pod fits).
	Summary string `json:"summary"`
	Message string `json:"message,omitempty"`
	// Warnings lists parts of the pod the engine does not model.
	Warnings []string `json:"warnings,omitempty"`
	// Policy is the victim policy that decided, when it is not
	// PolicyUpstream; Upstream is then what kube-scheduler itself would
	// have done.
	Policy   string    `json:"policy,omitempty"`
	Upstream *Baseline `json:"upstream,omitempty"`
	// UnplaceableVictims, under PolicyReschedulable, counts the victims
	// that would stay pending: placed one after another, most important
	// first, each taking its room, they fit nowhere else.
	UnplaceableVictims *int `json:"unplaceableVictims,omitempty"`
	// Search is, under a policy other than PolicyUpstream, how far its
	// search for each node's best victim set reached.
	Search *Search `json:"search,omitempty"`
}

// Search is the reach of a victim policy's search, bounded by counts:
// the potential nodes searched (NodeLimit of them at most, else those the
// dry run visits; NotSearched the others), those where upstream's dry run
// finds no room and every subset of the lower-priority pods was searched
// instead (BeyondUpstream), and those where a work bound stopped the
// search before it proved its answer (CutOff); StepLimit bounds the fit
// checks of one node, BeyondStepLimit those of all the searches beyond
// upstream's, PlacementLimit (under PolicyReschedulable) the node
// filterings that place victims. Node lists are sorted.
type Search struct {
	Searched        []string `json:"searched"`
	BeyondUpstream  []string `json:"beyondUpstream,omitempty"`
	CutOff          []string `json:"cutOff,omitempty"`
	NotSearched     int      `json:"notSearched,omitempty"`
	NodeLimit       int      `json:"nodeLimit"`
	StepLimit       int      `json:"stepLimit"`
	BeyondStepLimit int      `json:"beyondStepLimit"`
	PlacementLimit  int      `json:"placementLimit,omitempty"`
}

// Placement is the node a pod that fits would be bound to, with its total
// score and the best of the other scored nodes ("" when none was).
type Placement struct {
	Node          string `json:"node"`
	Score         int64  `json:"score"`
	RunnerUp      string `json:"runnerUp,omitempty"`
	RunnerUpScore int64  `json:"runnerUpScore,omitempty"`
	// ScoredNodes is how many feasible nodes were scored; Error the
	// PreScore error upstream would fail the cycle with.
	ScoredNodes int    `json:"scoredNodes"`
	Error       string `json:"error,omitempty"`
}

// Victim is a pod preemption would evict ("namespace/name") from Node.
type Victim struct {
	Pod       string       `json:"pod"`
	Node      string       `json:"node"`
	Priority  int32        `json:"priority"`
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// PDBs are the budgets ("namespace/name") its eviction would break.
	PDBs []string `json:"pdbs,omitempty"`
	// Group is the pod group it is evicted with, if evicted as a member
	// of a group evicted whole.
	Group *GroupRef `json:"group,omitempty"`
	// Holds are the volumes or devices it holds that the pod needs.
	Holds []Hold `json:"holds,omitempty"`
	// ReschedulableTo and PendingReason say, under PolicyReschedulable,
	// where it could run right after the eviction, or why it could not.
	ReschedulableTo string `json:"reschedulableTo,omitempty"`
	PendingReason   string `json:"pendingReason,omitempty"`
}

// Hold is a resource a victim holds that the pod needs and only its
// eviction frees: Kind is "ReadWriteOncePodClaim", "AttachSlot",
// "InlineDisk" or "Devices"; Plugin the filter that counts it; Reason says
// it in a sentence.
type Hold struct {
	Kind    string   `json:"kind"`
	Plugin  string   `json:"plugin"`
	Claim   string   `json:"claim,omitempty"`
	Devices []string `json:"devices,omitempty"`
	Driver  string   `json:"driver,omitempty"`
	Volume  string   `json:"volume,omitempty"`
	Reason  string   `json:"reason"`
}

// GroupRef names a pod group: Kind is "PodGroup" or "CompositePodGroup",
// Name is "namespace/name".
type GroupRef struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// VictimGroup is a pod group evicted whole, with its priority as
// preemption sees it, its members in upstream's order and the nodes it
// spans, sorted.
type VictimGroup struct {
	Kind     string        `json:"kind"`
	Name     string        `json:"name"`
	Priority int32         `json:"priority"`
	Members  []GroupMember `json:"members"`
	Nodes    []string      `json:"nodes"`
}

// GroupMember is a pod of a group evicted whole, and its node.
type GroupMember struct {
	Pod  string `json:"pod"`
	Node string `json:"node"`
}

// Candidate is a node where preemption would make the pod fit, with its
// victims ("namespace/name" and "Kind namespace/name" for groups) and its
// standing. Proven reports, under a policy other than PolicyUpstream, that
// no better victim set exists on the node.
type Candidate struct {
	Node             string   `json:"node"`
	Victims          []string `json:"victims"`
	VictimGroups     []string `json:"victimGroups,omitempty"`
	NumPDBViolations int      `json:"numPDBViolations"`
	Score            Score    `json:"score"`
	Proven           bool     `json:"proven,omitempty"`
}

// Score is a candidate's values for upstream's ordered node-choice
// criteria, compared in field order: lower is better, except for
// EarliestStart (the earliest start among the highest-priority victims).
type Score struct {
	NumPDBViolations int         `json:"numPDBViolations"`
	HighestPriority  int32       `json:"highestPriority"`
	SumPriorities    int64       `json:"sumPriorities"`
	NumVictims       int         `json:"numVictims"`
	EarliestStart    metav1.Time `json:"earliestStart"`
}

// NodeStatus is why a node was rejected: Code is "Unschedulable"
// (preemption might help) or "UnschedulableAndUnresolvable". Preemption is
// the dry run's outcome on the node, when it was dry-run in vain.
type NodeStatus struct {
	Code       string      `json:"code"`
	Plugin     string      `json:"plugin,omitempty"`
	Reasons    []string    `json:"reasons"`
	Preemption *NodeStatus `json:"preemption,omitempty"`
}

// DryRun is the dry run's reach: the nodes preemption could help on, the
// random (seeded) offset it started at, its candidate budget and the nodes
// it evaluated before it had enough.
type DryRun struct {
	PotentialNodes   int `json:"potentialNodes"`
	Offset           int `json:"offset"`
	WantedCandidates int `json:"wantedCandidates"`
	VisitedNodes     int `json:"visitedNodes"`
}

// Baseline is kube-scheduler's own preemption choice beside another
// policy's: its node, victims, budget violations and score, and under
// PolicyReschedulable how many of its victims could run nowhere else.
type Baseline struct {
	NominatedNode      string   `json:"nominatedNode,omitempty"`
	Victims            []string `json:"victims"`
	NumPDBViolations   int      `json:"numPDBViolations"`
	Score              *Score   `json:"score,omitempty"`
	UnplaceableVictims *int     `json:"unplaceableVictims,omitempty"`
}

// newDecision converts the driver's decision, field by field; every slice
// keeps its nil-ness, so that both encode alike (TestDecisionJSON).
func newDecision(d *whatif.Decision) *Decision {
	out := &Decision{
		Pod:                d.Pod,
		Priority:           d.Priority,
		Fits:               d.Fits,
		FeasibleNodes:      slices.Clone(d.FeasibleNodes),
		Eligible:           d.Eligible,
		IneligibleReason:   d.IneligibleReason,
		NominatedNode:      d.NominatedNode,
		Victims:            convert(d.Victims, newVictim),
		VictimGroups:       convert(d.VictimGroups, newVictimGroup),
		DisruptedWorkloads: d.DisruptedWorkloads,
		NumPDBViolations:   d.NumPDBViolations,
		DecidedBy:          d.DecidedBy,
		TiedNodes:          slices.Clone(d.TiedNodes),
		Candidates:         convert(d.Candidates, newCandidate),
		NodeStatuses:       make(map[string]NodeStatus, d.NodeStatuses.Len()),
		Summary:            d.Summary,
		Message:            d.Message,
		Warnings:           slices.Clone(d.Warnings),
		Policy:             d.Policy,
	}
	if p := d.Placement; p != nil {
		out.Placement = &Placement{Node: p.Node, Score: p.Score, RunnerUp: p.RunnerUp, RunnerUpScore: p.RunnerUpScore,
			ScoredNodes: p.ScoredNodes, Error: p.Error}
	}
	for name, s := range d.NodeStatuses.All() {
		ns := NodeStatus{Code: s.Code, Plugin: s.Plugin, Reasons: slices.Clone(s.Reasons)}
		if p := s.Preemption; p != nil {
			ns.Preemption = &NodeStatus{Code: p.Code, Plugin: p.Plugin, Reasons: slices.Clone(p.Reasons)}
		}
		out.NodeStatuses[name] = ns
	}
	if r := d.DryRun; r != nil {
		out.DryRun = &DryRun{PotentialNodes: r.PotentialNodes, Offset: r.Offset, WantedCandidates: r.WantedCandidates, VisitedNodes: r.VisitedNodes}
	}
	if u := d.Upstream; u != nil {
		out.Upstream = &Baseline{NominatedNode: u.NominatedNode, Victims: slices.Clone(u.Victims), NumPDBViolations: u.NumPDBViolations}
		if u.Score != nil {
			s := newScore(*u.Score)
			out.Upstream.Score = &s
		}
		if u.UnplaceableVictims != nil {
			n := *u.UnplaceableVictims
			out.Upstream.UnplaceableVictims = &n
		}
	}
	if d.UnplaceableVictims != nil {
		n := *d.UnplaceableVictims
		out.UnplaceableVictims = &n
	}
	if s := d.Search; s != nil {
		out.Search = &Search{Searched: slices.Clone(s.Searched), BeyondUpstream: slices.Clone(s.BeyondUpstream), CutOff: slices.Clone(s.CutOff),
			NotSearched: s.NotSearched, NodeLimit: s.NodeLimit, StepLimit: s.StepLimit, BeyondStepLimit: s.BeyondStepLimit, PlacementLimit: s.PlacementLimit}
	}
	return out
}

// convert maps in with f; nil stays nil and empty stays empty.
func convert[T, U any](in []T, f func(T) U) []U {
	if in == nil {
		return nil
	}
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

func newVictim(v whatif.Victim) Victim {
	out := Victim{Pod: v.Pod, Node: v.Node, Priority: v.Priority, PDBs: slices.Clone(v.PDBs),
		ReschedulableTo: v.ReschedulableTo, PendingReason: v.PendingReason}
	if v.StartTime != nil {
		t := *v.StartTime
		out.StartTime = &t
	}
	if v.Group != nil {
		out.Group = &GroupRef{Kind: v.Group.Kind, Name: v.Group.Name}
	}
	out.Holds = convert(v.Holds, func(h whatif.Hold) Hold {
		return Hold{Kind: h.Kind, Plugin: h.Plugin, Claim: h.Claim, Devices: slices.Clone(h.Devices), Driver: h.Driver, Volume: h.Volume, Reason: h.Reason}
	})
	return out
}

func newVictimGroup(g whatif.VictimGroup) VictimGroup {
	return VictimGroup{Kind: g.Kind, Name: g.Name, Priority: g.Priority, Nodes: slices.Clone(g.Nodes),
		Members: convert(g.Members, func(m whatif.GroupMember) GroupMember { return GroupMember{Pod: m.Pod, Node: m.Node} })}
}

func newCandidate(c whatif.Candidate) Candidate {
	return Candidate{Node: c.Node, Victims: slices.Clone(c.Victims), VictimGroups: slices.Clone(c.VictimGroups),
		NumPDBViolations: c.NumPDBViolations, Score: newScore(c.Score), Proven: c.Proven}
}

func newScore(s whatif.Score) Score {
	return Score{NumPDBViolations: s.NumPDBViolations, HighestPriority: s.HighestPriority, SumPriorities: s.SumPriorities,
		NumVictims: s.NumVictims, EarliestStart: s.EarliestStart}
}
