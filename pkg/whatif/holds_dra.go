package whatif

import (
	"fmt"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/reprieve/reprieve/internal/preemption"
	"github.com/reprieve/reprieve/internal/snapshot"
)

// HoldDevices is the Kind of a Hold for the devices a victim's
// ResourceClaim releases (only with the DRAPreemption gate).
const HoldDevices = "Devices"

// describeDeviceHolds adds to d's victims the devices their eviction frees
// under the DRAPreemption gate, by the dry run's rule: an allocated claim
// releases its devices once every pod it is reserved for is a victim, and
// the preemptor's own claims are never released.
func describeDeviceHolds(d *Decision, snap *snapshot.Snapshot, pod *snapshot.Pod, res *preemption.Result) {
	if res == nil || res.Chosen == nil || len(d.Victims) == 0 {
		return
	}
	victims := make(map[types.UID]int, len(res.Chosen.Victims))
	for i, v := range res.Chosen.Victims {
		victims[v.Pod.Obj.UID] = i
	}
	own := sets.New[string]()
	for _, c := range pod.Obj.Spec.ResourceClaims {
		if c.ResourceClaimName != nil {
			own.Insert(*c.ResourceClaimName)
		}
	}
	for _, s := range pod.Obj.Status.ResourceClaimStatuses {
		if s.ResourceClaimName != nil {
			own.Insert(*s.ResourceClaimName)
		}
	}
	for _, c := range snap.ResourceClaims() {
		if c.Status.Allocation == nil || len(c.Status.ReservedFor) == 0 ||
			(c.Namespace == pod.Obj.Namespace && own.Has(c.Name)) || !reservedOnlyFor(c, victims) {
			continue
		}
		devices := make([]string, 0, len(c.Status.Allocation.Devices.Results))
		for _, r := range c.Status.Allocation.Devices.Results {
			devices = append(devices, r.Driver+"/"+r.Pool+"/"+r.Device)
		}
		claim := c.Namespace + "/" + c.Name
		for _, ref := range c.Status.ReservedFor {
			i := victims[ref.UID]
			d.Victims[i].Holds = append(d.Victims[i].Holds, Hold{
				Kind: HoldDevices, Plugin: "DynamicResources", Claim: claim, Devices: devices,
				Reason: fmt.Sprintf("its claim %s releases %s", claim, strings.Join(devices, ", ")),
			})
		}
	}
}

// reservedOnlyFor reports whether every consumer of c is a victim.
func reservedOnlyFor(c *resourceapi.ResourceClaim, victims map[types.UID]int) bool {
	for _, ref := range c.Status.ReservedFor {
		if _, ok := victims[ref.UID]; !ok {
			return false
		}
	}
	return true
}
