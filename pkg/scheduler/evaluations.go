package scheduler

import (
	"slices"

	"github.com/reprieve/reprieve/internal/filter"
	"github.com/reprieve/reprieve/internal/preemption"
	"github.com/reprieve/reprieve/internal/score"
	"github.com/reprieve/reprieve/internal/snapshot"
	"github.com/reprieve/reprieve/pkg/config"
)

// PluginEvaluation is how many times a cycle called one plugin at one
// extension point, as upstream's scheduler_plugin_evaluation_total counts
// the calls (PreFilter, Filter, PreScore and Score only).
type PluginEvaluation struct {
	Plugin, ExtensionPoint string
	Count                  int
}

// evaluations follows one cycle's plugin calls. It is only kept when a
// DetailObserver listens: counting the preemption dry run's calls replays
// it the way upstream runs it, which reprieve's fast paths do not.
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
			c.CountFilterWithNominatedPods(&e.filter, n, fr.Statuses[i])
		}
	}
}

// scored counts PreScore (once per plugin that did not skip) and Score
// (once per feasible node for each of them). DynamicResources, which
// reprieve does not score, has no PreScore and scores every node.
func (e *evaluations) scored(cfg *score.Config, plugins []score.PluginScores, feasible int) {
	if cfg == nil {
		cfg = score.DefaultConfig()
	}
	for _, p := range plugins {
		if p.Skipped {
			continue
		}
		if p.Plugin != score.ImageLocality {
			e.addScore(p.Plugin, "PreScore", 1)
		}
	}
	for _, pl := range cfg.Plugins {
		if !pl.Score {
			continue
		}
		i := slices.IndexFunc(plugins, func(p score.PluginScores) bool { return p.Plugin == pl.Name })
		if i >= 0 && !plugins[i].Skipped || pl.Name == score.DynamicResources {
			e.addScore(pl.Name, "Score", feasible)
		}
	}
}

// dryRun counts the Filter calls of DefaultPreemption's dry run as upstream
// makes them (SelectVictimsOnNode): on each node where preemption might
// help and that has lower-priority pods, one call with all of them
// removed and, if the pod then fits, one per pod added back, from the most
// important. Upstream starts at a random node and stops once it has enough
// candidates (all nodes up to 100); this walk starts at the first node, and
// reprieves in importance order without putting PDB-violating pods first,
// which changes which plugin rejects a call only for pods whose verdict
// depends on more than resources.
func (e *evaluations) dryRun(c *filter.Cycle, fr filter.Result, prof *config.Profile) {
	if !c.PreFilterStatus().IsSuccess() {
		// Upstream would dry-run nodes a PreFilter found Unschedulable
		// with a partial cycle state; reprieve's cycle has none to replay.
		return
	}
	nodes := c.Snapshot().Nodes
	pod := c.Pod()
	var potential []*snapshot.Node
	for i, n := range nodes {
		if fr.Statuses[i].Code == filter.Unschedulable {
			potential = append(potential, n)
		}
	}
	want := numCandidates(len(potential), prof)
	candidates := 0
	var victims []*snapshot.Pod
	for _, n := range potential {
		if candidates >= want {
			return
		}
		victims = victims[:0]
		for _, p := range n.Pods {
			if p.Priority < pod.Priority {
				victims = append(victims, p)
			}
		}
		if len(victims) == 0 {
			continue
		}
		st, nv := c.NewState(), c.NewNodeView(n)
		for _, v := range victims {
			c.RemovePod(st, nv, v, n)
		}
		s := c.FilterWithNominatedPods(st, nv, false)
		c.CountFilterWithNominatedPods(&e.filter, n, s)
		if !s.IsSuccess() {
			continue
		}
		candidates++
		slices.SortStableFunc(victims, moreImportant)
		for _, v := range victims {
			c.AddPod(st, nv, v, n)
			s := c.FilterWithNominatedPods(st, nv, false)
			c.CountFilterWithNominatedPods(&e.filter, n, s)
			if !s.IsSuccess() {
				c.RemovePod(st, nv, v, n)
			}
		}
	}
}

// moreImportant orders pods as upstream's MoreImportantPod: higher
// priority first, then the one that started first.
func moreImportant(a, b *snapshot.Pod) int {
	if a.Priority != b.Priority {
		if a.Priority > b.Priority {
			return -1
		}
		return 1
	}
	sa, sb := a.Obj.Status.StartTime, b.Obj.Status.StartTime
	switch {
	case sa == nil || sb == nil || sa.Equal(sb):
		return 0
	case sa.Before(sb):
		return -1
	}
	return 1
}

// numCandidates is DefaultPreemption's calculateNumCandidates.
func numCandidates(n int, prof *config.Profile) int {
	pct, abs := prof.MinCandidateNodesPercentage, prof.MinCandidateNodesAbsolute
	if pct == 0 && abs == 0 {
		pct, abs = preemption.DefaultMinCandidateNodesPercentage, preemption.DefaultMinCandidateNodesAbsolute
	}
	return min(max(int(int32(n)*pct/100), int(abs)), n)
}
