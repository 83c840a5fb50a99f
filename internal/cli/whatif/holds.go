package whatif

import (
	"fmt"
	"io"

	"github.com/reprieve/reprieve/internal/whatif"
)

// printHolds explains, for --explain, the victims chosen because they hold
// a volume resource the pod needs (a ReadWriteOncePod claim, an attach
// slot, a conflicting inline disk) or, with DRAPreemption, whose claims
// release devices, one line each with the plugin.
func printHolds(w io.Writer, d *whatif.Decision) {
	first := true
	for _, v := range d.Victims {
		for _, h := range v.Holds {
			if first {
				fmt.Fprintln(w)
				first = false
			}
			label := "VOLUME"
			if h.Kind == whatif.HoldDevices {
				label = "DEVICES"
			}
			fmt.Fprintf(w, "%-9s victim %s %s (%s)\n", label, v.Pod, h.Reason, h.Plugin)
		}
	}
}
