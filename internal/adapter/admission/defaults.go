// Package admission does to objects read from files what the API server
// does to objects it is sent, before reprieve's engine sees them: the
// defaulting of the v1 APIs (for the fields the scheduler and the simulated
// controllers read) and the validation that makes the API server refuse an
// object. Every boundary where objects enter reprieve — manifests given with
// -f or --snapshot, the objects a simulation creates — calls it once; the
// engine then trusts its inputs.
package admission

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"
)

// milliScale is the scale the API server rounds every quantity of a
// ResourceList up to.
const milliScale = -3

// DefaultPod applies the defaults the API server gives a Pod: those of its
// PodSpec, container requests taken from limits where only limits are set,
// pod-level requests from the containers or the pod-level limits,
// pod-level limits from the containers' when all have one, host
// ports under host networking and a negative grace period raised to 1s.
// Priority and preemption policy are left to priority admission. It is
// idempotent, so pods already defaulted by a real API server are unchanged.
func DefaultPod(p *v1.Pod) {
	DefaultPodSpec(&p.Spec)
	if g := p.Spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](1)
	}
	requestsFromLimits(p.Spec.Containers)
	requestsFromLimits(p.Spec.InitContainers)
	defaultHugePagePodLimits(p)
	defaultPodRequests(p)
	defaultPodLimits(p)
	if p.Spec.HostNetwork {
		hostNetworkPorts(p.Spec.Containers)
		hostNetworkPorts(p.Spec.InitContainers)
	}
	defaultPodPhase(&p.Status)
}

// defaultPodPhase is a pod's one default outside its spec: phase Pending.
func defaultPodPhase(st *v1.PodStatus) {
	if st.Phase == "" {
		st.Phase = v1.PodPending
	}
}

// DefaultPodSpec applies the defaults of a PodSpec, as in a pod template:
// restart and DNS policy, scheduler name, termination grace period, port
// protocols, emptyDir for a volume without a source, and quantities
// rounded up to millis. Requests are not taken
// from limits in a template; that happens when a pod is created from it.
func DefaultPodSpec(s *v1.PodSpec) {
	if s.ServiceAccountName == "" {
		s.ServiceAccountName = s.DeprecatedServiceAccount
	}
	s.DeprecatedServiceAccount = s.ServiceAccountName
	if s.DNSPolicy == "" {
		s.DNSPolicy = v1.DNSClusterFirst
	}
	if s.RestartPolicy == "" {
		s.RestartPolicy = v1.RestartPolicyAlways
	}
	if s.SecurityContext == nil {
		s.SecurityContext = &v1.PodSecurityContext{}
	}
	if s.TerminationGracePeriodSeconds == nil {
		s.TerminationGracePeriodSeconds = ptr.To[int64](v1.DefaultTerminationGracePeriodSeconds)
	}
	if s.SchedulerName == "" {
		s.SchedulerName = v1.DefaultSchedulerName
	}
	if s.EnableServiceLinks == nil {
		s.EnableServiceLinks = ptr.To(v1.DefaultEnableServiceLinks)
	}
	for _, cs := range [][]v1.Container{s.Containers, s.InitContainers} {
		for i := range cs {
			defaultContainer(&cs[i])
		}
	}
	for i := range s.Volumes {
		// A volume without a source is an emptyDir.
		if volumeSources(&s.Volumes[i].VolumeSource) == 0 {
			s.Volumes[i].EmptyDir = &v1.EmptyDirVolumeSource{}
		}
	}
	for i := range s.EphemeralContainers {
		defaultContainer((*v1.Container)(&s.EphemeralContainers[i].EphemeralContainerCommon))
	}
	roundUp(s.Overhead)
	if s.Resources != nil {
		roundUp(s.Resources.Requests)
		roundUp(s.Resources.Limits)
	}
}

func defaultContainer(c *v1.Container) {
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = v1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = v1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = v1.ProtocolTCP
		}
	}
	roundUp(c.Resources.Requests)
	roundUp(c.Resources.Limits)
}

// roundUp rounds every quantity up to millis, as the API server's
// ResourceList defaulting does ("0.0001" CPU becomes 1m).
func roundUp(rl v1.ResourceList) {
	for name, q := range rl {
		if q.RoundUp(milliScale) {
			continue
		}
		rl[name] = q
	}
}

func requestsFromLimits(cs []v1.Container) {
	for i := range cs {
		r := &cs[i].Resources
		if r.Limits == nil {
			continue
		}
		if r.Requests == nil {
			r.Requests = v1.ResourceList{}
		}
		for name, q := range r.Limits {
			if _, ok := r.Requests[name]; !ok {
				r.Requests[name] = q.DeepCopy()
			}
		}
	}
}

func hostNetworkPorts(cs []v1.Container) {
	for i := range cs {
		for j := range cs[i].Ports {
			if cs[i].Ports[j].HostPort == 0 {
				cs[i].Ports[j].HostPort = cs[i].Ports[j].ContainerPort
			}
		}
	}
}

// defaultPodRequests gives pod-level requests, when pod-level resources
// are set (requests or limits: PodLevelResourcesFixDefaulting, beta in
// 1.37, where before only limits counted), from the containers' requests
// (for cpu and memory) or else from the pod-level limits.
func defaultPodRequests(p *v1.Pod) {
	res := p.Spec.Resources
	if res == nil || len(res.Limits) == 0 && len(res.Requests) == 0 {
		return
	}
	reqs := res.Requests
	if reqs == nil {
		reqs = v1.ResourceList{}
	}
	for name, q := range resourcehelper.AggregateContainerRequests(p, resourcehelper.PodResourcesOptions{}) {
		if _, ok := reqs[name]; !ok && resourcehelper.IsSupportedPodLevelResource(name) && overcommitAllowed(name) {
			reqs[name] = q.DeepCopy()
		}
	}
	for name, q := range res.Limits {
		if _, ok := reqs[name]; !ok && resourcehelper.IsSupportedPodLevelResource(name) {
			reqs[name] = q.DeepCopy()
		}
	}
	if len(reqs) > 0 {
		res.Requests = reqs
	}
}

// defaultPodLimits gives a pod-level request without a pod-level limit
// (PodLevelResourcesFixDefaulting, beta in 1.37) the containers' aggregate
// limit, or the request if it is larger, when every container (init,
// sidecar, regular and ephemeral) has a limit of that resource.
func defaultPodLimits(p *v1.Pod) {
	res := p.Spec.Resources
	if res == nil || len(res.Requests) == 0 {
		return
	}
	var candidates []v1.ResourceName
	for name := range res.Requests {
		if _, ok := res.Limits[name]; !ok && resourcehelper.IsSupportedPodLevelResource(name) && everyContainerLimits(&p.Spec, name) {
			candidates = append(candidates, name)
		}
	}
	if len(candidates) == 0 {
		return
	}
	sums := resourcehelper.AggregateContainerLimits(&v1.Pod{Spec: v1.PodSpec{Containers: p.Spec.Containers, InitContainers: p.Spec.InitContainers}}, resourcehelper.PodResourcesOptions{})
	for _, name := range candidates {
		lim, ok := sums[name]
		if !ok {
			continue
		}
		if req := res.Requests[name]; req.Cmp(lim) > 0 {
			lim = req.DeepCopy()
		}
		if res.Limits == nil {
			res.Limits = v1.ResourceList{}
		}
		res.Limits[name] = lim
	}
}

// everyContainerLimits reports whether every container of s has a limit
// of name.
func everyContainerLimits(s *v1.PodSpec, name v1.ResourceName) bool {
	for _, cs := range [][]v1.Container{s.InitContainers, s.Containers} {
		for i := range cs {
			if _, ok := cs[i].Resources.Limits[name]; !ok {
				return false
			}
		}
	}
	for i := range s.EphemeralContainers {
		if _, ok := s.EphemeralContainers[i].Resources.Limits[name]; !ok {
			return false
		}
	}
	return true
}

// defaultHugePagePodLimits gives pod-level hugepage limits from the
// containers' when pod-level resources are partly set.
func defaultHugePagePodLimits(p *v1.Pod) {
	res := p.Spec.Resources
	if res == nil || len(res.Limits) == 0 && len(res.Requests) == 0 {
		return
	}
	lims := res.Limits
	if lims == nil {
		lims = v1.ResourceList{}
	}
	for name, q := range resourcehelper.AggregateContainerLimits(p, resourcehelper.PodResourcesOptions{}) {
		if !resourcehelper.IsSupportedPodLevelResource(name) || !isHugePage(name) {
			continue
		}
		if _, ok := res.Requests[name]; ok {
			continue
		}
		if _, ok := lims[name]; !ok {
			lims[name] = q.DeepCopy()
		}
	}
	if len(lims) > 0 {
		res.Limits = lims
	}
}

func isHugePage(name v1.ResourceName) bool {
	return len(name) > len(v1.ResourceHugePagesPrefix) && string(name[:len(v1.ResourceHugePagesPrefix)]) == v1.ResourceHugePagesPrefix
}

// overcommitAllowed is true for native resources other than hugepages.
func overcommitAllowed(name v1.ResourceName) bool {
	return isNative(name) && !isHugePage(name)
}

// DefaultNode gives a node without allocatable its capacity, as the API
// server does, and rounds its quantities up to millis.
func DefaultNode(n *v1.Node) {
	if n.Status.Allocatable == nil && n.Status.Capacity != nil {
		n.Status.Allocatable = make(v1.ResourceList, len(n.Status.Capacity))
		for name, q := range n.Status.Capacity {
			n.Status.Allocatable[name] = q.DeepCopy()
		}
	}
	roundUp(n.Status.Capacity)
	roundUp(n.Status.Allocatable)
}

// DefaultNamespace adds the kubernetes.io/metadata.name label.
func DefaultNamespace(ns *v1.Namespace) {
	if ns.Name == "" {
		return
	}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[v1.LabelMetadataName] = ns.Name
	if ns.Status.Phase == "" {
		ns.Status.Phase = v1.NamespaceActive
	}
}

// DefaultPriorityClass sets preemptionPolicy to PreemptLowerPriority when unset.
func DefaultPriorityClass(pc *schedulingv1.PriorityClass) {
	if pc.PreemptionPolicy == nil {
		pc.PreemptionPolicy = ptr.To(v1.PreemptLowerPriority)
	}
}

// DefaultDeployment sets replicas to 1 when unset and defaults the template.
func DefaultDeployment(d *appsv1.Deployment) {
	if d.Spec.Replicas == nil {
		d.Spec.Replicas = ptr.To[int32](1)
	}
	DefaultPodSpec(&d.Spec.Template.Spec)
}

// DefaultReplicaSet sets replicas to 1 when unset and defaults the template.
func DefaultReplicaSet(rs *appsv1.ReplicaSet) {
	if rs.Spec.Replicas == nil {
		rs.Spec.Replicas = ptr.To[int32](1)
	}
	DefaultPodSpec(&rs.Spec.Template.Spec)
}

// DefaultJob sets parallelism to 1 when unset, and completions to 1 when
// neither is set (a Job with only parallelism is a work queue and keeps
// completions unset), and defaults the template.
func DefaultJob(j *batchv1.Job) {
	if j.Spec.Completions == nil && j.Spec.Parallelism == nil {
		j.Spec.Completions = ptr.To[int32](1)
	}
	if j.Spec.Parallelism == nil {
		j.Spec.Parallelism = ptr.To[int32](1)
	}
	if j.Spec.BackoffLimit == nil {
		j.Spec.BackoffLimit = ptr.To[int32](6)
	}
	DefaultPodSpec(&j.Spec.Template.Spec)
}
