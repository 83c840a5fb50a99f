package score

import (
	v1 "k8s.io/api/core/v1"
)

// Scoring strategies of NodeResourcesFit (ScoringStrategy.type).
const (
	LeastAllocated           = "LeastAllocated"
	MostAllocated            = "MostAllocated"
	RequestedToCapacityRatio = "RequestedToCapacityRatio"
)

// maxCustomPriorityScore is the highest score of a RequestedToCapacityRatio
// shape point; shape scores are scaled by MaxNodeScore/maxCustomPriorityScore.
const maxCustomPriorityScore int64 = 10

// Plugin is one score plugin of a profile.
type Plugin struct {
	// Name is upstream's name of the plugin (TaintToleration, ...).
	Name string
	// Weight multiplies the plugin's normalized scores.
	Weight int64
	// Score is true when the plugin is enabled at the score extension
	// point; a plugin enabled only at preScore runs its PreScore, whose
	// error fails the cycle, but gives no scores.
	Score bool
}

// ResourceWeight is one resource a resource scorer looks at, and its weight.
type ResourceWeight struct {
	Name   v1.ResourceName
	Weight int64
}

// ShapePoint is one point of RequestedToCapacityRatio's scoring function:
// utilization in percent (0–100) and score (0–10).
type ShapePoint struct {
	Utilization, Score int64
}

// Fit is NodeResourcesFit's scoring strategy.
type Fit struct {
	// Strategy is LeastAllocated, MostAllocated or RequestedToCapacityRatio.
	Strategy string
	// Resources are the scored resources with their weights.
	Resources []ResourceWeight
	// Shape is RequestedToCapacityRatio's function, by increasing
	// utilization.
	Shape []ShapePoint
}

// Config is a profile's scoring: its score plugins and their arguments,
// already defaulted and validated (see pkg/config). DefaultConfig is the
// default profile's.
type Config struct {
	// Plugins are the enabled PreScore/Score plugins in profile order.
	Plugins []Plugin
	// Fit is NodeResourcesFit's scoring strategy.
	Fit Fit
	// BalancedResources are NodeResourcesBalancedAllocation's resources.
	BalancedResources []ResourceWeight
	// HardPodAffinityWeight is InterPodAffinity's weight of an existing
	// pod's required affinity term that the incoming pod matches (0–100).
	HardPodAffinityWeight int32
	// IgnorePreferredTermsOfExistingPods makes InterPodAffinity skip pods
	// without preferred (anti-)affinity terms of their own.
	IgnorePreferredTermsOfExistingPods bool
	// SpreadListDefaulting is PodTopologySpread's defaultingType List:
	// SpreadDefaultConstraints apply instead of the system defaults, and
	// nodes missing one of their keys are not scored.
	SpreadListDefaulting     bool
	SpreadDefaultConstraints []v1.TopologySpreadConstraint
	// AddedPreferredAffinity are NodeAffinity's
	// addedAffinity.preferredDuringSchedulingIgnoredDuringExecution terms,
	// scored for every pod.
	AddedPreferredAffinity []v1.PreferredSchedulingTerm
	// VolumeShape is VolumeBinding's utilization shape (scores 0–10), by
	// increasing utilization; empty means the default.
	VolumeShape []ShapePoint
}

// defaultResources are the scored resources of the default profile.
func defaultResources() []ResourceWeight {
	return []ResourceWeight{{v1.ResourceCPU, 1}, {v1.ResourceMemory, 1}}
}

// DefaultPlugins are the score plugins of the default profile with their
// weights, in the order the framework runs them: PreScore plugins first.
func DefaultPlugins() []Plugin {
	return []Plugin{
		{TaintToleration, 3, true},
		{NodeAffinity, 2, true},
		{NodeResourcesFit, 1, true},
		{VolumeBinding, 1, true},
		{PodTopologySpread, 2, true},
		{InterPodAffinity, 2, true},
		{NodeResourcesBalancedAllocation, 1, true},
		{DynamicResources, 2, true},
		{ImageLocality, 1, true},
	}
}

// DefaultConfig is the scoring of kube-scheduler's default profile.
func DefaultConfig() *Config {
	return &Config{
		Plugins:               DefaultPlugins(),
		Fit:                   Fit{Strategy: LeastAllocated, Resources: defaultResources()},
		BalancedResources:     defaultResources(),
		HardPodAffinityWeight: 1,
		VolumeShape:           defaultVolumeShape(),
	}
}

// HasScorePlugins reports whether any plugin is enabled at score, as
// upstream's HasScorePlugins; without one, the scheduler stops at the first
// feasible node.
func (c *Config) HasScorePlugins() bool {
	for _, p := range c.Plugins {
		if p.Score {
			return true
		}
	}
	return false
}
