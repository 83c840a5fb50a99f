package whatif

import (
	"fmt"
	"io"

	"github.com/reprieve/reprieve/pkg/whatif"
)

// printHolds explains, for --explain, the victims chosen because they hold
// a volume resource the pod needs (a ReadWriteOncePod claim, an attach
// slot, a conflicting inline disk), one line each with the plugin.
func printHolds(w io.Writer, d *whatif.Decision) {
	first := true
	for _, v := range d.Victims {
		for _, h := range v.Holds {
			if first {
				fmt.Fprintln(w)
				first = false
			}
			fmt.Fprintf(w, "VOLUME    victim %s %s (%s)\n", v.Pod, h.Reason, h.Plugin)
		}
	}
}
