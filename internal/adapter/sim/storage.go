package sim

import (
	"context"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/storage/volume"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// DefaultProvisioningDelay is how long the simulated provisioner takes to
// provision a WaitForFirstConsumer claim once the scheduler selected its
// node, when the scenario gives no spec.provisioningDelay.
const DefaultProvisioningDelay = time.Second

// annDefaultClass marks the default StorageClass, which the
// DefaultStorageClass admission plugin gives claims without a class.
const annDefaultClass = "storageclass.kubernetes.io/is-default-class"

// storage is the API server's storage objects in the simulated cluster, as
// the simulated PV controller and provisioner change them.
type storage struct {
	pvs     map[string]*v1.PersistentVolume
	claims  map[string]*v1.PersistentVolumeClaim // by namespace/name
	classes map[string]*storagev1.StorageClass
	csi     map[string]*storagev1.CSINode
	// delay is the provisioning delay.
	delay time.Duration
	// waiting are the pods whose binding waits for their claims (by pod
	// key): the node the scheduler chose and the claims still unbound.
	waiting map[string]*volumeWait
}

// volumeWait is a pod in VolumeBinding's PreBind: bound to node once the
// claims (namespace/name) are bound.
type volumeWait struct {
	pod    *v1.Pod
	node   string
	claims map[string]bool
	bound  bool // the scheduler's Bind came
}

func newStorage() storage {
	return storage{pvs: map[string]*v1.PersistentVolume{}, claims: map[string]*v1.PersistentVolumeClaim{},
		classes: map[string]*storagev1.StorageClass{}, csi: map[string]*storagev1.CSINode{}, delay: DefaultProvisioningDelay,
		waiting: map[string]*volumeWait{}}
}

// applyStorage records a scenario's storage objects and hands them to the
// scheduler, as its storage informers would.
func (w *world) applyStorage(st snapshot.StorageObjects) {
	if len(st.PersistentVolumes)+len(st.PersistentVolumeClaims)+len(st.StorageClasses)+len(st.CSINodes)+
		len(st.CSIDrivers)+len(st.CSIStorageCapacities)+len(st.VolumeAttachments) == 0 {
		return
	}
	pvs := make([]*v1.PersistentVolume, len(st.PersistentVolumes))
	for i, o := range st.PersistentVolumes {
		if o.Status.Phase == "" && (o.Spec.ClaimRef == nil || o.Spec.ClaimRef.UID == "") {
			// The PV controller makes a new volume that is not bound
			// Available (Filter only matches Available volumes).
			o = o.DeepCopy()
			o.Status.Phase = v1.VolumeAvailable
		}
		pvs[i] = o
		w.storage.pvs[o.Name] = o
	}
	for _, o := range st.PersistentVolumeClaims {
		w.storage.claims[o.Namespace+"/"+o.Name] = o
	}
	for _, o := range st.StorageClasses {
		w.storage.classes[o.Name] = o
	}
	for _, o := range st.CSINodes {
		w.storage.csi[o.Name] = o
	}
	w.sched.OnStorage(func(snap *snapshot.Snapshot) {
		for _, o := range pvs {
			snap.SetPersistentVolume(o)
		}
		for _, o := range st.PersistentVolumeClaims {
			snap.SetPersistentVolumeClaim(o)
		}
		for _, o := range st.StorageClasses {
			snap.SetStorageClass(o)
		}
		for _, o := range st.CSINodes {
			snap.SetCSINode(o)
		}
		for _, o := range st.CSIDrivers {
			snap.SetCSIDriver(o)
		}
		for _, o := range st.CSIStorageCapacities {
			snap.SetCSIStorageCapacity(o)
		}
		for _, o := range st.VolumeAttachments {
			snap.SetVolumeAttachment(o)
		}
	}, true)
	// The PV controller then binds what does not wait for a pod.
	for _, o := range st.PersistentVolumeClaims {
		w.bindImmediate(o.Namespace + "/" + o.Name)
	}
}

// setClaim stores a claim and tells the scheduler.
func (w *world) setClaim(c *v1.PersistentVolumeClaim) {
	w.storage.claims[c.Namespace+"/"+c.Name] = c
	w.sched.OnStorage(func(snap *snapshot.Snapshot) { snap.SetPersistentVolumeClaim(c) }, true)
}

// setPV stores a volume and tells the scheduler.
func (w *world) setPV(pv *v1.PersistentVolume) {
	w.storage.pvs[pv.Name] = pv
	w.sched.OnStorage(func(snap *snapshot.Snapshot) { snap.SetPersistentVolume(pv) }, true)
}

// createClaim creates a claim as the API server would: UID, creation time,
// Pending, and the default StorageClass when it names none.
func (w *world) createClaim(c *v1.PersistentVolumeClaim) {
	c.UID = w.newUID()
	c.CreationTimestamp = metav1.NewTime(w.now())
	c.Status.Phase = v1.ClaimPending
	if c.Spec.StorageClassName == nil {
		if def := w.defaultClass(); def != "" {
			c.Spec.StorageClassName = &def
		}
	}
	w.setClaim(c)
	w.bindImmediate(c.Namespace + "/" + c.Name)
}

// defaultClass is the name of the default StorageClass ("" if none; the
// newest, then the first by name, when several are, as admission picks).
func (w *world) defaultClass() string {
	var best *storagev1.StorageClass
	for _, name := range sortedKeys(w.storage.classes) {
		c := w.storage.classes[name]
		if c.Annotations[annDefaultClass] != "true" {
			continue
		}
		if best == nil || c.CreationTimestamp.After(best.CreationTimestamp.Time) {
			best = c
		}
	}
	if best == nil {
		return ""
	}
	return best.Name
}

// BindVolumes is VolumeBinding's PreBind with the simulated PV controller
// and provisioner behind it: a static binding binds volume and claim at
// once; a claim to provision gets its selected node and is provisioned
// after the provisioning delay. The pod's binding (Bind) waits until every
// claim is bound.
func (w *world) BindVolumes(_ context.Context, pod *v1.Pod, node string, b *filter.VolumeBindings) error {
	key := pod.Namespace + "/" + pod.Name
	for _, pv := range b.Static {
		ref := pv.Spec.ClaimRef
		c := w.storage.claims[ref.Namespace+"/"+ref.Name]
		if c == nil {
			return fmt.Errorf("binding volume %s: claim %s/%s not found", pv.Name, ref.Namespace, ref.Name)
		}
		w.bindClaim(c, pv.DeepCopy())
	}
	wait := &volumeWait{pod: pod, node: node, claims: map[string]bool{}}
	for _, pc := range b.Provision {
		ck := pc.Namespace + "/" + pc.Name
		c := w.storage.claims[ck]
		if c == nil {
			return fmt.Errorf("provisioning claim %s: not found", ck)
		}
		if c.Spec.VolumeName == "" {
			c = c.DeepCopy()
			metav1.SetMetaDataAnnotation(&c.ObjectMeta, volume.AnnSelectedNode, node)
			w.setClaim(c)
			uid := c.UID
			w.after(w.storage.delay, func() { w.provision(ck, uid) })
		}
		wait.claims[ck] = true
	}
	for _, c := range b.Claims {
		if cur := w.storage.claims[c.Namespace+"/"+c.Name]; cur == nil || cur.Spec.VolumeName == "" {
			wait.claims[c.Namespace+"/"+c.Name] = true
		}
	}
	if len(wait.claims) > 0 {
		w.storage.waiting[key] = wait
	}
	return nil
}

// provision is the simulated external provisioner: it creates a volume
// for the claim on its selected node, with the node's topology, and the PV
// controller binds the two.
func (w *world) provision(key string, uid types.UID) {
	c := w.storage.claims[key]
	if c == nil || c.UID != uid || c.Spec.VolumeName != "" {
		return
	}
	node := w.nodes[c.Annotations[volume.AnnSelectedNode]]
	if node == nil {
		return
	}
	class := w.storage.classes[ptrOr(c.Spec.StorageClassName, "")]
	if class == nil {
		return
	}
	w.provisionVolume(c, class, w.topologyFor(class, node), " on node "+node.Name)
}

// provisionVolume creates the volume a provisioner makes for claim c of
// class with the node affinity given, and the PV controller binds the two;
// where says where, for the event.
func (w *world) provisionVolume(c *v1.PersistentVolumeClaim, class *storagev1.StorageClass, affinity *v1.VolumeNodeAffinity, where string) {
	policy := v1.PersistentVolumeReclaimDelete
	if class.ReclaimPolicy != nil {
		policy = *class.ReclaimPolicy
	}
	name := "pvc-" + string(c.UID)
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: w.newUID(), CreationTimestamp: metav1.NewTime(w.now()),
			Annotations: map[string]string{volume.AnnDynamicallyProvisioned: class.Provisioner}},
		Spec: v1.PersistentVolumeSpec{
			AccessModes:                   c.Spec.AccessModes,
			Capacity:                      v1.ResourceList{v1.ResourceStorage: c.Spec.Resources.Requests[v1.ResourceStorage]},
			PersistentVolumeSource:        v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: class.Provisioner, VolumeHandle: name}},
			PersistentVolumeReclaimPolicy: policy,
			StorageClassName:              class.Name,
			VolumeMode:                    c.Spec.VolumeMode,
			MountOptions:                  class.MountOptions,
			NodeAffinity:                  affinity,
		},
	}
	w.event(&v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: c.Namespace, Name: c.Name}, v1.EventTypeNormal, "ProvisioningSucceeded",
		fmt.Sprintf("Successfully provisioned volume %s%s", name, where))
	w.bindClaim(c, pv)
}

// bindImmediate is the PV controller for a claim that does not wait for a
// consumer: a claim prebound to a volume (spec.volumeName) is bound to it
// when the volume is free for it; a claim whose class binds Immediate (the
// API server's default mode), or that has no class, is bound to the
// smallest Available volume that matches it, else, when its class has a
// provisioner, to a volume provisioned after the provisioning delay within
// the class's first allowed topology. A claim nothing can bind stays
// Pending, as in a cluster.
func (w *world) bindImmediate(key string) {
	c := w.storage.claims[key]
	if c == nil || c.Status.Phase == v1.ClaimBound || metav1.HasAnnotation(c.ObjectMeta, volume.AnnBindCompleted) {
		return
	}
	if name := c.Spec.VolumeName; name != "" {
		if pv := w.storage.pvs[name]; pv != nil && (pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID == c.UID) && satisfies(pv, c) {
			w.bindClaim(c, pv.DeepCopy())
		}
		return
	}
	class := w.storage.classes[ptrOr(c.Spec.StorageClassName, "")]
	if class != nil && class.VolumeBindingMode != nil && *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer {
		return
	}
	pvs := make([]*v1.PersistentVolume, 0, len(w.storage.pvs))
	for _, name := range sortedKeys(w.storage.pvs) {
		pvs = append(pvs, w.storage.pvs[name])
	}
	if pv, err := volume.FindMatchingVolume(c, pvs, nil, nil, false, true); err == nil && pv != nil {
		w.bindClaim(c, pv.DeepCopy())
		return
	}
	if class == nil || class.Provisioner == noProvisioner {
		return
	}
	uid := c.UID
	w.after(w.storage.delay, func() {
		if cur := w.storage.claims[key]; cur != nil && cur.UID == uid && cur.Spec.VolumeName == "" {
			w.provisionVolume(cur, class, allowedTopology(class), "")
		}
	})
}

// satisfies reports whether volume pv may be bound to claim c that names
// it, as the PV controller checks a prebound claim: the same class, enough
// capacity, the claim's access modes and volume mode.
func satisfies(pv *v1.PersistentVolume, c *v1.PersistentVolumeClaim) bool {
	want, have := c.Spec.Resources.Requests[v1.ResourceStorage], pv.Spec.Capacity[v1.ResourceStorage]
	return volume.GetPersistentVolumeClass(pv) == volume.GetPersistentVolumeClaimClass(c) && have.Cmp(want) >= 0 &&
		volume.CheckAccessModes(c, pv) && !volume.CheckVolumeModeMismatches(&c.Spec, &pv.Spec)
}

// noProvisioner is the provisioner of classes of static volumes only.
const noProvisioner = "kubernetes.io/no-provisioner"

// allowedTopology is where a provisioner puts a volume that does not wait
// for a consumer: the first value of each expression of the class's first
// allowed topology term, or anywhere (no node affinity).
func allowedTopology(class *storagev1.StorageClass) *v1.VolumeNodeAffinity {
	if len(class.AllowedTopologies) == 0 {
		return nil
	}
	var reqs []v1.NodeSelectorRequirement
	for _, e := range class.AllowedTopologies[0].MatchLabelExpressions {
		if len(e.Values) > 0 {
			reqs = append(reqs, v1.NodeSelectorRequirement{Key: e.Key, Operator: v1.NodeSelectorOpIn, Values: e.Values[:1]})
		}
	}
	if len(reqs) == 0 {
		return nil
	}
	return &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: reqs}}}}
}

// topologyFor is the node affinity a provisioner gives a volume it made for
// node: the keys of the driver's CSINode topology, else of the class's
// allowed topologies, else the zone and region labels the node has, else
// its hostname; each with the node's value.
func (w *world) topologyFor(class *storagev1.StorageClass, node *v1.Node) *v1.VolumeNodeAffinity {
	var keys []string
	if cn := w.storage.csi[node.Name]; cn != nil {
		for _, d := range cn.Spec.Drivers {
			if d.Name == class.Provisioner {
				keys = append(keys, d.TopologyKeys...)
			}
		}
	}
	if len(keys) == 0 {
		for _, t := range class.AllowedTopologies {
			for _, e := range t.MatchLabelExpressions {
				keys = append(keys, e.Key)
			}
		}
	}
	if len(keys) == 0 {
		for _, k := range []string{v1.LabelTopologyZone, v1.LabelTopologyRegion} {
			if _, ok := node.Labels[k]; ok {
				keys = append(keys, k)
			}
		}
	}
	if len(keys) == 0 {
		keys = []string{v1.LabelHostname}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	var reqs []v1.NodeSelectorRequirement
	for _, k := range keys {
		if v, ok := node.Labels[k]; ok {
			reqs = append(reqs, v1.NodeSelectorRequirement{Key: k, Operator: v1.NodeSelectorOpIn, Values: []string{v}})
		}
	}
	if len(reqs) == 0 {
		return nil
	}
	return &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: reqs}}}}
}

// bindClaim is the PV controller binding claim c and volume pv both ways;
// pods waiting for the claim are bound when it was their last.
func (w *world) bindClaim(c *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) {
	c = c.DeepCopy()
	pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: c.Namespace, Name: c.Name, UID: c.UID}
	pv.Status.Phase = v1.VolumeBound
	w.setPV(pv)
	c.Spec.VolumeName = pv.Name
	metav1.SetMetaDataAnnotation(&c.ObjectMeta, volume.AnnBindCompleted, "yes")
	metav1.SetMetaDataAnnotation(&c.ObjectMeta, volume.AnnBoundByController, "yes")
	c.Status.Phase = v1.ClaimBound
	c.Status.AccessModes = pv.Spec.AccessModes
	c.Status.Capacity = pv.Spec.Capacity
	w.setClaim(c)
	ck := c.Namespace + "/" + c.Name
	for _, key := range sortedKeys(w.storage.waiting) {
		wt := w.storage.waiting[key]
		if !wt.claims[ck] {
			continue
		}
		delete(wt.claims, ck)
		if len(wt.claims) == 0 {
			delete(w.storage.waiting, key)
			if wt.bound {
				w.finishBind(wt.pod, wt.node)
			}
		}
	}
}

// waitForVolumes reports whether the pod's binding waits for its claims,
// remembering that the scheduler asked for it.
func (w *world) waitForVolumes(pod *v1.Pod) bool {
	wt := w.storage.waiting[pod.Namespace+"/"+pod.Name]
	if wt == nil || wt.pod.UID != pod.UID {
		return false
	}
	wt.bound = true
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
