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

	"github.com/reprieve/reprieve/pkg/snapshot"
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

// prepareLimits computes the incoming pod's attachable volumes for node n
// and, when the node has limits for them, what its pods and
// VolumeAttachments already attach.
func (c *Cycle) prepareLimits(nv *nodeVolumes, n *snapshot.Node) {
	nv.newVolumes = map[string]string{}
	if err := attachableVolumes(c.snap, c.pod.Obj, nv.csiNode, true, nv.newVolumes); err != nil {
		if apierrors.IsNotFound(err) {
			nv.newStatus = reject(UnschedulableAndUnresolvable, NodeVolumeLimits, err.Error())
		} else {
			nv.newStatus = errorStatus(NodeVolumeLimits, err)
		}
		return
	}
	if len(nv.newVolumes) == 0 || len(volumeLimits(nv.csiNode)) == 0 {
		return
	}
	nv.counting = true
	nv.attached = map[string]*attachedVolume{}
	for _, p := range n.Pods {
		c.countPodVolumes(nv, p.Obj, 1)
	}
	nv.attachments = map[string]string{}
	for _, va := range c.snap.VolumeAttachmentsOn(n.Name) {
		if va.Spec.Attacher == "" || va.Spec.Source.PersistentVolumeName == nil {
			continue
		}
		pv := c.snap.PersistentVolume(*va.Spec.Source.PersistentVolumeName)
		if pv == nil || pv.Spec.CSI == nil {
			continue
		}
		nv.attachments[va.Spec.Attacher+"/"+pv.Spec.CSI.VolumeHandle] = va.Spec.Attacher
	}
}

// countPodVolumes adds (sign 1) or removes (sign -1) the attachable volumes
// of a pod on the node.
func (c *Cycle) countPodVolumes(nv *nodeVolumes, p *v1.Pod, sign int) {
	vols := map[string]string{}
	if err := attachableVolumes(c.snap, p, nv.csiNode, false, vols); err != nil {
		nv.podErrors += sign
		nv.podError = err.Error()
	}
	for name, driver := range vols {
		a := nv.attached[name]
		if a == nil {
			a = &attachedVolume{driver: driver}
			nv.attached[name] = a
		}
		a.pods += sign
	}
}

// filterLimits is NodeVolumeLimits' Filter on a view.
func (c *Cycle) filterLimits(nv *NodeView) Status {
	v := nv.vol
	if !v.newStatus.IsSuccess() {
		return v.newStatus
	}
	if len(v.newVolumes) == 0 {
		return Status{}
	}
	// VolumeLimitScaling (beta, on in v1.37): a driver that asks for it
	// must be installed on the node.
	drivers := make([]string, 0, len(v.newVolumes))
	for _, d := range v.newVolumes {
		drivers = append(drivers, d)
	}
	slices.Sort(drivers)
	for _, d := range slices.Compact(drivers) {
		if !driverOnNode(c.snap, d, v.csiNode) {
			return reject(Unschedulable, NodeVolumeLimits, fmt.Sprintf("%s CSI driver is not installed on the node", d))
		}
	}
	limits := volumeLimits(v.csiNode)
	if len(limits) == 0 {
		return Status{}
	}
	if v.podErrors > 0 {
		return errorStatus(NodeVolumeLimits, errors.New(v.podError))
	}
	attachedCount := map[string]int{}
	newCount := map[string]int{}
	for _, a := range v.attached {
		if a.pods > 0 {
			attachedCount[a.driver]++
		}
	}
	for name, driver := range v.attachments {
		if a := v.attached[name]; a == nil || a.pods <= 0 {
			attachedCount[driver]++
		}
	}
	for name, driver := range v.newVolumes {
		if a := v.attached[name]; a != nil && a.pods > 0 {
			continue
		}
		newCount[driver]++
	}
	for driver, count := range newCount {
		if max, ok := limits[driver]; ok && attachedCount[driver]+count > int(max) {
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
