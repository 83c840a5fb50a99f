// Package snapshot holds the cluster state the preemption engine decides on:
// nodes with the pods bound to them, pending and nominated pods, disruption
// budgets, priority classes and namespaces, built once from plain Kubernetes
// objects. Everything derived per pod or per node (priorities, requests,
// ports, affinity terms, per-node sums) is computed at build time, so an
// evaluation never deep-copies the cluster: a dry run on a node works on a
// small overlay of that node's numbers.
//
// Pod groups (scheduling.k8s.io/v1beta1 PodGroups and v1alpha3
// CompositePodGroups) are kept with their priorities resolved and, for each
// PodGroup, its scheduled pods, as the scheduler's pod-group state counts
// them; preemption reads them with the GenericWorkload feature gate.
package snapshot

import (
	"cmp"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Built-in priority classes that every cluster has, with their values.
const (
	SystemClusterCritical      = "system-cluster-critical"
	SystemNodeCritical         = "system-node-critical"
	systemClusterCriticalValue = 2000000000
	systemNodeCriticalValue    = 2000001000
)

// Objects are the Kubernetes objects a snapshot is built from.
type Objects struct {
	Nodes []*v1.Node
	// Pods are the pods, whole; PodParts are pods kept in parts (a lean
	// load's, loader.Options.Lean), which the snapshot takes after Pods,
	// in their order.
	Pods            []*v1.Pod
	PodParts        []*PodParts
	PDBs            []*policyv1.PodDisruptionBudget
	PriorityClasses []*schedulingv1.PriorityClass
	Namespaces      []*v1.Namespace
	// PodGroups and CompositePodGroups are the workload groups pods belong
	// to (spec.schedulingGroup); they matter when preemption runs with the
	// GenericWorkload (and CompositePodGroup) feature gates.
	PodGroups          []*schedulingv1beta1.PodGroup
	CompositePodGroups []*schedulingv1alpha3.CompositePodGroup
	// ResourceSlices, DeviceClasses and ResourceClaims are the dynamic
	// resource allocation objects (resource.k8s.io/v1); see dra.go.
	ResourceSlices []*resourceapi.ResourceSlice
	DeviceClasses  []*resourceapi.DeviceClass
	ResourceClaims []*resourceapi.ResourceClaim
	// Storage are the objects the volume plugins read (storage.go).
	Storage StorageObjects
	// Selectors are the objects whose selectors PodTopologySpread's
	// default constraints take (selectors.go).
	Selectors SelectorObjects
}

// Snapshot is the cluster as the engine sees it. It is built once with New
// (whatif) or maintained incrementally with the Add/Update/Remove methods
// (the scheduler loop). Evaluations only read it; it must not change while
// one runs.
type Snapshot struct {
	// Nodes in the order the scheduler lists them: round-robin over zones in
	// order of first appearance, nodes of a zone in the order they came.
	Nodes []*Node
	// PDBs sorted by namespace and name.
	PDBs []*policyv1.PodDisruptionBudget

	zones       []string
	nodeNames   []string    // the names of Nodes, in order
	namesShared atomic.Bool // nodeNames was handed out
	sums        []NodeSums  // the sums of Nodes, in order
	// numRequiredAntiAffinity counts the pods of Nodes with required
	// anti-affinity terms.
	numRequiredAntiAffinity int
	nodesByZone             map[string][]*Node
	nodesByName             map[string]*Node
	// ghosts hold, by node name, pods bound to nodes the snapshot does not
	// know; they occupy nothing until the node arrives.
	ghosts        map[string]*Node
	podsByKey     map[string]*Pod
	nominated     map[string][]*Pod
	namespaces    map[string]*v1.Namespace
	classesByName map[string]*schedulingv1.PriorityClass
	defaultClass  *schedulingv1.PriorityClass
	seq           int
	// labelSets interns the pods' namespaces and labels (labelsets.go).
	labelSets labelSets
	// terms interns the pods' anti-affinity terms (terms.go).
	terms termSets
	// domains caches the nodes' topology domains (domains.go).
	domains domainCache

	// Pod groups: PodGroups and CompositePodGroups by "namespace/name", the
	// children of each CompositePodGroup (by its key, whether it exists or
	// not), and the scheduled pods of each PodGroup (by the key pods name,
	// whether the PodGroup exists or not).
	podGroups       map[string]*Group
	compositeGroups map[string]*Group
	groupChildren   map[string][]*Group
	groupMembers    map[string][]*Pod

	// dra holds the dynamic resource allocation objects (dra.go).
	dra draObjects
	// storage indexes the storage objects (storage.go).
	storage storage
	// selectors index the SelectorObjects (selectors.go).
	selectors selectors
}

// ObjectError is a problem with one object of the input, naming the object
// and the field at fault.
type ObjectError struct {
	// Kind, Namespace and Name identify the object.
	Kind, Namespace, Name string
	// Field is the JSON path of the offending field, e.g. "spec.nodeName".
	Field string
	// Detail says what is wrong.
	Detail string
	// Obj is the offending object, so that a loader can say where it came from.
	Obj any
}

func (e *ObjectError) Error() string {
	id := e.Name
	if e.Namespace != "" {
		id = e.Namespace + "/" + e.Name
	}
	if id == "" {
		id = "(unnamed)"
	}
	if e.Field == "" {
		return fmt.Sprintf("%s %s: %s", e.Kind, id, e.Detail)
	}
	return fmt.Sprintf("%s %s: %s: %s", e.Kind, id, e.Field, e.Detail)
}

// Empty returns a snapshot without any object.
func Empty() *Snapshot {
	return &Snapshot{
		nodesByZone:   map[string][]*Node{},
		nodesByName:   map[string]*Node{},
		podsByKey:     map[string]*Pod{},
		nominated:     map[string][]*Pod{},
		namespaces:    map[string]*v1.Namespace{},
		classesByName: map[string]*schedulingv1.PriorityClass{},

		podGroups:       map[string]*Group{},
		compositeGroups: map[string]*Group{},
		groupChildren:   map[string][]*Group{},
		groupMembers:    map[string][]*Pod{},
	}
}

// New builds a snapshot. It rejects duplicate objects, pods bound to nodes
// that do not exist, pods and pod groups naming unknown priority classes,
// and unparsable selectors, each with an *ObjectError.
func New(objs Objects) (*Snapshot, error) { return NewParallel(objs, 1) }

// NewParallel is New on up to parallelism goroutines: the pods' own state
// (priority, requests, affinity terms) is worked out ahead of the one that
// adds them in order (addPods); the snapshot and any error are New's.
func NewParallel(objs Objects, parallelism int) (*Snapshot, error) {
	s := Empty()
	s.podsByKey = make(map[string]*Pod, objs.podCount())
	for _, ns := range objs.Namespaces {
		if _, dup := s.namespaces[ns.Name]; dup {
			return nil, duplicateObject("Namespace", "", ns.Name, ns)
		}
		s.SetNamespace(ns)
	}
	for _, pc := range objs.PriorityClasses {
		if _, dup := s.classesByName[pc.Name]; dup {
			return nil, duplicateObject("PriorityClass", "", pc.Name, pc)
		}
		s.SetPriorityClass(pc)
	}
	for _, n := range objs.Nodes {
		if err := s.addNode(n); err != nil {
			return nil, err
		}
	}
	s.relist()
	if err := s.addPods(&objs, parallelism); err != nil {
		return nil, err
	}
	for _, pdb := range objs.PDBs {
		if s.hasPDB(pdb.Namespace, pdb.Name) {
			return nil, duplicateObject("PodDisruptionBudget", pdb.Namespace, pdb.Name, pdb)
		}
		if err := s.SetPDB(pdb); err != nil {
			return nil, err
		}
	}
	if err := s.addStorage(objs.Storage); err != nil {
		return nil, err
	}
	for _, pg := range objs.PodGroups {
		if s.PodGroup(namespaceOrDefault(pg.Namespace), pg.Name) != nil {
			return nil, duplicateObject("PodGroup", namespaceOrDefault(pg.Namespace), pg.Name, pg)
		}
		if err := s.SetPodGroup(pg); err != nil {
			return nil, err
		}
	}
	for _, cpg := range objs.CompositePodGroups {
		if s.CompositePodGroup(namespaceOrDefault(cpg.Namespace), cpg.Name) != nil {
			return nil, duplicateObject("CompositePodGroup", namespaceOrDefault(cpg.Namespace), cpg.Name, cpg)
		}
		if err := s.SetCompositePodGroup(cpg); err != nil {
			return nil, err
		}
	}
	if err := s.addDRA(objs); err != nil {
		return nil, err
	}
	if err := s.addSelectors(objs.Selectors); err != nil {
		return nil, err
	}
	s.buildOrders(parallelism)
	s.buildDomains()
	return s, nil
}

// duplicateObject is the error for an object of kind named as one the
// snapshot holds already.
func duplicateObject(kind, namespace, name string, obj any) *ObjectError {
	return &ObjectError{Kind: kind, Namespace: namespace, Name: name, Field: "metadata.name", Detail: "duplicate object", Obj: obj}
}

func namespaceOrDefault(ns string) string {
	if ns == "" {
		return v1.NamespaceDefault
	}
	return ns
}

// SetNamespace adds or replaces a namespace.
func (s *Snapshot) SetNamespace(ns *v1.Namespace) { s.namespaces[ns.Name] = ns }

// RemoveNamespace removes a namespace.
func (s *Snapshot) RemoveNamespace(name string) { delete(s.namespaces, name) }

// SetPriorityClass adds or replaces a priority class. It affects the
// resolution of pods added afterwards, as admission would.
func (s *Snapshot) SetPriorityClass(pc *schedulingv1.PriorityClass) {
	s.classesByName[pc.Name] = pc
	s.resolveDefaultClass()
}

// RemovePriorityClass removes a priority class.
func (s *Snapshot) RemovePriorityClass(name string) {
	delete(s.classesByName, name)
	s.resolveDefaultClass()
}

func (s *Snapshot) resolveDefaultClass() {
	s.defaultClass = nil
	for _, pc := range s.classesByName {
		if pc.GlobalDefault && (s.defaultClass == nil || pc.Value < s.defaultClass.Value ||
			pc.Value == s.defaultClass.Value && pc.Name < s.defaultClass.Name) {
			s.defaultClass = pc
		}
	}
}

// PriorityClasses returns the priority classes sorted by name.
func (s *Snapshot) PriorityClasses() []*schedulingv1.PriorityClass {
	out := make([]*schedulingv1.PriorityClass, 0, len(s.classesByName))
	for _, pc := range s.classesByName {
		out = append(out, pc)
	}
	slices.SortFunc(out, func(a, b *schedulingv1.PriorityClass) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// AddPod adds a pod: bound pods occupy their node, pending pods with a
// nominated node are nominated there, finished pods are only remembered.
// Adding a pod that exists is an error. A pod bound to a node the snapshot
// does not know (yet) is kept aside and placed when the node is added, as
// upstream's cache does when events arrive out of order.
func (s *Snapshot) AddPod(obj *v1.Pod) (*Pod, error) {
	p, err := s.newPod(obj, 0) // addPod numbers it
	return s.addPod(obj.Namespace, obj.Name, obj, p, err)
}

// podHead is what NewParallel reads of a pod before it adds it.
type podHead struct {
	namespace, name, nodeName string
	phase                     v1.PodPhase
	origin                    any
}

// head returns o's i'th pod's podHead.
func (o *Objects) head(i int) podHead {
	if i < len(o.Pods) {
		p := o.Pods[i]
		return podHead{namespace: p.Namespace, name: p.Name, nodeName: p.Spec.NodeName, phase: p.Status.Phase, origin: p}
	}
	p := o.PodParts[i-len(o.Pods)]
	return podHead{namespace: p.Shape.Namespace, name: p.Name, nodeName: p.NodeName, phase: p.Status.Phase, origin: p}
}

// podScratch is where a pod kept in parts is made whole to be read: shape
// is the shape pod holds, so that the next pod of that shape writes only
// its own fields.
type podScratch struct {
	pod   v1.Pod
	shape *v1.Pod
	// protos are pods lately made of pods in parts, by their shapes,
	// that newPodOf may copy for the next pods of those shapes: copies
	// (keep) of pods that are added, and so numbered, maybe while the
	// next ones are made.
	protos map[*v1.Pod]*Pod
	// kept holds the copies, a block at a time; used counts those taken
	// since protos was last emptied, which it is at maxShapes.
	kept [][]Pod
	used int
}

// keptBlock is how many prototypes a block of podScratch.kept holds.
const keptBlock = 64

// keep makes a copy of p, a pod of shape's, shape's prototype.
func (sc *podScratch) keep(shape *v1.Pod, p *Pod) {
	if sc.protos == nil {
		sc.protos = make(map[*v1.Pod]*Pod)
	}
	if sc.used == maxShapes {
		clear(sc.protos)
		sc.used = 0
	}
	b, i := sc.used/keptBlock, sc.used%keptBlock
	if b == len(sc.kept) {
		sc.kept = append(sc.kept, make([]Pod, keptBlock))
	}
	sc.kept[b][i] = *p
	sc.protos[shape] = &sc.kept[b][i]
	sc.used++
}

// maxShapes bounds the caches by shape (podScratch.protos,
// labelSets.byShape): a cluster's workloads, most often, but not a shape
// per pod, as where no two pods are alike.
const maxShapes = 4096

// specFixed reports whether what parts' pod occupies, its priority and
// its terms come from its shape alone: its status reports no resources
// (in-place resize) that the requests would read instead of the spec's
// (StatusRequestsAgree).
func specFixed(parts *PodParts) bool {
	st := &parts.Status
	return st.Rest == nil && StatusRequestsAgree(&parts.Shape.Spec, st.Conditions, st.ContainerStatuses)
}

// fill makes s the whole pod of parts.
func (s *podScratch) fill(parts *PodParts) *v1.Pod {
	if s.shape != parts.Shape {
		parts.Into(&s.pod)
		s.shape = parts.Shape
	} else {
		parts.ownInto(&s.pod)
	}
	return &s.pod
}

// AllPods yields o's pods in the order a snapshot takes them, each whole
// with the object it was given as (its *v1.Pod or *PodParts). A pod kept
// in parts is made whole in one place, which the next step reuses: it
// must not be kept.
func (o *Objects) AllPods() iter.Seq2[*v1.Pod, any] {
	return func(yield func(*v1.Pod, any) bool) {
		var scratch podScratch
		for i := range o.podCount() {
			if !yield(o.pod(i, &scratch)) {
				return
			}
		}
	}
}

// podCount returns how many pods o holds, whole and in parts.
func (o *Objects) podCount() int { return len(o.Pods) + len(o.PodParts) }

// pod returns o's i'th pod, whole (written into scratch when it is kept in
// parts), and the object it was given as (its *v1.Pod or *PodParts).
func (o *Objects) pod(i int, scratch *podScratch) (*v1.Pod, any) {
	if i < len(o.Pods) {
		return o.Pods[i], o.Pods[i]
	}
	parts := o.PodParts[i-len(o.Pods)]
	return scratch.fill(parts), parts
}

// newPodOf is newPod for objs' i'th pod; scratch holds a pod kept in parts
// while it is read (the Pod made keeps the parts, not scratch). A pod in
// parts whose status cannot change what it occupies (specFixed) is made
// as a copy of the last pod of its shape that was, but for its own fields.
func (s *Snapshot) newPodOf(objs *Objects, i int, scratch *podScratch) (*Pod, error) {
	if i >= len(objs.Pods) {
		parts := objs.PodParts[i-len(objs.Pods)]
		if proto := scratch.protos[parts.Shape]; proto != nil && specFixed(parts) {
			p := *proto
			p.parts, p.Seq, p.labelSetID = parts, 0, -1
			p.Key = parts.Shape.Namespace + "/" + parts.Name
			p.setStart(parts.Status.StartTime)
			return &p, nil
		}
	}
	obj, origin := objs.pod(i, scratch)
	p, err := s.newPod(obj, 0) // addPod numbers it
	if parts, ok := origin.(*PodParts); ok {
		if p != nil {
			p.obj, p.parts = parts.Shape, parts
			delete(scratch.protos, parts.Shape)
			if p.terms == nil && specFixed(parts) {
				scratch.keep(parts.Shape, p)
			}
		}
		var oe *ObjectError
		if errors.As(err, &oe) && oe.Obj == any(&scratch.pod) {
			oe.Obj = parts
		}
	}
	return p, err
}

// addPods adds objs' pods in order, each as addPod adds it. With
// parallelism above 1, the pods' own state (newPodOf) is made ahead on
// parallelism-1 more goroutines, in runs of neighbours, while this one
// adds the pods made: making reads only the priority classes, which adding
// does not change. The first error stops both.
func (s *Snapshot) addPods(objs *Objects, parallelism int) error {
	n := objs.podCount()
	var ahead *podsAhead
	if parallelism > 1 && n > podRun {
		ahead = s.makePodsAhead(objs, parallelism-1)
		defer ahead.stop()
	}
	var scratch podScratch
	for i := range n {
		h := objs.head(i)
		if h.nodeName != "" && h.phase != v1.PodSucceeded && h.phase != v1.PodFailed && s.nodesByName[h.nodeName] == nil {
			return &ObjectError{Kind: "Pod", Namespace: h.namespace, Name: h.name, Field: "spec.nodeName",
				Detail: fmt.Sprintf("node %q does not exist in the snapshot", h.nodeName), Obj: h.origin}
		}
		var own *Pod
		var err error
		if ahead != nil {
			own, err = ahead.get(i)
		} else {
			own, err = s.newPodOf(objs, i, &scratch)
		}
		if own == nil || err != nil {
			if _, err := s.addPod(h.namespace, h.name, h.origin, own, err); err != nil {
				return err
			}
			continue
		}
		// As addPod, with one map operation: a duplicate fails the
		// build, so it may take its first's place.
		had := len(s.podsByKey)
		s.podsByKey[own.Key] = own
		if len(s.podsByKey) == had {
			return duplicateObject("Pod", h.namespace, h.name, h.origin)
		}
		s.admit(own)
	}
	return nil
}

// podRun is how many neighbouring pods a goroutine makes at a time.
const podRun = 256

// podsAhead are pods' own states made on goroutines of their own, a run at
// a time, for the loop that adds them in order.
type podsAhead struct {
	made []*Pod
	// errs[r] holds why pods of run r could not be made, by their place
	// in the run (nil: all were), written by the run's goroutine.
	errs [][]error
	// ready[r] is closed once run r is made.
	ready   []chan struct{}
	next    atomic.Int64
	stopped atomic.Bool
	wg      sync.WaitGroup
}

// makePodsAhead starts making objs' pods on goroutines goroutines.
func (s *Snapshot) makePodsAhead(objs *Objects, goroutines int) *podsAhead {
	n := objs.podCount()
	runs := (n + podRun - 1) / podRun
	a := &podsAhead{made: make([]*Pod, n), errs: make([][]error, runs), ready: make([]chan struct{}, runs)}
	for r := range a.ready {
		a.ready[r] = make(chan struct{})
	}
	for range min(goroutines, runs) {
		a.wg.Go(func() {
			var scratch podScratch
			for !a.stopped.Load() {
				r := int(a.next.Add(1)) - 1
				if r >= runs {
					return
				}
				for i := r * podRun; i < min((r+1)*podRun, n); i++ {
					var err error
					if a.made[i], err = s.newPodOf(objs, i, &scratch); err != nil {
						if a.errs[r] == nil {
							a.errs[r] = make([]error, podRun)
						}
						a.errs[r][i%podRun] = err
					}
				}
				close(a.ready[r])
			}
		})
	}
	return a
}

// get returns pod i as made, once its run is; it is called for each pod
// in order.
func (a *podsAhead) get(i int) (*Pod, error) {
	if i%podRun == 0 {
		<-a.ready[i/podRun]
	}
	if errs := a.errs[i/podRun]; errs != nil {
		return a.made[i], errs[i%podRun]
	}
	return a.made[i], nil
}

// stop stops the goroutines (between runs) and waits for them.
func (a *podsAhead) stop() {
	a.stopped.Store(true)
	a.wg.Wait()
}

// addPod adds the pod namespace/name, given as origin, whose own state
// newPod made as p (or failed with err), unless the snapshot holds a pod
// of its name.
func (s *Snapshot) addPod(namespace, name string, origin any, p *Pod, err error) (*Pod, error) {
	var key string
	if p != nil {
		key = p.Key
	} else {
		key = namespace + "/" + name
	}
	if _, dup := s.podsByKey[key]; dup {
		return nil, duplicateObject("Pod", namespace, name, origin)
	}
	if err != nil {
		return nil, err
	}
	s.podsByKey[key] = p
	s.admit(p)
	return p, nil
}

// admit numbers p, a pod podsByKey holds now, and adds it to the label
// sets, terms and node it belongs to.
func (s *Snapshot) admit(p *Pod) {
	p.Seq = s.seq
	s.seq++
	s.labelSets.acquire(p)
	s.terms.acquire(p)
	s.place(p)
}

// UpdatePod replaces a pod's object. A bound pod that changes moves to the
// end of its node's list, as upstream's cache does (remove, then add).
// Priority is not re-resolved: it is immutable once admitted.
func (s *Snapshot) UpdatePod(obj *v1.Pod) (*Pod, error) {
	key := obj.Namespace + "/" + obj.Name
	old, ok := s.podsByKey[key]
	if !ok {
		return s.AddPod(obj)
	}
	prio, policy := old.Priority, old.PreemptionPolicy()
	if obj.Spec.Priority != nil {
		prio = *obj.Spec.Priority
	}
	p, err := newPod(obj, prio, policy, old.Seq)
	if err != nil {
		return nil, &ObjectError{Kind: "Pod", Namespace: obj.Namespace, Name: obj.Name, Detail: err.Error(), Obj: obj}
	}
	s.unplace(old)
	s.labelSets.acquire(p)
	s.labelSets.release(old)
	s.terms.acquire(p)
	s.terms.release(old)
	s.podsByKey[key] = p
	s.place(p)
	return p, nil
}

// RemovePod removes the pod "namespace/name".
func (s *Snapshot) RemovePod(key string) {
	if p, ok := s.podsByKey[key]; ok {
		s.unplace(p)
		s.labelSets.release(p)
		s.terms.release(p)
		delete(s.podsByKey, key)
	}
}

// place puts p where it counts: on its node, or among its node's nominated pods.
func (s *Snapshot) place(p *Pod) {
	if p.Finished() {
		return
	}
	if name := p.NodeName(); name != "" {
		if node, ok := s.nodesByName[name]; ok {
			node.addPod(p)
			s.resum(node)
		} else {
			s.ghost(name).addPod(p)
		}
		s.addMember(p)
		return
	}
	if nnn := p.NominatedNodeName(); nnn != "" && !p.terminating {
		s.nominated[nnn] = append(s.nominated[nnn], p)
		if node, ok := s.nodesByName[nnn]; ok {
			node.Nominated = s.nominated[nnn]
			s.resum(node)
		}
	}
}

func (s *Snapshot) unplace(p *Pod) {
	if name := p.NodeName(); name != "" {
		if node, ok := s.nodesByName[name]; ok {
			node.removePod(p)
			s.resum(node)
		} else if g, ok := s.ghosts[name]; ok {
			g.removePod(p)
			if len(g.Pods) == 0 {
				delete(s.ghosts, name)
			}
		}
		s.removeMember(p)
		return
	}
	if nnn := p.NominatedNodeName(); nnn != "" {
		list := s.nominated[nnn]
		if i := slices.Index(list, p); i >= 0 {
			list = slices.Delete(list, i, i+1)
		}
		if len(list) == 0 {
			delete(s.nominated, nnn)
		} else {
			s.nominated[nnn] = list
		}
		if node, ok := s.nodesByName[nnn]; ok {
			node.Nominated = s.nominated[nnn]
			s.resum(node)
		}
	}
}

func (n *Node) addPod(p *Pod) {
	n.Pods = append(n.Pods, p)
	n.forgetOrder()
	n.Requested.Add(&p.Requests, 1)
	n.NonZeroMilliCPU += p.NonZeroMilliCPU
	n.NonZeroMemory += p.NonZeroMemory
	n.UsedPorts.AddPod(p)
	if len(p.RequiredAntiAffinity()) > 0 {
		n.PodsWithRequiredAntiAffinity = append(n.PodsWithRequiredAntiAffinity, p)
	}
	if p.HasAffinity() {
		n.PodsWithAffinity = append(n.PodsWithAffinity, p)
	}
}

// swapRemove removes p from list the way upstream's NodeInfo does: the last
// element takes its slot.
func swapRemove(list []*Pod, p *Pod) []*Pod {
	for i, q := range list {
		if q == p {
			list[i] = list[len(list)-1]
			list[len(list)-1] = nil
			return list[:len(list)-1]
		}
	}
	return list
}

func (n *Node) removePod(p *Pod) {
	before := len(n.Pods)
	n.Pods = swapRemove(n.Pods, p)
	if len(n.Pods) == before {
		return
	}
	n.forgetOrder()
	n.Requested.Add(&p.Requests, -1)
	n.NonZeroMilliCPU -= p.NonZeroMilliCPU
	n.NonZeroMemory -= p.NonZeroMemory
	n.UsedPorts.RemovePod(p)
	if len(p.RequiredAntiAffinity()) > 0 {
		n.PodsWithRequiredAntiAffinity = swapRemove(n.PodsWithRequiredAntiAffinity, p)
	}
	if p.HasAffinity() {
		n.PodsWithAffinity = swapRemove(n.PodsWithAffinity, p)
	}
}

// SetPDB adds or replaces a disruption budget.
func (s *Snapshot) SetPDB(pdb *policyv1.PodDisruptionBudget) error {
	if _, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err != nil {
		return &ObjectError{Kind: "PodDisruptionBudget", Namespace: pdb.Namespace, Name: pdb.Name, Field: "spec.selector", Detail: err.Error(), Obj: pdb}
	}
	s.RemovePDB(pdb.Namespace, pdb.Name)
	i, _ := slices.BinarySearchFunc(s.PDBs, pdb, comparePDB)
	s.PDBs = slices.Insert(s.PDBs, i, pdb)
	return nil
}

// RemovePDB removes a disruption budget.
func (s *Snapshot) RemovePDB(namespace, name string) {
	s.PDBs = slices.DeleteFunc(s.PDBs, func(p *policyv1.PodDisruptionBudget) bool {
		return p.Namespace == namespace && p.Name == name
	})
}

func (s *Snapshot) hasPDB(namespace, name string) bool {
	return slices.ContainsFunc(s.PDBs, func(p *policyv1.PodDisruptionBudget) bool {
		return p.Namespace == namespace && p.Name == name
	})
}

func comparePDB(a, b *policyv1.PodDisruptionBudget) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// Pods returns every pod of the snapshot, in the order they were added.
func (s *Snapshot) Pods() []*Pod {
	out := make([]*Pod, 0, len(s.podsByKey))
	for _, p := range s.podsByKey {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *Pod) int { return cmp.Compare(a.Seq, b.Seq) })
	return out
}

// ResolvePriority returns pod's priority and preemption policy as the
// Priority admission plugin would set them: spec values when present, else
// those of the named PriorityClass (the built-in system classes are always
// known), else those of the globalDefault class with the lowest value, else
// 0 and PreemptLowerPriority. An unknown class name is an *ObjectError.
func (s *Snapshot) ResolvePriority(pod *v1.Pod) (int32, v1.PreemptionPolicy, error) {
	var prio int32
	policy := v1.PreemptLowerPriority
	switch name := pod.Spec.PriorityClassName; {
	case name != "":
		if pc, ok := s.classesByName[name]; ok {
			prio = pc.Value
			if pc.PreemptionPolicy != nil {
				policy = *pc.PreemptionPolicy
			}
		} else if name == SystemClusterCritical {
			prio = systemClusterCriticalValue
		} else if name == SystemNodeCritical {
			prio = systemNodeCriticalValue
		} else if pod.Spec.Priority == nil {
			return 0, "", &ObjectError{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, Field: "spec.priorityClassName",
				Detail: fmt.Sprintf("PriorityClass %q not found", name), Obj: pod}
		}
	case s.defaultClass != nil:
		prio = s.defaultClass.Value
		if s.defaultClass.PreemptionPolicy != nil {
			policy = *s.defaultClass.PreemptionPolicy
		}
	}
	if pod.Spec.Priority != nil {
		prio = *pod.Spec.Priority
	}
	if pod.Spec.PreemptionPolicy != nil {
		policy = *pod.Spec.PreemptionPolicy
	}
	return prio, policy, nil
}

// NewPod prepares a pod that is not part of the snapshot, such as a
// preemptor read from a file, resolving its priority with the snapshot's
// priority classes.
func (s *Snapshot) NewPod(obj *v1.Pod) (*Pod, error) {
	return s.newPod(obj, -1)
}

// NumPods returns the number of pods in the snapshot.
func (s *Snapshot) NumPods() int { return len(s.podsByKey) }

func (s *Snapshot) newPod(obj *v1.Pod, seq int) (*Pod, error) {
	prio, policy, err := s.ResolvePriority(obj)
	if err != nil {
		return nil, err
	}
	p, err := newPod(obj, prio, policy, seq)
	if err != nil {
		return nil, &ObjectError{Kind: "Pod", Namespace: obj.Namespace, Name: obj.Name, Detail: err.Error(), Obj: obj}
	}
	return p, nil
}

// Node returns the named node, or nil.
func (s *Snapshot) Node(name string) *Node { return s.nodesByName[name] }

// Pod returns the pod "namespace/name", or nil.
func (s *Snapshot) Pod(key string) *Pod { return s.podsByKey[key] }

// NominatedPods returns the pending pods nominated to the named node, in load order.
func (s *Snapshot) NominatedPods(node string) []*Pod { return s.nominated[node] }

// NamespaceLabels returns the labels of the named namespace, or nil when the
// snapshot does not have it (the scheduler then assumes no labels).
func (s *Snapshot) NamespaceLabels(name string) labels.Set {
	if ns, ok := s.namespaces[name]; ok {
		return labels.Merge(ns.Labels, nil)
	}
	return nil
}

// NamespacesMatching returns the names of the snapshot's namespaces selected by sel.
func (s *Snapshot) NamespacesMatching(sel labels.Selector) []string {
	var out []string
	for name, ns := range s.namespaces {
		if sel.Matches(labels.Set(ns.Labels)) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
