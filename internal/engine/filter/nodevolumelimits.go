package filter

import (
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/component-helpers/storage/volume"
	csitrans "k8s.io/csi-translation-lib"
	csiplugins "k8s.io/csi-translation-lib/plugins"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// translator translates in-tree volumes to CSI, as the volume plugins do.
// It is stateless.
var translator = csitrans.New()

// unboundVolumePrefix stands for upstream's random prefix of the volume
// handles of unbound claims: any constant distinguishes them as well.
const unboundVolumePrefix = "reprieve-unbound"

// limitsPreFilter is NodeVolumeLimits' PreFilter: the plugin filters pods
// with a claim, an ephemeral volume or an inline volume that migrates to CSI.
func limitsPreFilter(pod *v1.Pod) bool {
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.PersistentVolumeClaim != nil || v.Ephemeral != nil || translator.IsInlineMigratable(v) {
			return true
		}
	}
	return false
}

// podVolumes are the attachable volumes of a pod (unique name
// "driver/handle" to driver), or the failure looking them up.
type podVolumes struct {
	vols   map[string]string
	status Status
}

// newPodVolumes looks up the incoming pod's attachable volumes on a node
// with csiNode (only whether it is nil matters).
func newPodVolumes(snap *snapshot.Snapshot, pod *v1.Pod, csiNode *storagev1.CSINode) podVolumes {
	pv := podVolumes{vols: map[string]string{}}
	if err := attachableVolumes(snap, pod, csiNode, true, pv.vols); err != nil {
		if apierrors.IsNotFound(err) {
			pv.status = reject(UnschedulableAndUnresolvable, NodeVolumeLimits, err.Error())
		} else {
			pv.status = errorStatus(NodeVolumeLimits, err)
		}
	}
	return pv
}

// nodeLimits is NodeVolumeLimits' view of a node: the incoming pod's
// volumes there, the checks that do not depend on the node's pods, and,
// when the node has limits, the volumes attached, kept up to date as pods
// are added and removed.
type nodeLimits struct {
	csiNode    *storagev1.CSINode
	newVolumes *podVolumes
	// driverStatus is the rejection of a driver that must be installed on
	// the node and is not (VolumeLimitScaling, beta and on in v1.37).
	driverStatus Status
	limits       map[string]int64

	// counting is set when limits apply. The counts are made when the
	// filter first needs them (ready); changes before are pending.
	// attached holds every volume of the node's pods and
	// VolumeAttachments; attachedCount and newCount are upstream's counts
	// per driver of attached volumes and of the pod's volumes not yet
	// attached by a pod.
	counting      bool
	ready         bool
	node          *snapshot.Node
	pending       []podDelta
	attached      map[string]*attachedVolume
	attachedCount map[string]int
	newCount      map[string]int
	podErrors     int
	podError      string
}

// podDelta is a pod added (sign 1) or removed (-1) before the counts were made.
type podDelta struct {
	pod  *snapshot.Pod
	sign int
}

// attachedVolume is one volume of the node: how many of its pods use it,
// whether a VolumeAttachment holds it and whether the incoming pod needs it.
type attachedVolume struct {
	driver     string
	pods       int
	attachment bool
	podNeeds   bool
}

func (c *Cycle) newNodeLimits(csiNode *storagev1.CSINode, n *snapshot.Node) *nodeLimits {
	which := 0
	if csiNode != nil {
		which = 1
	}
	nl := &nodeLimits{csiNode: csiNode, newVolumes: &c.vol.newVolumes[which]}
	if !nl.newVolumes.status.IsSuccess() || len(nl.newVolumes.vols) == 0 {
		return nl
	}
	drivers := make([]string, 0, len(nl.newVolumes.vols))
	for _, d := range nl.newVolumes.vols {
		drivers = append(drivers, d)
	}
	slices.Sort(drivers)
	for _, d := range slices.Compact(drivers) {
		if !c.csiDriverNotRequired && !driverOnNode(c.snap, d, csiNode) {
			nl.driverStatus = reject(Unschedulable, NodeVolumeLimits, fmt.Sprintf("%s CSI driver is not installed on the node", d))
			return nl
		}
	}
	if nl.limits = volumeLimits(csiNode); len(nl.limits) == 0 {
		return nl
	}
	nl.counting, nl.node = true, n
	return nl
}

// update records that p was added to or removed from the node.
func (c *Cycle) updateLimits(nl *nodeLimits, p *snapshot.Pod, sign int) {
	if !nl.ready {
		nl.pending = append(nl.pending, podDelta{p, sign})
		return
	}
	c.countPodVolumes(nl, p, sign)
}

// count makes the counts: the node's pods and attachments, then the
// pending changes (pods removed before cancel out).
func (c *Cycle) count(nl *nodeLimits) {
	nl.ready = true
	n := nl.node
	nl.attached = map[string]*attachedVolume{}
	nl.attachedCount = map[string]int{}
	nl.newCount = map[string]int{}
	for name, driver := range nl.newVolumes.vols {
		nl.volume(name, driver).podNeeds = true
		nl.newCount[driver]++
	}
	for _, va := range c.snap.VolumeAttachmentsOn(n.Name) {
		if va.Spec.Attacher == "" || va.Spec.Source.PersistentVolumeName == nil {
			continue
		}
		pv := c.snap.PersistentVolume(*va.Spec.Source.PersistentVolumeName)
		if pv == nil || pv.Spec.CSI == nil {
			continue
		}
		a := nl.volume(va.Spec.Attacher+"/"+pv.Spec.CSI.VolumeHandle, va.Spec.Attacher)
		if !a.attachment {
			a.attachment = true
			nl.attachedCount[va.Spec.Attacher]++
		}
	}
	net := make(map[*snapshot.Pod]int, len(nl.pending))
	for _, d := range nl.pending {
		net[d.pod] += d.sign
	}
	for _, p := range n.Pods {
		if k := 1 + net[p]; k != 0 {
			c.countPodVolumes(nl, p, k)
		}
		delete(net, p)
	}
	for _, d := range nl.pending {
		if k := net[d.pod]; k != 0 {
			c.countPodVolumes(nl, d.pod, k)
			delete(net, d.pod)
		}
	}
	nl.pending = nil
}

func (nl *nodeLimits) volume(name, driver string) *attachedVolume {
	a := nl.attached[name]
	if a == nil {
		a = &attachedVolume{driver: driver}
		nl.attached[name] = a
	}
	return a
}

// countPodVolumes adds (sign 1) or removes (sign -1) the attachable volumes
// of a pod on the node. A volume counts once, under its driver, while a pod
// uses it or a VolumeAttachment holds it; the incoming pod's volumes a pod
// uses are not new.
func (c *Cycle) countPodVolumes(nl *nodeLimits, p *snapshot.Pod, sign int) {
	pv := c.vol.podVolumesOf(c.snap, p, nl.csiNode)
	if !pv.status.IsSuccess() {
		nl.podErrors += sign
		nl.podError = pv.status.Reasons[0]
	}
	for name, driver := range pv.vols {
		a := nl.volume(name, driver)
		before := a.pods > 0
		a.pods += sign
		if after := a.pods > 0; after != before {
			delta := -1
			if after {
				delta = 1
			}
			if !a.attachment {
				nl.attachedCount[driver] += delta
			}
			if a.podNeeds {
				nl.newCount[driver] -= delta
			}
		}
	}
}

// podVolumesOf returns the attachable volumes of a pod of the snapshot on a
// node with csiNode, computed once per cycle (the cache is safe for the
// cycle's goroutines).
func (vs *volumeState) podVolumesOf(snap *snapshot.Snapshot, p *snapshot.Pod, csiNode *storagev1.CSINode) *podVolumes {
	cache := &vs.podVolumes[0]
	if csiNode != nil {
		cache = &vs.podVolumes[1]
	}
	if v, ok := cache.Load(p); ok {
		return v.(*podVolumes)
	}
	pv := &podVolumes{}
	if len(p.Volumes()) > 0 {
		pv.vols = map[string]string{}
		if err := attachableVolumes(snap, p.Obj(), csiNode, false, pv.vols); err != nil {
			pv.status = errorStatus(NodeVolumeLimits, err)
		}
	}
	v, _ := cache.LoadOrStore(p, pv)
	return v.(*podVolumes)
}

// filterLimits is NodeVolumeLimits' Filter on a view.
func (c *Cycle) filterLimits(nv *NodeView) Status {
	nl := nv.vol.limits
	if !nl.newVolumes.status.IsSuccess() {
		return nl.newVolumes.status
	}
	if len(nl.newVolumes.vols) == 0 {
		return Status{}
	}
	if !nl.driverStatus.IsSuccess() {
		return nl.driverStatus
	}
	if !nl.counting {
		return Status{}
	}
	if !nl.ready {
		c.count(nl)
	}
	if nl.podErrors > 0 {
		return reject(Error, NodeVolumeLimits, nl.podError)
	}
	for driver, count := range nl.newCount {
		if max, ok := nl.limits[driver]; ok && count > 0 && nl.attachedCount[driver]+count > int(max) {
			return statusMaxVolumeCount
		}
	}
	return Status{}
}

func driverOnNode(snap *snapshot.Snapshot, driver string, csiNode *storagev1.CSINode) bool {
	d := snap.CSIDriver(driver)
	if d == nil || d.Spec.PreventPodSchedulingIfMissing == nil || !*d.Spec.PreventPodSchedulingIfMissing {
		return true
	}
	if csiNode == nil {
		return false
	}
	for _, nd := range csiNode.Spec.Drivers {
		if nd.Name == driver {
			return true
		}
	}
	return false
}

func volumeLimits(csiNode *storagev1.CSINode) map[string]int64 {
	limits := map[string]int64{}
	if csiNode == nil {
		return limits
	}
	for _, d := range csiNode.Spec.Drivers {
		if d.Allocatable != nil && d.Allocatable.Count != nil {
			limits[d.Name] = int64(*d.Allocatable.Count)
		}
	}
	return limits
}

// attachableVolumes is upstream's filterAttachableVolumes: the CSI volumes
// of pod (claims, ephemeral volumes, migrated inline volumes) by unique
// name "driver/handle". A missing claim is an error for the incoming pod
// (newPod) and ignored for others.
func attachableVolumes(snap *snapshot.Snapshot, pod *v1.Pod, csiNode *storagev1.CSINode, newPod bool, result map[string]string) error {
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		var claimName string
		isEphemeral := false
		switch {
		case vol.PersistentVolumeClaim != nil:
			claimName = vol.PersistentVolumeClaim.ClaimName
		case vol.Ephemeral != nil:
			claimName = ephemeral.VolumeClaimName(pod, vol)
			isEphemeral = true
		default:
			if err := inlineAttachable(vol, csiNode, pod, result); err != nil {
				return err
			}
			continue
		}
		if claimName == "" {
			return errors.New("PersistentVolumeClaim had no name")
		}
		pvc := snap.PersistentVolumeClaim(pod.Namespace, claimName)
		if pvc == nil {
			if newPod {
				return fmt.Errorf("looking up PVC %s/%s: %w", pod.Namespace, claimName, notFound("persistentvolumeclaim", claimName))
			}
			continue
		}
		if isEphemeral {
			if err := ephemeral.VolumeIsForPod(pod, pvc); err != nil {
				return err
			}
		}
		driver, handle := csiDriverInfo(snap, csiNode, pvc)
		if driver == "" || handle == "" {
			continue
		}
		result[driver+"/"+handle] = driver
	}
	return nil
}

func inlineAttachable(vol *v1.Volume, csiNode *storagev1.CSINode, pod *v1.Pod, result map[string]string) error {
	if !translator.IsInlineMigratable(vol) {
		return nil
	}
	plugin, err := translator.GetInTreePluginNameFromSpec(nil, vol)
	if err != nil {
		return fmt.Errorf("looking up provisioner name for volume %s: %w", vol.Name, err)
	}
	if !csiMigrationOn(csiNode, plugin) {
		return nil
	}
	pv, err := translator.TranslateInTreeInlineVolumeToCSI(logger, vol, pod.Namespace)
	if err != nil || pv == nil {
		return fmt.Errorf("converting volume(%s) from inline to csi: %w", vol.Name, err)
	}
	driver, err := translator.GetCSINameFromInTreeName(plugin)
	if err != nil {
		return fmt.Errorf("looking up CSI driver name for provisioner %s: %w", plugin, err)
	}
	if pv.Spec.CSI == nil {
		return nil
	}
	result[driver+"/"+pv.Spec.CSI.VolumeHandle] = driver
	return nil
}

// csiMigrationOn is upstream's isCSIMigrationOn: the migrated in-tree
// plugins, on a node with a CSINode.
func csiMigrationOn(csiNode *storagev1.CSINode, plugin string) bool {
	if csiNode == nil || plugin == "" {
		return false
	}
	switch plugin {
	case csiplugins.AWSEBSInTreePluginName, csiplugins.PortworxVolumePluginName, csiplugins.GCEPDInTreePluginName,
		csiplugins.AzureDiskInTreePluginName, csiplugins.CinderInTreePluginName:
		return true
	}
	return false
}

// csiDriverInfo returns the CSI driver and volume handle of a claim: from
// its PV (translated when in-tree and migrated), else from its
// StorageClass's provisioner with a handle naming the claim.
func csiDriverInfo(snap *snapshot.Snapshot, csiNode *storagev1.CSINode, pvc *v1.PersistentVolumeClaim) (string, string) {
	if pvc.Spec.VolumeName == "" {
		return csiDriverInfoFromClass(snap, csiNode, pvc)
	}
	pv := snap.PersistentVolume(pvc.Spec.VolumeName)
	if pv == nil {
		return csiDriverInfoFromClass(snap, csiNode, pvc)
	}
	src := pv.Spec.CSI
	if src == nil {
		if !translator.IsPVMigratable(pv) {
			return "", ""
		}
		plugin, err := translator.GetInTreePluginNameFromSpec(pv, nil)
		if err != nil || !csiMigrationOn(csiNode, plugin) {
			return "", ""
		}
		csiPV, err := translator.TranslateInTreePVToCSI(logger, pv)
		if err != nil || csiPV.Spec.CSI == nil {
			return "", ""
		}
		src = csiPV.Spec.CSI
	}
	return src.Driver, src.VolumeHandle
}

func csiDriverInfoFromClass(snap *snapshot.Snapshot, csiNode *storagev1.CSINode, pvc *v1.PersistentVolumeClaim) (string, string) {
	name := volume.GetPersistentVolumeClaimClass(pvc)
	if name == "" {
		return "", ""
	}
	class := snap.StorageClass(name)
	if class == nil {
		return "", ""
	}
	handle := fmt.Sprintf("%s-%s/%s", unboundVolumePrefix, pvc.Namespace, pvc.Name)
	provisioner := class.Provisioner
	if translator.IsMigratableIntreePluginByName(provisioner) {
		if !csiMigrationOn(csiNode, provisioner) {
			return "", ""
		}
		driver, err := translator.GetCSINameFromInTreeName(provisioner)
		if err != nil {
			return "", ""
		}
		return driver, handle
	}
	return provisioner, handle
}
