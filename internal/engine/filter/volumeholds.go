package filter

import (
	"slices"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// VolumeHoldKind says what a pod holds that the incoming pod needs.
type VolumeHoldKind string

// The volume resources only removing the pods that hold them frees.
const (
	// HoldRWOPClaim: the pod uses a ReadWriteOncePod claim the incoming
	// pod needs (VolumeRestrictions).
	HoldRWOPClaim VolumeHoldKind = "ReadWriteOncePodClaim"
	// HoldAttachSlot: the pod uses a volume that takes one of the node's
	// attach slots of a CSI driver whose limit the incoming pod's new
	// volumes would exceed (NodeVolumeLimits).
	HoldAttachSlot VolumeHoldKind = "AttachSlot"
	// HoldInlineDisk: the pod uses an inline GCE PD, AWS EBS, iSCSI or RBD
	// disk that conflicts with one of the incoming pod's
	// (VolumeRestrictions).
	HoldInlineDisk VolumeHoldKind = "InlineDisk"
)

// VolumeHold is one thing a pod holds that stands in the incoming pod's
// way on a node.
type VolumeHold struct {
	Kind VolumeHoldKind `json:"kind"`
	// Plugin is the filter plugin that counts it.
	Plugin string `json:"plugin"`
	// Claim is the claim's name (HoldRWOPClaim).
	Claim string `json:"claim,omitempty"`
	// Driver is the CSI driver and Volume the volume's unique name
	// ("driver/handle") (HoldAttachSlot).
	Driver string `json:"driver,omitempty"`
	Volume string `json:"volume,omitempty"`
}

// VolumeHolds says, for each of victims (pods on node n), what volume
// resource it holds that the cycle's pod needs and that evicting the
// victims frees: the pod's ReadWriteOncePod claims it uses (matched by
// name, as VolumeRestrictions matches them), the inline disks that
// conflict with the pod's, and, for a CSI driver whose attach limit on n
// the pod's new volumes would exceed, the volumes no other pod on n uses
// and no VolumeAttachment holds. Victims holding nothing are absent.
func (c *Cycle) VolumeHolds(n *snapshot.Node, victims []*snapshot.Pod) map[*snapshot.Pod][]VolumeHold {
	vs := c.vol
	if vs == nil || len(victims) == 0 {
		return nil
	}
	out := map[*snapshot.Pod][]VolumeHold{}
	for _, p := range victims {
		if !vs.restrictions {
			break
		}
		var claims []string
		for _, v := range p.Volumes() {
			if v.PersistentVolumeClaim != nil && vs.rwopClaims[v.PersistentVolumeClaim.ClaimName] {
				claims = append(claims, v.PersistentVolumeClaim.ClaimName)
			}
		}
		slices.Sort(claims)
		for _, name := range slices.Compact(claims) {
			out[p] = append(out[p], VolumeHold{Kind: HoldRWOPClaim, Plugin: VolumeRestrictions, Claim: name})
		}
		if len(vs.inlineDisks) > 0 && vs.diskConflict(p.Volumes()) {
			out[p] = append(out[p], VolumeHold{Kind: HoldInlineDisk, Plugin: VolumeRestrictions})
		}
	}
	if vs.limits {
		c.attachHolds(n, victims, out)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// attachHolds adds the victims' attach slots to out (see VolumeHolds).
func (c *Cycle) attachHolds(n *snapshot.Node, victims []*snapshot.Pod, out map[*snapshot.Pod][]VolumeHold) {
	vs := c.vol
	csiNode := c.snap.CSINode(n.Name)
	which := 0
	if csiNode != nil {
		which = 1
	}
	newVols := vs.newVolumes[which]
	limits := volumeLimits(csiNode)
	if !newVols.status.IsSuccess() || len(newVols.vols) == 0 || len(limits) == 0 {
		return
	}
	isVictim := make(map[*snapshot.Pod]bool, len(victims))
	for _, p := range victims {
		isVictim[p] = true
	}
	// Every unique volume attached to the node, whether a VolumeAttachment
	// holds it and whether a pod that stays uses it.
	type use struct {
		driver        string
		held, staying bool
	}
	attached := map[string]*use{}
	get := func(name, driver string) *use {
		u := attached[name]
		if u == nil {
			u = &use{driver: driver}
			attached[name] = u
		}
		return u
	}
	for _, va := range c.snap.VolumeAttachmentsOn(n.Name) {
		if va.Spec.Attacher == "" || va.Spec.Source.PersistentVolumeName == nil {
			continue
		}
		if pv := c.snap.PersistentVolume(*va.Spec.Source.PersistentVolumeName); pv != nil && pv.Spec.CSI != nil {
			get(va.Spec.Attacher+"/"+pv.Spec.CSI.VolumeHandle, va.Spec.Attacher).held = true
		}
	}
	for _, p := range n.Pods {
		for name, driver := range vs.podVolumesOf(c.snap, p, csiNode).vols {
			u := get(name, driver)
			if !isVictim[p] {
				u.staying = true
			}
		}
	}
	// The drivers whose limit the pod's new volumes exceed with every pod
	// of the node in place.
	over := map[string]bool{}
	perDriver, newPerDriver := map[string]int{}, map[string]int{}
	for _, u := range attached {
		perDriver[u.driver]++
	}
	for name, driver := range newVols.vols {
		if attached[name] == nil {
			newPerDriver[driver]++
		}
	}
	for driver, k := range newPerDriver {
		if limit, ok := limits[driver]; ok && k > 0 && perDriver[driver]+k > int(limit) {
			over[driver] = true
		}
	}
	if len(over) == 0 {
		return
	}
	for _, p := range victims {
		pv := vs.podVolumesOf(c.snap, p, csiNode)
		names := make([]string, 0, len(pv.vols))
		for name := range pv.vols {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			driver := pv.vols[name]
			u := attached[name]
			if !over[driver] || u == nil || u.held || u.staying || newVols.vols[name] != "" {
				continue
			}
			out[p] = append(out[p], VolumeHold{Kind: HoldAttachSlot, Plugin: NodeVolumeLimits, Driver: driver, Volume: name})
		}
	}
}
