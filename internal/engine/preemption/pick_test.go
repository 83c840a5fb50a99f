package preemption

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprieve/reprieve/internal/engine/filter"
)

// scoreFromPods is Candidate.Score computed from the victims' pods rather
// than from what the dry run kept of them: a pod that has not started
// counts as starting at now.
func scoreFromPods(c *Candidate, now int64) Score {
	start := func(v *Victim) int64 {
		if ns, ok := v.Pod.StartNanos(); ok {
			return ns
		}
		return now
	}
	first := c.Victims[0].Pod
	s := Score{NumPDBViolations: c.NumPDBViolations, HighestPriority: first.Priority, NumVictims: len(c.Victims), Unplaceable: c.Unplaceable}
	maxPrio, earliest := first.Priority, start(c.Victims[0])
	for _, v := range c.Victims {
		p := v.Pod.Priority
		s.SumPriorities += int64(p)
		switch {
		case p == maxPrio:
			earliest = min(earliest, start(v))
		case p > maxPrio:
			maxPrio, earliest = p, start(v)
		}
	}
	s.EarliestStart = earliest
	return s
}

// TestScoreReadsVictimsAsPods checks that a candidate's score, which reads
// the priority and start the dry run kept in each victim, is what the
// victims' pods say, for random clusters with pods that have not started,
// from a node's first dry run (pods listed in node order) and later ones
// (its cached importance order), with and without pod groups.
func TestScoreReadsVictimsAsPods(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(21, 22))
	scored, unstarted := 0, 0
	for trial := range 600 {
		gang := trial%3 == 2
		snap, podObj := randomResourcesCluster(t, r, gang)
		pod, err := snap.NewPod(podObj)
		if err != nil {
			t.Fatal(err)
		}
		opts := Options{Now: now, Exhaustive: true}
		if gang {
			opts.Features = Features{GenericWorkload: true}
		}
		var e Evaluator
		for range 2 {
			c := filter.NewCycle(snap, pod, filter.Options{Parallelism: 1})
			fr := c.FilterAll()
			if len(fr.Feasible) > 0 {
				break
			}
			res, err := e.Evaluate(c, fr, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, cand := range res.Candidates {
				scored++
				for _, v := range cand.Victims {
					if _, ok := v.Pod.StartNanos(); !ok {
						unstarted++
					}
				}
				if diff := cmp.Diff(scoreFromPods(cand, now.UnixNano()), cand.Score(now.UnixNano())); diff != "" {
					t.Fatalf("trial %d node %s: score (-from pods +from victims):\n%s", trial, cand.Node.Name, diff)
				}
			}
		}
	}
	if scored < 300 || unstarted < 50 {
		t.Fatalf("%d candidates scored, %d victims not started: too few", scored, unstarted)
	}
}
