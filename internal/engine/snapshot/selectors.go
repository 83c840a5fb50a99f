package snapshot

import (
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SelectorObjects are the objects whose selectors give PodTopologySpread's
// default constraints their selector (DefaultSelector): Services,
// ReplicationControllers, ReplicaSets and StatefulSets, which kube-scheduler
// reads through its informers.
type SelectorObjects struct {
	Services               []*v1.Service
	ReplicationControllers []*v1.ReplicationController
	ReplicaSets            []*appsv1.ReplicaSet
	StatefulSets           []*appsv1.StatefulSet
}

// controllerKind is a kind of controller whose selector a pod it controls
// takes.
type controllerKind uint8

const (
	replicationController controllerKind = iota + 1
	replicaSet
	statefulSet
)

// controllerKinds are the controllers' kinds as a pod's controller
// reference names them (upstream compares apiVersion and kind exactly).
var controllerKinds = map[schema.GroupVersionKind]controllerKind{
	v1.SchemeGroupVersion.WithKind("ReplicationController"): replicationController,
	appsv1.SchemeGroupVersion.WithKind("ReplicaSet"):        replicaSet,
	appsv1.SchemeGroupVersion.WithKind("StatefulSet"):       statefulSet,
}

type controllerKey struct {
	kind            controllerKind
	namespace, name string
}

// controllerSelector is what DefaultSelector takes of a controller: a
// ReplicationController's selector (set), or a ReplicaSet's or
// StatefulSet's requirements (reqs, none to add when !ok: a nil or
// unparsable selector).
type controllerSelector struct {
	set  labels.Set
	reqs labels.Requirements
	ok   bool
}

// selectors index the selectors of a snapshot's SelectorObjects. The zero
// value is empty; maps are made on first use.
type selectors struct {
	// services are, by namespace and name, the Services' selectors; a
	// Service without one selects nothing and is not kept.
	services    map[string]map[string]labels.Set
	controllers map[controllerKey]controllerSelector
}

// addSelectors adds every object of objs, rejecting duplicates.
func (s *Snapshot) addSelectors(objs SelectorObjects) error {
	seen := map[controllerKey]bool{}
	for _, svc := range objs.Services {
		ns := namespaceOrDefault(svc.Namespace)
		// Services have a kind of their own in seen: kind 0.
		k := controllerKey{0, ns, svc.Name}
		if seen[k] {
			return duplicateObject("Service", ns, svc.Name, svc)
		}
		seen[k] = true
		s.SetService(svc)
	}
	add := func(kind controllerKind, name string, meta metav1.Object, obj any, set func()) error {
		k := controllerKey{kind, namespaceOrDefault(meta.GetNamespace()), meta.GetName()}
		if seen[k] {
			return duplicateObject(name, k.namespace, k.name, obj)
		}
		seen[k] = true
		set()
		return nil
	}
	for _, rc := range objs.ReplicationControllers {
		if err := add(replicationController, "ReplicationController", rc, rc, func() { s.SetReplicationController(rc) }); err != nil {
			return err
		}
	}
	for _, rs := range objs.ReplicaSets {
		if err := add(replicaSet, "ReplicaSet", rs, rs, func() { s.SetReplicaSet(rs) }); err != nil {
			return err
		}
	}
	for _, ss := range objs.StatefulSets {
		if err := add(statefulSet, "StatefulSet", ss, ss, func() { s.SetStatefulSet(ss) }); err != nil {
			return err
		}
	}
	return nil
}

// SetService adds or replaces a Service's selector.
func (s *Snapshot) SetService(svc *v1.Service) {
	ns := namespaceOrDefault(svc.Namespace)
	if svc.Spec.Selector == nil {
		// A nil selector selects nothing, not everything.
		s.RemoveService(ns, svc.Name)
		return
	}
	if s.selectors.services == nil {
		s.selectors.services = map[string]map[string]labels.Set{}
	}
	byName := s.selectors.services[ns]
	if byName == nil {
		byName = map[string]labels.Set{}
		s.selectors.services[ns] = byName
	}
	byName[svc.Name] = maps.Clone(svc.Spec.Selector)
}

// RemoveService removes a Service.
func (s *Snapshot) RemoveService(namespace, name string) {
	namespace = namespaceOrDefault(namespace)
	if byName := s.selectors.services[namespace]; byName != nil {
		delete(byName, name)
		if len(byName) == 0 {
			delete(s.selectors.services, namespace)
		}
	}
}

// SetReplicationController adds or replaces a ReplicationController's
// selector.
func (s *Snapshot) SetReplicationController(rc *v1.ReplicationController) {
	s.setController(replicationController, rc.Namespace, rc.Name, controllerSelector{set: maps.Clone(rc.Spec.Selector)})
}

// SetReplicaSet adds or replaces a ReplicaSet's selector.
func (s *Snapshot) SetReplicaSet(rs *appsv1.ReplicaSet) {
	s.setController(replicaSet, rs.Namespace, rs.Name, labelSelector(rs.Spec.Selector))
}

// SetStatefulSet adds or replaces a StatefulSet's selector.
func (s *Snapshot) SetStatefulSet(ss *appsv1.StatefulSet) {
	s.setController(statefulSet, ss.Namespace, ss.Name, labelSelector(ss.Spec.Selector))
}

// RemoveReplicationController removes a ReplicationController.
func (s *Snapshot) RemoveReplicationController(namespace, name string) {
	s.removeController(replicationController, namespace, name)
}

// RemoveReplicaSet removes a ReplicaSet.
func (s *Snapshot) RemoveReplicaSet(namespace, name string) {
	s.removeController(replicaSet, namespace, name)
}

// RemoveStatefulSet removes a StatefulSet.
func (s *Snapshot) RemoveStatefulSet(namespace, name string) {
	s.removeController(statefulSet, namespace, name)
}

// labelSelector is what DefaultSelector adds of a ReplicaSet's or
// StatefulSet's selector: its requirements, none for a nil selector (which
// selects nothing) or one that does not parse.
func labelSelector(ls *metav1.LabelSelector) controllerSelector {
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return controllerSelector{}
	}
	reqs, ok := sel.Requirements()
	return controllerSelector{reqs: reqs, ok: ok}
}

func (s *Snapshot) setController(kind controllerKind, namespace, name string, sel controllerSelector) {
	if s.selectors.controllers == nil {
		s.selectors.controllers = map[controllerKey]controllerSelector{}
	}
	s.selectors.controllers[controllerKey{kind, namespaceOrDefault(namespace), name}] = sel
}

func (s *Snapshot) removeController(kind controllerKind, namespace, name string) {
	delete(s.selectors.controllers, controllerKey{kind, namespaceOrDefault(namespace), name})
}

// DefaultSelector is the selector of PodTopologySpread's default
// constraints for pod, as upstream's helper.DefaultSelector makes it: the
// labels of every Service of the pod's namespace whose selector matches the
// pod's labels, merged, and, when the pod's controller (its owner reference
// with controller set) is a ReplicationController, ReplicaSet or
// StatefulSet of the snapshot, that controller's selector — merged as
// labels for a ReplicationController, its requirements added for the
// others, whether or not it matches the pod. Controllers are found by
// apiVersion, kind, namespace and name; the reference's UID is not
// compared. An empty selector means the default constraints do not apply.
func (s *Snapshot) DefaultSelector(pod *v1.Pod) labels.Selector {
	ns := namespaceOrDefault(pod.Namespace)
	set := labels.Set{}
	podLabels := labels.Set(pod.Labels)
	for _, sel := range s.selectors.services[ns] {
		if sel.AsSelectorPreValidated().Matches(podLabels) {
			// Services that all match the pod agree on every key.
			set = labels.Merge(set, sel)
		}
	}
	selector := set.AsSelector()
	owner := metav1.GetControllerOfNoCopy(pod)
	if owner == nil {
		return selector
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	if err != nil {
		return selector
	}
	kind, ok := controllerKinds[gv.WithKind(owner.Kind)]
	if !ok {
		return selector
	}
	c, found := s.selectors.controllers[controllerKey{kind, ns, owner.Name}]
	switch {
	case !found:
	case kind == replicationController:
		selector = labels.Merge(set, c.set).AsSelector()
	case c.ok:
		selector = selector.Add(c.reqs...)
	}
	return selector
}
