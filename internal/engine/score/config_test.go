package score

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

func fitConfig(strategy string, resources []ResourceWeight, shape ...ShapePoint) Options {
	cfg := DefaultConfig()
	cfg.Fit = Fit{Strategy: strategy, Resources: resources, Shape: shape}
	return Options{Config: cfg}
}

func TestNodeResourcesFitStrategies(t *testing.T) {
	w := resourceWorld()
	pod := rt.Pod("default", "p").Req("1", "1Gi").Obj()
	cpuMem := []ResourceWeight{{v1.ResourceCPU, 1}, {v1.ResourceMemory, 1}}
	cpu3Mem1 := []ResourceWeight{{v1.ResourceCPU, 3}, {v1.ResourceMemory, 1}}
	// Requested after adding the pod: n1 cpu 2000/4000, mem 3Gi/8Gi;
	// n2 cpu 1100/2000, mem 1Gi+200MB = 1283457024/4294967296; n3 cpu
	// 1000/3000; n4 cpu 1000/500, mem 1Gi/1Gi.
	runPluginCases(t, scoreNodeResourcesFit, map[string]pluginCase{
		"MostAllocated": {
			// n1: cpu 50, mem 3Gi*100/8Gi = 37 → (50+37)/2 = 43.
			// n2: cpu 55, mem 128345702400/4294967296 = 29 → 84/2 = 42.
			// n3: cpu 33 (memory skipped). n4: cpu capped at 100, mem 100 → 100.
			world: w, pod: pod, opts: fitConfig(MostAllocated, cpuMem),
			wantRaw: []int64{43, 42, 33, 100}, wantNorm: []int64{43, 42, 33, 100},
		},
		"MostAllocated with weights": {
			// n1: (50×3 + 37)/4 = 187/4 = 46; n2: (55×3 + 29)/4 = 194/4 = 48;
			// n3: 33×3/3 = 33; n4: 100.
			world: w, pod: pod, opts: fitConfig(MostAllocated, cpu3Mem1),
			wantRaw: []int64{46, 48, 33, 100}, wantNorm: []int64{46, 48, 33, 100},
		},
		"LeastAllocated with weights": {
			// n1: cpu 50, mem 62 → (150+62)/4 = 53; n2: cpu 45, mem 70 → (135+70)/4 = 51;
			// n3: 66; n4: 0.
			world: w, pod: pod, opts: fitConfig(LeastAllocated, cpu3Mem1),
			wantRaw: []int64{53, 51, 66, 0}, wantNorm: []int64{53, 51, 66, 0},
		},
		"RequestedToCapacityRatio, increasing": {
			// Shape (0,0) (100,10) → scores ×10: the used percentage.
			// n1: cpu 50, mem 37 → round(87/2 = 43.5) = 44; n2: cpu 55, mem 29 → 42;
			// n3: 33; n4: cpu over capacity → f(100) = 100, mem 100 → 100.
			world: w, pod: pod, opts: fitConfig(RequestedToCapacityRatio, cpuMem, ShapePoint{0, 0}, ShapePoint{100, 10}),
			wantRaw: []int64{44, 42, 33, 100}, wantNorm: []int64{44, 42, 33, 100},
		},
		"RequestedToCapacityRatio, decreasing": {
			// Shape (0,10) (100,0): 100 - used%, interpolation truncated toward zero.
			// n1: cpu 100-50 = 50, mem 100 + (-100×37)/100 = 63 → round(56.5) = 57;
			// n2: cpu 45, mem 100 - 29 = 71 → 58; n3: 100 - 33 = 67;
			// n4: both at f(100) = 0, resources scoring 0 are left out → 0.
			world: w, pod: pod, opts: fitConfig(RequestedToCapacityRatio, cpuMem, ShapePoint{0, 10}, ShapePoint{100, 0}),
			wantRaw: []int64{57, 58, 67, 0}, wantNorm: []int64{57, 58, 67, 0},
		},
		"RequestedToCapacityRatio, three points": {
			// Shape (20,2) (50,8) (80,4) → (20,20) (50,80) (80,40).
			// n1: cpu 50 → 20 + 60×30/30 = 80; mem 37 → 20 + 60×17/30 = 54 → 67.
			// n3: cpu 33 → 20 + 60×13/30 = 46.
			world: w, pod: pod, feasible: []string{"n1", "n3"},
			opts:    fitConfig(RequestedToCapacityRatio, cpuMem, ShapePoint{20, 2}, ShapePoint{50, 8}, ShapePoint{80, 4}),
			wantRaw: []int64{67, 46}, wantNorm: []int64{67, 46},
		},
	})
}

func TestNodeResourcesFitExtendedResources(t *testing.T) {
	const gpu = v1.ResourceName("example.com/gpu")
	w := world{
		nodes: []*v1.Node{
			rt.Node("g1").CPU("4").Alloc(gpu, "4").Obj(),
			rt.Node("g2").CPU("4").Alloc(gpu, "2").Obj(),
			rt.Node("c1").CPU("4").Obj(),
		},
		pods: []*v1.Pod{rt.Pod("default", "used").Req("1", "").ReqRes(gpu, "1").On("g1").Obj()},
	}
	resources := []ResourceWeight{{v1.ResourceCPU, 1}, {gpu, 2}}
	runPluginCases(t, scoreNodeResourcesFit, map[string]pluginCase{
		"requested scalar resource counts": {
			// g1: cpu 2000/4000 → 50, gpu 2/4 → 50 → (50 + 100)/3 = 50.
			// g2: cpu 1000/4000 → 25, gpu 1/2 → 50 → (25 + 100)/3 = 41.
			// c1: no gpu allocatable → cpu only: 25.
			world: w, pod: rt.Pod("default", "p").Req("1", "").ReqRes(gpu, "1").Obj(),
			opts:    fitConfig(MostAllocated, resources),
			wantRaw: []int64{50, 41, 25}, wantNorm: []int64{50, 41, 25},
		},
		"scalar resource the pod does not request is left out": {
			// g1: cpu 50; g2: cpu 25; c1: cpu 25.
			world: w, pod: rt.Pod("default", "p").Req("1", "").Obj(),
			opts:    fitConfig(MostAllocated, resources),
			wantRaw: []int64{50, 25, 25}, wantNorm: []int64{50, 25, 25},
		},
	})
}

func TestBalancedAllocationResources(t *testing.T) {
	w := resourceWorld()
	cfg := DefaultConfig()
	cfg.BalancedResources = []ResourceWeight{{v1.ResourceCPU, 1}}
	runPluginCases(t, scoreBalancedAllocation, map[string]pluginCase{
		"one resource: always balanced": {
			// A single fraction has no deviation: 50 + (50+100-100)/2 = 75.
			world: w, pod: rt.Pod("default", "p").Req("1", "1Gi").Obj(), feasible: []string{"n1", "n2"},
			opts:    Options{Config: cfg},
			wantRaw: []int64{75, 75}, wantNorm: []int64{75, 75},
		},
		"pod requesting none of the resources: skipped": {
			world: w, pod: rt.Pod("default", "p").Req("", "1Gi").Obj(),
			opts:     Options{Config: cfg},
			wantSkip: true,
		},
	})
}

func TestInterPodAffinityArgs(t *testing.T) {
	// n1 (z1) runs a pod requiring affinity to app=web in its zone, with a
	// preferred term (weight 7) for app=web on its host.
	existing := rt.Pod("default", "e").Label("app", "db").PodAffinity(v1.LabelTopologyZone, map[string]string{"app": "web"}).On("n1").Obj()
	existing = withPreferredPodAffinity(existing, podTerm(7, v1.LabelHostname, map[string]string{"app": "web"}))
	w := world{
		nodes: []*v1.Node{
			rt.Node("n1").Zone("z1").Obj(),
			rt.Node("n2").Zone("z1").Obj(),
			rt.Node("n3").Zone("z2").Obj(),
		},
		pods: []*v1.Pod{existing},
	}
	pod := rt.Pod("default", "p").Label("app", "web").Obj()
	with := func(f func(*Config)) Options {
		cfg := DefaultConfig()
		f(cfg)
		return Options{Config: cfg}
	}
	runPluginCases(t, scoreInterPodAffinity, map[string]pluginCase{
		"hardPodAffinityWeight 5": {
			// z1 += 5 (required term), n1 host += 7: n1 12, n2 5, n3 0 →
			// 100×12/12, 100×5/12 = 41, 0.
			world: w, pod: pod,
			opts:    with(func(c *Config) { c.HardPodAffinityWeight = 5 }),
			wantRaw: []int64{12, 5, 0}, wantNorm: []int64{100, 41, 0},
		},
		"hardPodAffinityWeight 0: required terms do not count": {
			world: w, pod: pod,
			opts:    with(func(c *Config) { c.HardPodAffinityWeight = 0 }),
			wantRaw: []int64{7, 0, 0}, wantNorm: []int64{100, 0, 0},
		},
		"ignorePreferredTermsOfExistingPods: pod without preferred terms is skipped": {
			world: w, pod: pod,
			opts:     with(func(c *Config) { c.IgnorePreferredTermsOfExistingPods = true }),
			wantSkip: true,
		},
	})
}

func TestPodTopologySpreadListDefaulting(t *testing.T) {
	// n1, n2 in z1 (n1 runs one web pod), n3 without a zone.
	w := world{
		nodes: []*v1.Node{rt.Node("n1").Zone("z1").Obj(), rt.Node("n2").Zone("z1").Obj(), rt.Node("n3").Obj()},
		pods:  []*v1.Pod{rt.Pod("default", "w").Label("app", "web").On("n1").Obj()},
		sels:  snapshot.SelectorObjects{Services: []*v1.Service{rt.Service("default", "web", map[string]string{"app": "web"})}},
	}
	pod := rt.Pod("default", "p").Label("app", "web").Obj()
	list := func(cons ...v1.TopologySpreadConstraint) Options {
		cfg := DefaultConfig()
		cfg.SpreadListDefaulting = true
		cfg.SpreadDefaultConstraints = cons
		return Options{Config: cfg}
	}
	runPluginCases(t, scorePodTopologySpread, map[string]pluginCase{
		"List with a zone constraint: nodes without the zone are ignored": {
			// One domain z1 (n3 ignored): weight ln 3 = 1.0986; z1 count 1.
			// n1, n2: 1×1.0986 + (2-1) = 2.0986 → 2; n3 ignored → 0.
			// Normalize: max 2, min 2 → 100×(4-2)/2 = 100; ignored 0.
			world: w, pod: pod,
			opts:    list(v1.TopologySpreadConstraint{MaxSkew: 2, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.ScheduleAnyway}),
			wantRaw: []int64{2, 2, 0}, wantNorm: []int64{100, 100, 0},
		},
		"List without constraints: skipped": {
			world: w, pod: pod, opts: list(), wantSkip: true,
		},
		"List with only DoNotSchedule constraints: nothing to score": {
			world: w, pod: pod,
			opts:     list(v1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.DoNotSchedule}),
			wantSkip: true,
		},
	})
}

func TestNodeAffinityAddedPreferred(t *testing.T) {
	w := world{nodes: []*v1.Node{rt.Node("n1").Label("disk", "ssd").Obj(), rt.Node("n2").Obj()}}
	cfg := DefaultConfig()
	cfg.AddedPreferredAffinity = []v1.PreferredSchedulingTerm{prefTerm(20, "disk", v1.NodeSelectorOpIn, "ssd")}
	runPluginCases(t, scoreNodeAffinity, map[string]pluginCase{
		"added terms score pods without preferences": {
			world: w, pod: rt.Pod("default", "p").Obj(), opts: Options{Config: cfg},
			wantRaw: []int64{20, 0}, wantNorm: []int64{100, 0},
		},
		"added and own terms add up": {
			// n1: 20 + 0; n2: 0 + 30 → 100×20/30 = 66, 100.
			world: w, pod: withPreferredNodeAffinity(rt.Pod("default", "p").Obj(), prefTerm(30, "disk", v1.NodeSelectorOpDoesNotExist)),
			opts:    Options{Config: cfg},
			wantRaw: []int64{20, 30}, wantNorm: []int64{66, 100},
		},
	})
}

func TestScorePluginsOfProfile(t *testing.T) {
	w := world{
		nodes: []*v1.Node{rt.Node("n1").CPU("4").Memory("8Gi").Obj(), rt.Node("n2").CPU("2").Memory("4Gi").Obj()},
		pods: []*v1.Pod{
			rt.Pod("default", "p1").Req("1", "2Gi").On("n1").Obj(),
			rt.Pod("default", "be").On("n2").Obj(),
		},
	}
	pod := rt.Pod("default", "p").Req("1", "1Gi").Obj()
	tests := map[string]struct {
		plugins     []Plugin
		wantPlugins []string
		wantTotal   []int64
	}{
		"weights": {
			// TaintToleration 100 × 1, NodeResourcesFit 56/57 × 5 (TestLeastAllocated).
			plugins:     []Plugin{{TaintToleration, 1, true}, {NodeResourcesFit, 5, true}},
			wantPlugins: []string{TaintToleration, NodeResourcesFit},
			wantTotal:   []int64{100 + 280, 100 + 285},
		},
		"plugin at preScore only gives no score": {
			plugins:     []Plugin{{TaintToleration, 3, false}, {NodeResourcesBalancedAllocation, 1, true}},
			wantPlugins: []string{NodeResourcesBalancedAllocation},
			wantTotal:   []int64{71, 68},
		},
		"no plugins": {
			wantTotal: []int64{0, 0},
		},
		"plugins of claims score 0 for a pod without them": {
			plugins:     []Plugin{{VolumeBinding, 1, true}, {DynamicResources, 2, true}, {ImageLocality, 1, true}},
			wantPlugins: []string{VolumeBinding, DynamicResources, ImageLocality},
			wantTotal:   []int64{0, 0},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := setup(t, w, pod)
			cfg := DefaultConfig()
			cfg.Plugins = tc.plugins
			plugins, err := ScorePlugins(c.snap, c.pod, c.feasible, Options{Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range plugins {
				names = append(names, p.Plugin)
			}
			if diff := cmp.Diff(tc.wantPlugins, names); diff != "" {
				t.Errorf("plugins (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantTotal, Total(plugins, len(c.feasible))); diff != "" {
				t.Errorf("total (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestScorePluginsPreScoreOnlyError(t *testing.T) {
	// A plugin enabled at preScore but not at score still fails the cycle.
	pod := withPreferredNodeAffinity(rt.Pod("default", "p").Obj(), prefTerm(1, "k", "Bogus"))
	c := setup(t, world{nodes: []*v1.Node{rt.Node("n1").Obj(), rt.Node("n2").Obj()}}, pod)
	cfg := DefaultConfig()
	cfg.Plugins = []Plugin{{NodeAffinity, 2, false}, {TaintToleration, 3, true}}
	if _, err := ScorePlugins(c.snap, c.pod, c.feasible, Options{Config: cfg}); err == nil {
		t.Fatal("ScorePlugins: no error")
	}
}

func TestNumFeasibleNodesToFindPercentage(t *testing.T) {
	tests := []struct {
		nodes      int
		percentage int32
		want       int
	}{
		{99, 10, 99},    // below 100: all
		{1000, 0, 420},  // adaptive
		{1000, 50, 500}, // 50%
		{1000, 5, 100},  // 50 < 100 → 100
		{1000, 100, 1000},
		{6000, 1, 100}, // 60 → 100
		{6000, 0, 300}, // adaptive, at least 5%
	}
	for _, tc := range tests {
		if got := NumFeasibleNodesToFindPercentage(tc.nodes, tc.percentage); got != tc.want {
			t.Errorf("NumFeasibleNodesToFindPercentage(%d, %d) = %d, want %d", tc.nodes, tc.percentage, got, tc.want)
		}
	}
}
