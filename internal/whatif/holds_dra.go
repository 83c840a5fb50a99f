package whatif

import (
	"fmt"
	"strings"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/preemption"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// HoldDevices is the Kind of a Hold for the devices a victim's
// ResourceClaim releases (only with the DRAPreemption gate).
const HoldDevices = "Devices"

// describeDeviceHolds adds to d's victims the devices their eviction frees
// under the DRAPreemption gate, as the dry run releases them
// (filter.Cycle.DeviceHolds).
func describeDeviceHolds(d *Decision, c *filter.Cycle, res *preemption.Result) {
	if res == nil || res.Chosen == nil || len(d.Victims) == 0 {
		return
	}
	victims := make([]*snapshot.Pod, len(res.Chosen.Victims))
	for i, v := range res.Chosen.Victims {
		victims[i] = v.Pod
	}
	holds := c.DeviceHolds(victims)
	for i, v := range victims {
		for _, claim := range holds[v] {
			devices := make([]string, 0, len(claim.Status.Allocation.Devices.Results))
			for _, r := range claim.Status.Allocation.Devices.Results {
				devices = append(devices, r.Driver+"/"+r.Pool+"/"+r.Device)
			}
			key := claim.Namespace + "/" + claim.Name
			d.Victims[i].Holds = append(d.Victims[i].Holds, Hold{
				Kind: HoldDevices, Plugin: filter.DynamicResources, Claim: key, Devices: devices,
				Reason: fmt.Sprintf("its claim %s releases %s", key, strings.Join(devices, ", ")),
			})
		}
	}
}
