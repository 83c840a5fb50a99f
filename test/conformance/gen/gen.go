// Package gen generates seeded random preemption scenarios for the
// differential conformance test, which runs reprieve and upstream
// kube-scheduler on the same cluster and compares what they decide.
//
// A Scenario is a cluster (nodes, bound and pending pods, disruption budgets,
// priority classes, namespaces) plus one pending pod, the preemptor. Objects
// look the way the API server stores them after defaulting and admission:
// every pod has spec.priority and spec.preemptionPolicy resolved from its
// PriorityClass, UIDs and creation timestamps are set, matchLabelKeys are
// merged into label selectors. Generation is deterministic: the same seed and
// profile always give the same scenario, and nothing depends on map
// iteration order or the clock.
//
// The package imports only k8s.io/api, k8s.io/apimachinery and
// sigs.k8s.io/yaml, so it compiles without k8s.io/kubernetes.
package gen

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Profile selects which Kubernetes features a scenario uses. Each profile
// includes everything of the previous one.
type Profile string

const (
	// Resources uses only resource requests (cpu, memory, ephemeral-storage,
	// an extended resource, the pods limit) and priorities: no taints,
	// affinity, ports, spreading or disruption budgets.
	Resources Profile = "resources"
	// Constraints adds node taints and tolerations, node selectors and
	// required node affinity, host ports, required pod (anti-)affinity on the
	// preemptor and on existing pods, topology spread constraints on the
	// preemptor, and nodes without a zone label.
	Constraints Profile = "constraints"
	// Everything adds disruption budgets, several namespaces, nominated and
	// terminating pods, finished pods, cordoned nodes, preemptionPolicy
	// Never, init and sidecar containers, pod overhead and pod-level
	// resources.
	Everything Profile = "everything"
	// Filters exercises the filter plugins whose verdicts NodeResourcesFit
	// masks when it already rejects a node (PodTopologySpread,
	// InterPodAffinity) and NodePorts. Besides everything of Everything,
	// nodes are only moderately used and the preemptor asks for little, so
	// that it usually fits resource-wise; it carries required pod affinity
	// (to itself, or to pods that exist in one zone only) and
	// anti-affinity, topology spread constraints (minDomains, inclusion
	// policies, matchLabelKeys) and a host port, and the pods around it are
	// often the cause of the violation: lower-priority pods that its
	// anti-affinity or spread constraints select, whose own anti-affinity
	// rejects it or that hold its port, pods being deleted that its spread
	// selector matches, and pending nominated pods with the same labels,
	// anti-affinity and ports. Its priority class is mostly one of the
	// higher ones, so that preemption can resolve such violations.
	Filters Profile = "filters"
)

// Profiles returns all profiles, simplest first. New profiles are appended:
// a profile's position seeds its random stream.
func Profiles() []Profile { return []Profile{Resources, Constraints, Everything, Filters, Storage} }

// level orders profiles: Resources 0, Constraints 1, Everything 2, Filters 3,
// Workload 4, unknown -1.
func (p Profile) level() int {
	switch p {
	case Workload:
		return workloadLevel
	case DRA:
		return draLevel
	case Storage:
		return storageLevel
	case Dependent:
		return dependentLevel
	}
	return slices.Index(Profiles(), p)
}

// stream is what seeds the profile's random stream: its level, except for
// profiles that share their level's features but not its stream.
func (p Profile) stream() int {
	if p == Dependent {
		return dependentStream
	}
	return p.level()
}

// PreemptorAnnotation marks the preemptor among the pods of a scenario file;
// its value is "true".
const PreemptorAnnotation = "reprieve.dev/preemptor"

// Scenario is a cluster and the pod to schedule in it.
type Scenario struct {
	// Seed and Profile are what Generate was called with (zero values for a
	// hand-written file without the header comment).
	Seed    int64
	Profile Profile

	// Nodes are all nodes of the cluster.
	Nodes []*v1.Node
	// Pods are all pods, bound (spec.nodeName set) and pending, in the order
	// the cluster should load them. The preemptor is one of them.
	Pods []*v1.Pod
	// PDBs are the disruption budgets, status included.
	PDBs []*policyv1.PodDisruptionBudget
	// PriorityClasses are the classes pods refer to, except the built-in
	// system-cluster-critical and system-node-critical, which every API
	// server has.
	PriorityClasses []*schedulingv1.PriorityClass
	// Namespaces are the namespaces of the pods and PDBs, with labels for
	// namespace selectors.
	Namespaces []*v1.Namespace
	// PodGroups and CompositePodGroups are the workload groups pods name in
	// spec.schedulingGroup (Workload only).
	PodGroups          []*schedulingv1beta1.PodGroup
	CompositePodGroups []*schedulingv1alpha3.CompositePodGroup
	// ResourceSlices, DeviceClasses and ResourceClaims are the dynamic
	// resource allocation objects (DRA only).
	ResourceSlices []*resourceapi.ResourceSlice
	DeviceClasses  []*resourceapi.DeviceClass
	ResourceClaims []*resourceapi.ResourceClaim
	// Storage are the storage objects (Storage only).
	Storage StorageObjects
	// Selectors are the Services and controllers over the pods, whose
	// selectors PodTopologySpread's default constraints take.
	Selectors SelectorObjects

	// Preemptor is the pending pod to schedule; the same pointer as its
	// element of Pods. It carries PreemptorAnnotation.
	Preemptor *v1.Pod
}

// baseTime is "now" for every generated scenario; all timestamps lie before
// it.
var baseTime = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// Generate returns the scenario for seed and profile. The same arguments
// always give the same scenario. It panics on an unknown profile, which is a
// programming error.
func Generate(seed int64, p Profile) *Scenario {
	if p.level() < 0 {
		panic(fmt.Sprintf("gen: unknown profile %q", p))
	}
	g := &generator{
		r:       rand.New(rand.NewPCG(uint64(seed), uint64(p.stream())+0x7265707269657665)),
		profile: p,
		s:       &Scenario{Seed: seed, Profile: p},
	}
	// 1) Classes and namespaces first: pods refer to them.
	g.genPriorityClasses()
	g.genNamespaces()
	// 2) The preemptor's priority is fixed before any pod exists, so that
	//    nodes can be filled with pods below and above it.
	g.choosePreemptorClass()
	// 3) Nodes, then the pods bound to them, filled to high utilisation
	//    (moderate in Filters, whose pod labels, ports and anti-affinity
	//    follow a plan made for the preemptor's constraints).
	g.genNodes()
	if p == Filters {
		g.planFilters()
	}
	if p == Workload {
		g.genWorkloadPods()
	} else {
		g.genBoundPods()
	}
	if p == Filters {
		g.terminateSpreadPods()
	}
	// 4) The preemptor, sized against the free room just created.
	g.genPreemptor()
	// 5) Pending pods (nominated or not) and disruption budgets.
	g.genPendingPods()
	if p == Filters {
		g.filterPendingPods()
	}
	if p == Dependent {
		g.plantDependence()
	}
	if p == Workload {
		g.genWorkloadPDBs()
	} else {
		g.genPDBs()
	}
	if p == DRA {
		g.genDRA()
	}
	if p == Storage {
		g.genStorage()
	}
	// 6) Load order.
	g.orderPods()
	// 7) Services and controllers over the pods, last: the random stream
	//    of everything above is as it was before they existed.
	g.genSelectors()
	return g.s
}

// generator holds the state of one Generate call.
type generator struct {
	r       *rand.Rand
	profile Profile
	s       *Scenario

	// classes are the scenario's PriorityClasses, sorted by value.
	classes []*schedulingv1.PriorityClass
	// defaultClass is the globalDefault class, or nil.
	defaultClass *schedulingv1.PriorityClass
	// neverClass is a class with preemptionPolicy Never, or nil.
	neverClass *schedulingv1.PriorityClass
	// preemptorClass is the preemptor's class (nil: none and no default).
	preemptorClass *schedulingv1.PriorityClass
	preemptorPrio  int32

	namespaces []string
	nodes      []*nodeState
	bound      []*v1.Pod // bound pods in generation order
	pending    []*v1.Pod // pending pods other than the preemptor
	startTimes []metav1.Time
	seq        int

	// plan is the Filters profile's plan, nil in other profiles.
	plan *filterPlan
}

// atLeast reports whether the profile includes the features of p.
func (g *generator) atLeast(p Profile) bool { return g.profile.includes(p) }

// includes reports whether profile p has the features of q: those of the
// profiles below it, except that Storage builds on Everything only.
func (p Profile) includes(q Profile) bool {
	if p == q {
		return true
	}
	if p == Storage {
		return q.level() <= Everything.level()
	}
	return p.level() >= q.level() && q != Storage
}

// chance is true with probability p.
func (g *generator) chance(p float64) bool { return g.r.Float64() < p }

// between returns a uniform integer in [lo, hi].
func (g *generator) between(lo, hi int) int {
	if hi <= lo {
		return lo
	}
	return lo + g.r.IntN(hi-lo+1)
}

// pick returns a uniform element of xs, which must not be empty.
func pick[T any](g *generator, xs ...T) T { return xs[g.r.IntN(len(xs))] }

// minutesAgo is baseTime minus m minutes.
func minutesAgo(m int) metav1.Time {
	return metav1.NewTime(baseTime.Add(-time.Duration(m) * time.Minute))
}

// orderPods sets s.Pods: usually bound pods node by node, then pending pods,
// then the preemptor; sometimes everything shuffled.
func (g *generator) orderPods() {
	pods := slices.Concat(g.bound, g.pending, []*v1.Pod{g.s.Preemptor})
	if g.chance(0.35) {
		g.r.Shuffle(len(pods), func(i, j int) { pods[i], pods[j] = pods[j], pods[i] })
	}
	g.s.Pods = pods
}
