package scheduler

import (
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/klog/v2"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/profile"
)

// OnPodAdd handles a new pod.
func (s *Core) OnPodAdd(pod *v1.Pod) {
	s.podAdded(pod)
}

func (s *Core) podAdded(pod *v1.Pod) {
	switch {
	case terminal(pod):
		return
	case assigned(pod):
		s.upsert(pod)
	case s.responsible(pod) && pod.DeletionTimestamp == nil:
		s.upsert(pod)
		s.queue.Add(pod)
		s.reportAdded(podKey(pod))
	}
}

func (s *Core) upsert(pod *v1.Pod) {
	if _, err := s.snap.UpdatePod(pod); err != nil {
		klog.Background().V(2).Info("Ignoring pod the cache cannot hold", "pod", klog.KObj(pod), "err", err)
	}
}

// OnPodUpdate handles a changed pod.
func (s *Core) OnPodUpdate(old, pod *v1.Pod) {
	key := podKey(pod)
	switch {
	case terminal(pod):
		// A finished pod frees its node, as if deleted.
		s.podGone(key, old != nil && assigned(old) || assigned(pod))
	case assigned(pod):
		delete(s.assumed, key)
		s.queue.Delete(key)
		s.upsert(pod)
		if pod.DeletionTimestamp != nil {
			s.queue.VictimTerminating(key)
		}
	case s.responsible(pod) && pod.DeletionTimestamp == nil:
		s.upsert(pod)
		s.queue.Update(pod)
		if claimStatusesChanged(old, pod) {
			s.queue.MoveAllToActiveOrBackoff()
		}
	default:
		s.podGone(key, false)
	}
}

// OnPodDelete handles a deleted pod.
func (s *Core) OnPodDelete(pod *v1.Pod) {
	s.podGone(podKey(pod), assigned(pod))
}

func (s *Core) podGone(key string, wasAssigned bool) {
	p := s.snap.Pod(key)
	wasAssigned = wasAssigned || p != nil && assigned(p.Obj())
	s.snap.RemovePod(key)
	s.queue.Delete(key)
	event := ""
	if wasAssigned {
		event = EventAssignedPodDelete
	}
	s.moves(event, func() {
		s.queue.VictimGone(key)
		if wasAssigned {
			s.queue.MoveAllToActiveOrBackoff()
		}
	})
	delete(s.assumed, key)
}

// OnNodeAdd handles a new node.
func (s *Core) OnNodeAdd(node *v1.Node) {
	if err := s.snap.UpdateNode(node); err == nil {
		s.nodeEvent(NodeAdd, nil, node)
	}
}

// OnNodesAdd handles new nodes, with distinct names, as OnNodeAdd handles
// each (one node event apiece), but lays the cache's node list out once:
// adding a hundred thousand nodes takes linear time. A node the cache has
// already is updated, as OnNodeAdd does.
func (s *Core) OnNodesAdd(nodes []*v1.Node) {
	added := make([]*v1.Node, 0, len(nodes))
	for _, n := range nodes {
		if s.snap.Node(n.Name) != nil {
			s.OnNodeAdd(n)
			continue
		}
		added = append(added, n)
	}
	_ = s.snap.AddNodes(added) // a name given twice is added once
	for _, n := range added {
		s.nodeEvent(NodeAdd, nil, n)
	}
}

// OnNodeUpdate handles a changed node. As upstream, the update is one
// event per property it changed (NodeUpdateEvents), each moving the
// unschedulable pods whose rejecting plugins' queueing hints say it may
// help; an update that changes nothing of those moves nothing. The old
// node is the one in the cache.
func (s *Core) OnNodeUpdate(node *v1.Node) {
	var old *v1.Node
	if n := s.snap.Node(node.Name); n != nil {
		old = n.Obj
	}
	if err := s.snap.UpdateNode(node); err != nil {
		return
	}
	if old == nil {
		s.nodeEvent(NodeAdd, nil, node)
		return
	}
	for _, action := range NodeUpdateEvents(old, node) {
		s.nodeEvent(action, old, node)
	}
}

// nodeEvent moves the unschedulable pods a node event may help, reported
// under the event's label.
func (s *Core) nodeEvent(action NodeAction, old, node *v1.Node) {
	s.moves(action.Label(), func() {
		s.queue.MoveIf(func(qp *queuedPod) bool {
			prof := s.profiles[qp.Pod.Spec.SchedulerName]
			env := hintEnv{spreadKeys: func() ([]string, bool) { return s.spreadKeys(qp.Pod, prof) }}
			if prof != nil {
				env.added = prof.Filter.AddedAffinity
			}
			return worthRequeuing(qp, action, old, node, env)
		})
	})
}

// spreadKeys are the topology keys of pod's DoNotSchedule spread
// constraints under prof, as PodTopologySpread's getConstraints takes them
// (the pod's own, or the profile's defaults with the pod's default
// selector); false when they do not parse.
func (s *Core) spreadKeys(pod *v1.Pod, prof *profile.Profile) ([]string, bool) {
	var defaults []v1.TopologySpreadConstraint
	if prof != nil {
		defaults = prof.Filter.SpreadDefaultConstraints
	}
	cons, err := filter.PodSpreadConstraints(s.snap, pod, defaults, v1.DoNotSchedule)
	if err != nil {
		return nil, false
	}
	keys := make([]string, len(cons))
	for i, c := range cons {
		keys[i] = c.TopologyKey
	}
	return keys, true
}

// OnNodeDelete handles a deleted node.
func (s *Core) OnNodeDelete(name string) {
	s.snap.RemoveNode(name)
}

// OnPDB handles a created or changed disruption budget.
func (s *Core) OnPDB(pdb *policyv1.PodDisruptionBudget) {
	_ = s.snap.SetPDB(pdb)
}

// OnPDBDelete handles a deleted disruption budget.
func (s *Core) OnPDBDelete(namespace, name string) {
	s.snap.RemovePDB(namespace, name)
}

// OnPriorityClass handles a created or changed priority class.
func (s *Core) OnPriorityClass(pc *schedulingv1.PriorityClass) {
	s.snap.SetPriorityClass(pc)
}

// OnNamespace handles a created or changed namespace.
func (s *Core) OnNamespace(ns *v1.Namespace) {
	s.snap.SetNamespace(ns)
}
