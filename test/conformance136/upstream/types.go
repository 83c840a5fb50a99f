package upstream

import (
	"errors"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
)

// ErrInvalidInput is returned (wrapped) by Run when the cluster objects could
// not exist in a real cluster, e.g. a pod names a PriorityClass that does not
// exist (the Priority admission plugin would have rejected it) or two pods
// share a namespace/name.
var ErrInvalidInput = errors.New("invalid input")

// Input is the cluster state and the pod to schedule.
//
// Run never modifies Input: it works on deep copies.
type Input struct {
	// Nodes are all nodes of the cluster.
	Nodes []*v1.Node
	// Pods are every pod in the cluster: bound (spec.nodeName set) and
	// pending. It may include the preemptor itself (matched by
	// namespace/name; Preemptor wins). Pods in phase Succeeded or Failed are
	// ignored, as the scheduler's informers filter them out. The order
	// matters: it is the order of pods on each node in the snapshot.
	Pods []*v1.Pod
	// PDBs are the PodDisruptionBudgets of the cluster, status included
	// (status.disruptionsAllowed is what preemption reads).
	PDBs []*policyv1.PodDisruptionBudget
	// PriorityClasses are used to resolve pod priorities the way the
	// Priority admission plugin does. The API server's built-in classes
	// system-node-critical and system-cluster-critical are implied.
	PriorityClasses []*schedulingv1.PriorityClass
	// Namespaces are the namespaces whose labels pod affinity
	// namespaceSelectors see; optional.
	Namespaces []*v1.Namespace
	// Preemptor is the pod being scheduled (pending, no nodeName).
	Preemptor *v1.Pod
	// ResourceSlices, DeviceClasses and ResourceClaims are the dynamic
	// resource allocation objects, which the DynamicResources plugin reads
	// through the scheduler's DRA manager. Claims must be as the API server
	// stores them (defaults applied).
	ResourceSlices []*resourceapi.ResourceSlice
	DeviceClasses  []*resourceapi.DeviceClass
	ResourceClaims []*resourceapi.ResourceClaim
	// Services, ReplicationControllers, ReplicaSets and StatefulSets reach
	// PodTopologySpread through its informers: their selectors give its
	// default constraints theirs (helper.DefaultSelector).
	Services               []*v1.Service
	ReplicationControllers []*v1.ReplicationController
	ReplicaSets            []*appsv1.ReplicaSet
	StatefulSets           []*appsv1.StatefulSet
	// Storage are the storage objects the volume plugins read
	// (PersistentVolumes, PersistentVolumeClaims, StorageClasses, CSINodes,
	// CSIDrivers, CSIStorageCapacities, VolumeAttachments), as stored.
	Storage []runtime.Object

	// FeatureGates, if non-nil, is applied to the process-wide
	// utilfeature.DefaultMutableFeatureGate for the duration of Run and
	// restored afterwards. Runs that set it are serialised against all other
	// Runs. Nil (the default) leaves upstream's default gates untouched.
	FeatureGates map[string]bool
	// Logger, if non-nil, receives upstream's logs. Nil discards them.
	Logger *klog.Logger
}

// Status is a framework status (fwk.Status) in comparable form.
type Status struct {
	// Code is fwk.Code.String(): "Success", "Error", "Unschedulable",
	// "UnschedulableAndUnresolvable", "Wait", "Skip", "Pending".
	Code string `json:"code"`
	// Plugin is the plugin that produced the status, if the framework
	// recorded one.
	Plugin string `json:"plugin,omitempty"`
	// Reasons are the status messages, in upstream's order.
	Reasons []string `json:"reasons,omitempty"`
}

// Candidate is one node on which upstream's dry run found a way to make room.
type Candidate struct {
	// Victims are "namespace/name", in the order upstream's
	// SelectVictimsOnNode returned them.
	Victims []string `json:"victims"`
	// NumPDBViolations counts the victims whose eviction violates a PDB.
	NumPDBViolations int64 `json:"numPDBViolations"`
}

// Result is what upstream kube-scheduler decides for the preemptor.
type Result struct {
	// PreFilterStatus is set when PreFilter rejected the pod; every node
	// then has this status in NodeStatuses.
	PreFilterStatus *Status `json:"preFilterStatus,omitempty"`
	// FeasibleNodes are the nodes where RunFilterPluginsWithNominatedPods
	// succeeded, sorted. All nodes are evaluated (no
	// numFeasibleNodesToFind cut-off, no nominated-node fast path).
	FeasibleNodes []string `json:"feasibleNodes"`
	// NodeStatuses is the NodeToStatus map the PostFilter receives, expanded
	// to every non-feasible node: explicit filter statuses plus the
	// absent-node status (a PreFilter rejection, or "node(s) didn't satisfy
	// plugin(s) [...]" for nodes cut by a PreFilterResult).
	NodeStatuses map[string]Status `json:"nodeStatuses"`
	// Fits is true when at least one node is feasible; the preemption
	// fields below are then left empty.
	Fits bool `json:"fits"`
	// Scores are, when the pod fits on several nodes and the profile
	// scores, the feasible nodes' total scores (prioritizeNodes: PreScore
	// and Score, weighted and summed); nil otherwise.
	Scores map[string]int64 `json:"scores,omitempty"`
	// BestNodes are the nodes upstream may bind the pod to, sorted: the
	// feasible nodes of the highest total score, or the only node it
	// examines when it does not score (a single feasible node, or a
	// profile without score plugins: the first feasible node).
	BestNodes []string `json:"bestNodes,omitempty"`
	// ScoreError is the PreScore or Score failure that fails the cycle.
	ScoreError string `json:"scoreError,omitempty"`

	// Eligible is DefaultPreemption's PodEligibleToPreemptOthers verdict.
	Eligible bool `json:"eligible"`
	// IneligibleReason is upstream's message when !Eligible, e.g.
	// "not eligible due to preemptionPolicy=Never.".
	IneligibleReason string `json:"ineligibleReason,omitempty"`
	// PotentialNodes are the nodes whose status code is Unschedulable, i.e.
	// the ones the dry run visits, sorted.
	PotentialNodes []string `json:"potentialNodes"`
	// Candidates holds every node the dry run made a candidate.
	Candidates map[string]Candidate `json:"candidates"`
	// DryRunStatuses holds the status of every potential node that did not
	// become a candidate.
	DryRunStatuses map[string]Status `json:"dryRunStatuses"`
	// TiedBest are all candidates tied for best under upstream's default
	// ordered score functions, sorted. Upstream breaks the final tie by map
	// iteration order, so any of them may be chosen.
	TiedBest []string `json:"tiedBest"`
	// Chosen is what upstream's Evaluator.SelectCandidate returned; it is
	// always in TiedBest.
	Chosen string `json:"chosen"`
	// PostFilterMessage is the message DefaultPreemption's PostFilter would
	// return when it does not nominate a node (not eligible, no candidate,
	// dry-run error), e.g. "preemption: 0/3 nodes are available: ...".
	PostFilterMessage string `json:"postFilterMessage,omitempty"`

	// PreemptionDisabled is set when the pod fits nowhere and the profile
	// does not enable DefaultPreemption: no dry run took place.
	PreemptionDisabled bool `json:"preemptionDisabled,omitempty"`

	// AbortReason is set when upstream's scheduling cycle would end before
	// PostFilter for a reason other than a FitError: there are no nodes
	// ("no nodes available to schedule pods"), or a PreFilter or Filter
	// plugin returned an Error status (the error's message).
	AbortReason string `json:"abortReason,omitempty"`
}
