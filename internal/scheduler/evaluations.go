package scheduler

import (
	"slices"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/score"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// PluginEvaluation is how many times a cycle called one plugin at one
// extension point, as upstream's scheduler_plugin_evaluation_total counts
// the calls (PreFilter, Filter, PreScore and Score only).
type PluginEvaluation struct {
	Plugin, ExtensionPoint string
	Count                  int
}

// evaluations follows one cycle's plugin calls. It is only kept when a
// DetailObserver listens; the preemption dry run's Filter calls are
// counted by its own walk (preemption.Counter), which costs nothing
// otherwise.
type evaluations struct {
	filter filter.Evaluations
	// score are PreScore and Score counts, in the order they were added.
	score []PluginEvaluation
}

func (e *evaluations) addScore(plugin, point string, n int) {
	for i := range e.score {
		if e.score[i].Plugin == plugin && e.score[i].ExtensionPoint == point {
			e.score[i].Count += n
			return
		}
	}
	e.score = append(e.score, PluginEvaluation{Plugin: plugin, ExtensionPoint: point, Count: n})
}

// report lists the non-zero counts: PreFilter, Filter, then PreScore and
// Score, each in the default profile's plugin order.
func (e *evaluations) report() []PluginEvaluation {
	var out []PluginEvaluation
	names := filter.EvaluatedPlugins()
	for _, point := range []struct {
		name   string
		counts []int
	}{{"PreFilter", e.filter.PreFilter[:]}, {"Filter", e.filter.Filter[:]}} {
		for i, n := range point.counts {
			if n > 0 {
				out = append(out, PluginEvaluation{Plugin: names[i], ExtensionPoint: point.name, Count: n})
			}
		}
	}
	return append(out, e.score...)
}

// searched counts the Filter calls of the feasible-node search: every node
// examined from start, as RunFilterPluginsWithNominatedPods ran on it.
func (e *evaluations) searched(c *filter.Cycle, nodes []*snapshot.Node, fr filter.Result, start, examined int) {
	for k := range examined {
		i := (start + k) % len(nodes)
		if n := nodes[i]; c.Filters(n) {
			c.CountFilterWithNominatedPods(&e.filter, n, fr.Statuses[i], 1)
		}
	}
}

// scored counts PreScore (once per plugin that did not skip, but for
// ImageLocality and DynamicResources, which have none) and Score (once per
// feasible node for each of them).
func (e *evaluations) scored(cfg *score.Config, plugins []score.PluginScores, feasible int) {
	if cfg == nil {
		cfg = score.DefaultConfig()
	}
	for _, p := range plugins {
		if p.Skipped {
			continue
		}
		if p.Plugin != score.ImageLocality && p.Plugin != score.DynamicResources {
			e.addScore(p.Plugin, "PreScore", 1)
		}
	}
	for _, pl := range cfg.Plugins {
		if !pl.Score {
			continue
		}
		i := slices.IndexFunc(plugins, func(p score.PluginScores) bool { return p.Plugin == pl.Name })
		if i >= 0 && !plugins[i].Skipped {
			e.addScore(pl.Name, "Score", feasible)
		}
	}
}
