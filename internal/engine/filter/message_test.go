package filter

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestFitErrorMessage checks the message against a plain count of every
// reason, with few and with many distinct reasons, shared or not.
func TestFitErrorMessage(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, distinct := range []int{1, 3, 16, 17, 32, 33, 200} {
		statuses := make([]Status, 3000)
		for i := range statuses {
			if i > 0 && r.IntN(2) == 0 {
				// Runs of nodes share one reasons slice, as filters'
				// common statuses do; so, at times, do nodes apart.
				statuses[i].Reasons = statuses[max(i-1-r.IntN(3), 0)].Reasons
				continue
			}
			for range r.IntN(3) {
				statuses[i].Reasons = append(statuses[i].Reasons, fmt.Sprintf("reason %d", r.IntN(distinct)))
			}
		}
		counts := map[string]int{}
		for _, s := range statuses {
			for _, reason := range s.Reasons {
				counts[reason]++
			}
		}
		var parts []string
		for reason, n := range counts {
			parts = append(parts, fmt.Sprintf("%d %s", n, reason))
		}
		slices.Sort(parts)
		want := "0/3000 nodes are available: " + strings.Join(parts, ", ") + "."
		if got := FitErrorMessage(len(statuses), Status{}, statuses); got != want {
			t.Errorf("%d distinct reasons:\n got %s\nwant %s", distinct, got, want)
		}
	}
	if got, want := FitErrorMessage(2, Status{}, make([]Status, 2)), "0/2 nodes are available:"; got != want {
		t.Errorf("no reasons: got %q, want %q", got, want)
	}
}
