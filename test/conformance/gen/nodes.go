package gen

import (
	"fmt"
	"strconv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Node label keys the generator uses besides the well-known ones.
const (
	labelDisk  = "disk"              // ssd | hdd
	labelPool  = "pool"              // general | compute | gpu
	labelCores = "example.com/cores" // numeric, for Gt/Lt
	labelGen   = "example.com/gen"   // numeric, often absent

	taintUnschedulable = "node.kubernetes.io/unschedulable"
)

// nodeState is a generated node and what has been bound to it so far.
type nodeState struct {
	obj     *v1.Node
	name    string
	ip      string
	zone    string // "" when the node has no zone label
	alloc   res
	maxPods int64
	// used is the sum of podRequests of the non-finished bound pods.
	used res
	// pods are the non-finished bound pods, in generation order.
	pods  []*v1.Pod
	ports []hostPort
}

func (n *nodeState) free() res { return n.alloc.sub(n.used) }

// taintPool holds the taints nodes get above Resources.
var taintPool = []v1.Taint{
	{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectNoSchedule},
	{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule},
	{Key: "example.com/maintenance", Effect: v1.TaintEffectNoExecute},
	{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectNoExecute},
	{Key: "spot", Value: "true", Effect: v1.TaintEffectPreferNoSchedule},
}

// genNodes creates 2–12 nodes in 1–3 zones (2–3 in Filters) with allocatable cpu, memory and
// pods, sometimes ephemeral-storage and example.com/gpu; above Resources
// also taints and nodes without a zone label; in Everything cordoned nodes.
func (g *generator) genNodes() {
	n := g.between(2, 12)
	minZones := 1
	if g.profile == Filters {
		// Zone-wide affinity and spreading need several zones.
		minZones = 2
	}
	zones := []string{"zone-a", "zone-b", "zone-c"}[:g.between(minZones, 3)]
	noZone := make([]bool, n)
	if g.atLeast(Constraints) && g.chance(0.25) {
		for range g.between(1, 2) {
			noZone[g.r.IntN(n)] = true
		}
	}
	cordoned := 0
	for i := range n {
		name := fmt.Sprintf("node-%d", i+1)
		cores := pick(g, 1, 2, 2, 4, 4, 8)
		reserved := res{cpu: int64(pick(g, 0, 0, 100, 200)), mem: int64(pick(g, 0, 2, 4)) * memUnit}
		capacity := res{cpu: int64(cores) * 1000, mem: int64(pick(g, 2, 4, 4, 8, 16)) << 30}
		if capacity.cpu <= reserved.cpu {
			reserved.cpu = 0
		}
		if g.chance(0.35) {
			capacity.eph = int64(pick(g, 10, 20, 50)) << 30
		}
		if g.chance(0.25) {
			capacity.gpu = int64(pick(g, 1, 2, 4))
		}
		ns := &nodeState{
			name:    name,
			ip:      fmt.Sprintf("10.0.0.%d", i+10),
			alloc:   capacity.sub(reserved),
			maxPods: 110,
		}
		if g.chance(0.15) {
			ns.maxPods = int64(g.between(3, 5))
		}

		labels := map[string]string{
			v1.LabelHostname:   name,
			v1.LabelOSStable:   "linux",
			v1.LabelArchStable: "amd64",
		}
		if !noZone[i] {
			ns.zone = pick(g, zones...)
			labels[v1.LabelTopologyZone] = ns.zone
			labels[v1.LabelTopologyRegion] = "region-1"
		}
		if g.atLeast(Constraints) {
			if g.chance(0.7) {
				labels[labelDisk] = pick(g, "ssd", "hdd")
			}
			switch {
			case capacity.gpu > 0:
				labels[labelPool] = "gpu"
			case g.chance(0.8):
				labels[labelPool] = pick(g, "general", "compute")
			}
			if g.chance(0.8) {
				labels[labelCores] = strconv.Itoa(cores)
			}
			if g.chance(0.5) {
				labels[labelGen] = strconv.Itoa(g.between(1, 5))
			}
		}

		var taints []v1.Taint
		if g.atLeast(Constraints) && g.chance(0.25) {
			taints = append(taints, g.taint())
			if g.chance(0.15) {
				t := g.taint()
				if t.Key != taints[0].Key || t.Effect != taints[0].Effect {
					taints = append(taints, t)
				}
			}
		}
		unschedulable := false
		if g.atLeast(Everything) && cordoned < n-1 && g.chance(0.06) {
			unschedulable = true
			cordoned++
			// The node lifecycle controller taints cordoned nodes.
			taints = append(taints, v1.Taint{Key: taintUnschedulable, Effect: v1.TaintEffectNoSchedule})
		}

		podsQ := *resource.NewQuantity(ns.maxPods, resource.DecimalSI)
		alloc, capList := ns.alloc.list(), capacity.list()
		alloc[v1.ResourcePods] = podsQ
		capList[v1.ResourcePods] = podsQ
		created := minutesAgo(g.between(30, 120) * 24 * 60)
		ns.obj = &v1.Node{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
			ObjectMeta: metav1.ObjectMeta{
				Name:              name,
				UID:               types.UID("uid-" + name),
				Labels:            labels,
				CreationTimestamp: created,
			},
			Spec: v1.NodeSpec{
				PodCIDR:       fmt.Sprintf("10.244.%d.0/24", i+1),
				PodCIDRs:      []string{fmt.Sprintf("10.244.%d.0/24", i+1)},
				Unschedulable: unschedulable,
				Taints:        taints,
			},
			Status: v1.NodeStatus{
				Capacity:    capList,
				Allocatable: alloc,
				Conditions: []v1.NodeCondition{{
					Type:               v1.NodeReady,
					Status:             v1.ConditionTrue,
					Reason:             "KubeletReady",
					Message:            "kubelet is posting ready status",
					LastHeartbeatTime:  minutesAgo(1),
					LastTransitionTime: created,
				}},
				Addresses: []v1.NodeAddress{
					{Type: v1.NodeInternalIP, Address: ns.ip},
					{Type: v1.NodeHostName, Address: name},
				},
				DaemonEndpoints: v1.NodeDaemonEndpoints{KubeletEndpoint: v1.DaemonEndpoint{Port: 10250}},
				NodeInfo: v1.NodeSystemInfo{
					MachineID:               fmt.Sprintf("machine-%d", i+1),
					SystemUUID:              fmt.Sprintf("uuid-%d", i+1),
					BootID:                  fmt.Sprintf("boot-%d", i+1),
					KernelVersion:           "6.8.0-45-generic",
					OSImage:                 "Ubuntu 24.04.1 LTS",
					ContainerRuntimeVersion: "containerd://2.1.4",
					KubeletVersion:          "v1.37.2",
					OperatingSystem:         "linux",
					Architecture:            "amd64",
				},
			},
		}
		g.nodes = append(g.nodes, ns)
		g.s.Nodes = append(g.s.Nodes, ns.obj)
	}
}

// taint returns a taint of the pool; NoExecute taints carry timeAdded as the
// API server records them.
func (g *generator) taint() v1.Taint {
	t := pick(g, taintPool...)
	if t.Effect == v1.TaintEffectNoExecute {
		added := minutesAgo(g.between(60, 10000))
		t.TimeAdded = &added
	}
	return t
}

// toleration returns a toleration of t in one of the accepted spellings, or
// (matching false) one that looks similar but does not tolerate t.
func (g *generator) toleration(t v1.Taint, matching bool) v1.Toleration {
	if !matching {
		other := "other"
		if t.Value == "other" {
			other = "x"
		}
		return v1.Toleration{Key: t.Key, Operator: v1.TolerationOpEqual, Value: other, Effect: t.Effect}
	}
	var tol v1.Toleration
	switch x := g.r.IntN(100); {
	case x < 35:
		tol = v1.Toleration{Key: t.Key, Operator: v1.TolerationOpEqual, Value: t.Value, Effect: t.Effect}
	case x < 50:
		tol = v1.Toleration{Key: t.Key, Operator: v1.TolerationOpEqual, Value: t.Value}
	case x < 75:
		tol = v1.Toleration{Key: t.Key, Operator: v1.TolerationOpExists, Effect: t.Effect}
	case x < 95:
		tol = v1.Toleration{Key: t.Key, Operator: v1.TolerationOpExists}
	default:
		// Tolerates every taint.
		tol = v1.Toleration{Operator: v1.TolerationOpExists}
	}
	if tol.Effect == v1.TaintEffectNoExecute && g.chance(0.3) {
		secs := int64(pick(g, 60, 3600))
		tol.TolerationSeconds = &secs
	}
	return tol
}

// defaultTolerations are what the DefaultTolerationSeconds admission plugin
// adds to every pod.
func defaultTolerations() []v1.Toleration {
	secs := int64(300)
	return []v1.Toleration{
		{Key: v1.TaintNodeNotReady, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: &secs},
		{Key: v1.TaintNodeUnreachable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: &secs},
	}
}
