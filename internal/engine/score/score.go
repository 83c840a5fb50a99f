// Package score is the scoring phase of kube-scheduler v1.37.2: for one pod
// and the nodes it fits on, the PreScore, Score and NormalizeScore of every
// score plugin of a profile, weighted and summed as the framework's
// RunScorePlugins does, and the choice of the best node as schedulePod makes
// it.
//
// A profile's scoring (Config) chooses the plugins, their weights and their
// arguments; without one, the plugins and weights are those of the default
// profile:
//
//	TaintToleration                  3
//	NodeAffinity                     2
//	NodeResourcesFit                 1  (LeastAllocated, cpu and memory, weight 1 each)
//	PodTopologySpread                2  (system default constraints)
//	InterPodAffinity                 2  (hardPodAffinityWeight 1)
//	NodeResourcesBalancedAllocation  1  (cpu and memory)
//	ImageLocality                    1
//	VolumeBinding                    1  (StorageCapacityScoring, default shape)
//	DynamicResources                 2  (firstAvailable choices, Options.Devices)
//
// Everything is computed from the snapshot only; nothing here keeps state
// between calls, and the snapshot is not modified.
package score

import (
	"container/heap"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// Names of the score plugins, as upstream registers them.
const (
	TaintToleration                 = "TaintToleration"
	NodeAffinity                    = "NodeAffinity"
	NodeResourcesFit                = "NodeResourcesFit"
	PodTopologySpread               = "PodTopologySpread"
	InterPodAffinity                = "InterPodAffinity"
	NodeResourcesBalancedAllocation = "NodeResourcesBalancedAllocation"
	ImageLocality                   = "ImageLocality"
	VolumeBinding                   = "VolumeBinding"
	DynamicResources                = "DynamicResources"
)

// MaxNodeScore is the highest score a plugin gives a node after normalizing.
const MaxNodeScore int64 = 100

// Options are the inputs of scoring that are not in the snapshot (which
// holds the Services and controllers that give PodTopologySpread's default
// constraints their selector: Snapshot.DefaultSelector).
type Options struct {
	// Config is the profile's scoring; nil means DefaultConfig.
	Config *Config
	// Devices gives DynamicResources' raw score of a feasible node (the
	// filter cycle that found the node feasible: filter.Cycle); nil scores
	// every node 0, as for a pod without resource claims.
	Devices DeviceScorer
	// SpreadEmptySelectorMatchesAll: PodTopologySpread counts every pod of
	// the namespace for a constraint with an empty labelSelector
	// (profile.Semantics, upstream 1.38); off, none.
	SpreadEmptySelectorMatchesAll bool
}

// DeviceScorer is DynamicResources' Score, which depends on the
// allocation its Filter made on the node.
type DeviceScorer interface {
	DeviceScore(n *snapshot.Node) int64
}

// PluginScores is what one score plugin gave the feasible nodes.
type PluginScores struct {
	// Plugin is upstream's name of the plugin.
	Plugin string
	// Weight is the plugin's weight in the profile.
	Weight int64
	// Skipped reports that the plugin took no part: its PreScore returned
	// Skip (or failed, see ScorePlugins). Raw and Normalized are then nil.
	Skipped bool
	// Raw holds the plugin's Score for each feasible node, Normalized the
	// same after its NormalizeScore (a copy of Raw for plugins without
	// one); both are unweighted and in the order of the feasible nodes.
	Raw, Normalized []int64
}

// run is one score plugin: PreScore, Score and NormalizeScore for all
// feasible nodes at once. It returns skip when PreScore returns Skip.
type run func(c *cycle) (raw, normalized []int64, skip bool, err error)

// runs are the score plugins reprieve computes, by name.
var runs = map[string]run{
	TaintToleration:                 scoreTaintToleration,
	NodeAffinity:                    scoreNodeAffinity,
	NodeResourcesFit:                scoreNodeResourcesFit,
	PodTopologySpread:               scorePodTopologySpread,
	InterPodAffinity:                scoreInterPodAffinity,
	NodeResourcesBalancedAllocation: scoreBalancedAllocation,
	ImageLocality:                   scoreImageLocality,
	VolumeBinding:                   scoreVolumeBinding,
	DynamicResources:                scoreDynamicResources,
}

// scoreDynamicResources is DynamicResources' Score (no PreScore) and its
// NormalizeScore, the default one.
func scoreDynamicResources(c *cycle) (raw, normalized []int64, skip bool, err error) {
	raw = make([]int64, len(c.feasible))
	if c.opts.Devices != nil {
		for i, n := range c.feasible {
			raw[i] = c.opts.Devices.DeviceScore(n)
		}
	}
	return raw, defaultNormalize(raw, false), false, nil
}

// cycle is the input of one scoring run.
type cycle struct {
	snap *snapshot.Snapshot
	pod  *snapshot.Pod
	// obj is pod.Obj(), made once.
	obj      *v1.Pod
	feasible []*snapshot.Node
	opts     Options
	cfg      *Config
}

// ScorePlugins runs every score plugin of the profile (opts.Config, the
// default profile without one) for pod over the feasible nodes and returns
// each plugin's scores, in profile order. Plugins enabled only at preScore
// are not listed.
//
// The error is what upstream's prioritizeNodes would fail the scheduling
// cycle with: a PreScore that cannot parse the pod (an invalid selector in a
// ScheduleAnyway spread constraint, a preferred affinity term or a preferred
// node affinity term — objects the API server rejects). The scores are
// returned all the same, with the failing plugins marked Skipped; the error
// names the first of them, in profile order.
func ScorePlugins(snap *snapshot.Snapshot, pod *snapshot.Pod, feasible []*snapshot.Node, opts Options) ([]PluginScores, error) {
	cfg := opts.Config
	if cfg == nil {
		cfg = DefaultConfig()
	}
	c := &cycle{snap: snap, pod: pod, obj: pod.Obj(), feasible: feasible, opts: opts, cfg: cfg}
	out := make([]PluginScores, 0, len(cfg.Plugins))
	var firstErr error
	for _, pl := range cfg.Plugins {
		fn := runs[pl.Name]
		if fn == nil {
			continue
		}
		raw, norm, skip, err := fn(c)
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("running PreScore plugin %q: %w", pl.Name, err)
			}
			skip = true
		}
		if !pl.Score {
			continue
		}
		ps := PluginScores{Plugin: pl.Name, Weight: pl.Weight}
		if skip {
			ps.Skipped = true
		} else {
			ps.Raw, ps.Normalized = raw, norm
		}
		out = append(out, ps)
	}
	return out, firstErr
}

// Score returns, for each node of feasible (same order), the weighted sum of
// the normalized scores of every score plugin that was not skipped,
// as upstream's prioritizeNodes computes a node's TotalScore.
//
// Upstream does not score at all when a single node is feasible; callers
// mirroring schedulePod should take that node directly. A plugin whose
// PreScore fails contributes nothing here; use ScorePlugins to see the
// error upstream would fail the cycle with.
func Score(snap *snapshot.Snapshot, pod *snapshot.Pod, feasible []*snapshot.Node, opts Options) []int64 {
	plugins, _ := ScorePlugins(snap, pod, feasible, opts)
	return Total(plugins, len(feasible))
}

// Total sums the weighted normalized scores of plugins for n nodes.
func Total(plugins []PluginScores, n int) []int64 {
	total := make([]int64, n)
	for _, p := range plugins {
		if p.Skipped {
			continue
		}
		for i, s := range p.Normalized {
			total[i] += s * p.Weight
		}
	}
	return total
}

// SelectHost returns the node schedulePod picks from the scored feasible
// nodes (scores[i] is feasible[i]'s total), or nil when there is none.
//
// Upstream v1.37.2 no longer samples among ties: it builds a max-heap
// (framework.NewSortedScoredNodes) over the nodes in feasible order, keyed
// on the total score and then on a Randomizer that is only set when
// scheduler extenders score the pod, and pops its root. Without extenders
// the choice among equal scores is therefore deterministic: whichever of
// them container/heap's Init leaves at the root. This does exactly that.
func SelectHost(feasible []*snapshot.Node, scores []int64) *snapshot.Node {
	if len(feasible) == 0 {
		return nil
	}
	h := &scoreHeap{scores: scores, order: make([]int, len(feasible))}
	for i := range h.order {
		h.order[i] = i
	}
	heap.Init(h)
	return feasible[heap.Pop(h).(int)]
}

// scoreHeap is upstream's nodeScoreHeap over node indexes, with every
// Randomizer zero.
type scoreHeap struct {
	scores []int64
	order  []int
}

func (h *scoreHeap) Len() int           { return len(h.order) }
func (h *scoreHeap) Less(i, j int) bool { return h.scores[h.order[i]] > h.scores[h.order[j]] }
func (h *scoreHeap) Swap(i, j int)      { h.order[i], h.order[j] = h.order[j], h.order[i] }
func (h *scoreHeap) Push(x any)         { h.order = append(h.order, x.(int)) }
func (h *scoreHeap) Pop() any {
	last := h.order[len(h.order)-1]
	h.order = h.order[:len(h.order)-1]
	return last
}

// Bounds of the adaptive number of feasible nodes to find.
const (
	minFeasibleNodesToFind           = 100
	minFeasibleNodesPercentageToFind = 5
)

// NumFeasibleNodesToFind is upstream's numFeasibleNodesToFind with
// percentageOfNodesToScore unset: every node below 100 nodes, else
// 50 - numAllNodes/125 percent of them (at least 5%), and at least 100.
// The arithmetic is upstream's, in int32.
func NumFeasibleNodesToFind(numAllNodes int) int {
	return NumFeasibleNodesToFindPercentage(numAllNodes, 0)
}

// NumFeasibleNodesToFindPercentage is upstream's numFeasibleNodesToFind with
// the profile's (or else the configuration's) percentageOfNodesToScore:
// every node below 100 nodes; else percentage percent of them, at least
// 100; a percentage of 0 is the adaptive 50 - numAllNodes/125 (at least 5).
func NumFeasibleNodesToFindPercentage(numAllNodes int, percentage int32) int {
	n := int32(numAllNodes)
	if n < minFeasibleNodesToFind {
		return int(n)
	}
	if percentage == 0 {
		percentage = int32(50) - n/125
		if percentage < minFeasibleNodesPercentageToFind {
			percentage = minFeasibleNodesPercentageToFind
		}
	}
	num := n * percentage / 100
	if num < minFeasibleNodesToFind {
		return minFeasibleNodesToFind
	}
	return int(num)
}

// defaultNormalize is upstream's helper.DefaultNormalizeScore with
// MaxNodeScore: scores scaled from [0, max] to [0, MaxNodeScore], reversed
// if asked. All zero scores stay 0, or become MaxNodeScore when reversed.
func defaultNormalize(raw []int64, reverse bool) []int64 {
	out := make([]int64, len(raw))
	var maxCount int64
	for _, s := range raw {
		maxCount = max(maxCount, s)
	}
	if maxCount == 0 {
		for i, s := range raw {
			if reverse {
				s = MaxNodeScore
			}
			out[i] = s
		}
		return out
	}
	for i, s := range raw {
		s = MaxNodeScore * s / maxCount
		if reverse {
			s = MaxNodeScore - s
		}
		out[i] = s
	}
	return out
}
