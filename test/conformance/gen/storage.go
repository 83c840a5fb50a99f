package gen

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Storage is the profile of stateful pods: besides everything of
// Everything, pods use persistent volumes and the storage objects the four
// volume plugins read exist. Bound pods hold claims bound to zonal CSI
// volumes (some ReadWriteOncePod, some in-tree GCE PDs), inline GCE PD and
// EBS disks and generic ephemeral volumes; nodes have CSINodes with attach
// limits (some with migrated in-tree plugins) and VolumeAttachments, stale
// ones included. The preemptor has up to three volumes of every kind: bound
// zonal and host-pinned volumes, WaitForFirstConsumer claims matched by
// local PVs or provisioned (allowed topologies, storage capacity, a
// selected node), Immediate, prebound, lost, deleted and missing claims,
// ReadWriteOncePod claims used by lower-priority pods (some in other
// namespaces with the same claim name), claims that take an attach slot,
// inline disks in use elsewhere, ephemeral volumes (owned, missing, owned
// by another pod) and a driver that must be installed on the node.
//
// Its random stream is seeded as if it were the sixth profile.
const Storage Profile = "storage"

// storageLevel is Storage's level: above Workload, but it has the features
// of Everything only (see includes).
const storageLevel = 5

// StorageObjects are a scenario's storage objects.
type StorageObjects struct {
	PersistentVolumes      []*v1.PersistentVolume
	PersistentVolumeClaims []*v1.PersistentVolumeClaim
	StorageClasses         []*storagev1.StorageClass
	CSINodes               []*storagev1.CSINode
	CSIDrivers             []*storagev1.CSIDriver
	CSIStorageCapacities   []*storagev1.CSIStorageCapacity
	VolumeAttachments      []*storagev1.VolumeAttachment
}

// Names of the storage vocabulary.
const (
	driverCSI    = "csi.example.com"       // attachable, with attach limits
	driverCap    = "cap.csi.example.com"   // tracks storage capacity
	driverOptIn  = "optin.csi.example.com" // must be installed on the node
	driverGCE    = "pd.csi.storage.gke.io" // GCE PD's CSI driver (migration)
	classLocal   = "local"                 // no-provisioner, WaitForFirstConsumer
	classFast    = "fast"                  // csi.example.com, WaitForFirstConsumer
	classStd     = "standard"              // csi.example.com, Immediate
	classCap     = "capacity"              // cap.csi.example.com, WaitForFirstConsumer
	classOptIn   = "optin"                 // optin.csi.example.com, WaitForFirstConsumer
	classGCE     = "gce-legacy"            // kubernetes.io/gce-pd, WaitForFirstConsumer
	annBound     = "pv.kubernetes.io/bind-completed"
	annSelected  = "volume.kubernetes.io/selected-node"
	annMigrated  = "storage.alpha.kubernetes.io/migrated-plugins"
	capNamespace = "kube-system"
)

// gceDisks and ebsVolumes are the inline disks pods share.
var (
	gceDisks   = []string{"disk-1", "disk-2", "disk-3"}
	ebsVolumes = []string{"vol-0a1", "vol-0b2"}
)

func gi(n int) resource.Quantity { return *resource.NewQuantity(int64(n)<<30, resource.BinarySI) }

// storageGen holds the state of genStorage.
type storageGen struct {
	g     *generator
	st    *StorageObjects
	zones []string
	seq   int
}

// genStorage creates the storage objects and the volumes of bound, pending
// and preemptor pods.
func (g *generator) genStorage() {
	sg := &storageGen{g: g, st: &g.s.Storage}
	for _, n := range g.nodes {
		if n.zone != "" && !slices.Contains(sg.zones, n.zone) {
			sg.zones = append(sg.zones, n.zone)
		}
	}
	if len(sg.zones) == 0 {
		sg.zones = []string{"zone-a"}
	}
	sg.classes()
	sg.drivers()
	sg.csiNodes()
	sg.capacities()
	for _, ns := range g.nodes {
		for _, p := range ns.pods {
			if g.chance(0.35) {
				sg.existingVolumes(p, ns)
			}
		}
		if g.chance(0.2) {
			// A stale attachment: a released volume still attached.
			pv := sg.csiPV(driverCSI, "", gi(g.between(1, 5)), nil)
			pv.Status.Phase = v1.VolumeReleased
			sg.attach(pv, ns.name)
		}
	}
	sg.preemptorVolumes(g.s.Preemptor)
	for _, p := range g.pending {
		if g.chance(0.3) {
			sg.pendingVolumes(p)
		}
	}
}

func (sg *storageGen) name(prefix string) string {
	sg.seq++
	return fmt.Sprintf("%s-%d", prefix, sg.seq)
}

func (sg *storageGen) classes() {
	g := sg.g
	wffc, imm := storagev1.VolumeBindingWaitForFirstConsumer, storagev1.VolumeBindingImmediate
	del := v1.PersistentVolumeReclaimDelete
	add := func(name, provisioner string, mode storagev1.VolumeBindingMode) *storagev1.StorageClass {
		sc := &storagev1.StorageClass{
			TypeMeta:          metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "StorageClass"},
			ObjectMeta:        metav1.ObjectMeta{Name: name, UID: types.UID("uid-sc-" + name)},
			Provisioner:       provisioner,
			VolumeBindingMode: &mode,
			ReclaimPolicy:     &del,
		}
		sg.st.StorageClasses = append(sg.st.StorageClasses, sc)
		return sc
	}
	add(classLocal, "kubernetes.io/no-provisioner", wffc)
	fast := add(classFast, driverCSI, wffc)
	if g.chance(0.35) {
		fast.AllowedTopologies = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{
			{Key: v1.LabelTopologyZone, Values: []string{pick(g, sg.zones...)}},
		}}}
	}
	add(classStd, driverCSI, imm)
	add(classCap, driverCap, wffc)
	add(classOptIn, driverOptIn, wffc)
	add(classGCE, "kubernetes.io/gce-pd", wffc)
}

func (sg *storageGen) drivers() {
	g := sg.g
	t := true
	add := func(name string, spec storagev1.CSIDriverSpec) {
		sg.st.CSIDrivers = append(sg.st.CSIDrivers, &storagev1.CSIDriver{
			TypeMeta:   metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSIDriver"},
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-csidriver-" + name)},
			Spec:       spec,
		})
	}
	add(driverCSI, storagev1.CSIDriverSpec{AttachRequired: &t})
	if g.chance(0.85) {
		add(driverCap, storagev1.CSIDriverSpec{AttachRequired: &t, StorageCapacity: &t})
	}
	spec := storagev1.CSIDriverSpec{AttachRequired: &t}
	if g.chance(0.8) {
		spec.PreventPodSchedulingIfMissing = &t
	}
	add(driverOptIn, spec)
}

func (sg *storageGen) csiNodes() {
	g := sg.g
	for _, ns := range g.nodes {
		if g.chance(0.12) {
			continue
		}
		cn := &storagev1.CSINode{
			TypeMeta:   metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSINode"},
			ObjectMeta: metav1.ObjectMeta{Name: ns.name, UID: types.UID("uid-csinode-" + ns.name)},
		}
		count := func(lo, hi int) *storagev1.VolumeNodeResources {
			if g.chance(0.15) {
				return nil
			}
			c := int32(g.between(lo, hi))
			return &storagev1.VolumeNodeResources{Count: &c}
		}
		cn.Spec.Drivers = append(cn.Spec.Drivers, storagev1.CSINodeDriver{Name: driverCSI, NodeID: ns.name, Allocatable: count(1, 4)})
		if g.chance(0.7) {
			cn.Spec.Drivers = append(cn.Spec.Drivers, storagev1.CSINodeDriver{Name: driverCap, NodeID: ns.name})
		}
		if g.chance(0.5) {
			cn.Spec.Drivers = append(cn.Spec.Drivers, storagev1.CSINodeDriver{Name: driverOptIn, NodeID: ns.name, Allocatable: count(1, 3)})
		}
		if g.chance(0.4) {
			cn.Annotations = map[string]string{annMigrated: "kubernetes.io/gce-pd,kubernetes.io/aws-ebs"}
			cn.Spec.Drivers = append(cn.Spec.Drivers, storagev1.CSINodeDriver{Name: driverGCE, NodeID: ns.name, Allocatable: count(1, 3)})
		}
		sg.st.CSINodes = append(sg.st.CSINodes, cn)
	}
}

func (sg *storageGen) capacities() {
	g := sg.g
	for _, z := range sg.zones {
		if g.chance(0.2) {
			continue
		}
		c := &storagev1.CSIStorageCapacity{
			TypeMeta:         metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSIStorageCapacity"},
			ObjectMeta:       metav1.ObjectMeta{Name: sg.name("cap-" + z), Namespace: capNamespace},
			StorageClassName: classCap,
			NodeTopology:     &metav1.LabelSelector{MatchLabels: map[string]string{v1.LabelTopologyZone: z}},
		}
		q := gi(g.between(2, 40))
		c.Capacity = &q
		if g.chance(0.3) {
			m := gi(g.between(1, 20))
			c.MaximumVolumeSize = &m
		}
		c.UID = types.UID("uid-" + c.Name)
		sg.st.CSIStorageCapacities = append(sg.st.CSIStorageCapacities, c)
	}
}

// pv returns a new PV of class with the given size and source.
func (sg *storageGen) pv(class string, size resource.Quantity, src v1.PersistentVolumeSource) *v1.PersistentVolume {
	name := sg.name("pv")
	fs := v1.PersistentVolumeFilesystem
	pv := &v1.PersistentVolume{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"},
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: size},
			PersistentVolumeSource:        src,
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
			StorageClassName:              class,
			VolumeMode:                    &fs,
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
	sg.st.PersistentVolumes = append(sg.st.PersistentVolumes, pv)
	return pv
}

// zoneAffinity pins pv to zone z with its labels and node affinity, in one
// of the ways volumes carry zones.
func (sg *storageGen) zoneAffinity(pv *v1.PersistentVolume, z string) {
	g := sg.g
	key, value := v1.LabelTopologyZone, z
	switch {
	case g.chance(0.15):
		key = v1.LabelFailureDomainBetaZone
	case g.chance(0.1) && len(sg.zones) > 1:
		other := pick(g, sg.zones...)
		if other != z {
			value = z + "__" + other
		}
	}
	if g.chance(0.85) {
		pv.Labels = map[string]string{key: value}
		if g.chance(0.2) {
			pv.Labels[v1.LabelTopologyRegion] = "region-1"
		}
	}
	if g.chance(0.75) {
		values := []string{z}
		if value != z {
			values = append(values, value[len(z)+2:])
		}
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: values}},
		}}}}
	}
}

// csiPV returns a CSI PV of driver, in zone z when not empty.
func (sg *storageGen) csiPV(driver, z string, size resource.Quantity, claim *v1.PersistentVolumeClaim) *v1.PersistentVolume {
	class := classStd
	if driver == driverCap {
		class = classCap
	}
	pv := sg.pv(class, size, v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: sg.name("handle")}})
	if z != "" {
		sg.zoneAffinity(pv, z)
	}
	if claim != nil {
		sg.bindPV(pv, claim)
	}
	return pv
}

// gcePV returns an in-tree GCE PD PV in zone z.
func (sg *storageGen) gcePV(z string, size resource.Quantity) *v1.PersistentVolume {
	pv := sg.pv(classGCE, size, v1.PersistentVolumeSource{GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: sg.name("pd"), FSType: "ext4"}})
	// Node affinity only: CSI translation fails on zone labels that are
	// not GCE zone names ("us-east1-b"), and would abort upstream's cycle.
	pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{z}}},
	}}}}
	return pv
}

// claim returns a new claim; it is added to the scenario unless missing.
func (sg *storageGen) claim(namespace, name, class string, size resource.Quantity, modes ...v1.PersistentVolumeAccessMode) *v1.PersistentVolumeClaim {
	if len(modes) == 0 {
		modes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
	}
	fs := v1.PersistentVolumeFilesystem
	c := &v1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID("uid-pvc-" + namespace + "-" + name)},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      modes,
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: size}},
			StorageClassName: &class,
			VolumeMode:       &fs,
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
	sg.st.PersistentVolumeClaims = append(sg.st.PersistentVolumeClaims, c)
	return c
}

// bindPV binds pv and claim as the PV controller does.
func (sg *storageGen) bindPV(pv *v1.PersistentVolume, c *v1.PersistentVolumeClaim) {
	pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: c.Namespace, Name: c.Name, UID: c.UID}
	pv.Status.Phase = v1.VolumeBound
	c.Spec.VolumeName = pv.Name
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[annBound] = "yes"
	c.Spec.StorageClassName = &pv.Spec.StorageClassName
	c.Status = v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound, AccessModes: pv.Spec.AccessModes, Capacity: pv.Spec.Capacity}
}

// attach records a VolumeAttachment of a CSI pv on node.
func (sg *storageGen) attach(pv *v1.PersistentVolume, node string) {
	name := sg.name("va")
	sg.st.VolumeAttachments = append(sg.st.VolumeAttachments, &storagev1.VolumeAttachment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "VolumeAttachment"},
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
		Spec: storagev1.VolumeAttachmentSpec{
			Attacher: pv.Spec.CSI.Driver,
			NodeName: node,
			Source:   storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv.Name},
		},
		Status: storagev1.VolumeAttachmentStatus{Attached: true},
	})
}

func claimVolume(name, claim string) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}
}

func ephemeralVolume(name, class string, size resource.Quantity) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{
		VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: &class,
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: size}},
		}},
	}}}
}

// ownBy makes the pod the controller of the claim (ephemeral volumes).
func ownBy(c *v1.PersistentVolumeClaim, p *v1.Pod) {
	t := true
	c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID, Controller: &t, BlockOwnerDeletion: &t}}
}

// existingVolumes gives a bound pod on ns one or two volumes.
func (sg *storageGen) existingVolumes(p *v1.Pod, ns *nodeState) {
	g := sg.g
	z := ns.zone
	if z == "" {
		z = pick(g, sg.zones...)
	}
	for i := range g.between(1, 2) {
		vol := fmt.Sprintf("data-%d", i)
		switch k := g.r.IntN(100); {
		case k < 40: // a bound zonal CSI volume, maybe attached
			c := sg.claim(p.Namespace, sg.name("data"), classStd, gi(g.between(1, 10)))
			pv := sg.csiPV(driverCSI, z, gi(g.between(10, 12)), c)
			p.Spec.Volumes = append(p.Spec.Volumes, claimVolume(vol, c.Name))
			if g.chance(0.6) {
				sg.attach(pv, ns.name)
			}
		case k < 52: // ReadWriteOncePod
			c := sg.claim(p.Namespace, sg.name("rwop"), classStd, gi(1), v1.ReadWriteOncePod)
			pv := sg.csiPV(driverCSI, z, gi(1), c)
			pv.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOncePod}
			c.Status.AccessModes = pv.Spec.AccessModes
			p.Spec.Volumes = append(p.Spec.Volumes, claimVolume(vol, c.Name))
		case k < 65: // inline GCE PD
			p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: vol, VolumeSource: v1.VolumeSource{
				GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: pick(g, gceDisks...), ReadOnly: g.chance(0.4)}}})
		case k < 72: // inline EBS
			p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: vol, VolumeSource: v1.VolumeSource{
				AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: pick(g, ebsVolumes...)}}})
		case k < 85: // generic ephemeral volume, provisioned and bound
			v := ephemeralVolume(vol, classFast, gi(1))
			c := sg.claim(p.Namespace, p.Name+"-"+vol, classFast, gi(1))
			ownBy(c, p)
			pv := sg.csiPV(driverCSI, z, gi(1), c)
			p.Spec.Volumes = append(p.Spec.Volumes, v)
			if g.chance(0.5) {
				sg.attach(pv, ns.name)
			}
		case k < 93: // in-tree GCE PD through a claim
			c := sg.claim(p.Namespace, sg.name("legacy"), classGCE, gi(2))
			pv := sg.gcePV(z, gi(2))
			sg.bindPV(pv, c)
			p.Spec.Volumes = append(p.Spec.Volumes, claimVolume(vol, c.Name))
		default: // an unbound claim: counted by its class's provisioner
			c := sg.claim(p.Namespace, sg.name("unbound"), classFast, gi(1))
			p.Spec.Volumes = append(p.Spec.Volumes, claimVolume(vol, c.Name))
		}
	}
}

// lowerPods are bound pods below the preemptor's priority, in namespace ns
// when not empty.
func (sg *storageGen) lowerPods(ns string) []*v1.Pod {
	var out []*v1.Pod
	for _, n := range sg.g.nodes {
		for _, p := range n.pods {
			if *p.Spec.Priority < sg.g.preemptorPrio && (ns == "" || p.Namespace == ns) {
				out = append(out, p)
			}
		}
	}
	return out
}

// preemptorVolumes gives the preemptor zero to three volumes.
func (sg *storageGen) preemptorVolumes(p *v1.Pod) {
	g := sg.g
	n := pick(g, 0, 1, 1, 1, 2, 2, 3)
	for i := range n {
		sg.preemptorVolume(p, fmt.Sprintf("vol-%d", i))
	}
}

func (sg *storageGen) preemptorVolume(p *v1.Pod, vol string) {
	g := sg.g
	ns := p.Namespace
	add := func(v v1.Volume) { p.Spec.Volumes = append(p.Spec.Volumes, v) }
	useClaim := func(c *v1.PersistentVolumeClaim) { add(claimVolume(vol, c.Name)) }
	switch k := g.r.IntN(1000); {
	case k < 200: // bound to a zonal CSI volume
		c := sg.claim(ns, sg.name("zonal"), classStd, gi(g.between(1, 5)))
		pv := sg.csiPV(driverCSI, pick(g, sg.zones...), gi(5), c)
		useClaim(c)
		if g.chance(0.3) {
			sg.attach(pv, pick(g, g.nodes...).name)
		}
	case k < 215: // bound to a PV that does not exist
		c := sg.claim(ns, sg.name("orphan"), classStd, gi(1))
		c.Spec.VolumeName = "pv-gone"
		c.Annotations = map[string]string{annBound: "yes"}
		c.Status.Phase = v1.ClaimBound
		useClaim(c)
	case k < 380: // WaitForFirstConsumer with local PVs on some nodes
		size := g.between(2, 8)
		modes := []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
		c := sg.claim(ns, sg.name("local"), classLocal, gi(size), modes...)
		gold := g.chance(0.15)
		if gold {
			c.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}
		}
		// At most one PV is prebound to the claim: with several, upstream's
		// verdict depends on the order of its PV index, which is random.
		prebound := false
		for _, nd := range g.nodes {
			if !g.chance(0.4) {
				continue
			}
			pv := sg.pv(classLocal, gi(size+g.between(-3, 4)), v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/disks/" + sg.name("d")}})
			pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{nd.name}}},
			}}}}
			switch {
			case g.chance(0.15): // taken by another claim
				other := sg.claim(ns, sg.name("taken"), classLocal, gi(1))
				sg.bindPV(pv, other)
			case g.chance(0.1): // wrong access modes
				pv.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadOnlyMany}
			case !prebound && g.chance(0.1): // prebound to this claim by an admin
				pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: ns, Name: c.Name}
				prebound = true
			case g.chance(0.05): // released, not available
				pv.Status.Phase = v1.VolumeReleased
			case g.chance(0.05): // a raw block device
				block := v1.PersistentVolumeBlock
				pv.Spec.VolumeMode = &block
			case g.chance(0.04): // being deleted
				ts := minutesAgo(1)
				pv.DeletionTimestamp = &ts
				pv.Finalizers = []string{"kubernetes.io/pv-protection"}
			case g.chance(0.04): // another volume attributes class
				vac := "silver"
				pv.Spec.VolumeAttributesClassName = &vac
			}
			if gold && g.chance(0.6) {
				pv.Labels = map[string]string{"tier": "gold"}
			}
		}
		useClaim(c)
	case k < 500: // WaitForFirstConsumer, provisioned by csi.example.com
		useClaim(sg.claim(ns, sg.name("fast"), classFast, gi(g.between(1, 5))))
	case k < 580: // provisioned where a CSIStorageCapacity suffices
		useClaim(sg.claim(ns, sg.name("cap"), classCap, gi(g.between(1, 30))))
	case k < 610: // provisioning already started on a selected node
		c := sg.claim(ns, sg.name("selected"), classFast, gi(1))
		c.Annotations = map[string]string{annSelected: pick(g, g.nodes...).name}
		useClaim(c)
	case k < 630: // unbound Immediate claim
		useClaim(sg.claim(ns, sg.name("immediate"), classStd, gi(1)))
	case k < 640: // prebound but not bound yet
		c := sg.claim(ns, sg.name("prebound"), classStd, gi(1))
		c.Spec.VolumeName = sg.csiPV(driverCSI, pick(g, sg.zones...), gi(1), nil).Name
		useClaim(c)
	case k < 650: // a claim that does not exist
		add(claimVolume(vol, "missing-claim"))
	case k < 670: // lost
		c := sg.claim(ns, sg.name("lost"), classStd, gi(1))
		c.Spec.VolumeName = "pv-lost"
		c.Status.Phase = v1.ClaimLost
		useClaim(c)
	case k < 680: // being deleted
		c := sg.claim(ns, sg.name("deleting"), classFast, gi(1))
		ts := minutesAgo(1)
		c.DeletionTimestamp = &ts
		c.Finalizers = []string{"kubernetes.io/pvc-protection"}
		useClaim(c)
	case k < 790: // ReadWriteOncePod claim used by a lower-priority pod
		sg.rwopVolume(p, vol)
	case k < 860: // a claim that takes an attach slot of csi.example.com
		c := sg.claim(ns, sg.name("attach"), classStd, gi(1))
		z := ""
		if g.chance(0.3) {
			z = pick(g, sg.zones...)
		}
		pv := sg.csiPV(driverCSI, z, gi(1), c)
		if g.chance(0.3) {
			sg.attach(pv, pick(g, g.nodes...).name)
		}
		useClaim(c)
	case k < 900: // inline disk that pods use elsewhere
		if g.chance(0.7) {
			add(v1.Volume{Name: vol, VolumeSource: v1.VolumeSource{GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: pick(g, gceDisks...), ReadOnly: g.chance(0.4)}}})
		} else {
			add(v1.Volume{Name: vol, VolumeSource: v1.VolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: pick(g, ebsVolumes...)}}})
		}
	case k < 950: // generic ephemeral volume
		class := pick(g, classFast, classLocal, classCap)
		add(ephemeralVolume(vol, class, gi(1)))
		switch r := g.r.IntN(10); {
		case r < 7:
			c := sg.claim(ns, p.Name+"-"+vol, class, gi(1))
			ownBy(c, p)
		case r < 9:
			// Not created yet.
		default:
			c := sg.claim(ns, p.Name+"-"+vol, class, gi(1))
			other := sg.lowerPods("")
			if len(other) > 0 {
				ownBy(c, pick(g, other...))
			}
		}
	case k < 975: // a driver that must be installed on the node
		useClaim(sg.claim(ns, sg.name("optin"), classOptIn, gi(1)))
	default: // an in-tree GCE PD (CSI migration)
		c := sg.claim(ns, sg.name("legacy"), classGCE, gi(2))
		sg.bindPV(sg.gcePV(pick(g, sg.zones...), gi(2)), c)
		useClaim(c)
	}
}

// rwopVolume gives p a ReadWriteOncePod claim that a lower-priority pod of
// its namespace uses (or, sometimes, nobody uses), and sometimes a pod of
// another namespace a claim of the same name.
func (sg *storageGen) rwopVolume(p *v1.Pod, vol string) {
	g := sg.g
	name := sg.name("rwop")
	c := sg.claim(p.Namespace, name, classStd, gi(1), v1.ReadWriteOncePod)
	pv := sg.csiPV(driverCSI, "", gi(1), c)
	pv.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOncePod}
	p.Spec.Volumes = append(p.Spec.Volumes, claimVolume(vol, name))
	if lower := sg.lowerPods(p.Namespace); len(lower) > 0 && g.chance(0.85) {
		q := pick(g, lower...)
		q.Spec.Volumes = append(q.Spec.Volumes, claimVolume("held-"+name, name))
		if g.chance(0.3) {
			if ns := sg.nodeOf(q); ns != nil {
				sg.attach(pv, ns.name)
			}
		}
	}
	if g.chance(0.2) {
		var others []*v1.Pod
		for _, q := range sg.lowerPods("") {
			if q.Namespace != p.Namespace {
				others = append(others, q)
			}
		}
		if len(others) > 0 {
			q := pick(g, others...)
			if !slices.ContainsFunc(sg.st.PersistentVolumeClaims, func(c *v1.PersistentVolumeClaim) bool {
				return c.Namespace == q.Namespace && c.Name == name
			}) {
				oc := sg.claim(q.Namespace, name, classStd, gi(1))
				sg.csiPV(driverCSI, "", gi(1), oc)
			}
			q.Spec.Volumes = append(q.Spec.Volumes, claimVolume("same-name-"+name, name))
		}
	}
	// A pending pod nominated somewhere may want the claim too.
	for _, q := range sg.g.pending {
		if q.Namespace == p.Namespace && q.Status.NominatedNodeName != "" && g.chance(0.3) {
			q.Spec.Volumes = append(q.Spec.Volumes, claimVolume("wants-"+name, name))
		}
	}
}

func (sg *storageGen) nodeOf(p *v1.Pod) *nodeState {
	for _, n := range sg.g.nodes {
		if n.name == p.Spec.NodeName {
			return n
		}
	}
	return nil
}

// pendingVolumes gives a pending pod a claim that takes an attach slot.
func (sg *storageGen) pendingVolumes(p *v1.Pod) {
	g := sg.g
	c := sg.claim(p.Namespace, sg.name("pending"), classStd, gi(1))
	sg.csiPV(driverCSI, "", gi(1), c)
	if g.chance(0.5) {
		c2 := sg.claim(p.Namespace, sg.name("pending"), classFast, gi(1))
		p.Spec.Volumes = append(p.Spec.Volumes, claimVolume("scratch", c2.Name))
	}
	p.Spec.Volumes = append(p.Spec.Volumes, claimVolume("data", c.Name))
}

// storageAPIVersions are the apiVersions of the storage kinds.
var storageAPIVersions = map[string]string{
	"PersistentVolume":      "v1",
	"PersistentVolumeClaim": "v1",
	"StorageClass":          "storage.k8s.io/v1",
	"CSINode":               "storage.k8s.io/v1",
	"CSIDriver":             "storage.k8s.io/v1",
	"CSIStorageCapacity":    "storage.k8s.io/v1",
	"VolumeAttachment":      "storage.k8s.io/v1",
}

// items returns copies of the objects with their type meta, for YAML.
func (st *StorageObjects) items() []any {
	var out []any
	for _, o := range st.StorageClasses {
		c := *o
		c.TypeMeta = metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "StorageClass"}
		out = append(out, &c)
	}
	for _, o := range st.CSIDrivers {
		c := *o
		c.TypeMeta = metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSIDriver"}
		out = append(out, &c)
	}
	for _, o := range st.CSINodes {
		c := *o
		c.TypeMeta = metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSINode"}
		out = append(out, &c)
	}
	for _, o := range st.CSIStorageCapacities {
		c := *o
		c.TypeMeta = metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSIStorageCapacity"}
		out = append(out, &c)
	}
	for _, o := range st.PersistentVolumes {
		c := *o
		c.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"}
		out = append(out, &c)
	}
	for _, o := range st.PersistentVolumeClaims {
		c := *o
		c.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"}
		out = append(out, &c)
	}
	for _, o := range st.VolumeAttachments {
		c := *o
		c.TypeMeta = metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "VolumeAttachment"}
		out = append(out, &c)
	}
	return out
}

// add decodes a storage object of a scenario file.
func (st *StorageObjects) add(tm metav1.TypeMeta, decode func(any) error) error {
	switch tm.Kind {
	case "PersistentVolume":
		o := &v1.PersistentVolume{}
		if err := decode(o); err != nil {
			return err
		}
		o.TypeMeta = tm
		st.PersistentVolumes = append(st.PersistentVolumes, o)
	case "PersistentVolumeClaim":
		o := &v1.PersistentVolumeClaim{}
		if err := decode(o); err != nil {
			return err
		}
		o.TypeMeta = tm
		st.PersistentVolumeClaims = append(st.PersistentVolumeClaims, o)
	case "StorageClass":
		o := &storagev1.StorageClass{}
		if err := decode(o); err != nil {
			return err
		}
		o.TypeMeta = tm
		st.StorageClasses = append(st.StorageClasses, o)
	case "CSINode":
		o := &storagev1.CSINode{}
		if err := decode(o); err != nil {
			return err
		}
		o.TypeMeta = tm
		st.CSINodes = append(st.CSINodes, o)
	case "CSIDriver":
		o := &storagev1.CSIDriver{}
		if err := decode(o); err != nil {
			return err
		}
		o.TypeMeta = tm
		st.CSIDrivers = append(st.CSIDrivers, o)
	case "CSIStorageCapacity":
		o := &storagev1.CSIStorageCapacity{}
		if err := decode(o); err != nil {
			return err
		}
		o.TypeMeta = tm
		st.CSIStorageCapacities = append(st.CSIStorageCapacities, o)
	case "VolumeAttachment":
		o := &storagev1.VolumeAttachment{}
		if err := decode(o); err != nil {
			return err
		}
		o.TypeMeta = tm
		st.VolumeAttachments = append(st.VolumeAttachments, o)
	default:
		return fmt.Errorf("unsupported kind %q", tm.Kind)
	}
	return nil
}

// storageFeatures records the volume features of a scenario, looking at
// the preemptor's volumes and the storage objects.
func storageFeatures(s *Scenario, set func(string, bool)) {
	st := &s.Storage
	pre := s.Preemptor
	claims := map[string]*v1.PersistentVolumeClaim{}
	for _, c := range st.PersistentVolumeClaims {
		claims[c.Namespace+"/"+c.Name] = c
	}
	pvs := map[string]*v1.PersistentVolume{}
	for _, pv := range st.PersistentVolumes {
		pvs[pv.Name] = pv
	}
	classes := map[string]*storagev1.StorageClass{}
	for _, sc := range st.StorageClasses {
		classes[sc.Name] = sc
	}
	// usersOf counts, by claim name, the pods with a claim volume of that
	// name, by namespace.
	users := map[string]map[string]bool{}
	for _, p := range s.Pods {
		if p == pre {
			continue
		}
		for _, v := range p.Spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				n := v.PersistentVolumeClaim.ClaimName
				if users[n] == nil {
					users[n] = map[string]bool{}
				}
				users[n][p.Namespace] = true
				set("volume/rwop-nominated-pod", p.Spec.NodeName == "" && p.Status.NominatedNodeName != "" && slices.ContainsFunc(pre.Spec.Volumes, func(pv v1.Volume) bool {
					return pv.PersistentVolumeClaim != nil && pv.PersistentVolumeClaim.ClaimName == n
				}))
			}
		}
	}
	inlineDisks := map[string]bool{}
	for _, p := range s.Pods {
		if p == pre || p.Spec.NodeName == "" {
			continue
		}
		for _, v := range p.Spec.Volumes {
			if v.GCEPersistentDisk != nil {
				inlineDisks["gce/"+v.GCEPersistentDisk.PDName] = true
			}
			if v.AWSElasticBlockStore != nil {
				inlineDisks["ebs/"+v.AWSElasticBlockStore.VolumeID] = true
			}
		}
	}
	for _, v := range pre.Spec.Volumes {
		switch {
		case v.GCEPersistentDisk != nil:
			set("volume/inline-disk-shared", inlineDisks["gce/"+v.GCEPersistentDisk.PDName])
		case v.AWSElasticBlockStore != nil:
			set("volume/inline-disk-shared", inlineDisks["ebs/"+v.AWSElasticBlockStore.VolumeID])
		case v.Ephemeral != nil:
			c := claims[pre.Namespace+"/"+pre.Name+"-"+v.Name]
			set("volume/ephemeral-missing", c == nil)
			owned := c != nil && len(c.OwnerReferences) > 0 && c.OwnerReferences[0].UID == pre.UID
			set("volume/ephemeral-owned", c != nil && owned)
			set("volume/ephemeral-not-owned", c != nil && !owned)
		case v.PersistentVolumeClaim != nil:
			c := claims[pre.Namespace+"/"+v.PersistentVolumeClaim.ClaimName]
			if c == nil {
				set("volume/missing-claim", true)
				continue
			}
			set("volume/lost-claim", c.Status.Phase == v1.ClaimLost)
			set("volume/deleting-claim", c.DeletionTimestamp != nil)
			if slices.Contains(c.Spec.AccessModes, v1.ReadWriteOncePod) {
				set("volume/rwop-in-use", users[c.Name][c.Namespace])
				set("volume/rwop-same-name-other-namespace", len(users[c.Name]) > 1 || (len(users[c.Name]) == 1 && !users[c.Name][c.Namespace]))
			}
			class := ""
			if c.Spec.StorageClassName != nil {
				class = *c.Spec.StorageClassName
			}
			sc := classes[class]
			if c.Spec.VolumeName != "" {
				if c.Annotations[annBound] == "" {
					set("volume/unbound-immediate", true)
					continue
				}
				pv := pvs[c.Spec.VolumeName]
				set("volume/bound-missing-pv", pv == nil && c.Status.Phase != v1.ClaimLost)
				if pv != nil {
					set("volume/bound-zonal", pv.Spec.NodeAffinity != nil || len(pv.Labels) > 0)
					for _, val := range pv.Labels {
						set("volume/multi-zone-label", strings.Contains(val, "__"))
					}
					set("volume/csi-migration", pv.Spec.GCEPersistentDisk != nil)
					set("volume/attach-limit", pv.Spec.CSI != nil && pv.Spec.CSI.Driver == driverCSI)
				}
				continue
			}
			if sc == nil || sc.VolumeBindingMode == nil || *sc.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer {
				set("volume/unbound-immediate", true)
				continue
			}
			set("volume/selected-node", c.Annotations[annSelected] != "")
			if sc.Provisioner == "kubernetes.io/no-provisioner" {
				set("volume/local-wffc", true)
				for _, pv := range st.PersistentVolumes {
					set("volume/prebound-pv", pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.Name == c.Name && pv.Spec.ClaimRef.UID == "")
				}
				continue
			}
			set("volume/provisioned-wffc", true)
			set("volume/allowed-topologies", len(sc.AllowedTopologies) > 0)
			set("volume/storage-capacity", sc.Name == classCap && len(st.CSIStorageCapacities) > 0)
			set("volume/driver-must-be-installed", sc.Provisioner == driverOptIn)
		}
	}
	used := map[string]bool{}
	for _, p := range s.Pods {
		for _, v := range p.Spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				if c := claims[p.Namespace+"/"+v.PersistentVolumeClaim.ClaimName]; c != nil {
					used[c.Spec.VolumeName] = true
				}
			}
		}
	}
	for _, va := range st.VolumeAttachments {
		set("volume/volume-attachment", true)
		set("volume/stale-volume-attachment", va.Spec.Source.PersistentVolumeName != nil && !used[*va.Spec.Source.PersistentVolumeName])
	}
	if len(st.StorageClasses) > 0 {
		set("volume/node-without-csinode", len(st.CSINodes) < len(s.Nodes))
	}
}
