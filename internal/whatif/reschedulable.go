package whatif

import (
	"fmt"
	"io"

	"github.com/reprieve/reprieve/internal/engine/preemption"
	"github.com/reprieve/reprieve/internal/engine/profile"
)

// placeVictim fills, under the reschedulable policy, where the i-th victim
// of c could run right after the eviction or why it would stay pending.
func placeVictim(v *Victim, c *preemption.Candidate, i int) {
	if i >= len(c.Placements) {
		return
	}
	if p := c.Placements[i]; p.Node != nil {
		v.ReschedulableTo = p.Node.Name
	} else {
		v.PendingReason = p.Reason
	}
}

// unplaceable is c's count of victims that fit nowhere else, under the
// reschedulable policy only (nil otherwise).
func unplaceable(p profile.Policy, c *preemption.Candidate) *int {
	if p != profile.PolicyReschedulable {
		return nil
	}
	n := c.Unplaceable
	return &n
}

// pendingSummary is the summary's note, under the reschedulable policy, of
// the victims that would stay pending.
func pendingSummary(p profile.Policy, c *preemption.Candidate) string {
	if p != profile.PolicyReschedulable {
		return ""
	}
	if c.Unplaceable == 0 {
		return ", every victim can run elsewhere"
	}
	return fmt.Sprintf(", %d %s would stay pending", c.Unplaceable, plural(c.Unplaceable, "victim", "victims"))
}

// upstreamPending is the upstream comparison's note of its victims that
// would stay pending, under the reschedulable policy.
func upstreamPending(u *PolicyBaseline) string {
	if u.UnplaceableVictims == nil {
		return ""
	}
	return fmt.Sprintf(", %d %s would stay pending", *u.UnplaceableVictims, plural(*u.UnplaceableVictims, "victim", "victims"))
}

// WritePlacements writes, for --explain under the reschedulable policy, one
// line per victim: the node it could run on right after the eviction, or
// why it would stay pending. It writes nothing for other policies.
func WritePlacements(w io.Writer, d *Decision) error {
	first := true
	for _, v := range d.Victims {
		var line string
		switch {
		case v.ReschedulableTo != "":
			line = fmt.Sprintf("RESCHED   victim %s could run on %s\n", v.Pod, v.ReschedulableTo)
		case v.PendingReason != "":
			line = fmt.Sprintf("RESCHED   victim %s would stay pending: %s\n", v.Pod, v.PendingReason)
		default:
			continue
		}
		if first {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
			first = false
		}
		if _, err := io.WriteString(w, line); err != nil {
			return err
		}
	}
	return nil
}
