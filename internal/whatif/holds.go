package whatif

import (
	"fmt"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/preemption"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// Hold is a volume resource a victim holds on the nominated node that the
// pod needs and only the victim's eviction frees, or (with the
// DRAPreemption gate) the devices its ResourceClaim releases: why
// preemption chose it beyond the resources it requests.
type Hold struct {
	// Kind is "ReadWriteOncePodClaim", "AttachSlot", "InlineDisk" or
	// "Devices".
	Kind string `json:"kind"`
	// Plugin is the filter that counts it (VolumeRestrictions,
	// NodeVolumeLimits or DynamicResources).
	Plugin string `json:"plugin"`
	// Claim is the ReadWriteOncePod claim or the ResourceClaim,
	// "namespace/name".
	Claim string `json:"claim,omitempty"`
	// Devices are the devices the ResourceClaim releases,
	// "driver/pool/device".
	Devices []string `json:"devices,omitempty"`
	// Driver is the CSI driver whose attach limit the volume counts
	// against, Volume its unique name ("driver/handle").
	Driver string `json:"driver,omitempty"`
	Volume string `json:"volume,omitempty"`
	// Reason says it in a sentence.
	Reason string `json:"reason"`
}

// describeHolds adds to d's victims on the nominated node the volume
// resources they hold that the pod needs.
func describeHolds(d *Decision, c *filter.Cycle, res *preemption.Result) {
	if res == nil || res.Chosen == nil || len(d.Victims) == 0 {
		return
	}
	chosen := res.Chosen
	var onNode []*snapshot.Pod
	for _, v := range chosen.Victims {
		if v.Pod.NodeName() == chosen.Node.Name {
			onNode = append(onNode, v.Pod)
		}
	}
	holds := c.VolumeHolds(chosen.Node, onNode)
	if len(holds) == 0 {
		return
	}
	for i, v := range chosen.Victims {
		for _, h := range holds[v.Pod] {
			out := Hold{Kind: string(h.Kind), Plugin: h.Plugin, Driver: h.Driver, Volume: h.Volume}
			switch h.Kind {
			case filter.HoldRWOPClaim:
				out.Claim = v.Pod.Namespace() + "/" + h.Claim
				out.Reason = fmt.Sprintf("uses ReadWriteOncePod claim %s, which the pod needs", out.Claim)
			case filter.HoldAttachSlot:
				out.Reason = fmt.Sprintf("holds one of %s's %s attach slots (volume %s), which the pod's new volumes need", chosen.Node.Name, h.Driver, h.Volume)
			case filter.HoldInlineDisk:
				out.Reason = "uses an inline disk that conflicts with the pod's"
			}
			d.Victims[i].Holds = append(d.Victims[i].Holds, out)
		}
	}
}
