package preemption

import (
	"math"
	"math/rand/v2"
)

// Score is a candidate's standing under upstream's ordered node-choice
// criteria (pickOneNodeForPreemption): fewer PDB violations, then a lower
// highest victim priority, then a smaller sum of victim priorities (each
// offset by 2³¹, so that negative priorities count as upstream counts
// them), then fewer victims, then a later EarliestStart.
type Score struct {
	NumPDBViolations int
	// HighestPriority is the priority of the first, most important victim.
	HighestPriority int32
	// SumPriorities is the plain sum of the victims' priorities.
	SumPriorities int64
	NumVictims    int
	// Unplaceable is Candidate.Unplaceable; only Reschedulable's choice
	// reads it, before the other criteria.
	Unplaceable int
	// EarliestStart is the earliest start, in Unix nanoseconds, among the
	// victims of the highest priority.
	EarliestStart int64
}

// Score returns the candidate's values for the node-choice criteria; a pod
// that has not started counts as starting at now (Unix nanoseconds).
func (c *Candidate) Score(now int64) Score {
	if c.scored && c.scoredAt == now {
		return c.score
	}
	c.score, c.scored, c.scoredAt = c.computeScore(now), true, now
	return c.score
}

func (c *Candidate) computeScore(now int64) Score {
	// The victims' own priority and start, not their pods': a pick reads
	// every candidate's victims.
	first := c.Victims[0]
	s := Score{NumPDBViolations: c.NumPDBViolations, HighestPriority: first.Priority, NumVictims: len(c.Victims), Unplaceable: c.Unplaceable}
	start := func(v *Victim) int64 {
		if v.Started {
			return v.Start
		}
		return now
	}
	maxPrio := first.Priority
	s.EarliestStart = start(first)
	for _, v := range c.Victims {
		s.SumPriorities += int64(v.Priority)
		switch p := v.Priority; {
		case p == maxPrio:
			s.EarliestStart = min(s.EarliestStart, start(v))
		case p > maxPrio:
			maxPrio, s.EarliestStart = p, start(v)
		}
	}
	return s
}

// criterion is one of upstream's node-choice criteria: a value where higher
// is better.
type criterion struct {
	name  string
	value func(s *Score) int64
}

// criteria are upstream's criteria in the order it applies them.
var criteria = [...]criterion{
	{"fewest PDB violations", func(s *Score) int64 { return -int64(s.NumPDBViolations) }},
	{"lowest highest-priority victim", func(s *Score) int64 { return -int64(s.HighestPriority) }},
	{"smallest sum of victim priorities", func(s *Score) int64 {
		return -(s.SumPriorities + int64(s.NumVictims)*(math.MaxInt32+1))
	}},
	{"fewest victims", func(s *Score) int64 { return -int64(s.NumVictims) }},
	{"latest start of the highest-priority victims", func(s *Score) int64 { return s.EarliestStart }},
}

// pickBuffers are the memory of pick, which an Evaluator keeps from one
// evaluation to the next.
type pickBuffers struct {
	scores []Score
	best   []int
	chosen []*Candidate
}

// pick is SelectCandidate with pickOneNodeForPreemption's default criteria:
// each criterion in turn keeps the candidates that are best on it, and the
// first that leaves one decides; among several left at the end one is
// picked at random (upstream: map order). res.Best lives in buf.
func pick(res *Result, now int64, rng *rand.Rand, buf *pickBuffers) {
	switch len(res.Candidates) {
	case 0:
		return
	case 1:
		res.Best, res.Chosen = res.Candidates, res.Candidates[0]
		return
	}
	scores := grow(&buf.scores, len(res.Candidates))
	for i, c := range res.Candidates {
		scores[i] = c.Score(now)
	}
	best := grow(&buf.best, len(res.Candidates))
	for i := range best {
		best[i] = i
	}
	for _, crit := range criteriaFor(res.Policy) {
		next := best[:0]
		top := int64(math.MinInt64)
		for _, i := range best {
			v := crit.value(&scores[i])
			if v > top {
				top, next = v, next[:0]
			}
			if v == top {
				next = append(next, i)
			}
		}
		best = next
		if len(best) == 1 {
			res.DecidedBy = crit.name
			break
		}
	}
	if len(best) > 1 {
		res.DecidedBy = "tie"
	}
	res.Best = grow(&buf.chosen, len(best))
	for k, i := range best {
		res.Best[k] = res.Candidates[i]
	}
	res.Chosen = res.Best[rng.IntN(len(res.Best))]
}
