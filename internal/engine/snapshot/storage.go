package snapshot

import (
	"cmp"
	"slices"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/volume"
)

// StorageObjects are the storage objects the volume plugins read:
// PersistentVolumes, PersistentVolumeClaims, StorageClasses, CSINodes,
// CSIDrivers, CSIStorageCapacities and VolumeAttachments.
type StorageObjects struct {
	PersistentVolumes      []*v1.PersistentVolume
	PersistentVolumeClaims []*v1.PersistentVolumeClaim
	StorageClasses         []*storagev1.StorageClass
	CSINodes               []*storagev1.CSINode
	CSIDrivers             []*storagev1.CSIDriver
	CSIStorageCapacities   []*storagev1.CSIStorageCapacity
	VolumeAttachments      []*storagev1.VolumeAttachment
}

// storage indexes the storage objects of a snapshot. The zero value is an
// empty index; maps are made on first use.
type storage struct {
	pvs        map[string]*v1.PersistentVolume
	pvcs       map[string]*v1.PersistentVolumeClaim // by "namespace/name"
	classes    map[string]*storagev1.StorageClass
	csiNodes   map[string]*storagev1.CSINode
	csiDrivers map[string]*storagev1.CSIDriver
	capacities map[string]*storagev1.CSIStorageCapacity // by "namespace/name"
	vas        map[string]*storagev1.VolumeAttachment

	// Derived lists, rebuilt when their source changes, so that
	// evaluations only ever read; bulk defers that during New.
	pvsByClass   map[string][]*v1.PersistentVolume
	capacityList []*storagev1.CSIStorageCapacity
	vasByNode    map[string][]*storagev1.VolumeAttachment
	bulk         bool
}

func setIn[T any](m *map[string]T, key string, obj T) {
	if *m == nil {
		*m = map[string]T{}
	}
	(*m)[key] = obj
}

// addStorage adds every storage object, rejecting duplicates. The kinds
// after one with a duplicate are still added: New discards the snapshot.
func (s *Snapshot) addStorage(objs StorageObjects) error {
	st := &s.storage
	st.bulk = true
	defer func() {
		st.bulk = false
		st.reindexPVs()
		st.reindexCapacities()
		st.reindexVAs()
	}()
	return cmp.Or(
		addEach("PersistentVolume", false, objs.PersistentVolumes, &st.pvs, s.SetPersistentVolume),
		addEach("PersistentVolumeClaim", true, objs.PersistentVolumeClaims, &st.pvcs, s.SetPersistentVolumeClaim),
		addEach("StorageClass", false, objs.StorageClasses, &st.classes, s.SetStorageClass),
		addEach("CSINode", false, objs.CSINodes, &st.csiNodes, s.SetCSINode),
		addEach("CSIDriver", false, objs.CSIDrivers, &st.csiDrivers, s.SetCSIDriver),
		addEach("CSIStorageCapacity", true, objs.CSIStorageCapacities, &st.capacities, s.SetCSIStorageCapacity),
		addEach("VolumeAttachment", false, objs.VolumeAttachments, &st.vas, s.SetVolumeAttachment),
	)
}

// addEach adds the objects of one kind with set, which files each in
// *index by name (namespaced: "namespace/name", the namespace defaulted),
// and rejects an object whose key is already there.
func addEach[T metav1.Object](kind string, namespaced bool, objs []T, index *map[string]T, set func(T)) error {
	for _, o := range objs {
		ns, key := "", o.GetName()
		if namespaced {
			ns = namespaceOrDefault(o.GetNamespace())
			key = ns + "/" + key
		}
		if _, taken := (*index)[key]; taken {
			return duplicateObject(kind, ns, o.GetName(), o)
		}
		set(o)
	}
	return nil
}

// SetPersistentVolume adds or replaces a PersistentVolume.
func (s *Snapshot) SetPersistentVolume(pv *v1.PersistentVolume) {
	st := &s.storage
	if !st.bulk {
		if old := st.pvs[pv.Name]; old != nil {
			st.unindexPV(old)
		}
		st.indexPV(pv)
	}
	setIn(&st.pvs, pv.Name, pv)
}

// RemovePersistentVolume removes a PersistentVolume.
func (s *Snapshot) RemovePersistentVolume(name string) {
	st := &s.storage
	if old := st.pvs[name]; old != nil && !st.bulk {
		st.unindexPV(old)
	}
	delete(st.pvs, name)
}

func comparePVs(a, b *v1.PersistentVolume) int { return cmp.Compare(a.Name, b.Name) }

// indexPV and unindexPV keep pvsByClass sorted; lists are copied on
// write, so that a list handed out never changes.
func (st *storage) indexPV(pv *v1.PersistentVolume) {
	if st.pvsByClass == nil {
		st.pvsByClass = map[string][]*v1.PersistentVolume{}
	}
	c := volume.GetPersistentVolumeClass(pv)
	list := st.pvsByClass[c]
	i, _ := slices.BinarySearchFunc(list, pv, comparePVs)
	st.pvsByClass[c] = slices.Insert(slices.Clip(list), i, pv)
}

func (st *storage) unindexPV(pv *v1.PersistentVolume) {
	c := volume.GetPersistentVolumeClass(pv)
	list := st.pvsByClass[c]
	if i, found := slices.BinarySearchFunc(list, pv, comparePVs); found {
		st.pvsByClass[c] = slices.Delete(slices.Clone(list), i, i+1)
	}
}

// SetPersistentVolumeClaim adds or replaces a PersistentVolumeClaim.
func (s *Snapshot) SetPersistentVolumeClaim(pvc *v1.PersistentVolumeClaim) {
	setIn(&s.storage.pvcs, namespaceOrDefault(pvc.Namespace)+"/"+pvc.Name, pvc)
}

// RemovePersistentVolumeClaim removes the PersistentVolumeClaim "namespace/name".
func (s *Snapshot) RemovePersistentVolumeClaim(key string) { delete(s.storage.pvcs, key) }

// SetStorageClass adds or replaces a StorageClass.
func (s *Snapshot) SetStorageClass(sc *storagev1.StorageClass) {
	setIn(&s.storage.classes, sc.Name, sc)
}

// RemoveStorageClass removes a StorageClass.
func (s *Snapshot) RemoveStorageClass(name string) { delete(s.storage.classes, name) }

// SetCSINode adds or replaces a CSINode.
func (s *Snapshot) SetCSINode(n *storagev1.CSINode) { setIn(&s.storage.csiNodes, n.Name, n) }

// RemoveCSINode removes a CSINode.
func (s *Snapshot) RemoveCSINode(name string) { delete(s.storage.csiNodes, name) }

// SetCSIDriver adds or replaces a CSIDriver.
func (s *Snapshot) SetCSIDriver(d *storagev1.CSIDriver) { setIn(&s.storage.csiDrivers, d.Name, d) }

// RemoveCSIDriver removes a CSIDriver.
func (s *Snapshot) RemoveCSIDriver(name string) { delete(s.storage.csiDrivers, name) }

// SetCSIStorageCapacity adds or replaces a CSIStorageCapacity.
func (s *Snapshot) SetCSIStorageCapacity(c *storagev1.CSIStorageCapacity) {
	setIn(&s.storage.capacities, namespaceOrDefault(c.Namespace)+"/"+c.Name, c)
	s.storage.changedCapacities()
}

// RemoveCSIStorageCapacity removes the CSIStorageCapacity "namespace/name".
func (s *Snapshot) RemoveCSIStorageCapacity(key string) {
	delete(s.storage.capacities, key)
	s.storage.changedCapacities()
}

// SetVolumeAttachment adds or replaces a VolumeAttachment.
func (s *Snapshot) SetVolumeAttachment(va *storagev1.VolumeAttachment) {
	setIn(&s.storage.vas, va.Name, va)
	s.storage.changedVAs()
}

// RemoveVolumeAttachment removes a VolumeAttachment.
func (s *Snapshot) RemoveVolumeAttachment(name string) {
	delete(s.storage.vas, name)
	s.storage.changedVAs()
}

// PersistentVolume returns the named PersistentVolume, or nil.
func (s *Snapshot) PersistentVolume(name string) *v1.PersistentVolume { return s.storage.pvs[name] }

// PersistentVolumeClaim returns the claim namespace/name, or nil.
func (s *Snapshot) PersistentVolumeClaim(namespace, name string) *v1.PersistentVolumeClaim {
	return s.storage.pvcs[namespace+"/"+name]
}

// StorageClass returns the named StorageClass, or nil.
func (s *Snapshot) StorageClass(name string) *storagev1.StorageClass { return s.storage.classes[name] }

// CSINode returns the CSINode of the named node, or nil.
func (s *Snapshot) CSINode(name string) *storagev1.CSINode { return s.storage.csiNodes[name] }

// CSIDriver returns the named CSIDriver, or nil.
func (s *Snapshot) CSIDriver(name string) *storagev1.CSIDriver { return s.storage.csiDrivers[name] }

func (st *storage) changedCapacities() {
	if !st.bulk {
		st.reindexCapacities()
	}
}

func (st *storage) changedVAs() {
	if !st.bulk {
		st.reindexVAs()
	}
}

func (st *storage) reindexPVs() {
	st.pvsByClass = map[string][]*v1.PersistentVolume{}
	for _, pv := range st.pvs {
		c := volume.GetPersistentVolumeClass(pv)
		st.pvsByClass[c] = append(st.pvsByClass[c], pv)
	}
	for _, list := range st.pvsByClass {
		slices.SortFunc(list, func(a, b *v1.PersistentVolume) int { return cmp.Compare(a.Name, b.Name) })
	}
}

func (st *storage) reindexCapacities() {
	st.capacityList = make([]*storagev1.CSIStorageCapacity, 0, len(st.capacities))
	for _, c := range st.capacities {
		st.capacityList = append(st.capacityList, c)
	}
	slices.SortFunc(st.capacityList, func(a, b *storagev1.CSIStorageCapacity) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
}

func (st *storage) reindexVAs() {
	st.vasByNode = map[string][]*storagev1.VolumeAttachment{}
	for _, va := range st.vas {
		st.vasByNode[va.Spec.NodeName] = append(st.vasByNode[va.Spec.NodeName], va)
	}
	for _, list := range st.vasByNode {
		slices.SortFunc(list, func(a, b *storagev1.VolumeAttachment) int { return cmp.Compare(a.Name, b.Name) })
	}
}

// PersistentVolumesOfClass returns the PersistentVolumes of a storage class
// (volume.GetPersistentVolumeClass), sorted by name. The caller must not
// modify the list.
func (s *Snapshot) PersistentVolumesOfClass(class string) []*v1.PersistentVolume {
	return s.storage.pvsByClass[class]
}

// CSIStorageCapacities returns every CSIStorageCapacity sorted by namespace
// and name (the caller must not modify the list).
func (s *Snapshot) CSIStorageCapacities() []*storagev1.CSIStorageCapacity {
	return s.storage.capacityList
}

// VolumeAttachmentsOn returns the VolumeAttachments whose spec.nodeName is
// node, sorted by name (the caller must not modify the list).
func (s *Snapshot) VolumeAttachmentsOn(node string) []*storagev1.VolumeAttachment {
	return s.storage.vasByNode[node]
}

// HasStorage reports whether the snapshot holds any storage object.
func (s *Snapshot) HasStorage() bool {
	st := &s.storage
	return len(st.pvs)+len(st.pvcs)+len(st.classes)+len(st.csiNodes)+len(st.csiDrivers)+len(st.capacities)+len(st.vas) > 0
}
