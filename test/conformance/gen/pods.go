package gen

import (
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Pod label vocabulary shared by pods, selectors and PDBs.
const (
	labelApp  = "app"  // a | b | c
	labelTier = "tier" // web | db
	labelHash = "pod-template-hash"
)

var (
	apps   = []string{"a", "b", "c"}
	tiers  = []string{"web", "db"}
	hashes = []string{"7d9f8c6b5", "5c4b8d7f9"}
)

const pauseImage = "registry.k8s.io/pause:3.10"

// genBoundPods fills every node with 0–12 pods (up to its pods limit) whose
// requests add up to a high share of the node's allocatable cpu and memory
// (a moderate one in Filters). Some nodes get only pods at or above the preemptor's priority. Everything
// adds finished pods, which occupy nothing.
func (g *generator) genBoundPods() {
	for _, ns := range g.nodes {
		k := g.between(1, 12)
		if g.chance(0.03) {
			k = 0
		}
		if ns.maxPods <= 5 {
			k = int(ns.maxPods)
			if g.chance(0.4) {
				k = g.between(0, int(ns.maxPods))
			}
		}
		protected := g.chance(0.15)

		bestEffort := make([]bool, k)
		sized := 0
		for i := range bestEffort {
			bestEffort[i] = g.chance(0.05)
			if !bestEffort[i] {
				sized++
			}
		}
		cpuParts := g.split(int64(g.utilization()*float64(ns.alloc.cpu/cpuUnit)), sized)
		memParts := g.split(int64(g.utilization()*float64(ns.alloc.mem/memUnit)), sized)
		ephLeft, gpuLeft := ns.alloc.eph, ns.alloc.gpu

		j := 0
		for i := range k {
			var total res
			if !bestEffort[i] {
				total = res{cpu: cpuParts[j] * cpuUnit, mem: memParts[j] * memUnit}
				j++
				if ephLeft > 0 && g.chance(0.3) {
					total.eph = min(ephLeft/ephUnit, int64(g.between(1, 4))) * ephUnit
					ephLeft -= total.eph
				}
				if gpuLeft > 0 && g.chance(0.35) {
					total.gpu = 1
					gpuLeft--
				}
			}
			g.addBoundPod(ns, total, g.podClass(protected))
			if g.atLeast(Everything) && g.chance(0.04) {
				g.addFinishedPod(ns)
			}
		}
	}
	// Everything: pods being deleted, some because an earlier preemption
	// evicted them.
	if g.atLeast(Everything) {
		for _, p := range g.bound {
			if p.Status.Phase == v1.PodRunning && p.DeletionTimestamp == nil && g.chance(0.03) {
				g.terminate(p, g.chance(0.4))
			}
		}
	}
}

// utilization is the share of a node's allocatable that its pods request:
// high, in Filters moderate.
func (g *generator) utilization() float64 {
	if g.profile == Filters {
		// Room for the preemptor's small request on most nodes.
		return 0.25 + 0.5*g.r.Float64()
	}
	if g.chance(0.25) {
		return 1
	}
	return 0.55 + 0.45*g.r.Float64()
}

// split cuts total into k non-negative parts at random.
func (g *generator) split(total int64, k int) []int64 {
	if k == 0 {
		return nil
	}
	cuts := make([]int64, 0, k+1)
	cuts = append(cuts, 0, total)
	for range k - 1 {
		cuts = append(cuts, g.r.Int64N(total+1))
	}
	slices.Sort(cuts)
	parts := make([]int64, k)
	for i := range parts {
		parts[i] = cuts[i+1] - cuts[i]
	}
	return parts
}

// splitRes cuts r into k parts: cpu, memory and ephemeral-storage in units,
// the extended resource all in the first part.
func (g *generator) splitRes(r res, k int) []res {
	cpu := g.split(r.cpu/cpuUnit, k)
	mem := g.split(r.mem/memUnit, k)
	eph := g.split(r.eph/ephUnit, k)
	parts := make([]res, k)
	for i := range parts {
		parts[i] = res{cpu: cpu[i] * cpuUnit, mem: mem[i] * memUnit, eph: eph[i] * ephUnit}
	}
	parts[0].gpu = r.gpu
	// Keep remainders that are not whole units (none in practice).
	parts[0] = parts[0].add(r.sub(sumRes(parts)))
	return parts
}

func sumRes(rs []res) res {
	var s res
	for _, r := range rs {
		s = s.add(r)
	}
	return s
}

// scaleDown returns a random amount of cpu and memory at most r's, in units.
func (g *generator) scaleDown(r res) res {
	return res{
		cpu: int64(g.between(0, int(r.cpu/cpuUnit))) * cpuUnit,
		mem: int64(g.between(0, int(r.mem/memUnit))) * memUnit,
	}
}

// newPod returns a pod with the defaults the API server sets and the class
// admission resolved. Containers are added by shape.
func (g *generator) newPod(name, namespace string, labels map[string]string, class classChoice) *v1.Pod {
	prio, policy := class.value, class.policy
	grace := int64(30)
	serviceLinks := true
	return &v1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: namespace,
			UID:       types.UID("uid-" + name),
			Labels:    labels,
		},
		Spec: v1.PodSpec{
			RestartPolicy:                 v1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: &grace,
			DNSPolicy:                     v1.DNSClusterFirst,
			SchedulerName:                 v1.DefaultSchedulerName,
			SecurityContext:               &v1.PodSecurityContext{},
			EnableServiceLinks:            &serviceLinks,
			PriorityClassName:             class.name,
			Priority:                      &prio,
			PreemptionPolicy:              &policy,
		},
	}
}

func (g *generator) nextName(prefix string) string {
	g.seq++
	return fmt.Sprintf("%s-%d", prefix, g.seq)
}

// podLabels draws labels from the shared vocabulary.
func (g *generator) podLabels() map[string]string {
	l := map[string]string{}
	if g.chance(0.85) {
		l[labelApp] = pick(g, apps...)
	} else {
		l["component"] = "agent"
	}
	if g.chance(0.4) {
		l[labelTier] = pick(g, tiers...)
	}
	if g.chance(0.3) {
		l[labelHash] = pick(g, hashes...)
	}
	return l
}

// limitsMode says how containers set limits.
type limitsMode int

const (
	noLimits     limitsMode = iota
	equalLimits             // limits == requests (Guaranteed when complete)
	doubleLimits            // limits == 2 × requests
)

// container returns a container requesting r.
func container(name string, r res, lm limitsMode) v1.Container {
	c := v1.Container{
		Name:                     name,
		Image:                    pauseImage,
		ImagePullPolicy:          v1.PullIfNotPresent,
		TerminationMessagePath:   v1.TerminationMessagePathDefault,
		TerminationMessagePolicy: v1.TerminationMessageReadFile,
	}
	c.Resources.Requests = r.list()
	var lim res
	switch lm {
	case equalLimits:
		lim = res{cpu: r.cpu, mem: r.mem}
	case doubleLimits:
		lim = res{cpu: 2 * r.cpu, mem: 2 * r.mem}
	}
	// Extended resources must have limits equal to requests.
	lim.gpu = r.gpu
	c.Resources.Limits = lim.list()
	return c
}

// shape builds the pod's containers so that podRequests(p) == total. With
// fancy (Everything only) the request comes through a larger init
// container, a sidecar, pod overhead or pod-level resources.
func (g *generator) shape(p *v1.Pod, total res, fancy bool) {
	lm := noLimits
	switch x := g.r.IntN(100); {
	case x < 20:
		lm = equalLimits
	case x < 30:
		lm = doubleLimits
	}
	names := []string{"main", "helper"}
	containers := func(r res, k int) {
		for i, part := range g.splitRes(r, k) {
			p.Spec.Containers = append(p.Spec.Containers, container(names[i], part, lm))
		}
	}
	k := 1
	if g.chance(0.3) {
		k = 2
	}
	hasCPUMem := total.cpu > 0 && total.mem > 0
	x := 100
	if fancy && g.atLeast(Everything) {
		x = g.r.IntN(100)
	}
	switch {
	case x < 4 && hasCPUMem:
		// A regular init container larger than the containers: it sets the
		// pod's cpu and memory request.
		ctr := g.scaleDown(total)
		ctr.eph, ctr.gpu = total.eph, total.gpu
		p.Spec.InitContainers = append(p.Spec.InitContainers, container("init", res{cpu: total.cpu, mem: total.mem}, lm))
		containers(ctr, k)
	case x < 7 && hasCPUMem:
		// A smaller init container: no effect on the request.
		containers(total, k)
		ctr := g.scaleDown(fromList(p.Spec.Containers[0].Resources.Requests))
		p.Spec.InitContainers = append(p.Spec.InitContainers, container("init", ctr, noLimits))
	case x < 12 && hasCPUMem:
		// A sidecar (restartable init container) whose request adds to the
		// containers', sometimes followed by a regular init container.
		side := g.scaleDown(total)
		always := v1.ContainerRestartPolicyAlways
		sc := container("proxy", side, lm)
		sc.RestartPolicy = &always
		p.Spec.InitContainers = append(p.Spec.InitContainers, sc)
		rest := total.sub(side)
		if g.chance(0.5) {
			p.Spec.InitContainers = append(p.Spec.InitContainers, container("init", g.scaleDown(rest), noLimits))
		}
		containers(rest, k)
	case x < 15 && total.cpu >= cpuUnit && total.mem >= memUnit:
		// Overhead set by the RuntimeClass admission plugin.
		oh := res{cpu: cpuUnit, mem: memUnit}
		rc := "kata"
		p.Spec.RuntimeClassName = &rc
		p.Spec.Overhead = oh.list()
		containers(total.sub(oh), k)
	case x < 18 && hasCPUMem:
		// Pod-level requests, at least the containers' sum.
		p.Spec.Resources = &v1.ResourceRequirements{Requests: res{cpu: total.cpu, mem: total.mem}.list()}
		ctr := g.scaleDown(total)
		ctr.eph, ctr.gpu = total.eph, total.gpu
		lm = noLimits
		containers(ctr, k)
	default:
		containers(total, k)
	}
	if got := podRequests(p); got != total {
		panic(fmt.Sprintf("gen: pod %s requests %+v, want %+v", p.Name, got, total))
	}
}

// startTime returns a start time before baseTime; often one already used,
// to exercise tie-breaks on equal start times.
func (g *generator) startTime() metav1.Time {
	if n := len(g.startTimes); n > 0 && g.chance(0.2) {
		return g.startTimes[n-1-g.r.IntN(min(n, 3))]
	}
	t := minutesAgo(g.between(1, 30*24*60))
	g.startTimes = append(g.startTimes, t)
	return t
}

// bind places p on ns: usually Running with a start time, rarely still
// Pending (bound, containers not started, no start time).
func (g *generator) bind(p *v1.Pod, ns *nodeState) {
	p.Spec.NodeName = ns.name
	p.Status.QOSClass = qosClass(p)
	if g.chance(0.01) {
		p.CreationTimestamp = minutesAgo(g.between(1, 5))
		p.Status.Phase = v1.PodPending
		p.Status.HostIP = ns.ip
		p.Status.HostIPs = []v1.HostIP{{IP: ns.ip}}
		p.Status.Conditions = []v1.PodCondition{{
			Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: p.CreationTimestamp,
		}}
		return
	}
	st := g.startTime()
	p.CreationTimestamp = metav1.NewTime(st.Add(-time.Duration(g.between(0, 30)) * time.Second))
	p.Status.Phase = v1.PodRunning
	p.Status.StartTime = &st
	p.Status.HostIP = ns.ip
	p.Status.HostIPs = []v1.HostIP{{IP: ns.ip}}
	podIP := fmt.Sprintf("10.244.%s.%d", ns.ip[len("10.0.0."):], len(ns.pods)+2)
	p.Status.PodIP = podIP
	p.Status.PodIPs = []v1.PodIP{{IP: podIP}}
}

// addBoundPod creates a pod requesting total on ns.
func (g *generator) addBoundPod(ns *nodeState, total res, class classChoice) *v1.Pod {
	p := g.newPod(g.nextName("pod"), g.podNamespace(), g.podLabels(), class)
	if g.plan != nil {
		g.planLabels(p, ns)
	}
	g.shape(p, total, true)
	if g.atLeast(Constraints) {
		g.existingPodConstraints(p, ns)
	}
	if g.plan != nil {
		g.planPodConstraints(p, ns)
	}
	p.Spec.Tolerations = append(p.Spec.Tolerations, defaultTolerations()...)
	g.bind(p, ns)
	ns.pods = append(ns.pods, p)
	ns.used = ns.used.add(podRequests(p))
	g.bound = append(g.bound, p)
	return p
}

// addFinishedPod binds a Succeeded or Failed pod to ns. Finished pods
// occupy nothing, so their requests may be anything.
func (g *generator) addFinishedPod(ns *nodeState) {
	p := g.newPod(g.nextName("done"), g.podNamespace(), g.podLabels(), g.podClass(false))
	p.Spec.RestartPolicy = pick(g, v1.RestartPolicyNever, v1.RestartPolicyOnFailure)
	g.shape(p, res{cpu: int64(g.between(1, 20)) * cpuUnit, mem: int64(g.between(1, 16)) * memUnit}, false)
	p.Spec.Tolerations = defaultTolerations()
	p.Spec.NodeName = ns.name
	st := g.startTime()
	p.CreationTimestamp = st
	p.Status = v1.PodStatus{
		Phase:     pick(g, v1.PodSucceeded, v1.PodFailed),
		StartTime: &st,
		HostIP:    ns.ip,
		HostIPs:   []v1.HostIP{{IP: ns.ip}},
		QOSClass:  qosClass(p),
	}
	g.bound = append(g.bound, p)
}

// terminate marks p as being deleted; preempted says whether the scheduler
// preempted it (DisruptionTarget condition with reason
// PreemptionByScheduler).
func (g *generator) terminate(p *v1.Pod, preempted bool) {
	ts := minutesAgo(g.between(0, 2))
	p.DeletionTimestamp = &ts
	grace := *p.Spec.TerminationGracePeriodSeconds
	p.DeletionGracePeriodSeconds = &grace
	if preempted {
		p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{
			Type:               v1.DisruptionTarget,
			Status:             v1.ConditionTrue,
			Reason:             v1.PodReasonPreemptionByScheduler,
			Message:            "default-scheduler: preempting to accommodate a higher priority pod",
			LastTransitionTime: ts,
		})
	}
}
