package whatif

import (
	"time"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/preemption"
	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/engine/score"
)

// Options configures Evaluate. With Now set, the zero value is
// kube-scheduler's default profile with v1.37's default feature gates.
type Options struct {
	// Now is the evaluation time, required (the engine never reads the
	// clock): pods without a start time count as starting then.
	Now time.Time
	// Seed seeds the dry run's random offset and its final tie-break, and
	// the tie-break among equally scored nodes.
	Seed uint64
	// Parallelism bounds the goroutines of an evaluation, the caller's
	// included: 1 runs it on the caller's goroutine alone; 0 means
	// GOMAXPROCS.
	Parallelism int
	// Profile is the scheduling profile that decides (config.Config's
	// Profile for the pod's schedulerName); nil is the default profile.
	Profile *profile.Profile
	// Features are the feature gates that change preemption
	// (profile.ParseFeatureGates); the zero value is v1.37's default.
	Features profile.Features
	// Policy chooses the victims; the zero value is upstream's.
	Policy profile.Policy
	// Exhaustive dry-runs every potential node, from offset 0, instead of
	// upstream's candidate budget from a random offset; Offset, when not
	// nil, replaces the random offset (modulo the potential nodes). Both
	// serve comparisons with a run of upstream's whose offset is known.
	Exhaustive bool
	Offset     *int
}

// ErrNoClock is Evaluate's error when Options.Now is not set.
var ErrNoClock = preemption.ErrNoClock

// engineOptions are Options resolved into the engine's own.
type engineOptions struct {
	filter                   filter.Options
	preemption               preemption.Options
	score                    score.Options
	percentageOfNodesToScore int32
	noPreemption             bool
}

// resolve turns o into the engine's options, with the profile's arguments.
func (o Options) resolve() engineOptions {
	e := engineOptions{
		preemption: preemption.Options{Now: o.Now, Seed: o.Seed, Features: o.Features, Policy: o.Policy,
			Exhaustive: o.Exhaustive, Offset: o.Offset},
	}
	if p := o.Profile; p != nil {
		e.filter = p.Filter
		e.preemption.MinCandidateNodesPercentage = p.MinCandidateNodesPercentage
		e.preemption.MinCandidateNodesAbsolute = p.MinCandidateNodesAbsolute
		e.score.Config = p.Score
		e.percentageOfNodesToScore = p.PercentageOfNodesToScore
		e.noPreemption = !p.Preemption
	}
	e.filter.Parallelism = o.Parallelism
	e.filter.DRAPreemption = o.Features.DRAPreemption
	e.filter.SpreadEmptySelectorMatchesAll = o.Features.Semantics.SpreadEmptySelectorMatchesAll
	e.score.SpreadEmptySelectorMatchesAll = o.Features.Semantics.SpreadEmptySelectorMatchesAll
	e.filter.CSIDriverNotRequired = o.Features.Semantics.CSIDriverNotRequired
	return e
}
