// Package reprievetest has small builders for nodes, pods, disruption
// budgets and priority classes, for tests of reprieve and of code that uses
// it:
//
//	reprievetest.Node("n1").CPU("4").Memory("8Gi").Obj()
//	reprievetest.Pod("default", "p").Priority(10).Req("1", "1Gi").On("n1").Obj()
package reprievetest

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// BaseTime is the reference time of the builders: StartedAt offsets from it.
var BaseTime = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// NodeBuilder builds a v1.Node.
type NodeBuilder struct{ n *v1.Node }

// Node starts a node with 110 allocatable pods and a hostname label.
func Node(name string) *NodeBuilder {
	return &NodeBuilder{n: &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-node-" + name), Labels: map[string]string{v1.LabelHostname: name}},
		Status:     v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourcePods: resource.MustParse("110")}},
	}}
}

// CPU sets allocatable CPU.
func (b *NodeBuilder) CPU(q string) *NodeBuilder { return b.Alloc(v1.ResourceCPU, q) }

// Memory sets allocatable memory.
func (b *NodeBuilder) Memory(q string) *NodeBuilder { return b.Alloc(v1.ResourceMemory, q) }

// Pods sets the allocatable pod count.
func (b *NodeBuilder) Pods(n int) *NodeBuilder { return b.Alloc(v1.ResourcePods, fmt.Sprint(n)) }

// Alloc sets any allocatable resource.
func (b *NodeBuilder) Alloc(name v1.ResourceName, q string) *NodeBuilder {
	b.n.Status.Allocatable[name] = resource.MustParse(q)
	return b
}

// Label sets a label.
func (b *NodeBuilder) Label(k, v string) *NodeBuilder { b.n.Labels[k] = v; return b }

// Zone sets the topology.kubernetes.io/zone label.
func (b *NodeBuilder) Zone(z string) *NodeBuilder { return b.Label(v1.LabelTopologyZone, z) }

// Taint adds a taint.
func (b *NodeBuilder) Taint(key, value string, effect v1.TaintEffect) *NodeBuilder {
	b.n.Spec.Taints = append(b.n.Spec.Taints, v1.Taint{Key: key, Value: value, Effect: effect})
	return b
}

// Unschedulable cordons the node.
func (b *NodeBuilder) Unschedulable() *NodeBuilder { b.n.Spec.Unschedulable = true; return b }

// Obj returns the node.
func (b *NodeBuilder) Obj() *v1.Node { return b.n }

// PodBuilder builds a v1.Pod.
type PodBuilder struct{ p *v1.Pod }

// Pod starts a pending pod with one container and no requests.
func Pod(ns, name string) *PodBuilder {
	return &PodBuilder{p: &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + ns + "-" + name), Labels: map[string]string{}},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "img"}}},
		Status:     v1.PodStatus{Phase: v1.PodPending},
	}}
}

// Priority sets spec.priority.
func (b *PodBuilder) Priority(p int32) *PodBuilder { b.p.Spec.Priority = &p; return b }

// PriorityClass sets spec.priorityClassName.
func (b *PodBuilder) PriorityClass(name string) *PodBuilder {
	b.p.Spec.PriorityClassName = name
	return b
}

// Never sets preemptionPolicy Never.
func (b *PodBuilder) Never() *PodBuilder {
	p := v1.PreemptNever
	b.p.Spec.PreemptionPolicy = &p
	return b
}

// Req sets the first container's CPU and memory requests ("" skips one).
func (b *PodBuilder) Req(cpu, mem string) *PodBuilder {
	c := &b.p.Spec.Containers[0]
	if c.Resources.Requests == nil {
		c.Resources.Requests = v1.ResourceList{}
	}
	if cpu != "" {
		c.Resources.Requests[v1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		c.Resources.Requests[v1.ResourceMemory] = resource.MustParse(mem)
	}
	return b
}

// ReqRes sets any request of the first container.
func (b *PodBuilder) ReqRes(name v1.ResourceName, q string) *PodBuilder {
	c := &b.p.Spec.Containers[0]
	if c.Resources.Requests == nil {
		c.Resources.Requests = v1.ResourceList{}
	}
	c.Resources.Requests[name] = resource.MustParse(q)
	return b
}

// Container adds another container with a CPU request.
func (b *PodBuilder) Container(name, cpu string) *PodBuilder {
	b.p.Spec.Containers = append(b.p.Spec.Containers, v1.Container{Name: name, Image: "img",
		Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}})
	return b
}

// Init adds an init container with a CPU request; sidecar makes it a
// restartable (sidecar) init container.
func (b *PodBuilder) Init(name, cpu string, sidecar bool) *PodBuilder {
	c := v1.Container{Name: name, Image: "img", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}}
	if sidecar {
		always := v1.ContainerRestartPolicyAlways
		c.RestartPolicy = &always
	}
	b.p.Spec.InitContainers = append(b.p.Spec.InitContainers, c)
	return b
}

// Overhead sets spec.overhead CPU.
func (b *PodBuilder) Overhead(cpu string) *PodBuilder {
	b.p.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}
	return b
}

// PodLevelCPU sets spec.resources.requests.cpu (pod-level resources).
func (b *PodBuilder) PodLevelCPU(cpu string) *PodBuilder {
	b.p.Spec.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}
	return b
}

// HostPort adds a host port to the first container.
func (b *PodBuilder) HostPort(port int32, proto v1.Protocol, ip string) *PodBuilder {
	c := &b.p.Spec.Containers[0]
	c.Ports = append(c.Ports, v1.ContainerPort{ContainerPort: port, HostPort: port, Protocol: proto, HostIP: ip})
	return b
}

// Label sets a label.
func (b *PodBuilder) Label(k, v string) *PodBuilder { b.p.Labels[k] = v; return b }

// On binds the pod to a node and marks it running.
func (b *PodBuilder) On(node string) *PodBuilder {
	b.p.Spec.NodeName = node
	b.p.Status.Phase = v1.PodRunning
	return b
}

// StartedAt sets status.startTime to BaseTime plus the given minutes.
func (b *PodBuilder) StartedAt(minutes int) *PodBuilder {
	t := metav1.NewTime(BaseTime.Add(time.Duration(minutes) * time.Minute))
	b.p.Status.StartTime = &t
	return b
}

// Phase sets status.phase.
func (b *PodBuilder) Phase(p v1.PodPhase) *PodBuilder { b.p.Status.Phase = p; return b }

// Ready sets the Ready condition True (false: False), as the kubelet
// reports a pod whose containers are (not) ready.
func (b *PodBuilder) Ready(ready bool) *PodBuilder {
	st := v1.ConditionFalse
	if ready {
		st = v1.ConditionTrue
	}
	b.p.Status.Conditions = append(b.p.Status.Conditions, v1.PodCondition{Type: v1.PodReady, Status: st})
	return b
}

// Nominated sets status.nominatedNodeName.
func (b *PodBuilder) Nominated(node string) *PodBuilder {
	b.p.Status.NominatedNodeName = node
	return b
}

// TerminatingByPreemption marks the pod as being deleted after preemption.
func (b *PodBuilder) TerminatingByPreemption() *PodBuilder {
	t := metav1.NewTime(BaseTime)
	b.p.DeletionTimestamp = &t
	b.p.Status.Conditions = append(b.p.Status.Conditions, v1.PodCondition{
		Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonPreemptionByScheduler})
	return b
}

// Terminating marks the pod as being deleted.
func (b *PodBuilder) Terminating() *PodBuilder {
	t := metav1.NewTime(BaseTime)
	b.p.DeletionTimestamp = &t
	return b
}

// NodeSelector sets a nodeSelector entry.
func (b *PodBuilder) NodeSelector(k, v string) *PodBuilder {
	if b.p.Spec.NodeSelector == nil {
		b.p.Spec.NodeSelector = map[string]string{}
	}
	b.p.Spec.NodeSelector[k] = v
	return b
}

// NodeAffinityIn requires label key to be one of values.
func (b *PodBuilder) NodeAffinityIn(key string, values ...string) *PodBuilder {
	b.affinity().NodeAffinity = &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: values}}}}}}
	return b
}

// NodeNameIn requires metadata.name to be one of names (matchFields).
func (b *PodBuilder) NodeNameIn(names ...string) *PodBuilder {
	b.affinity().NodeAffinity = &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: names}}}}}}
	return b
}

// Toleration adds a toleration (Exists when value is "").
func (b *PodBuilder) Toleration(key, value string, effect v1.TaintEffect) *PodBuilder {
	t := v1.Toleration{Key: key, Value: value, Effect: effect, Operator: v1.TolerationOpEqual}
	if value == "" {
		t.Operator = v1.TolerationOpExists
	}
	b.p.Spec.Tolerations = append(b.p.Spec.Tolerations, t)
	return b
}

func (b *PodBuilder) affinity() *v1.Affinity {
	if b.p.Spec.Affinity == nil {
		b.p.Spec.Affinity = &v1.Affinity{}
	}
	return b.p.Spec.Affinity
}

func term(topologyKey string, matchLabels map[string]string) v1.PodAffinityTerm {
	return v1.PodAffinityTerm{TopologyKey: topologyKey, LabelSelector: &metav1.LabelSelector{MatchLabels: matchLabels}}
}

// PodAffinity adds a required pod affinity term.
func (b *PodBuilder) PodAffinity(topologyKey string, matchLabels map[string]string) *PodBuilder {
	a := b.affinity()
	if a.PodAffinity == nil {
		a.PodAffinity = &v1.PodAffinity{}
	}
	a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term(topologyKey, matchLabels))
	return b
}

// PodAntiAffinity adds a required pod anti-affinity term.
func (b *PodBuilder) PodAntiAffinity(topologyKey string, matchLabels map[string]string) *PodBuilder {
	a := b.affinity()
	if a.PodAntiAffinity == nil {
		a.PodAntiAffinity = &v1.PodAntiAffinity{}
	}
	a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term(topologyKey, matchLabels))
	return b
}

// Spread adds a DoNotSchedule topology spread constraint.
func (b *PodBuilder) Spread(maxSkew int32, topologyKey string, matchLabels map[string]string) *PodBuilder {
	b.p.Spec.TopologySpreadConstraints = append(b.p.Spec.TopologySpreadConstraints, v1.TopologySpreadConstraint{
		MaxSkew: maxSkew, TopologyKey: topologyKey, WhenUnsatisfiable: v1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: matchLabels}})
	return b
}

// SpreadWith adds a topology spread constraint after letting f adjust it.
func (b *PodBuilder) SpreadWith(maxSkew int32, topologyKey string, matchLabels map[string]string, f func(*v1.TopologySpreadConstraint)) *PodBuilder {
	b.Spread(maxSkew, topologyKey, matchLabels)
	f(&b.p.Spec.TopologySpreadConstraints[len(b.p.Spec.TopologySpreadConstraints)-1])
	return b
}

// Obj returns the pod.
func (b *PodBuilder) Obj() *v1.Pod { return b.p }

// PDB returns a budget over matchLabels in ns with the given allowed
// disruptions and, optionally, pods already disrupted.
func PDB(ns, name string, matchLabels map[string]string, allowed int32, disrupted ...string) *policyv1.PodDisruptionBudget {
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: matchLabels}, MinAvailable: &intstr.IntOrString{IntVal: 1}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
	}
	if len(disrupted) > 0 {
		pdb.Status.DisruptedPods = map[string]metav1.Time{}
		for _, d := range disrupted {
			pdb.Status.DisruptedPods[d] = metav1.NewTime(BaseTime)
		}
	}
	return pdb
}

// PriorityClass returns a class; never sets preemptionPolicy Never.
func PriorityClass(name string, value int32, globalDefault, never bool) *schedulingv1.PriorityClass {
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value, GlobalDefault: globalDefault}
	if never {
		p := v1.PreemptNever
		pc.PreemptionPolicy = &p
	}
	return pc
}
