// Package profile holds what one run of the engine is configured with: a
// scheduling profile's plugins and their arguments, the feature gates that
// change preemption, and the victim policy.
package profile

import (
	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/score"
)

// Profile is one scheduling profile, resolved: its plugins per extension
// point merged with the defaults and its plugin arguments defaulted.
type Profile struct {
	// SchedulerName selects the pods of the profile (spec.schedulerName).
	SchedulerName string
	// PercentageOfNodesToScore is the profile's, or else the
	// configuration's, percentageOfNodesToScore; 0 is adaptive.
	PercentageOfNodesToScore int32
	// Preemption is true when DefaultPreemption is enabled at postFilter.
	Preemption bool
	// HasPostFilter is true when any postFilter plugin is enabled
	// (DefaultPreemption, DynamicResources): without one, a pod that fits
	// nowhere loses its nominated node.
	HasPostFilter bool
	// MinCandidateNodesPercentage and MinCandidateNodesAbsolute are the
	// DefaultPreemption arguments.
	MinCandidateNodesPercentage int32
	MinCandidateNodesAbsolute   int32
	// Score is the profile's scoring.
	Score *score.Config
	// Filter are the profile's arguments that change filtering:
	// NodeAffinity's added required affinity, NodeResourcesFit's ignored
	// resources, PodTopologySpread's default constraints (defaultingType
	// List).
	Filter filter.Options
}
