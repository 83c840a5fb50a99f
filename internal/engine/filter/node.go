package filter

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// filterNodeName is the NodeName plugin: a pod that names a node only fits there.
func filterNodeName(pod *v1.Pod, node *snapshot.Node) Status {
	if pod.Spec.NodeName != "" && pod.Spec.NodeName != node.Name {
		return statusNodeName
	}
	return Status{}
}

var unschedulableTaint = v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}

// logger is what the toleration helpers log to (they only log at high verbosity).
var logger = klog.Background()

// filterNodeUnschedulable is the NodeUnschedulable plugin: a cordoned node
// only takes pods that tolerate node.kubernetes.io/unschedulable:NoSchedule.
func filterNodeUnschedulable(pod *v1.Pod, node *snapshot.Node) Status {
	if !node.Unschedulable {
		return Status{}
	}
	if corev1helpers.TolerationsTolerateTaint(logger, pod.Spec.Tolerations, &unschedulableTaint, false) {
		return Status{}
	}
	return statusUnschedulable
}

// filterTaintToleration is the TaintToleration plugin's Filter.
func filterTaintToleration(pod *v1.Pod, node *snapshot.Node) Status {
	if len(node.Taints) == 0 {
		return Status{}
	}
	if _, untolerated := corev1helpers.FindMatchingUntoleratedTaint(logger, node.Taints, pod.Spec.Tolerations, DoNotScheduleTaint, false); untolerated {
		return statusTaint
	}
	return Status{}
}

// nodeAffinityPreFilter is NodeAffinity's PreFilter. active reports whether
// the plugin filters at all (the pod has a nodeSelector or required node
// affinity). names is the set of node names that metadata.name requirements
// allow, or nil when they do not restrict nodes.
func nodeAffinityPreFilter(pod *v1.Pod) (names sets.Set[string], status Status, active bool) {
	a := pod.Spec.Affinity
	noNodeAffinity := a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil
	if noNodeAffinity && pod.Spec.NodeSelector == nil {
		return nil, Status{}, false
	}
	if noNodeAffinity || len(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) == 0 {
		return nil, Status{}, true
	}
	var nodeNames sets.Set[string]
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		var termNames sets.Set[string]
		for _, r := range t.MatchFields {
			if r.Key == metav1.ObjectNameField && r.Operator == v1.NodeSelectorOpIn {
				s := sets.New(r.Values...)
				if termNames == nil {
					termNames = s
				} else {
					termNames = termNames.Intersection(s)
				}
			}
		}
		if termNames == nil {
			// This term allows any node name.
			return nil, Status{}, true
		}
		nodeNames = nodeNames.Union(termNames)
	}
	if nodeNames != nil && nodeNames.Len() == 0 {
		return nil, reject(UnschedulableAndUnresolvable, NodeAffinity, ReasonNodeAffinityConflict), true
	}
	if nodeNames.Len() > 0 {
		return nodeNames, Status{}, true
	}
	return nil, Status{}, true
}

// Statuses whose reasons never change are shared, so that rejecting a node
// allocates nothing. Callers must not modify Reasons.
var (
	statusNodePorts       = reject(Unschedulable, NodePorts, ReasonNodePorts)
	statusNodeName        = reject(UnschedulableAndUnresolvable, NodeName, ReasonNodeName)
	statusUnschedulable   = reject(UnschedulableAndUnresolvable, NodeUnschedulable, ReasonNodeUnschedulable)
	statusTaint           = reject(UnschedulableAndUnresolvable, TaintToleration, ReasonUntoleratedTaint)
	statusNodeAffinity    = reject(UnschedulableAndUnresolvable, NodeAffinity, ReasonNodeAffinity)
	statusSpreadLabel     = reject(UnschedulableAndUnresolvable, PodTopologySpread, ReasonSpreadMissingLabel)
	statusSpread          = reject(Unschedulable, PodTopologySpread, ReasonSpreadConstraints)
	statusAffinity        = reject(UnschedulableAndUnresolvable, InterPodAffinity, ReasonPodAffinity)
	statusAntiAffinity    = reject(Unschedulable, InterPodAffinity, ReasonPodAntiAffinity)
	statusExistingAnti    = reject(Unschedulable, InterPodAffinity, ReasonExistingPodsAntiAffinity)
	statusTooManyPods     = reject(Unschedulable, NodeResourcesFit, ReasonTooManyPods)
	statusInsufficientCPU = reject(Unschedulable, NodeResourcesFit, "Insufficient cpu")
	statusInsufficientMem = reject(Unschedulable, NodeResourcesFit, "Insufficient memory")
	statusUnresolvableCPU = reject(UnschedulableAndUnresolvable, NodeResourcesFit, "Insufficient cpu")
	statusUnresolvableMem = reject(UnschedulableAndUnresolvable, NodeResourcesFit, "Insufficient memory")
	statusCPUAndMem       = reject(Unschedulable, NodeResourcesFit, "Insufficient cpu", "Insufficient memory")
)

// statusNodeAffinityEnforced rejects a node that a profile's added node
// affinity does not select.
var statusNodeAffinityEnforced = reject(UnschedulableAndUnresolvable, NodeAffinity, ReasonNodeAffinityEnforced)

// filterResources is NodeResourcesFit's Filter for a request on a node view.
func filterResources(req *snapshot.Resources, nv *NodeView) Status {
	if len(req.Scalars) == 0 {
		alloc, used := nv.Node.Allocatable.Usage(nv.Node.Allocatable.AllowedPods), nv.Requested.Usage(int64(nv.NumPods))
		if s, ok := basicResourcesStatus(req, &alloc, &used); ok {
			return s
		}
	} else if fitsScalars(req, nv) {
		return Status{}
	}
	return resourcesStatus(req, nv)
}

// resourcesStatus is NodeResourcesFit's Filter for a request on a node
// view, built from InsufficientResources without the shortcuts.
func resourcesStatus(req *snapshot.Resources, nv *NodeView) Status {
	insufficient := InsufficientResources(req, nv.Node.Allocatable, nv.Requested, nv.NumPods)
	if len(insufficient) == 0 {
		return Status{}
	}
	if s, ok := sharedResourceStatus(insufficient); ok {
		return s
	}
	code := Unschedulable
	reasons := make([]string, len(insufficient))
	for i, r := range insufficient {
		reasons[i] = r.Reason
		if r.Unresolvable {
			code = UnschedulableAndUnresolvable
		}
	}
	return Status{Code: code, Plugin: NodeResourcesFit, Reasons: reasons}
}

// basicResourcesStatus is NodeResourcesFit's verdict for a request without
// scalar resources on a node with allocatable alloc running used: success,
// or the status of the common failures (see basicResourcesVerdict), which
// need no allocation. It reports false for the others.
func basicResourcesStatus(req *snapshot.Resources, alloc, used *snapshot.Usage) (Status, bool) {
	switch v := basicResourcesVerdict(req, alloc, used); v {
	case verdictOther:
		return Status{}, false
	case verdictFits:
		return Status{}, true
	default:
		return *verdictStatuses[v], true
	}
}

// resourceVerdict is NodeResourcesFit's verdict for a request without
// scalar resources, as a small number instead of a Status: a filter pass
// over thousands of nodes then copies a Status only where a node is
// rejected, from the shared one of its verdict.
type resourceVerdict uint8

const (
	// verdictOther is none of the verdicts below: the status must be built.
	verdictOther resourceVerdict = iota
	verdictFits
	verdictCPU
	verdictMemory
	verdictUnresolvableCPU
	verdictUnresolvableMemory
	verdictCPUAndMemory
)

// verdictStatuses are the shared statuses of the verdicts that reject.
var verdictStatuses = [...]*Status{
	verdictCPU:                &statusInsufficientCPU,
	verdictMemory:             &statusInsufficientMem,
	verdictUnresolvableCPU:    &statusUnresolvableCPU,
	verdictUnresolvableMemory: &statusUnresolvableMem,
	verdictCPUAndMemory:       &statusCPUAndMem,
}

// basicResourcesVerdict is NodeResourcesFit's verdict for a request
// without scalar resources on a node with allocatable alloc running used:
// it fits, or only CPU or only memory is short, or both are but neither
// beyond the node's allocatable (InsufficientResources then lists exactly
// those, and sharedResourceStatus has their status), or verdictOther.
func basicResourcesVerdict(req *snapshot.Resources, alloc, used *snapshot.Usage) resourceVerdict {
	s := shortageOf(req, alloc, used)
	if s&(shortCPU|shortMemory) != 0 {
		s |= beyondOf(req, alloc)
	}
	return shortageVerdicts[s]
}

// shortage is a set of the ways a node can be short for a request.
type shortage uint8

const (
	shortPods shortage = 1 << iota
	shortCPU
	shortMemory
	shortEphemeral
	// beyondCPU and beyondMemory: the request exceeds the allocatable.
	beyondCPU
	beyondMemory
	numShortages = 1 << iota
)

// shortageOf is what a node with allocatable alloc running used lacks for
// req (scalar resources aside), as Usage.Fits checks it, beyondOf aside;
// small enough to inline into a loop over nodes.
func shortageOf(req *snapshot.Resources, alloc, used *snapshot.Usage) shortage {
	var s shortage
	if used.Pods+1 > alloc.Pods {
		s |= shortPods
	}
	if req.MilliCPU > 0 && req.MilliCPU > alloc.MilliCPU-used.MilliCPU {
		s |= shortCPU
	}
	if req.Memory > 0 && req.Memory > alloc.Memory-used.Memory {
		s |= shortMemory
	}
	if req.EphemeralStorage > 0 && req.EphemeralStorage > alloc.EphemeralStorage-used.EphemeralStorage {
		s |= shortEphemeral
	}
	return s
}

// beyondOf is where req exceeds the allocatable alloc, CPU and memory.
func beyondOf(req *snapshot.Resources, alloc *snapshot.Usage) shortage {
	var s shortage
	if req.MilliCPU > alloc.MilliCPU {
		s |= beyondCPU
	}
	if req.Memory > alloc.Memory {
		s |= beyondMemory
	}
	return s
}

// shortageVerdicts maps every shortage to its verdict.
var shortageVerdicts = func() (v [numShortages]resourceVerdict) {
	for s := range shortage(numShortages) {
		v[s] = verdictOfShortage(s)
	}
	return v
}()

// verdictOfShortage is the verdict for the shortage s (see
// basicResourcesVerdict).
func verdictOfShortage(s shortage) resourceVerdict {
	switch short := s &^ (beyondCPU | beyondMemory); {
	case short == 0:
		return verdictFits
	case short == shortCPU && s&beyondCPU != 0:
		return verdictUnresolvableCPU
	case short == shortCPU:
		return verdictCPU
	case short == shortMemory && s&beyondMemory != 0:
		return verdictUnresolvableMemory
	case short == shortMemory:
		return verdictMemory
	case short == shortCPU|shortMemory && s&(beyondCPU|beyondMemory) == 0:
		return verdictCPUAndMemory
	}
	return verdictOther
}

// fitsScalars reports whether the request fits the node view, scalar
// resources included, without allocating.
func fitsScalars(req *snapshot.Resources, nv *NodeView) bool {
	alloc, used := nv.Node.Allocatable.Usage(nv.Node.Allocatable.AllowedPods), nv.Requested.Usage(int64(nv.NumPods))
	if !used.Fits(req, &alloc) {
		return false
	}
	for _, sc := range req.Scalars {
		if sc.Value > 0 && sc.Value > nv.Node.Allocatable.Scalar(sc.Name)-nv.Requested.Scalar(sc.Name) {
			return false
		}
	}
	return true
}

func insufficientReason(name v1.ResourceName) string {
	switch name {
	case v1.ResourceCPU:
		return "Insufficient cpu"
	case v1.ResourceMemory:
		return "Insufficient memory"
	case v1.ResourceEphemeralStorage:
		return "Insufficient ephemeral-storage"
	}
	return fmt.Sprintf("Insufficient %v", name)
}

// sharedResourceStatus returns a shared status for the common failures.
func sharedResourceStatus(in []Insufficient) (Status, bool) {
	switch {
	case len(in) == 1 && in[0].Resource == v1.ResourcePods:
		return statusTooManyPods, true
	case len(in) == 1 && in[0].Resource == v1.ResourceCPU:
		if in[0].Unresolvable {
			return statusUnresolvableCPU, true
		}
		return statusInsufficientCPU, true
	case len(in) == 1 && in[0].Resource == v1.ResourceMemory:
		if in[0].Unresolvable {
			return statusUnresolvableMem, true
		}
		return statusInsufficientMem, true
	case len(in) == 2 && in[0].Resource == v1.ResourceCPU && in[1].Resource == v1.ResourceMemory && !in[0].Unresolvable && !in[1].Unresolvable:
		return statusCPUAndMem, true
	}
	return Status{}, false
}

// Insufficient is one resource a node lacks for a pod.
type Insufficient struct {
	// Resource is the resource name ("pods" for the pod count).
	Resource v1.ResourceName
	// Reason is upstream's text, e.g. "Insufficient cpu".
	Reason string
	// Requested, Used and Capacity are the pod's request, the node's use
	// and the node's allocatable, in the scheduler's units.
	Requested, Used, Capacity int64
	// Unresolvable is set when the request exceeds the node's allocatable,
	// so no preemption can make room.
	Unresolvable bool
}

// InsufficientResources lists what a node with the given allocatable, use
// and pod count lacks for req, in upstream's order: pods, cpu, memory,
// ephemeral-storage, then scalar resources by name.
func InsufficientResources(req *snapshot.Resources, alloc, used snapshot.Resources, numPods int) []Insufficient {
	var out []Insufficient
	if int64(numPods)+1 > alloc.AllowedPods {
		out = append(out, Insufficient{Resource: v1.ResourcePods, Reason: ReasonTooManyPods, Requested: 1, Used: int64(numPods), Capacity: alloc.AllowedPods})
	}
	if req.IsZero() {
		return out
	}
	check := func(name v1.ResourceName, r, u, a int64) {
		if r > 0 && r > a-u {
			out = append(out, Insufficient{Resource: name, Reason: insufficientReason(name), Requested: r, Used: u, Capacity: a, Unresolvable: r > a})
		}
	}
	check(v1.ResourceCPU, req.MilliCPU, used.MilliCPU, alloc.MilliCPU)
	check(v1.ResourceMemory, req.Memory, used.Memory, alloc.Memory)
	check(v1.ResourceEphemeralStorage, req.EphemeralStorage, used.EphemeralStorage, alloc.EphemeralStorage)
	for _, s := range req.Scalars {
		check(s.Name, s.Value, used.Scalar(s.Name), alloc.Scalar(s.Name))
	}
	return out
}
