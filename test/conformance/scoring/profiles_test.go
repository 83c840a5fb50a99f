package scoring

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	"k8s.io/kubernetes/pkg/scheduler/metrics"

	"github.com/reprieve/reprieve/internal/adapter/config"
	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/engine/score"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	"github.com/reprieve/reprieve/test/conformance/gen"
)

const gpu = v1.ResourceName("example.com/gpu")

// withOtherResources gives some nodes ephemeral-storage and GPUs, and some
// pods requests of them, so that the scored resources of a profile matter.
func withOtherResources(r *rand.Rand, w world) {
	for _, n := range w.nodes {
		if r.IntN(3) != 0 {
			n.Status.Allocatable[v1.ResourceEphemeralStorage] = resource.MustParse(pick(r, "10Gi", "50Gi", "100Gi"))
		}
		if r.IntN(2) == 0 {
			n.Status.Allocatable[gpu] = resource.MustParse(pick(r, "1", "2", "4", "8"))
		}
	}
	request := func(p *v1.Pod) {
		c := &p.Spec.Containers[0]
		if c.Resources.Requests == nil {
			c.Resources.Requests = v1.ResourceList{}
		}
		if r.IntN(3) == 0 {
			c.Resources.Requests[v1.ResourceEphemeralStorage] = resource.MustParse(pick(r, "1Gi", "5Gi", "20Gi"))
		}
		if r.IntN(3) == 0 {
			c.Resources.Requests[gpu] = resource.MustParse(pick(r, "1", "2"))
			c.Resources.Limits = v1.ResourceList{gpu: c.Resources.Requests[gpu]}
		}
	}
	for _, p := range w.pods {
		request(p)
	}
	request(w.pod)
}

// upstreamProfile decodes a configuration document as kube-scheduler does
// (defaults applied, validated) and returns its single profile.
func upstreamProfile(t *testing.T, doc []byte) *schedulerapi.KubeSchedulerProfile {
	t.Helper()
	obj, _, err := scheme.Codecs.UniversalDecoder().Decode(doc, nil, nil)
	if err != nil {
		t.Fatalf("upstream decoding: %v\n%s", err, doc)
	}
	cfg, ok := obj.(*schedulerapi.KubeSchedulerConfiguration)
	if !ok {
		t.Fatalf("upstream decoded a %T", obj)
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		t.Fatalf("upstream validation: %v\n%s", err, doc)
	}
	return &cfg.Profiles[0]
}

// resolvedPlugins compares what the framework enabled with reprieve's
// resolution: the preScore and score plugins reprieve computes, the score
// weights, and DefaultPreemption at postFilter.
func resolvedPlugins(up *schedulerapi.Plugins, p *profile.Profile) []string {
	modelled := func(name string) bool {
		return name != score.VolumeBinding && name != score.DynamicResources
	}
	var diffs []string
	wantPre, wantScore := map[string]bool{}, map[string]int64{}
	for _, pl := range up.PreScore.Enabled {
		if modelled(pl.Name) {
			wantPre[pl.Name] = true
		}
	}
	for _, pl := range up.Score.Enabled {
		if modelled(pl.Name) {
			wantScore[pl.Name] = int64(pl.Weight)
		}
	}
	gotPre, gotScore := map[string]bool{}, map[string]int64{}
	for _, pl := range p.Score.Plugins {
		if !modelled(pl.Name) {
			continue
		}
		if pl.Score {
			gotScore[pl.Name] = pl.Weight
		}
		if _, ok := wantPre[pl.Name]; ok || !pl.Score {
			gotPre[pl.Name] = true
		}
	}
	// ImageLocality and others without PreScore are listed once.
	for name := range wantScore {
		if !wantPre[name] {
			delete(gotPre, name)
		}
	}
	if fmt.Sprint(wantPre) != fmt.Sprint(gotPre) {
		diffs = append(diffs, fmt.Sprintf("preScore plugins: upstream %v reprieve %v", wantPre, gotPre))
	}
	if fmt.Sprint(wantScore) != fmt.Sprint(gotScore) {
		diffs = append(diffs, fmt.Sprintf("score weights: upstream %v reprieve %v", wantScore, gotScore))
	}
	var preemption bool
	for _, pl := range up.PostFilter.Enabled {
		preemption = preemption || pl.Name == "DefaultPreemption"
	}
	if preemption != p.Preemption || (len(up.PostFilter.Enabled) > 0) != p.HasPostFilter {
		diffs = append(diffs, fmt.Sprintf("postFilter: upstream %v, reprieve preemption %v, any %v", up.PostFilter.Enabled, p.Preemption, p.HasPostFilter))
	}
	return diffs
}

// TestScoreDifferentialProfiles scores random clusters with random
// non-default profiles (gen.SchedulerConfig) given to upstream's framework
// and to reprieve alike, and compares the resolved plugins, every plugin's
// weighted scores, the totals and the node picked
// (REPRIEVE_SCORE_SCENARIOS clusters).
func TestScoreDifferentialProfiles(t *testing.T) {
	metrics.Register()
	// Upstream logs every re-configured default plugin.
	klog.SetLogger(logr.Discard())
	defer klog.ClearLogger()
	n := scenarios()
	skipped, strategies := 0, map[string]int{}
	for seed := range n {
		doc := gen.SchedulerConfig(int64(seed))
		cfg, err := config.Parse(doc)
		if err != nil {
			t.Fatalf("seed %d: reprieve refuses a configuration upstream accepts: %v\n%s", seed, err, doc)
		}
		if len(cfg.Unsupported) > 0 {
			t.Fatalf("seed %d: reprieve does not support %v\n%s", seed, cfg.Unsupported, doc)
		}
		prof := &cfg.Profiles[0]
		strategies[prof.Score.Fit.Strategy]++
		upProfile := upstreamProfile(t, doc)

		r := rand.New(rand.NewPCG(uint64(seed), 1234))
		w := genWorld(r)
		withOtherResources(r, w)
		want, wantPer, wantBest, upPlugins, skip, err := upstreamProfileScores(t, w, upProfile)
		if err != nil {
			t.Fatalf("seed %d: upstream refuses a configuration reprieve accepts: %v\n%s", seed, err, doc)
		}
		for _, d := range resolvedPlugins(upPlugins, prof) {
			t.Errorf("seed %d: %s\n%s", seed, d, doc)
		}
		if skip {
			skipped++
			continue
		}
		snap, err := snapshot.New(snapshot.Objects{Nodes: w.nodes, Pods: w.pods, Namespaces: w.nss, Selectors: w.selectors()})
		if err != nil {
			t.Fatal(err)
		}
		pod, err := snap.NewPod(w.pod)
		if err != nil {
			t.Fatal(err)
		}
		var feasible []*snapshot.Node
		for _, name := range w.feasible {
			feasible = append(feasible, snap.Node(name))
		}
		plugins, err := score.ScorePlugins(snap, pod, feasible, score.Options{Config: prof.Score})
		if err != nil {
			t.Fatal(err)
		}
		got := score.Total(plugins, len(feasible))
		gotPer := map[string][]int64{}
		for _, p := range plugins {
			ws := make([]int64, len(feasible))
			if !p.Skipped {
				for i, s := range p.Normalized {
					ws[i] = s * p.Weight
				}
			}
			gotPer[p.Plugin] = ws
		}
		bad := fmt.Sprint(want) != fmt.Sprint(got)
		var names []string
		for k := range wantPer {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			if k == score.VolumeBinding || k == score.DynamicResources {
				continue
			}
			g, ok := gotPer[k]
			if !ok {
				g = make([]int64, len(feasible))
			}
			if fmt.Sprint(g) != fmt.Sprint(wantPer[k]) {
				bad = true
				t.Errorf("seed %d plugin %s: upstream %v reprieve %v", seed, k, wantPer[k], g)
			}
		}
		if bad {
			t.Errorf("seed %d: totals upstream %v reprieve %v\n%s", seed, want, got, doc)
		}
		if b := score.SelectHost(feasible, got); wantBest != "" && b.Name != wantBest {
			t.Errorf("seed %d: best upstream %s reprieve %s (scores %v)", seed, wantBest, b.Name, got)
		}
	}
	t.Logf("%d clusters and profiles, %d skipped at PreFilter; NodeResourcesFit strategies %v", n, skipped, strategies)
}
