package whatif

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	// UnplaceableVictims, under the reschedulable policy, counts the
	// victims that would stay pending: placed one after another, most
	// important first, each taking its room, they fit nowhere else.
	UnplaceableVictims *int `json:"unplaceableVictims,omitempty"`
	// Search is, under a victim policy other than upstream's, how far its
	// search for each node's best victim set reached.
	Search *PolicySearch `json:"search,omitempty"`
}

// PolicySearch is the reach of a victim policy's search. The search is
// bounded by counts, not time, so that where it stops does not depend on
// the machine: a node's candidate is proven best over every subset of its
// lower-priority pods unless the node is in CutOff.
type PolicySearch struct {
	// Searched are the potential nodes searched, sorted: every one up to
	// NodeLimit of them, else those upstream's dry run visited.
	Searched []string `json:"searched"`
	// BeyondUpstream are the searched nodes, sorted, where upstream's
	// dry run finds no room — it removes every lower-priority pod first,
	// which breaks what the pod needs there (its required pod affinity,
	// or a pod group spanning nodes) — and the subsets of those pods were
	// searched instead: upstream never tries a candidate there.
	BeyondUpstream []string `json:"beyondUpstream,omitempty"`
	// CutOff are the searched nodes, sorted, where a work bound stopped
	// the search before it proved its answer: a candidate there is not
	// proven, and a node without one may have a set the search did not
	// reach.
	CutOff []string `json:"cutOff,omitempty"`
	// NotSearched counts the potential nodes not searched (there were
	// more than NodeLimit).
	NotSearched int `json:"notSearched,omitempty"`
	// NodeLimit, StepLimit and BeyondStepLimit are the bounds: the
	// potential nodes up to which all are searched, the fit checks of one
	// node's search, and the fit checks of all the searches on nodes
	// beyond upstream's, which run in the dry run's order. Under the
	// reschedulable policy PlacementLimit bounds the node filterings that
	// place victims (beyond those of upstream's choice and its own).
	NodeLimit       int `json:"nodeLimit"`
	StepLimit       int `json:"stepLimit"`
	BeyondStepLimit int `json:"beyondStepLimit"`
	PlacementLimit  int `json:"placementLimit,omitempty"`
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
	// victims that could run nowhere else right after the eviction,
	// placed one after another as Decision.UnplaceableVictims counts.
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
	// no better victim set exists on the node among every subset of its
	// lower-priority pods (false: the search reached a work bound and
	// kept the best set it found, or, under reschedulable, chose among a
	// few best sets by their victims' placements).
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
