package report

import (
	"fmt"

	"github.com/reprieve/reprieve/internal/adapter/sim"
)

// replicaRow is one preempted StatefulSet replica's story on the page.
type replicaRow struct {
	Pod, Node, Preempted, PreemptedBy string
	// Fate says what became of the re-created replica; Bad when it was
	// still pending at the end.
	Fate string
	Bad  bool
	// Why is its last FailedScheduling message.
	Why     string
	Volumes []string
}

func replicaRows(stories []sim.ReplicaStory) []replicaRow {
	var rows []replicaRow
	for _, s := range stories {
		r := replicaRow{Pod: s.Pod, Node: s.Node, Preempted: fmtClock(s.Preempted), PreemptedBy: s.PreemptedBy, Why: s.Unschedulable}
		switch {
		case s.Recreated == nil:
			r.Fate, r.Bad = "not re-created by the end", true
		case s.Bound == nil:
			r.Fate, r.Bad = fmt.Sprintf("re-created at %s, still pending at the end", fmtClock(*s.Recreated)), true
		default:
			r.Fate = fmt.Sprintf("re-created at %s, pending %s, bound to %s at %s",
				fmtClock(*s.Recreated), fmtDur(*s.Bound-*s.Recreated), s.BoundNode, fmtClock(*s.Bound))
		}
		for _, v := range s.Volumes {
			switch {
			case v.Volume == "":
				r.Volumes = append(r.Volumes, v.Claim+": not bound")
			case v.Topology == "":
				r.Volumes = append(r.Volumes, fmt.Sprintf("%s: volume %s, reachable from every node", v.Claim, v.Volume))
			default:
				r.Volumes = append(r.Volumes, fmt.Sprintf("%s: volume %s, only on nodes with %s", v.Claim, v.Volume, v.Topology))
			}
		}
		rows = append(rows, r)
	}
	return rows
}
