package filter

import (
	"fmt"
	"runtime"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/dynamic-resource-allocation/cel"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// Cycle is the PreFilter of one incoming pod over a snapshot: what every
// filter computes once before nodes are examined. It is read-only after
// NewCycle and safe to share between goroutines; per-evaluation changes go
// into a State and a NodeView.
type Cycle struct {
	snap *snapshot.Snapshot
	pod  *snapshot.Pod
	// obj is pod.Obj(), made once for the cycle.
	obj *v1.Pod

	// preFilter is a rejection by PreFilter; it then applies to every node.
	preFilter Status
	// csiDriverNotRequired is Options.CSIDriverNotRequired.
	csiDriverNotRequired bool
	// allowedNodes restricts the nodes Filter runs on (PreFilterResult);
	// nil means all nodes. Other nodes get allowedNodesStatus.
	allowedNodes       sets.Set[string]
	allowedNodesStatus Status

	request      snapshot.Resources
	hostPorts    []v1.ContainerPort
	nodeAffinity *nodeaffinity.RequiredNodeAffinity
	spread       *spreadState
	affinity     *affinityState
	dra          *draState
	// vol is the volume plugins' PreFilter state (volumes.go); nil when
	// they all skip.
	vol *volumeState

	// plain is set when only resources can reject the pod on a plain node
	// (see snapshot.NodeSums); sums are then the snapshot's node sums.
	plain bool
	sums  []snapshot.NodeSums

	// workers is the resolved Options.Parallelism; buffers never nil.
	workers int
	buffers *Buffers

	// addedAffinity is the profile's NodeAffinity addedAffinity.
	addedAffinity *nodeaffinity.NodeSelector
}

// Options configures a filter cycle: how it runs, and the arguments of a
// profile that change filtering (the zero value is the default profile's).
type Options struct {
	// Parallelism bounds the goroutines that PreFilter and filtering use,
	// the caller's included: 1 runs everything on the caller's goroutine;
	// 0 means GOMAXPROCS.
	Parallelism int
	// DRAPreemption lets a dry run free the devices of victims' claims
	// (the DRAPreemption gate, beyond upstream v1.37; dra_preemption.go).
	DRAPreemption bool
	// SpreadEmptySelectorMatchesAll: a spread constraint with an empty
	// labelSelector counts every pod of the namespace
	// (profile.Semantics, upstream 1.38); off, it counts none.
	SpreadEmptySelectorMatchesAll bool
	// CSIDriverNotRequired: NodeVolumeLimits does not require the drivers
	// of the pod's new volumes on the node (profile.Semantics, upstream
	// 1.36).
	CSIDriverNotRequired bool
	// Buffers, when not nil, lends the cycle memory kept from earlier
	// cycles; the Result of FilterAll or FilterFrom then lives in it until
	// the buffers are lent to another cycle. Nil allocates afresh.
	Buffers *Buffers
	// AddedAffinity is NodeAffinity's addedAffinity required node
	// selector: the nodes it does not match are rejected first
	// (UnschedulableAndUnresolvable, ReasonNodeAffinityEnforced).
	AddedAffinity *nodeaffinity.NodeSelector
	// IgnoredResources and IgnoredResourceGroups are NodeResourcesFit's:
	// the extended resources it does not check, by name or by the prefix
	// before the "/" of their name.
	IgnoredResources, IgnoredResourceGroups sets.Set[string]
	// SpreadDefaultConstraints are PodTopologySpread's defaultConstraints
	// under defaultingType List: the DoNotSchedule ones filter a pod without
	// constraints of its own, with the pod's default selector
	// (Snapshot.DefaultSelector). The system defaults (defaultingType
	// System) are all ScheduleAnyway and filter nothing.
	SpreadDefaultConstraints []v1.TopologySpreadConstraint
}

// Buffers is memory that filter cycles reuse, held by the caller (an
// evaluator or a scheduler). The zero value is ready; it must not be lent
// to two cycles in use at the same time.
type Buffers struct {
	statuses, scratch []Status
	// spreadMemo is PodTopologySpread's labelMemo; affinity is
	// InterPodAffinity's PreFilter memory.
	spreadMemo []uint32
	affinity   affinityBuffers
	// celCache keeps DynamicResources' compiled CEL expressions.
	celCache *cel.Cache
}

// statusList returns a list of n statuses from *buf, growing it: zeroed
// when zero is set, else holding what an earlier cycle left, for a caller
// that writes every status.
func statusList(buf *[]Status, n int, zero bool) []Status {
	if cap(*buf) < n {
		*buf = make([]Status, n)
		return *buf
	}
	s := (*buf)[:n]
	if zero {
		clear(s)
	}
	return s
}

// NewCycle runs PreFilter for pod over snap. The pod's priority must already
// be resolved (snapshot.NewPod or a pod of the snapshot).
func NewCycle(snap *snapshot.Snapshot, pod *snapshot.Pod, opts Options) *Cycle {
	obj := pod.Obj()
	c := &Cycle{snap: snap, pod: pod, obj: obj, request: snapshot.IncomingPodRequests(obj), hostPorts: pod.HostPorts(), csiDriverNotRequired: opts.CSIDriverNotRequired,
		addedAffinity: opts.AddedAffinity, workers: opts.Parallelism, buffers: opts.Buffers}
	if c.workers <= 0 {
		c.workers = runtime.GOMAXPROCS(0)
	}
	if c.buffers == nil {
		c.buffers = &Buffers{}
	}
	if opts.IgnoredResources.Len() > 0 || opts.IgnoredResourceGroups.Len() > 0 {
		c.request.Scalars = slices.DeleteFunc(slices.Clone(c.request.Scalars), func(s snapshot.ScalarAmount) bool {
			if !snapshot.IsExtendedResourceName(s.Name) {
				return false
			}
			group, _, _ := strings.Cut(string(s.Name), "/")
			return opts.IgnoredResources.Has(string(s.Name)) || opts.IgnoredResourceGroups.Has(group)
		})
	}
	var pluginsWithNodes []string

	// NodeName: restrict to spec.nodeName.
	if name := obj.Spec.NodeName; name != "" {
		c.allowedNodes = sets.New(name)
		pluginsWithNodes = append(pluginsWithNodes, NodeName)
	}
	// NodeAffinity: metadata.name field requirements restrict the nodes.
	if names, status, active := nodeAffinityPreFilter(obj); !status.IsSuccess() {
		c.preFilter = status
		return c
	} else if active {
		na := nodeaffinity.GetRequiredNodeAffinity(obj)
		c.nodeAffinity = &na
		if names != nil {
			pluginsWithNodes = append(pluginsWithNodes, NodeAffinity)
			if c.allowedNodes == nil {
				c.allowedNodes = names
			} else {
				c.allowedNodes = c.allowedNodes.Intersection(names)
			}
		}
	}
	if c.allowedNodes != nil && c.allowedNodes.Len() == 0 {
		msg := fmt.Sprintf("node(s) didn't satisfy plugin(s) %v simultaneously", sortedList(pluginsWithNodes))
		if len(pluginsWithNodes) == 1 {
			msg = fmt.Sprintf("node(s) didn't satisfy plugin %v", pluginsWithNodes[0])
		}
		c.preFilter = Status{Code: UnschedulableAndUnresolvable, Reasons: []string{msg}}
		return c
	}
	if c.allowedNodes != nil {
		c.allowedNodesStatus = Status{Code: UnschedulableAndUnresolvable,
			Reasons: []string{fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sortedList(pluginsWithNodes))}}
	}

	if c.vol, c.preFilter = newVolumeState(snap, obj); !c.preFilter.IsSuccess() {
		return c
	}
	var err error
	if c.spread, err = newSpreadState(snap, pod, obj, opts.SpreadDefaultConstraints, opts.SpreadEmptySelectorMatchesAll, c.workers, &c.buffers.spreadMemo); err != nil {
		c.preFilter = Status{Code: Error, Plugin: PodTopologySpread, Reasons: []string{fmt.Sprintf("running PreFilter plugin %q: %v", PodTopologySpread, err)}}
		return c
	}
	if c.affinity, err = newAffinityState(snap, pod, c.workers, &c.buffers.affinity); err != nil {
		c.preFilter = Status{Code: Error, Plugin: InterPodAffinity, Reasons: []string{err.Error()}}
		return c
	}
	if c.buffers.celCache == nil && (len(obj.Spec.ResourceClaims) > 0 || len(c.request.Scalars) > 0) {
		c.buffers.celCache = newCELCache()
	}
	if c.dra, c.preFilter = newDRAState(snap, pod, obj, &c.request, c.buffers.celCache, opts.DRAPreemption); c.preFilter.Code == Error {
		c.preFilter.Reasons = []string{fmt.Sprintf("running PreFilter plugin %q: %s", DynamicResources, c.preFilter.Message())}
	}
	if !c.preFilter.IsSuccess() {
		return c
	}
	if c.ResourcesOnly() && obj.Spec.NodeName == "" && c.nodeAffinity == nil && c.addedAffinity == nil && len(c.request.Scalars) == 0 {
		c.plain, c.sums = true, snap.Sums()
	}
	return c
}

func sortedList(names []string) string {
	s := slices.Clone(names)
	slices.Sort(s)
	return "[" + strings.Join(s, " ") + "]"
}

// Pod returns the incoming pod.
func (c *Cycle) Pod() *snapshot.Pod { return c.pod }

// Snapshot returns the snapshot the cycle runs over.
func (c *Cycle) Snapshot() *snapshot.Snapshot { return c.snap }

// Parallelism returns how many goroutines the cycle may use (Options).
func (c *Cycle) Parallelism() int { return c.workers }

// PreFilterStatus returns the PreFilter rejection, or Success.
func (c *Cycle) PreFilterStatus() Status { return c.preFilter }

// ResourcesOnly reports whether NodeResourcesFit is the only filter whose
// verdict depends on the pods of a node: the pod binds no host ports and
// neither PodTopologySpread nor InterPodAffinity nor any volume plugin has
// state. A dry run may then reason on resource sums alone (nodes without
// nominated pods). DynamicResources does not depend on the pods, but it
// runs after NodeResourcesFit: a node rejected for resources may still be
// rejected for devices once victims are removed, so a pod with claims is
// never resources-only.
func (c *Cycle) ResourcesOnly() bool {
	return len(c.hostPorts) == 0 && c.spread == nil && c.affinity == nil && c.dra == nil && c.vol == nil
}

// NominatedPods returns the pods nominated to n that the incoming pod must
// yield to: equal or higher priority, not the pod itself.
func (c *Cycle) NominatedPods(n *snapshot.Node) []*snapshot.Pod { return c.nominatedPods(n) }

// Request returns the incoming pod's resource request as NodeResourcesFit sees it.
func (c *Cycle) Request() snapshot.Resources { return c.request }

// NewState returns an empty overlay on the cycle's plugin state.
func (c *Cycle) NewState() *State { return &State{c: c} }

// StateOf is NewState as a value, for callers that keep it on the stack.
func (c *Cycle) StateOf() State { return State{c: c} }

// NewNodeView returns an overlay on node n holding the numbers filters read.
func (c *Cycle) NewNodeView(n *snapshot.Node) *NodeView {
	nv := c.NodeViewOf(n)
	return &nv
}

// NodeViewOf is NewNodeView as a value, for callers that keep it on the stack.
func (c *Cycle) NodeViewOf(n *snapshot.Node) NodeView {
	nv := NodeView{Node: n, NumPods: len(n.Pods), Requested: n.Requested.Clone(), ports: n.UsedPorts, nominated: c.nominatedPods(n)}
	if c.vol != nil {
		nv.vol = c.newNodeVolumes(n)
	}
	return nv
}

// NodeView is a node as a dry run sees it: the node's pod count, requested
// resources and used ports after adding or removing pods. It is the
// equivalent of upstream's cloned NodeInfo, without the pod lists.
type NodeView struct {
	Node      *snapshot.Node
	NumPods   int
	Requested snapshot.Resources

	ports      snapshot.PortSet
	portsOwned bool
	// nominated are the pods nominated to the node that the incoming pod
	// must yield to, looked up once per view.
	nominated []*snapshot.Pod
	// vol is what the volume plugins read of the node's pods (volumes.go).
	vol *nodeVolumes
}

// Ports returns the host ports in use on the node.
func (nv *NodeView) Ports() snapshot.PortSet { return nv.ports }

func (nv *NodeView) ownPorts() {
	if !nv.portsOwned {
		nv.ports = nv.ports.Clone()
		nv.portsOwned = true
	}
}

// State is a reversible overlay on a Cycle's plugin state (topology spread
// counts and inter-pod affinity counts), the equivalent of upstream's cloned
// CycleState. The zero overlay means "as computed by PreFilter".
type State struct {
	c        *Cycle
	spread   spreadOverlay
	affinity affinityOverlay
	dra      draOverlay
	volumes  volumeOverlay
}

// ModelCriticalPaths makes the overlay follow PodTopologySpread's two
// critical paths update by update, as upstream's cloned CycleState does,
// instead of the true minimum count over all domains. The two agree as long
// as only one node's pods change; a dry run that removes pods on several
// nodes (a pod group evicted whole) must call it before its first change to
// decide as upstream does.
func (st *State) ModelCriticalPaths() { st.spread.modelPaths = true }

// AddPod records that p now runs on node: as upstream's NodeInfo.AddPod on the
// viewed node (when node is nv's node) followed by the PreFilterExtensions'
// AddPod. nv may be nil.
func (c *Cycle) AddPod(st *State, nv *NodeView, p *snapshot.Pod, node *snapshot.Node) {
	c.updatePod(st, nv, p, node, 1)
}

// RemovePod records that p no longer runs on node; the inverse of AddPod,
// with upstream's quirks (see spread.go).
func (c *Cycle) RemovePod(st *State, nv *NodeView, p *snapshot.Pod, node *snapshot.Node) {
	c.updatePod(st, nv, p, node, -1)
}

// updatePod is updatePodCounts plus the host ports of nv.
func (c *Cycle) updatePod(st *State, nv *NodeView, p *snapshot.Pod, node *snapshot.Node, sign int) {
	if nv != nil && nv.Node == node && len(c.hostPorts) > 0 && len(p.HostPorts()) > 0 {
		nv.ownPorts()
		if sign > 0 {
			nv.ports.AddPod(p)
		} else {
			nv.ports.RemovePod(p)
		}
	}
	c.updatePodCounts(st, nv, p, node, sign)
}

// FilterNode runs every filter plugin for the incoming pod on nv, in
// upstream's order, and returns the first rejection. It does not add
// nominated pods; see FilterWithNominatedPods.
func (c *Cycle) FilterNode(st *State, nv *NodeView) Status {
	if s := c.filterStatic(nv.Node); !s.IsSuccess() {
		return s
	}
	return c.filterDynamic(st, nv)
}

// filterStatic runs the plugins whose verdict does not depend on the pods of
// the node: NodeName, NodeUnschedulable, TaintToleration, NodeAffinity.
// They only ever answer UnschedulableAndUnresolvable.
func (c *Cycle) filterStatic(n *snapshot.Node) Status {
	if s := filterNodeName(c.obj, n); !s.IsSuccess() {
		return s
	}
	if s := filterNodeUnschedulable(c.obj, n); !s.IsSuccess() {
		return s
	}
	if s := filterTaintToleration(c.obj, n); !s.IsSuccess() {
		return s
	}
	if c.addedAffinity != nil && !c.addedAffinity.Match(n.Obj) {
		return statusNodeAffinityEnforced
	}
	if c.nodeAffinity != nil {
		if ok, _ := c.nodeAffinity.Match(n.Obj); !ok {
			return statusNodeAffinity
		}
	}
	return Status{}
}

// filterDynamic runs the plugins that depend on the pods of the node:
// NodePorts, NodeResourcesFit, the volume plugins (VolumeBinding and
// VolumeZone do not depend on pods but come before PodTopologySpread in
// upstream's order), PodTopologySpread, InterPodAffinity, and
// DynamicResources, which comes last in upstream's order (its verdict,
// cached per node, does not depend on the pods).
func (c *Cycle) filterDynamic(st *State, nv *NodeView) Status {
	if len(c.hostPorts) > 0 {
		for _, p := range c.hostPorts {
			if nv.ports.Conflicts(p.HostIP, string(p.Protocol), p.HostPort) {
				return statusNodePorts
			}
		}
	}
	if s := filterResources(c.resourceRequest(nv.Node), nv); !s.IsSuccess() {
		return s
	}
	if c.vol != nil {
		if s := c.filterVolumes(st, nv); !s.IsSuccess() {
			return s
		}
	}
	if c.spread != nil {
		if s := c.spread.filter(&st.spread, nv.Node); !s.IsSuccess() {
			return s
		}
	}
	if c.affinity != nil {
		if s := c.affinity.filter(&st.affinity, nv.Node); !s.IsSuccess() {
			return s
		}
	}
	if c.dra != nil {
		return c.dra.filter(c.obj, nv.Node, &st.dra)
	}
	return Status{}
}

// FilterWithNominatedPods is upstream's RunFilterPluginsWithNominatedPods:
// when pods of equal or higher priority are nominated to the node, the pod
// must fit both with them counted as running and without them. dynamicOnly
// skips the static plugins, which is only correct on a node they already
// passed (every node a preemption dry run visits).
func (c *Cycle) FilterWithNominatedPods(st *State, nv *NodeView, dynamicOnly bool) Status {
	nominated := nv.nominated
	if len(nominated) == 0 {
		return c.run(st, nv, dynamicOnly)
	}
	// First pass: with the nominated pods added, on scratch copies of the
	// overlays that are undone afterwards.
	savedPorts, savedOwned := nv.ports, nv.portsOwned
	nv.portsOwned = false
	// Upstream adds the nominated pods to a clone of the state: its
	// critical paths, when modelled, are restored as they were.
	var savedPaths []criticalPaths
	if st.spread.modelPaths && st.spread.paths != nil {
		savedPaths = slices.Clone(st.spread.paths)
	}
	for _, p := range nominated {
		c.AddPod(st, nv, p, nv.Node)
	}
	s := c.run(st, nv, dynamicOnly)
	for i := len(nominated) - 1; i >= 0; i-- {
		c.updatePodCounts(st, nv, nominated[i], nv.Node, -1)
	}
	nv.ports, nv.portsOwned = savedPorts, savedOwned
	if st.spread.modelPaths {
		st.spread.paths = savedPaths
	}
	if !s.IsSuccess() {
		return s
	}
	return c.run(st, nv, dynamicOnly)
}

// run runs the filters: all of them, or only those that depend on pods.
func (c *Cycle) run(st *State, nv *NodeView, dynamicOnly bool) Status {
	if dynamicOnly {
		return c.filterDynamic(st, nv)
	}
	return c.FilterNode(st, nv)
}

// updatePodCounts undoes an AddPod exactly: like RemovePod, but it leaves
// the ports to the caller, since ports are a set and not counted.
func (c *Cycle) updatePodCounts(st *State, nv *NodeView, p *snapshot.Pod, node *snapshot.Node, sign int) {
	if nv != nil && nv.Node == node {
		nv.NumPods += sign
		nv.Requested.Add(&p.Requests, int64(sign))
	}
	if c.vol != nil {
		c.updateVolumes(st, nv, p, node, sign)
	}
	if c.spread != nil {
		c.spread.update(&st.spread, p, node, sign)
	}
	if c.affinity != nil {
		c.affinity.update(&st.affinity, p, node, int64(sign))
	}
	if c.dra != nil && c.dra.preempt != nil {
		c.dra.preempt.update(&st.dra, p, sign)
	}
}

// nominatedPods returns the pods nominated to n that the incoming pod must
// yield to: equal or higher priority, not the pod itself. It allocates only
// when some nominated pods must be left out.
func (c *Cycle) nominatedPods(n *snapshot.Node) []*snapshot.Pod {
	all := n.Nominated
	if len(all) == 0 {
		return nil
	}
	// Upstream compares UIDs; keys are unique in a snapshot and cheaper,
	// and for a pod of the snapshot its sequence number, which updates
	// keep, is cheaper still.
	keep := func(p *snapshot.Pod) bool {
		if p.Priority < c.pod.Priority {
			return false
		}
		if c.pod.Seq >= 0 {
			return p.Seq != c.pod.Seq
		}
		return p != c.pod && p.Key != c.pod.Key
	}
	for i, p := range all {
		if !keep(p) {
			out := append([]*snapshot.Pod(nil), all[:i]...)
			for _, q := range all[i+1:] {
				if keep(q) {
					out = append(out, q)
				}
			}
			return out
		}
	}
	return all
}
