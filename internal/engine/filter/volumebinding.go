package filter

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/component-helpers/storage/volume"
	csiplugins "k8s.io/csi-translation-lib/plugins"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// bindingState is VolumeBinding's PreFilter state: the pod's bound claims,
// its unbound WaitForFirstConsumer claims and the PVs of their classes.
type bindingState struct {
	boundClaims []*v1.PersistentVolumeClaim
	delayClaims []*v1.PersistentVolumeClaim
	pvsByClass  map[string][]*v1.PersistentVolume
}

// claimOfVolume returns the claim name of a claim or ephemeral volume.
func claimOfVolume(pod *v1.Pod, v *v1.Volume) (name string, isEphemeral, ok bool) {
	switch {
	case v.PersistentVolumeClaim != nil:
		return v.PersistentVolumeClaim.ClaimName, false, true
	case v.Ephemeral != nil:
		return ephemeral.VolumeClaimName(pod, v), true, true
	}
	return "", false, false
}

// bindingPreFilter is VolumeBinding's PreFilter. It returns nil state when
// the plugin skips (the pod has no claim).
func bindingPreFilter(snap *snapshot.Snapshot, pod *v1.Pod) (*bindingState, Status) {
	// podHasPVCs: every claim must exist, not be lost nor being deleted,
	// and an ephemeral volume's claim must belong to the pod.
	hasPVC := false
	for i := range pod.Spec.Volumes {
		name, isEphemeral, ok := claimOfVolume(pod, &pod.Spec.Volumes[i])
		if !ok {
			continue
		}
		hasPVC = true
		pvc := snap.PersistentVolumeClaim(pod.Namespace, name)
		var err error
		switch {
		case pvc == nil && isEphemeral:
			err = fmt.Errorf("waiting for ephemeral volume controller to create the persistentvolumeclaim %q", name)
		case pvc == nil:
			err = notFound("persistentvolumeclaim", name)
		case pvc.Status.Phase == v1.ClaimLost:
			err = fmt.Errorf("persistentvolumeclaim %q bound to non-existent persistentvolume %q", pvc.Name, pvc.Spec.VolumeName)
		case pvc.DeletionTimestamp != nil:
			err = fmt.Errorf("persistentvolumeclaim %q is being deleted", pvc.Name)
		case isEphemeral:
			err = ephemeral.VolumeIsForPod(pod, pvc)
		}
		if err != nil {
			return nil, reject(UnschedulableAndUnresolvable, VolumeBinding, err.Error())
		}
	}
	if !hasPVC {
		return nil, Status{}
	}
	// GetPodVolumeClaims.
	bs := &bindingState{}
	var immediate int
	for i := range pod.Spec.Volumes {
		name, _, ok := claimOfVolume(pod, &pod.Spec.Volumes[i])
		if !ok {
			continue
		}
		pvc := snap.PersistentVolumeClaim(pod.Namespace, name)
		if claimFullyBound(pvc) {
			bs.boundClaims = append(bs.boundClaims, pvc)
			continue
		}
		delay, err := delayBinding(snap, pvc)
		if err != nil {
			return nil, preFilterError(VolumeBinding, err)
		}
		if delay && pvc.Spec.VolumeName == "" {
			bs.delayClaims = append(bs.delayClaims, pvc)
		} else {
			immediate++
		}
	}
	bs.pvsByClass = map[string][]*v1.PersistentVolume{}
	for _, pvc := range bs.delayClaims {
		class := volume.GetPersistentVolumeClaimClass(pvc)
		bs.pvsByClass[class] = snap.PersistentVolumesOfClass(class)
	}
	if immediate > 0 {
		return nil, reject(UnschedulableAndUnresolvable, VolumeBinding, ReasonUnboundImmediateClaims)
	}
	return bs, Status{}
}

// claimFullyBound reports whether the PV controller finished binding the
// claim: spec.volumeName and the bind-completed annotation.
func claimFullyBound(pvc *v1.PersistentVolumeClaim) bool {
	return pvc.Spec.VolumeName != "" && metav1.HasAnnotation(pvc.ObjectMeta, volume.AnnBindCompleted)
}

// delayBinding is volume.IsDelayBindingMode on the snapshot's classes.
func delayBinding(snap *snapshot.Snapshot, pvc *v1.PersistentVolumeClaim) (bool, error) {
	name := volume.GetPersistentVolumeClaimClass(pvc)
	if name == "" {
		return false, nil
	}
	class := snap.StorageClass(name)
	if class == nil {
		return false, nil
	}
	if class.VolumeBindingMode == nil {
		return false, fmt.Errorf("VolumeBindingMode not set for StorageClass %q", name)
	}
	return *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer, nil
}

// filter is VolumeBinding's Filter (upstream's FindPodVolumes): bound
// claims' PVs must be reachable from the node; unbound claims must find an
// available PV on it or be provisionable there.
func (bs *bindingState) filter(snap *snapshot.Snapshot, pod *v1.Pod, node *v1.Node) Status {
	boundOK, unboundOK, enoughSpace, pvsFound := true, true, true, true
	var err error
	func() {
		if len(bs.boundClaims) > 0 {
			boundOK, pvsFound, err = checkBoundClaims(snap, bs.boundClaims, node)
			if err != nil {
				return
			}
		}
		if len(bs.delayClaims) == 0 {
			return
		}
		var toMatch, toProvision []*v1.PersistentVolumeClaim
		for _, claim := range bs.delayClaims {
			if selected, ok := claim.Annotations[volume.AnnSelectedNode]; ok {
				if selected != node.Name {
					unboundOK = false
					return
				}
				toProvision = append(toProvision, claim)
			} else {
				toMatch = append(toMatch, claim)
			}
		}
		if len(toMatch) > 0 {
			var unmatched []*v1.PersistentVolumeClaim
			unboundOK, _, unmatched, err = bs.findMatchingVolumes(toMatch, node)
			if err != nil {
				return
			}
			toProvision = append(toProvision, unmatched...)
		}
		if len(toProvision) > 0 {
			unboundOK, enoughSpace, err = checkProvisions(snap, toProvision, node)
		}
	}()
	if err != nil {
		return errorStatus(VolumeBinding, err)
	}
	var reasons []string
	if !boundOK {
		reasons = append(reasons, ReasonVolumeNodeConflict)
	}
	if !unboundOK {
		reasons = append(reasons, ReasonVolumeBindConflict)
	}
	if !enoughSpace {
		reasons = append(reasons, ReasonNotEnoughSpace)
	}
	if !pvsFound {
		reasons = append(reasons, ReasonPVNotExist)
	}
	if len(reasons) > 0 {
		return reject(UnschedulableAndUnresolvable, VolumeBinding, reasons...)
	}
	return Status{}
}

// checkBoundClaims checks the node affinity of the bound claims' PVs
// (translated to CSI where the node migrated their plugin). It returns
// whether they match and whether they all exist; it stops at the first
// that does not.
func checkBoundClaims(snap *snapshot.Snapshot, claims []*v1.PersistentVolumeClaim, node *v1.Node) (bool, bool, error) {
	csiNode := snap.CSINode(node.Name)
	for _, pvc := range claims {
		pv := snap.PersistentVolume(pvc.Spec.VolumeName)
		if pv == nil {
			return true, false, nil
		}
		pv, err := translatePVToCSI(pv, csiNode)
		if err != nil {
			return false, true, err
		}
		if volume.CheckNodeAffinity(pv, node.Labels) != nil {
			return false, true, nil
		}
	}
	return true, true, nil
}

// translatePVToCSI is upstream's tryTranslatePVToCSI.
func translatePVToCSI(pv *v1.PersistentVolume, csiNode *storagev1.CSINode) (*v1.PersistentVolume, error) {
	if !translator.IsPVMigratable(pv) {
		return pv, nil
	}
	plugin, err := translator.GetInTreePluginNameFromSpec(pv, nil)
	if err != nil {
		return nil, fmt.Errorf("could not get plugin name from pv: %v", err)
	}
	switch plugin {
	case csiplugins.AWSEBSInTreePluginName, csiplugins.GCEPDInTreePluginName, csiplugins.AzureDiskInTreePluginName,
		csiplugins.CinderInTreePluginName, csiplugins.PortworxVolumePluginName:
	default:
		return pv, nil
	}
	if csiNode == nil || !slices.Contains(strings.Split(csiNode.Annotations[v1.MigratedPluginsAnnotationKey], ","), plugin) {
		return pv, nil
	}
	out, err := translator.TranslateInTreePVToCSI(logger, pv)
	if err != nil {
		return nil, fmt.Errorf("could not translate pv: %v", err)
	}
	return out, nil
}

// findMatchingVolumes matches the claims, smallest first, to distinct
// available PVs that the node reaches. It returns whether all found one,
// the PV of each claim that did, and the claims that did not.
func (bs *bindingState) findMatchingVolumes(claims []*v1.PersistentVolumeClaim, node *v1.Node) (bool, map[*v1.PersistentVolumeClaim]*v1.PersistentVolume, []*v1.PersistentVolumeClaim, error) {
	claims = slices.Clone(claims)
	slices.SortStableFunc(claims, func(a, b *v1.PersistentVolumeClaim) int {
		qa, qb := a.Spec.Resources.Requests[v1.ResourceStorage], b.Spec.Resources.Requests[v1.ResourceStorage]
		return qa.Cmp(qb)
	})
	chosen := map[string]*v1.PersistentVolume{}
	matched := map[*v1.PersistentVolumeClaim]*v1.PersistentVolume{}
	all := true
	var unmatched []*v1.PersistentVolumeClaim
	for _, pvc := range claims {
		pvs := bs.pvsByClass[volume.GetPersistentVolumeClaimClass(pvc)]
		pv, err := volume.FindMatchingVolume(pvc, pvs, node, chosen, true, true)
		if err != nil {
			return false, nil, nil, err
		}
		if pv == nil {
			unmatched = append(unmatched, pvc)
			all = false
			continue
		}
		chosen[pv.Name] = pv
		matched[pvc] = pv
	}
	return all, matched, unmatched, nil
}

// VolumeBindings is what VolumeBinding's Reserve and PreBind do for a pod on
// the node chosen for it, as API objects to write.
type VolumeBindings struct {
	// Static are the PVs Filter matched to unbound WaitForFirstConsumer
	// claims, with their claimRef set (volume.GetBindVolumeToClaim).
	Static []*v1.PersistentVolume
	// Provision are the claims to provision on the node, annotated with
	// volume.kubernetes.io/selected-node.
	Provision []*v1.PersistentVolumeClaim
	// Claims are every unbound claim of the pod: the pod is bound once the
	// PV controller has bound them all.
	Claims []*v1.PersistentVolumeClaim
}

// VolumeBindings returns the bindings and provisionings of the pod's
// unbound WaitForFirstConsumer claims on node n, which must be a node the
// pod passed the filters on; nil when the pod has no such claim.
func (c *Cycle) VolumeBindings(n *snapshot.Node) (*VolumeBindings, error) {
	if c.vol == nil || c.vol.binding == nil || len(c.vol.binding.delayClaims) == 0 {
		return nil, nil
	}
	bs := c.vol.binding
	vb := &VolumeBindings{Claims: bs.delayClaims}
	var toMatch []*v1.PersistentVolumeClaim
	for _, claim := range bs.delayClaims {
		if _, ok := claim.Annotations[volume.AnnSelectedNode]; ok {
			vb.Provision = append(vb.Provision, claim)
		} else {
			toMatch = append(toMatch, claim)
		}
	}
	_, matched, unmatched, err := bs.findMatchingVolumes(toMatch, n.Obj)
	if err != nil {
		return nil, err
	}
	for _, claim := range toMatch {
		pv, ok := matched[claim]
		if !ok {
			continue
		}
		bound, dirty, err := volume.GetBindVolumeToClaim(pv, claim)
		if err != nil {
			return nil, err
		}
		if dirty {
			vb.Static = append(vb.Static, bound)
		}
	}
	for _, claim := range unmatched {
		clone := claim.DeepCopy()
		metav1.SetMetaDataAnnotation(&clone.ObjectMeta, volume.AnnSelectedNode, n.Name)
		vb.Provision = append(vb.Provision, clone)
	}
	return vb, nil
}

// checkProvisions is upstream's checkVolumeProvisions: whether the claims
// can be provisioned on the node, and whether there is enough capacity.
func checkProvisions(snap *snapshot.Snapshot, claims []*v1.PersistentVolumeClaim, node *v1.Node) (bool, bool, error) {
	for _, claim := range claims {
		name := volume.GetPersistentVolumeClaimClass(claim)
		if name == "" {
			return false, false, fmt.Errorf("no class for claim %q", claim.Namespace+"/"+claim.Name)
		}
		class := snap.StorageClass(name)
		if class == nil {
			return false, false, fmt.Errorf("failed to find storage class %q", name)
		}
		if class.Provisioner == "" || class.Provisioner == volume.NotSupportedProvisioner {
			return false, true, nil
		}
		if !matchTopologySelectorTerms(class.AllowedTopologies, labels.Set(node.Labels)) {
			return false, true, nil
		}
		if !enoughCapacity(snap, class, claim, node) {
			return true, false, nil
		}
	}
	return true, true, nil
}

// enoughCapacity is upstream's hasEnoughCapacity: only drivers that ask for
// capacity tracking need a CSIStorageCapacity of the class, accessible from
// the node, whose limit fits the claim.
func enoughCapacity(snap *snapshot.Snapshot, class *storagev1.StorageClass, claim *v1.PersistentVolumeClaim, node *v1.Node) bool {
	c, needed := capacityFor(snap, class, claim, node)
	return !needed || c != nil
}

// capacityFor returns the first CSIStorageCapacity (in the snapshot's
// order) of the class, accessible from node, whose limit fits the claim;
// needed is false when the claim requests no storage or the class's driver
// does not track capacity.
func capacityFor(snap *snapshot.Snapshot, class *storagev1.StorageClass, claim *v1.PersistentVolumeClaim, node *v1.Node) (c *storagev1.CSIStorageCapacity, needed bool) {
	q, ok := claim.Spec.Resources.Requests[v1.ResourceStorage]
	if !ok {
		return nil, false
	}
	driver := snap.CSIDriver(class.Provisioner)
	if driver == nil || driver.Spec.StorageCapacity == nil || !*driver.Spec.StorageCapacity {
		return nil, false
	}
	size := q.Value()
	for _, c := range snap.CSIStorageCapacities() {
		if c.StorageClassName != class.Name {
			continue
		}
		limit := c.MaximumVolumeSize
		if limit == nil {
			limit = c.Capacity
		}
		if limit == nil || limit.Value() < size || c.NodeTopology == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(c.NodeTopology)
		if err == nil && sel.Matches(labels.Set(node.Labels)) {
			return c, true
		}
	}
	return nil, true
}

// matchTopologySelectorTerms is upstream's v1helper function of that name:
// an empty list matches everything; terms are ORed; an empty term matches
// nothing.
func matchTopologySelectorTerms(terms []v1.TopologySelectorTerm, set labels.Set) bool {
	if len(terms) == 0 {
		return true
	}
	for _, t := range terms {
		if len(t.MatchLabelExpressions) == 0 {
			continue
		}
		sel := labels.NewSelector()
		ok := true
		for _, e := range t.MatchLabelExpressions {
			r, err := labels.NewRequirement(e.Key, selection.In, e.Values)
			if err != nil {
				ok = false
				break
			}
			sel = sel.Add(*r)
		}
		if ok && sel.Matches(set) {
			return true
		}
	}
	return false
}
