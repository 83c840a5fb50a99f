package snapshot

import (
	"cmp"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
)

// GroupKind says which API object a Group is.
type GroupKind int

const (
	// KindPodGroup is a scheduling.k8s.io/v1beta1 PodGroup: pods name it in
	// spec.schedulingGroup.podGroupName.
	KindPodGroup GroupKind = iota + 1
	// KindCompositePodGroup is a scheduling.k8s.io/v1alpha3
	// CompositePodGroup: PodGroups and CompositePodGroups name it as their
	// parent.
	KindCompositePodGroup
)

// String returns the API kind.
func (k GroupKind) String() string {
	switch k {
	case KindPodGroup:
		return "PodGroup"
	case KindCompositePodGroup:
		return "CompositePodGroup"
	}
	return fmt.Sprintf("GroupKind(%d)", int(k))
}

// Group is a PodGroup or a CompositePodGroup of the snapshot, with what the
// preemption engine reads from it resolved once.
type Group struct {
	// Kind says which of PodGroup and CompositePodGroup is set.
	Kind GroupKind
	// PodGroup is the object when Kind is KindPodGroup.
	PodGroup *schedulingv1beta1.PodGroup
	// CompositePodGroup is the object when Kind is KindCompositePodGroup.
	CompositePodGroup *schedulingv1alpha3.CompositePodGroup
	// Namespace and Name identify the object; Key is "namespace/name".
	Namespace, Name, Key string
	// Priority is spec.priority, resolved from spec.priorityClassName as
	// the Priority admission plugin does for pod groups when it is unset.
	Priority int32
	// DisruptAll reports disruption mode All: the group's pods may only be
	// disrupted together. Unset means Single.
	DisruptAll bool
	// Parent is spec.parentCompositePodGroupName, "" for a root.
	Parent string
}

// Object returns the API object.
func (g *Group) Object() any {
	if g.Kind == KindCompositePodGroup {
		return g.CompositePodGroup
	}
	return g.PodGroup
}

// PodGroupName returns the name of the PodGroup the pod belongs to
// (spec.schedulingGroup.podGroupName), or "" when it names none.
func (p *Pod) PodGroupName() string {
	if sg := p.obj.Spec.SchedulingGroup; sg != nil && sg.PodGroupName != nil {
		return *sg.PodGroupName
	}
	return ""
}

// HasSchedulingGroup reports whether the pod sets spec.schedulingGroup.
func (p *Pod) HasSchedulingGroup() bool { return p.obj.Spec.SchedulingGroup != nil }

// validateSchedulingGroup rejects what the API server would: a scheduling
// group that names no PodGroup.
func validateSchedulingGroup(obj *v1.Pod) error {
	if sg := obj.Spec.SchedulingGroup; sg != nil && (sg.PodGroupName == nil || *sg.PodGroupName == "") {
		return fmt.Errorf("spec.schedulingGroup.podGroupName: required")
	}
	return nil
}

func groupKey(ns, name string) string { return ns + "/" + name }

// SetPodGroup adds or replaces a PodGroup. Its priority is resolved as the
// Priority admission plugin would (an unknown priority class without
// spec.priority is an *ObjectError).
func (s *Snapshot) SetPodGroup(pg *schedulingv1beta1.PodGroup) error {
	g, err := s.newGroup(KindPodGroup, pg.Namespace, pg.Name, pg.Spec.PriorityClassName, pg.Spec.Priority,
		pg.Spec.DisruptionMode != nil && pg.Spec.DisruptionMode.All != nil, pg.Spec.ParentCompositePodGroupName, pg)
	if err != nil {
		return err
	}
	g.PodGroup = pg
	s.RemovePodGroup(g.Namespace, g.Name)
	s.podGroups[g.Key] = g
	s.linkChild(g)
	return nil
}

// newGroup makes a group of kind from its object's fields, resolving its
// priority.
func (s *Snapshot) newGroup(kind GroupKind, ns, name, className string, prio *int32, disruptAll bool, parent *string, obj any) (*Group, error) {
	if ns == "" {
		ns = v1.NamespaceDefault
	}
	p, err := s.resolveGroupPriority(kind.String(), ns, name, className, prio, obj)
	if err != nil {
		return nil, err
	}
	g := &Group{Kind: kind, Namespace: ns, Name: name, Key: groupKey(ns, name), Priority: p, DisruptAll: disruptAll}
	if parent != nil {
		g.Parent = *parent
	}
	return g, nil
}

// RemovePodGroup removes a PodGroup. Pods naming it stay its members.
func (s *Snapshot) RemovePodGroup(namespace, name string) {
	if g, ok := s.podGroups[groupKey(namespace, name)]; ok {
		s.unlinkChild(g)
		delete(s.podGroups, g.Key)
	}
}

// SetCompositePodGroup adds or replaces a CompositePodGroup, resolving its
// priority like SetPodGroup.
func (s *Snapshot) SetCompositePodGroup(cpg *schedulingv1alpha3.CompositePodGroup) error {
	g, err := s.newGroup(KindCompositePodGroup, cpg.Namespace, cpg.Name, cpg.Spec.PriorityClassName, cpg.Spec.Priority,
		cpg.Spec.DisruptionMode != nil && cpg.Spec.DisruptionMode.All != nil, cpg.Spec.ParentCompositePodGroupName, cpg)
	if err != nil {
		return err
	}
	g.CompositePodGroup = cpg
	s.RemoveCompositePodGroup(g.Namespace, g.Name)
	s.compositeGroups[g.Key] = g
	s.linkChild(g)
	return nil
}

// RemoveCompositePodGroup removes a CompositePodGroup.
func (s *Snapshot) RemoveCompositePodGroup(namespace, name string) {
	if g, ok := s.compositeGroups[groupKey(namespace, name)]; ok {
		s.unlinkChild(g)
		delete(s.compositeGroups, g.Key)
	}
}

// linkChild records g among the children of its parent, kept sorted by
// kind and name. The parent need not exist (yet), as in the scheduler's
// cache.
func (s *Snapshot) linkChild(g *Group) {
	if g.Parent == "" {
		return
	}
	key := groupKey(g.Namespace, g.Parent)
	list := s.groupChildren[key]
	i, _ := slices.BinarySearchFunc(list, g, compareGroups)
	s.groupChildren[key] = slices.Insert(list, i, g)
}

func (s *Snapshot) unlinkChild(g *Group) {
	if g.Parent == "" {
		return
	}
	key := groupKey(g.Namespace, g.Parent)
	list := slices.DeleteFunc(s.groupChildren[key], func(c *Group) bool { return c == g })
	if len(list) == 0 {
		delete(s.groupChildren, key)
	} else {
		s.groupChildren[key] = list
	}
}

func compareGroups(a, b *Group) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// resolveGroupPriority is the Priority admission plugin for pod groups:
// spec.priority when set (the object was admitted already), else the named
// class, else the global default class with the lowest value, else 0.
func (s *Snapshot) resolveGroupPriority(kind, ns, name, className string, prio *int32, obj any) (int32, error) {
	if prio != nil {
		return *prio, nil
	}
	switch {
	case className != "":
		if pc, ok := s.classesByName[className]; ok {
			return pc.Value, nil
		}
		switch className {
		case SystemClusterCritical:
			return systemClusterCriticalValue, nil
		case SystemNodeCritical:
			return systemNodeCriticalValue, nil
		}
		return 0, &ObjectError{Kind: kind, Namespace: ns, Name: name, Field: "spec.priorityClassName",
			Detail: fmt.Sprintf("PriorityClass %q not found", className), Obj: obj}
	case s.defaultClass != nil:
		return s.defaultClass.Value, nil
	}
	return 0, nil
}

// PodGroup returns the PodGroup namespace/name, or nil.
func (s *Snapshot) PodGroup(namespace, name string) *Group {
	return s.podGroups[groupKey(namespace, name)]
}

// CompositePodGroup returns the CompositePodGroup namespace/name, or nil.
func (s *Snapshot) CompositePodGroup(namespace, name string) *Group {
	return s.compositeGroups[groupKey(namespace, name)]
}

// GroupChildren returns the PodGroups and CompositePodGroups whose parent is
// the CompositePodGroup namespace/name, sorted by kind and name. The slice
// belongs to the snapshot.
func (s *Snapshot) GroupChildren(namespace, name string) []*Group {
	return s.groupChildren[groupKey(namespace, name)]
}

// ScheduledPods returns the scheduled pods of the PodGroup namespace/name,
// as the scheduler's pod-group state counts them: the pods bound to a node
// that have not finished and name the group in spec.schedulingGroup,
// whether the PodGroup object exists or not, in the order they were bound.
// The slice belongs to the snapshot.
func (s *Snapshot) ScheduledPods(namespace, name string) []*Pod {
	return s.groupMembers[groupKey(namespace, name)]
}

// addMember and removeMember keep the scheduled pods of each PodGroup.
func (s *Snapshot) addMember(p *Pod) {
	if name := p.PodGroupName(); name != "" {
		key := groupKey(p.Namespace(), name)
		s.groupMembers[key] = append(s.groupMembers[key], p)
	}
}

func (s *Snapshot) removeMember(p *Pod) {
	name := p.PodGroupName()
	if name == "" {
		return
	}
	key := groupKey(p.Namespace(), name)
	list := slices.DeleteFunc(s.groupMembers[key], func(q *Pod) bool { return q == p })
	if len(list) == 0 {
		delete(s.groupMembers, key)
	} else {
		s.groupMembers[key] = list
	}
}
