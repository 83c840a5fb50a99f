package simulate

import (
	"fmt"
	"io"

	"github.com/reprieve/reprieve/internal/adapter/sim"
)

// printReplicaStories tells what became of each preempted StatefulSet
// replica: where it ran, who preempted it, how long its re-created pod was
// pending and why, and the volumes that pin it.
func printReplicaStories(w io.Writer, stories []sim.ReplicaStory) {
	if len(stories) == 0 {
		return
	}
	at := func(s float64) string { return sim.FormatOffset(sim.Seconds(s)) }
	fmt.Fprintf(w, "\nPREEMPTED REPLICAS\n")
	for _, s := range stories {
		fmt.Fprintf(w, "%s  ran on %s; preempted at %s", s.Pod, s.Node, at(s.Preempted))
		if s.PreemptedBy != "" {
			fmt.Fprintf(w, " by %s", s.PreemptedBy)
		}
		switch {
		case s.Recreated == nil:
			fmt.Fprintf(w, "; not re-created by the end\n")
		case s.Bound == nil:
			fmt.Fprintf(w, "; re-created at %s, still pending at the end\n", at(*s.Recreated))
		default:
			fmt.Fprintf(w, "; re-created at %s, pending until %s (bound to %s)\n", at(*s.Recreated), at(*s.Bound), s.BoundNode)
		}
		if s.Unschedulable != "" {
			fmt.Fprintf(w, "    why pending: %s\n", s.Unschedulable)
		}
		for _, v := range s.Volumes {
			switch {
			case v.Volume == "":
				fmt.Fprintf(w, "    claim %s: not bound\n", v.Claim)
			case v.Topology == "":
				fmt.Fprintf(w, "    claim %s: volume %s, reachable from every node\n", v.Claim, v.Volume)
			default:
				fmt.Fprintf(w, "    claim %s: volume %s, only on nodes with %s\n", v.Claim, v.Volume, v.Topology)
			}
		}
	}
}
