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
// how many victims can run elsewhere together and how many would stay
// pending.
func pendingSummary(p profile.Policy, c *preemption.Candidate) string {
	if p != profile.PolicyReschedulable {
		return ""
	}
	return ", " + together(len(c.Victims), c.Unplaceable)
}

// together says, of n victims placed one after another of which pending
// fit nowhere, how many can run elsewhere together and how many would
// stay pending.
func together(n, pending int) string {
	switch {
	case n == 1 && pending == 0:
		return "the victim can run elsewhere"
	case n == 1:
		return "the victim would stay pending"
	case pending == 0:
		return fmt.Sprintf("all %d victims can run elsewhere together", n)
	case pending == n:
		return fmt.Sprintf("none of the %d victims can run elsewhere, all would stay pending", n)
	}
	return fmt.Sprintf("%d of %d victims can run elsewhere together, %d would stay pending", n-pending, n, pending)
}

// upstreamPending is the upstream comparison's note of how many of its
// victims can run elsewhere together, under the reschedulable policy.
func upstreamPending(u *PolicyBaseline) string {
	if u.UnplaceableVictims == nil {
		return ""
	}
	return ", " + together(len(u.Victims), *u.UnplaceableVictims)
}

// WriteSearch writes, for --explain under a victim policy other than
// upstream's, how far its search reached: the nodes searched, those
// upstream's dry run drops, those a work bound cut off.
func WriteSearch(w io.Writer, d *Decision) error {
	s := d.Search
	if s == nil {
		return nil
	}
	line := fmt.Sprintf("Search: %s searched %s", d.Policy, count(len(s.Searched), "potential node", "potential nodes"))
	if s.NotSearched > 0 {
		line += fmt.Sprintf(" (%d more not searched: over %d only those the dry run visits are)", s.NotSearched, s.NodeLimit)
	}
	if len(s.BeyondUpstream) > 0 {
		line += fmt.Sprintf("; every subset of the lower-priority pods on %s, which upstream's dry run drops", abbreviate(s.BeyondUpstream, 5))
	}
	if len(s.CutOff) > 0 {
		line += fmt.Sprintf("; cut off by a work bound on %s", abbreviate(s.CutOff, 5))
	} else {
		line += "; no work bound reached"
	}
	_, err := fmt.Fprintf(w, "%s.\n", line)
	return err
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
