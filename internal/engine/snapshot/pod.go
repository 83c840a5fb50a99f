package snapshot

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-helpers/resource"
)

// Pod is a pod of the snapshot together with everything the engine derives
// from it once: its resolved priority, its resource requests as the scheduler
// accounts them, its host ports and its parsed inter-pod affinity terms.
// A Pod is immutable once the snapshot is built and is shared by every
// evaluation; nothing in the engine copies it.
type Pod struct {
	// obj is the pod as loaded, or for a pod loaded in parts its shape
	// (parts.Shape): read through obj only what pods of one shape share.
	obj *v1.Pod
	// parts is the pod loaded in parts, or nil.
	parts *PodParts
	// Key is "namespace/name".
	Key string
	// Requests are the pod's requests as an assigned pod occupies a node
	// (container, init-container, sidecar, pod-level and overhead, with
	// in-place resize status taken into account).
	Requests Resources
	// NonZeroMilliCPU and NonZeroMemory are the requests scoring uses: like
	// Requests, but a container without a CPU or memory request counts
	// 100m CPU and 200MB memory.
	NonZeroMilliCPU, NonZeroMemory int64
	// startNanos is status.startTime in Unix nanoseconds when started.
	startNanos int64
	// terms holds what few pods have (host ports, required inter-pod
	// terms); nil for most pods, which keeps Pod small.
	terms *podTerms
	// Seq is the pod's position in the order the snapshot was loaded: it
	// identifies the pod among the snapshot's pods and is kept when the
	// pod is updated. It is -1 for a pod made with NewPod.
	Seq int
	// Priority is the pod's priority resolved as the Priority admission
	// plugin would: spec.priority, else its PriorityClass, else the
	// globalDefault class, else 0.
	Priority int32
	// labelSetID is the index of the pod's interned namespace and labels
	// (labelsets.go); -1 for a pod made with NewPod or removed.
	labelSetID int32
	// started reports whether status.startTime is set.
	started bool
	// hasAffinity caches HasAffinity (scoring asks it of every pod).
	hasAffinity bool
	// preemptNever is the resolved preemptionPolicy Never.
	preemptNever bool
	// terminating caches Terminating (filters ask it of every pod).
	terminating bool
}

// podTerms are the parts of a pod that only some pods have.
type podTerms struct {
	hostPorts            []v1.ContainerPort
	requiredAffinity     []AffinityTerm
	requiredAntiAffinity []AffinityTerm
}

// HostPorts returns the ports the pod binds on its node (containers and
// restartable init containers, hostPort > 0).
func (p *Pod) HostPorts() []v1.ContainerPort {
	if p.terms == nil {
		return nil
	}
	return p.terms.hostPorts
}

// RequiredAffinity returns the pod's parsed required inter-pod affinity terms.
func (p *Pod) RequiredAffinity() []AffinityTerm {
	if p.terms == nil {
		return nil
	}
	return p.terms.requiredAffinity
}

// RequiredAntiAffinity returns the pod's parsed required inter-pod
// anti-affinity terms.
func (p *Pod) RequiredAntiAffinity() []AffinityTerm {
	if p.terms == nil {
		return nil
	}
	return p.terms.requiredAntiAffinity
}

// PreemptionPolicy returns the pod's preemption policy, resolved like
// Priority.
func (p *Pod) PreemptionPolicy() v1.PreemptionPolicy {
	if p.preemptNever {
		return v1.PreemptNever
	}
	return v1.PreemptLowerPriority
}

// StartNanos returns status.startTime in Unix nanoseconds, and whether the
// pod has started at all.
func (p *Pod) StartNanos() (int64, bool) { return p.startNanos, p.started }

// Obj returns the pod as loaded, which must not be written. For a pod
// loaded in parts (PodParts) it is made on each call: the engine reads
// such pods through the methods below, and Obj only where it writes a
// pod out.
func (p *Pod) Obj() *v1.Pod {
	if p.parts != nil {
		return p.parts.Pod()
	}
	return p.obj
}

// Namespace returns the pod's namespace.
func (p *Pod) Namespace() string { return p.obj.Namespace }

// Name returns the pod's name.
func (p *Pod) Name() string {
	if p.parts != nil {
		return p.parts.Name
	}
	return p.obj.Name
}

// UID returns the pod's UID.
func (p *Pod) UID() types.UID {
	if p.parts != nil {
		return p.parts.UID
	}
	return p.obj.UID
}

// Labels returns the pod's labels.
func (p *Pod) Labels() labels.Set { return p.obj.Labels }

// Affinity returns spec.affinity.
func (p *Pod) Affinity() *v1.Affinity { return p.obj.Spec.Affinity }

// NodeName returns the node the pod is bound to, or "".
func (p *Pod) NodeName() string {
	if p.parts != nil {
		return p.parts.NodeName
	}
	return p.obj.Spec.NodeName
}

// Volumes returns spec.volumes.
func (p *Pod) Volumes() []v1.Volume {
	if p.parts != nil {
		return p.parts.Volumes
	}
	return p.obj.Spec.Volumes
}

// Phase returns status.phase.
func (p *Pod) Phase() v1.PodPhase {
	if p.parts != nil {
		return p.parts.Status.Phase
	}
	return p.obj.Status.Phase
}

// NominatedNodeName returns status.nominatedNodeName.
func (p *Pod) NominatedNodeName() string {
	if p.parts != nil {
		return p.parts.Status.NominatedNodeName
	}
	return p.obj.Status.NominatedNodeName
}

// conditions returns status.conditions.
func (p *Pod) conditions() []v1.PodCondition {
	if p.parts != nil {
		return p.parts.Status.Conditions
	}
	return p.obj.Status.Conditions
}

// StartTime returns status.startTime, or nil when the pod has not started.
func (p *Pod) StartTime() *metav1.Time {
	if p.parts != nil {
		return p.parts.Status.StartTime
	}
	return p.obj.Status.StartTime
}

// setStart records status.startTime, st (nil when not started).
func (p *Pod) setStart(st *metav1.Time) {
	p.startNanos, p.started = 0, false
	if st != nil {
		p.startNanos, p.started = st.UnixNano(), true
	}
}

// SchedulingGates returns spec.schedulingGates.
func (p *Pod) SchedulingGates() []v1.PodSchedulingGate { return p.obj.Spec.SchedulingGates }

// Terminating reports whether the pod has a deletion timestamp.
func (p *Pod) Terminating() bool { return p.terminating }

// TerminatingByPreemption reports whether the pod is terminating because the
// scheduler preempted it: a deletion timestamp and a DisruptionTarget
// condition with reason PreemptionByScheduler. As upstream, only the first
// DisruptionTarget condition is looked at.
func (p *Pod) TerminatingByPreemption() bool {
	if !p.terminating {
		return false
	}
	for _, c := range p.conditions() {
		if c.Type == v1.DisruptionTarget {
			return c.Status == v1.ConditionTrue && c.Reason == v1.PodReasonPreemptionByScheduler
		}
	}
	return false
}

// HasAffinity reports whether the pod has any pod affinity or anti-affinity
// (required or preferred).
func (p *Pod) HasAffinity() bool { return p.hasAffinity }

// Finished reports whether the pod has terminated for good and so occupies
// nothing (phase Succeeded or Failed).
func (p *Pod) Finished() bool {
	phase := p.Phase()
	return phase == v1.PodSucceeded || phase == v1.PodFailed
}

// AffinityTerm is a parsed required pod (anti-)affinity term.
type AffinityTerm struct {
	// Namespaces the term applies to. When the term lists none and has no
	// namespace selector it is the owning pod's namespace.
	Namespaces sets.Set[string]
	// Selector selects pods by label.
	Selector labels.Selector
	// NamespaceSelector selects namespaces by label; labels.Nothing() when unset.
	NamespaceSelector labels.Selector
	// TopologyKey is the node label that defines the topology domain.
	TopologyKey string
	// id is ID()+1: 0 when the term is not interned (terms.go).
	id int32
}

// Matches reports whether pod is selected by the term; nsLabels are the
// labels of pod's namespace (nil when unknown).
func (t *AffinityTerm) Matches(pod *Pod, nsLabels labels.Set) bool {
	if t.Namespaces.Has(pod.obj.Namespace) || t.NamespaceSelector.Matches(nsLabels) {
		return t.Selector.Matches(labels.Set(pod.obj.Labels))
	}
	return false
}

// ParseAffinityTerms parses required pod affinity terms of a pod of
// namespace. The field argument names the terms' location for error
// messages.
func ParseAffinityTerms(namespace string, terms []v1.PodAffinityTerm, field string) ([]AffinityTerm, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	out := make([]AffinityTerm, 0, len(terms))
	for i := range terms {
		t := &terms[i]
		sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("%s[%d].labelSelector: %w", field, i, err)
		}
		nsSel, err := metav1.LabelSelectorAsSelector(t.NamespaceSelector)
		if err != nil {
			return nil, fmt.Errorf("%s[%d].namespaceSelector: %w", field, i, err)
		}
		ns := sets.New[string]()
		if len(t.Namespaces) == 0 && t.NamespaceSelector == nil {
			ns.Insert(namespace)
		} else {
			ns.Insert(t.Namespaces...)
		}
		out = append(out, AffinityTerm{Namespaces: ns, Selector: sel, NamespaceSelector: nsSel, TopologyKey: t.TopologyKey})
	}
	return out, nil
}

// RequiredAffinityTerms returns the v1 required pod affinity terms of pod.
func RequiredAffinityTerms(pod *v1.Pod) []v1.PodAffinityTerm {
	if a := pod.Spec.Affinity; a != nil && a.PodAffinity != nil {
		return a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

// RequiredAntiAffinityTerms returns the v1 required pod anti-affinity terms of pod.
func RequiredAntiAffinityTerms(pod *v1.Pod) []v1.PodAffinityTerm {
	if a := pod.Spec.Affinity; a != nil && a.PodAntiAffinity != nil {
		return a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

// HostPorts returns the host ports pod binds: those of its containers and of
// its restartable (sidecar) init containers, with hostPort > 0.
func HostPorts(pod *v1.Pod) []v1.ContainerPort {
	var ports []v1.ContainerPort
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy == nil || *c.RestartPolicy != v1.ContainerRestartPolicyAlways {
			continue
		}
		for _, p := range c.Ports {
			if p.HostPort > 0 {
				ports = append(ports, p)
			}
		}
	}
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort > 0 {
				ports = append(ports, p)
			}
		}
	}
	return ports
}

// AssignedPodRequests returns what pod occupies on its node, computed as the
// scheduler's cache does for assigned pods (status-aware for in-place resize,
// pod-level resources honoured, overhead included).
func AssignedPodRequests(pod *v1.Pod) Resources {
	return NewResources(resource.PodRequests(pod, resource.PodResourcesOptions{
		UseStatusResources: true,
		InPlacePodLevelResourcesVerticalScalingEnabled: true,
	}))
}

// Defaults the scheduler assumes for containers without CPU or memory requests.
const (
	DefaultMilliCPURequest int64 = 100
	DefaultMemoryRequest   int64 = 200 * 1024 * 1024
)

// NonZeroRequests returns the CPU (millicores) and memory (bytes) requests
// of pod as the scoring plugins count them: a container without a request
// counts the defaults (unless pod-level requests set the resource).
func NonZeroRequests(pod *v1.Pod) (milliCPU, memory int64) {
	opts := resource.PodResourcesOptions{UseStatusResources: true, InPlacePodLevelResourcesVerticalScalingEnabled: true}
	reqs := resource.PodRequests(pod, opts)
	nonMissing := v1.ResourceList{}
	podLevel := resource.IsPodLevelRequestsSet(pod)
	if _, ok := reqs[v1.ResourceCPU]; !podLevel || !ok {
		nonMissing[v1.ResourceCPU] = *apiresource.NewMilliQuantity(DefaultMilliCPURequest, apiresource.DecimalSI)
	}
	if _, ok := reqs[v1.ResourceMemory]; !podLevel || !ok {
		nonMissing[v1.ResourceMemory] = *apiresource.NewQuantity(DefaultMemoryRequest, apiresource.DecimalSI)
	}
	opts.NonMissingContainerRequests = nonMissing
	reqs = resource.PodRequests(pod, opts)
	cpu, mem := reqs[v1.ResourceCPU], reqs[v1.ResourceMemory]
	return cpu.MilliValue(), mem.Value()
}

// IncomingPodRequests returns what pod asks for when it is being scheduled,
// computed as NodeResourcesFit's PreFilter does (spec only, pod-level
// resources honoured, overhead included).
func IncomingPodRequests(pod *v1.Pod) Resources {
	if req, _, _, ok := simpleRequests(pod); ok {
		return req
	}
	return NewResources(resource.PodRequests(pod, resource.PodResourcesOptions{}))
}

// newPod derives a Pod from obj with its resolved priority and policy.
func newPod(obj *v1.Pod, priority int32, policy v1.PreemptionPolicy, seq int) (*Pod, error) {
	if err := validateSchedulingGroup(obj); err != nil {
		return nil, err
	}
	aff, err := ParseAffinityTerms(obj.Namespace, RequiredAffinityTerms(obj), "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution")
	if err != nil {
		return nil, err
	}
	anti, err := ParseAffinityTerms(obj.Namespace, RequiredAntiAffinityTerms(obj), "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution")
	if err != nil {
		return nil, err
	}
	req, nzCPU, nzMem, simple := simpleRequests(obj)
	if !simple {
		req = AssignedPodRequests(obj)
		nzCPU, nzMem = NonZeroRequests(obj)
	}
	p := &Pod{
		obj:             obj,
		Key:             obj.Namespace + "/" + obj.Name,
		Priority:        priority,
		Requests:        req,
		NonZeroMilliCPU: nzCPU,
		NonZeroMemory:   nzMem,
		preemptNever:    policy == v1.PreemptNever,
		hasAffinity:     obj.Spec.Affinity != nil && (obj.Spec.Affinity.PodAffinity != nil || obj.Spec.Affinity.PodAntiAffinity != nil),
		Seq:             seq,
		terminating:     obj.DeletionTimestamp != nil,
		labelSetID:      -1,
	}
	p.setStart(obj.Status.StartTime)
	if ports := HostPorts(obj); len(ports) > 0 || len(aff) > 0 || len(anti) > 0 {
		p.terms = &podTerms{hostPorts: ports, requiredAffinity: aff, requiredAntiAffinity: anti}
	}
	return p, nil
}
