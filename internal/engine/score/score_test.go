package score

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// Expected values below are derived by hand from upstream's formulas; the
// comments show the arithmetic. Go's integer division truncates.

const (
	gi = int64(1) << 30
	mi = int64(1) << 20
)

type world struct {
	nodes []*v1.Node
	pods  []*v1.Pod
	nss   []*v1.Namespace
	// sels are the Services and controllers that give PodTopologySpread's
	// default constraints their selector.
	sels snapshot.SelectorObjects
}

// served returns w with Services of namespace default selecting each of
// selectors.
func served(w world, selectors ...map[string]string) world {
	w.sels.Services = nil
	for i, sel := range selectors {
		w.sels.Services = append(w.sels.Services, rt.Service("default", fmt.Sprintf("s%d", i), sel))
	}
	return w
}

// setup builds the snapshot and prepares pod; feasible names the feasible
// nodes (all of w.nodes, in that order, when empty).
func setup(t *testing.T, w world, pod *v1.Pod, feasible ...string) *cycle {
	t.Helper()
	snap, err := snapshot.New(snapshot.Objects{Nodes: w.nodes, Pods: w.pods, Namespaces: w.nss, Selectors: w.sels})
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	p, err := snap.NewPod(pod)
	if err != nil {
		t.Fatalf("pod: %v", err)
	}
	c := &cycle{snap: snap, pod: p, obj: p.Obj(), cfg: DefaultConfig()}
	if len(feasible) == 0 {
		for _, n := range w.nodes {
			feasible = append(feasible, n.Name)
		}
	}
	for _, name := range feasible {
		n := snap.Node(name)
		if n == nil {
			t.Fatalf("no node %q", name)
		}
		c.feasible = append(c.feasible, n)
	}
	return c
}

type pluginCase struct {
	world    world
	pod      *v1.Pod
	feasible []string
	opts     Options
	wantSkip bool
	// wantRaw and wantNorm are by feasible node.
	wantRaw, wantNorm []int64
}

func runPluginCases(t *testing.T, run func(*cycle) ([]int64, []int64, bool, error), cases map[string]pluginCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := setup(t, tc.world, tc.pod, tc.feasible...)
			c.opts = tc.opts
			if tc.opts.Config != nil {
				c.cfg = tc.opts.Config
			}
			raw, norm, skip, err := run(c)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if skip != tc.wantSkip {
				t.Fatalf("skip = %v, want %v", skip, tc.wantSkip)
			}
			if diff := cmp.Diff(tc.wantRaw, raw); diff != "" {
				t.Errorf("raw scores (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNorm, norm); diff != "" {
				t.Errorf("normalized scores (-want,+got):\n%s", diff)
			}
		})
	}
}

func withImages(n *v1.Node, images ...v1.ContainerImage) *v1.Node {
	n.Status.Images = images
	return n
}

func withPreferredNodeAffinity(p *v1.Pod, terms ...v1.PreferredSchedulingTerm) *v1.Pod {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	p.Spec.Affinity.NodeAffinity = &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: terms}
	return p
}

func prefTerm(weight int32, key string, op v1.NodeSelectorOperator, values ...string) v1.PreferredSchedulingTerm {
	return v1.PreferredSchedulingTerm{Weight: weight, Preference: v1.NodeSelectorTerm{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}}
}

func podTerm(weight int32, key string, matchLabels map[string]string) v1.WeightedPodAffinityTerm {
	return v1.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: v1.PodAffinityTerm{
		TopologyKey: key, LabelSelector: &metav1.LabelSelector{MatchLabels: matchLabels}}}
}

func withPreferredPodAffinity(p *v1.Pod, terms ...v1.WeightedPodAffinityTerm) *v1.Pod {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	if p.Spec.Affinity.PodAffinity == nil {
		p.Spec.Affinity.PodAffinity = &v1.PodAffinity{}
	}
	p.Spec.Affinity.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = terms
	return p
}

func withPreferredPodAntiAffinity(p *v1.Pod, terms ...v1.WeightedPodAffinityTerm) *v1.Pod {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	if p.Spec.Affinity.PodAntiAffinity == nil {
		p.Spec.Affinity.PodAntiAffinity = &v1.PodAntiAffinity{}
	}
	p.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = terms
	return p
}

func namespace(name string, lbls map[string]string) *v1.Namespace {
	return &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}}
}

func TestTaintToleration(t *testing.T) {
	nodes := func() []*v1.Node {
		return []*v1.Node{
			rt.Node("n1").Obj(),
			rt.Node("n2").Taint("a", "1", v1.TaintEffectPreferNoSchedule).Taint("b", "1", v1.TaintEffectPreferNoSchedule).
				Taint("c", "1", v1.TaintEffectNoSchedule).Obj(),
			rt.Node("n3").Taint("a", "1", v1.TaintEffectPreferNoSchedule).Obj(),
		}
	}
	runPluginCases(t, scoreTaintToleration, map[string]pluginCase{
		"PreferNoSchedule toleration of a": {
			// n2: b untolerated (c is NoSchedule, not counted) = 1; max 1.
			// reverse: 100 - 100*0/1 = 100, 100 - 100*1/1 = 0.
			world:    world{nodes: nodes()},
			pod:      rt.Pod("default", "p").Toleration("a", "", v1.TaintEffectPreferNoSchedule).Obj(),
			wantRaw:  []int64{0, 1, 0},
			wantNorm: []int64{100, 0, 100},
		},
		"NoSchedule toleration does not count for scoring": {
			// n2: a, b = 2; n3: a = 1; max 2: 100-0, 100-100*2/2, 100-100*1/2.
			world:    world{nodes: nodes()},
			pod:      rt.Pod("default", "p").Toleration("a", "", v1.TaintEffectNoSchedule).Obj(),
			wantRaw:  []int64{0, 2, 1},
			wantNorm: []int64{100, 0, 50},
		},
		"toleration without effect counts": {
			// Tolerates b (any effect): n2: a = 1, n3: a = 1.
			world:    world{nodes: nodes()},
			pod:      rt.Pod("default", "p").Toleration("b", "", "").Obj(),
			wantRaw:  []int64{0, 1, 1},
			wantNorm: []int64{100, 0, 0},
		},
		"no PreferNoSchedule taints: all max": {
			world:    world{nodes: []*v1.Node{rt.Node("n1").Obj(), rt.Node("n2").Taint("x", "", v1.TaintEffectNoExecute).Obj()}},
			pod:      rt.Pod("default", "p").Obj(),
			wantRaw:  []int64{0, 0},
			wantNorm: []int64{100, 100},
		},
	})
}

func TestNodeAffinity(t *testing.T) {
	nodes := func() []*v1.Node {
		return []*v1.Node{
			rt.Node("n1").Zone("z1").Label("disk", "ssd").Obj(),
			rt.Node("n2").Zone("z2").Label("disk", "ssd").Obj(),
			rt.Node("n3").Zone("z2").Obj(),
		}
	}
	runPluginCases(t, scoreNodeAffinity, map[string]pluginCase{
		"weights of matching terms": {
			// n1: 5+3 = 8, n2: 3, n3: 0; max 8: 100*8/8, 100*3/8 = 37, 0.
			world: world{nodes: nodes()},
			pod: withPreferredNodeAffinity(rt.Pod("default", "p").Obj(),
				prefTerm(5, v1.LabelTopologyZone, v1.NodeSelectorOpIn, "z1"),
				prefTerm(3, "disk", v1.NodeSelectorOpExists)),
			wantRaw:  []int64{8, 3, 0},
			wantNorm: []int64{100, 37, 0},
		},
		"matchFields on the node name": {
			// n1: 5, n2: 7; max 7: 100*5/7 = 71, 100, 0.
			world: world{nodes: nodes()},
			pod: withPreferredNodeAffinity(rt.Pod("default", "p").Obj(),
				prefTerm(5, v1.LabelTopologyZone, v1.NodeSelectorOpIn, "z1"),
				v1.PreferredSchedulingTerm{Weight: 7, Preference: v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{
					{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{"n2"}}}}}),
			wantRaw:  []int64{5, 7, 0},
			wantNorm: []int64{71, 100, 0},
		},
		"no preferred terms: skipped": {
			world:    world{nodes: nodes()},
			pod:      rt.Pod("default", "p").NodeAffinityIn(v1.LabelTopologyZone, "z1", "z2").Obj(),
			wantSkip: true,
		},
		"empty preferred list: scored, all zero": {
			world:    world{nodes: nodes()},
			pod:      withPreferredNodeAffinity(rt.Pod("default", "p").Obj(), []v1.PreferredSchedulingTerm{}...),
			wantRaw:  []int64{0, 0, 0},
			wantNorm: []int64{0, 0, 0},
		},
	})
}

// resourceWorld is TestLeastAllocated's cluster.
func resourceWorld() world {
	return world{
		nodes: []*v1.Node{
			rt.Node("n1").CPU("4").Memory("8Gi").Obj(),
			rt.Node("n2").CPU("2").Memory("4Gi").Obj(),
			rt.Node("n3").CPU("3").Obj(), // no memory allocatable
			rt.Node("n4").CPU("500m").Memory("1Gi").Obj(),
		},
		pods: []*v1.Pod{
			rt.Pod("default", "p1").Req("1", "2Gi").On("n1").Obj(),
			rt.Pod("default", "be").On("n2").Obj(), // counts 100m and 200MB
		},
	}
}

func TestLeastAllocated(t *testing.T) {
	w := resourceWorld()
	runPluginCases(t, scoreNodeResourcesFit, map[string]pluginCase{
		"pod with requests": {
			// n1: cpu (4000-2000)*100/4000 = 50; mem (8Gi-3Gi)*100/8Gi = 62; (50+62)/2 = 56.
			// n2: cpu (2000-1100)*100/2000 = 45;
			//     mem (4Gi-(200Mi+1Gi))*100/4Gi = 3011510272*100/4294967296 = 70; (45+70)/2 = 57.
			// n3: cpu (3000-1000)*100/3000 = 66; memory skipped (allocatable 0): 66/1.
			// n4: cpu 1000 > 500 → 0; mem (1Gi-1Gi) → 0; 0.
			world:    w,
			pod:      rt.Pod("default", "p").Req("1", "1Gi").Obj(),
			wantRaw:  []int64{56, 57, 66, 0},
			wantNorm: []int64{56, 57, 66, 0},
		},
		"pod without requests counts the defaults": {
			// n1: cpu (4000-1100)*100/4000 = 72; mem (8Gi-2Gi-200Mi)*100/8Gi = 6232735744*100/8589934592 = 72.
			// n2: cpu (2000-200)*100/2000 = 90; mem (4Gi-400Mi)*100/4Gi = 3875536896*100/4294967296 = 90.
			// n3: cpu (3000-100)*100/3000 = 96.
			// n4: cpu (500-100)*100/500 = 80; mem (1Gi-200Mi)*100/1Gi = 864026624*100/1073741824 = 80.
			world:    w,
			pod:      rt.Pod("default", "p").Obj(),
			wantRaw:  []int64{72, 90, 96, 80},
			wantNorm: []int64{72, 90, 96, 80},
		},
		"only cpu requested: memory counts the default": {
			// n1: cpu 50 (as above); mem (8Gi-2Gi-200Mi) → 72; (50+72)/2 = 61.
			world:    w,
			pod:      rt.Pod("default", "p").Req("1", "").Obj(),
			feasible: []string{"n1"},
			wantRaw:  []int64{61},
			wantNorm: []int64{61},
		},
	})
}

func TestBalancedAllocation(t *testing.T) {
	w := world{
		nodes: []*v1.Node{
			rt.Node("n1").CPU("4").Memory("8Gi").Obj(),
			rt.Node("n2").CPU("2").Memory("4Gi").Obj(),
			rt.Node("n3").CPU("3").Obj(), // no memory allocatable
			rt.Node("n4").CPU("4").Memory("4Gi").Obj(),
		},
		pods: []*v1.Pod{
			rt.Pod("default", "p1").Req("1", "2Gi").On("n1").Obj(),
			rt.Pod("default", "be").On("n2").Obj(), // requests nothing
			rt.Pod("default", "p4").Req("3", "1Gi").On("n4").Obj(),
		},
	}
	runPluginCases(t, scoreBalancedAllocation, map[string]pluginCase{
		"pod with cpu and memory": {
			// n1: with (2000/4000=.5, 3Gi/8Gi=.375): std .0625 → 93; without (.25,.25) → 100;
			//     50 + (50+93-100)/2 = 50 + 21 = 71.
			// n2: with (.5, .25): std .125 → 87; without (0,0) → 100; 50 + 37/2 = 68.
			// n3: one fraction: std 0 both ways; 50 + 50/2 = 75.
			// n4: with (4000/4000=1, 2Gi/4Gi=.5): std .25 → 75; without (.75,.25) → 75; 50 + 50/2 = 75.
			world:    w,
			pod:      rt.Pod("default", "p").Req("1", "1Gi").Obj(),
			wantRaw:  []int64{71, 68, 75, 75},
			wantNorm: []int64{71, 68, 75, 75},
		},
		"pod improving the balance": {
			// n4: with (.75, 3Gi/4Gi=.75) → 100; without (.75,.25) → 75; 50 + (50+100-75)/2 = 50 + 37 = 87.
			// n1: with (.25, 4Gi/8Gi=.5) std .125 → 87; without 100; 50 + 37/2 = 68.
			world:    w,
			pod:      rt.Pod("default", "p").Req("", "2Gi").Obj(),
			feasible: []string{"n4", "n1"},
			wantRaw:  []int64{87, 68},
			wantNorm: []int64{87, 68},
		},
		"fractions are capped at 1": {
			// n2: with (5000/2000 → 1, 0) std .5 → 50; without (0,0) 100; 50 + (50+50-100)/2 = 50.
			world:    w,
			pod:      rt.Pod("default", "p").Req("5", "").Obj(),
			feasible: []string{"n2"},
			wantRaw:  []int64{50},
			wantNorm: []int64{50},
		},
		"best-effort pod: skipped": {
			world:    w,
			pod:      rt.Pod("default", "p").Obj(),
			wantSkip: true,
		},
		"only other resources requested: skipped": {
			world:    w,
			pod:      rt.Pod("default", "p").ReqRes(v1.ResourceEphemeralStorage, "1Gi").Obj(),
			wantSkip: true,
		},
	})
}

func TestImageLocality(t *testing.T) {
	img := func(size int64, names ...string) v1.ContainerImage {
		return v1.ContainerImage{Names: names, SizeBytes: size}
	}
	w := world{nodes: []*v1.Node{
		withImages(rt.Node("n1").Obj(), img(500*mi, "docker.io/library/nginx:1.25", "nginx:1.25"), img(600*mi, "redis:latest")),
		withImages(rt.Node("n2").Obj(), img(500*mi, "nginx:1.25")),
		withImages(rt.Node("n3").Obj(), img(100*mi, "busybox:latest")),
		rt.Node("n4").Obj(),
	}}
	pod := func(images ...string) *v1.Pod {
		p := rt.Pod("default", "p").Obj()
		p.Spec.Containers = nil
		for _, im := range images {
			p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: im, Image: im})
		}
		return p
	}
	runPluginCases(t, scoreImageLocality, map[string]pluginCase{
		"two containers": {
			// 4 nodes; 2 images: thresholds 23MB = 24117248 and 2000MB = 2097152000.
			// n1: nginx on 2 of 4 nodes: 500MB*2/4 = 262144000;
			//     100*(262144000-24117248)/(2097152000-24117248) = 23802675200/2073034752 = 11.
			// n2: same: 11.
			// n3: busybox (normalized ":latest") on 1 of 4: 26214400; 100*2097152/2073034752 = 0.
			// n4: nothing, clamped to 23MB: 0.
			world:    w,
			pod:      pod("nginx:1.25", "busybox"),
			wantRaw:  []int64{11, 11, 0, 0},
			wantNorm: []int64{11, 11, 0, 0},
		},
		"untagged image and init container": {
			// "redis" → "redis:latest", on n1 only: 600MB/4 = 157286400.
			// Init container nginx:1.25 on n1: 262144000. Two images, sum 419430400:
			// 100*(419430400-24117248)/2073034752 = 39531315200/2073034752 = 19.
			world: w,
			pod: func() *v1.Pod {
				p := pod("redis")
				p.Spec.InitContainers = []v1.Container{{Name: "init", Image: "nginx:1.25"}}
				return p
			}(),
			feasible: []string{"n1", "n2"},
			// n2: nginx only: 262144000 → 11.
			wantRaw:  []int64{19, 11},
			wantNorm: []int64{19, 11},
		},
		"single image": {
			// 157286400 with 1 image: 100*(157286400-24117248)/(1048576000-24117248)
			//   = 13316915200/1024458752 = 12.
			world:    w,
			pod:      pod("redis:latest"),
			feasible: []string{"n1"},
			wantRaw:  []int64{12},
			wantNorm: []int64{12},
		},
		"image larger than the threshold on every node": {
			// 3000MB on 2 of 2 nodes: clamped to 1000MB: 100.
			world: world{nodes: []*v1.Node{
				withImages(rt.Node("a").Obj(), img(3000*mi, "big:1")),
				withImages(rt.Node("b").Obj(), img(3000*mi, "big:1")),
			}},
			pod:      pod("big:1"),
			wantRaw:  []int64{100, 100},
			wantNorm: []int64{100, 100},
		},
		"image volume": {
			// Container "img:latest" absent; image volume nginx:1.25 on n1 and n2: 262144000 → 11.
			world: w,
			pod: func() *v1.Pod {
				p := pod("img")
				p.Spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{Image: &v1.ImageVolumeSource{Reference: "nginx:1.25"}}}}
				return p
			}(),
			feasible: []string{"n2", "n4"},
			wantRaw:  []int64{11, 0},
			wantNorm: []int64{11, 0},
		},
	})
}

func TestPodTopologySpread(t *testing.T) {
	web := map[string]string{"app": "web"}
	// Zones: n1, n2 in z1; n3 in z2; n4 without a zone label.
	// Matching pods (default/app=web): n1 2, n3 1, n4 1; on n2 only pods
	// that do not count (other namespace, terminating, other labels).
	mkWorld := func() world {
		return world{
			nodes: []*v1.Node{
				rt.Node("n1").Zone("z1").Obj(),
				rt.Node("n2").Zone("z1").Obj(),
				rt.Node("n3").Zone("z2").Obj(),
				rt.Node("n4").Obj(),
			},
			pods: []*v1.Pod{
				rt.Pod("default", "w1").Label("app", "web").On("n1").Obj(),
				rt.Pod("default", "w2").Label("app", "web").On("n1").Obj(),
				rt.Pod("other", "w3").Label("app", "web").On("n2").Obj(),
				rt.Pod("default", "w4").Label("app", "web").On("n2").Terminating().Obj(),
				rt.Pod("default", "x").Label("app", "db").On("n2").Obj(),
				rt.Pod("default", "w5").Label("app", "web").On("n3").Obj(),
				rt.Pod("default", "w6").Label("app", "web").On("n4").Obj(),
			},
		}
	}
	w := mkWorld()
	// The same, with w1 (on n1) labelled version=v1.
	versioned := mkWorld()
	versioned.pods[0].Labels["version"] = "v1"
	soft := func(maxSkew int32, key string) *v1.Pod {
		return rt.Pod("default", "p").Label("app", "web").SpreadWith(maxSkew, key, web, func(c *v1.TopologySpreadConstraint) {
			c.WhenUnsatisfiable = v1.ScheduleAnyway
		}).Obj()
	}
	webServed := served(w, web)
	rs := rt.ReplicaSet("default", "web-1", web)
	withControllers := func(w world, rss ...*appsv1.ReplicaSet) world {
		w.sels.ReplicaSets = rss
		return w
	}

	// Taint-policy world: m3 (zB) is tainted NoSchedule and so not feasible.
	tw := world{
		nodes: []*v1.Node{
			rt.Node("m1").Zone("zA").Obj(),
			rt.Node("m2").Zone("zB").Obj(),
			rt.Node("m3").Zone("zB").Taint("dedicated", "x", v1.TaintEffectNoSchedule).Obj(),
		},
		pods: []*v1.Pod{
			rt.Pod("default", "a").Label("app", "web").On("m1").Obj(),
			rt.Pod("default", "b").Label("app", "web").On("m3").Obj(),
			rt.Pod("default", "c").Label("app", "web").On("m3").Obj(),
			rt.Pod("default", "d").Label("app", "web").On("m3").Obj(),
		},
	}
	taintPolicy := func(policy v1.NodeInclusionPolicy) *v1.Pod {
		return rt.Pod("default", "p").Label("app", "web").SpreadWith(2, v1.LabelTopologyZone, web, func(c *v1.TopologySpreadConstraint) {
			c.WhenUnsatisfiable = v1.ScheduleAnyway
			c.NodeTaintsPolicy = &policy
		}).Obj()
	}

	runPluginCases(t, scorePodTopologySpread, map[string]pluginCase{
		"zone constraint, node without the key ignored": {
			// n4 lacks the zone: ignored. Domains z1, z2: w = ln(2+2) = 1.386294.
			// Counts: z1 2, z2 1. n1, n2: round(2*1.386294 + 0) = 3; n3: round(1.386294) = 1.
			// Normalize, min 1, max 3: 100*(3+1-3)/3 = 33; 100*(3+1-1)/3 = 100; ignored 0.
			world:    w,
			pod:      soft(1, v1.LabelTopologyZone),
			wantRaw:  []int64{3, 3, 1, 0},
			wantNorm: []int64{33, 33, 100, 0},
		},
		"hostname constraint": {
			// 4 feasible nodes: w = ln(4+2) = 1.791759. Pods per node: 2, 0, 1, 1.
			// raw: round(3.583519) = 4, 0, round(1.791759) = 2, 2.
			// min 0, max 4: 100*(4-4)/4 = 0, 100*4/4 = 100, 100*2/4 = 50, 50.
			world:    w,
			pod:      soft(1, v1.LabelHostname),
			wantRaw:  []int64{4, 0, 2, 2},
			wantNorm: []int64{0, 100, 50, 50},
		},
		"system default constraints": {
			// hostname maxSkew 3: w = ln(4+2) = 1.791759; zone maxSkew 5: domains z1, z2 and ""
			// (n4, no zone label, not ignored with the defaults): w = ln(3+2) = 1.609438.
			// Zone counts: z1 2, z2 1, "" 1 (n4's pod, never used).
			// n1: 2*1.791759+2 + 2*1.609438+4 = 5.583519 + 7.218876 = 12.802395 → 13.
			// n2: 0+2 + 7.218876 = 9.218876 → 9.
			// n3: 1.791759+2 + 1.609438+4 = 9.401197 → 9.
			// n4: 1.791759+2, no zone label → 3.791759 → 4.
			// min 4, max 13: 100*(17-13)/13 = 30, 100*(17-9)/13 = 61, 61, 100*(17-4)/13 = 100.
			world:    webServed,
			pod:      rt.Pod("default", "p").Label("app", "web").Obj(),
			wantRaw:  []int64{13, 9, 9, 4},
			wantNorm: []int64{30, 61, 61, 100},
		},
		"system default constraints on a subset of nodes": {
			// Feasible n2, n3: hostname w = ln(2+2) = 1.386294; zone domains z1, z2: w = ln(4) too.
			// n2: 0+2 + 2*1.386294+4 = 8.772589 → 9. n3: 1.386294+2 + 1.386294+4 = 8.772589 → 9.
			// max 9 = min: 100*(9+9-9)/9 = 100 for both.
			world:    webServed,
			pod:      rt.Pod("default", "p").Label("app", "web").Obj(),
			feasible: []string{"n2", "n3"},
			wantRaw:  []int64{9, 9},
			wantNorm: []int64{100, 100},
		},
		"no default selector: skipped": {
			world:    w,
			pod:      rt.Pod("default", "p").Label("app", "web").Obj(),
			wantSkip: true,
		},
		"empty default selector: skipped": {
			// A Service with an empty selector selects every pod and adds no label.
			world:    served(w, map[string]string{}),
			pod:      rt.Pod("default", "p").Label("app", "web").Obj(),
			wantSkip: true,
		},
		"Services selecting other pods: skipped": {
			world:    served(w, map[string]string{"app": "db"}, map[string]string{"app": "web", "tier": "x"}),
			pod:      rt.Pod("default", "p").Label("app", "web").Obj(),
			wantSkip: true,
		},
		"a ReplicaSet controlling the pod gives the selector without a Service": {
			// As "system default constraints": the ReplicaSet's selector is app=web.
			world:    withControllers(w, rs),
			pod:      rt.Pod("default", "p").Label("app", "web").ControlledBy(rs).Obj(),
			wantRaw:  []int64{13, 9, 9, 4},
			wantNorm: []int64{30, 61, 61, 100},
		},
		"a ReplicaSet that does not control the pod gives nothing": {
			world:    withControllers(w, rs),
			pod:      rt.Pod("default", "p").Label("app", "web").Obj(),
			wantSkip: true,
		},
		"a controller the snapshot does not hold gives nothing": {
			world:    w,
			pod:      rt.Pod("default", "p").Label("app", "web").ControlledBy(rs).Obj(),
			wantSkip: true,
		},
		"only DoNotSchedule constraints: skipped, no defaults": {
			world:    webServed,
			pod:      rt.Pod("default", "p").Label("app", "web").Spread(1, v1.LabelTopologyZone, web).Obj(),
			wantSkip: true,
		},
		"selector matching nothing: all max": {
			// Every count 0 and maxSkew 1: raw 0 everywhere, max 0 → 100 (n4 ignored → 0).
			world: w,
			pod: rt.Pod("default", "p").SpreadWith(1, v1.LabelTopologyZone, map[string]string{"app": "none"}, func(c *v1.TopologySpreadConstraint) {
				c.WhenUnsatisfiable = v1.ScheduleAnyway
			}).Obj(),
			wantRaw:  []int64{0, 0, 0, 0},
			wantNorm: []int64{100, 100, 100, 0},
		},
		"nodeTaintsPolicy Honor leaves tainted nodes' pods out": {
			// Feasible m1, m2: domains zA, zB: w = ln 4 = 1.386294. zB counts m2 only (m3 untolerated): 0.
			// m1: round(1.386294 + 1) = 2; m2: round(0 + 1) = 1. min 1, max 2: 100*(3-2)/2 = 50, 100*(3-1)/2 = 100.
			world:    tw,
			pod:      taintPolicy(v1.NodeInclusionPolicyHonor),
			feasible: []string{"m1", "m2"},
			wantRaw:  []int64{2, 1},
			wantNorm: []int64{50, 100},
		},
		"nodeTaintsPolicy Ignore counts them": {
			// zB: 3 (m3). m1: 2; m2: round(3*1.386294 + 1) = round(5.158883) = 5.
			// min 2, max 5: 100*(7-2)/5 = 100, 100*(7-5)/5 = 40.
			world:    tw,
			pod:      taintPolicy(v1.NodeInclusionPolicyIgnore),
			feasible: []string{"m1", "m2"},
			wantRaw:  []int64{2, 5},
			wantNorm: []int64{100, 40},
		},
		"matchLabelKeys narrow the selector": {
			// Selector app=web,version=v1 matches only w1 (n1). Zone: z1 1, z2 0; w = ln 4.
			// n1, n2: round(1.386294) = 1; n3: 0. min 0, max 1: 0, 0, 100; n4 ignored.
			world: versioned,
			pod: rt.Pod("default", "p").Label("app", "web").Label("version", "v1").
				SpreadWith(1, v1.LabelTopologyZone, web, func(c *v1.TopologySpreadConstraint) {
					c.WhenUnsatisfiable = v1.ScheduleAnyway
					c.MatchLabelKeys = []string{"version"}
				}).Obj(),
			wantRaw:  []int64{1, 1, 0, 0},
			wantNorm: []int64{0, 0, 100, 0},
		},
	})
}

func TestInterPodAffinity(t *testing.T) {
	nodes := func() []*v1.Node {
		return []*v1.Node{
			rt.Node("n1").Zone("z1").Obj(),
			rt.Node("n2").Zone("z1").Obj(),
			rt.Node("n3").Zone("z2").Obj(),
			rt.Node("n4").Zone("z3").Obj(),
		}
	}
	existing := func() []*v1.Pod {
		return []*v1.Pod{
			// e1: plain db pod on n1.
			rt.Pod("default", "e1").Label("app", "db").On("n1").Obj(),
			// e2: cache pod on n3 that prefers (weight 10) zones without web pods.
			withPreferredPodAntiAffinity(rt.Pod("default", "e2").Label("app", "cache").On("n3").Obj(),
				podTerm(10, v1.LabelTopologyZone, map[string]string{"app": "web"})),
			// e3: pod on n4 that requires web pods in its zone.
			rt.Pod("default", "e3").Label("app", "client").PodAffinity(v1.LabelTopologyZone, map[string]string{"app": "web"}).On("n4").Obj(),
		}
	}
	runPluginCases(t, scoreInterPodAffinity, map[string]pluginCase{
		"every kind of term": {
			// Incoming pref affinity 5 (zone, app=db) → e1: zone z1 +5.
			// Incoming pref anti 3 (hostname, app=cache) → e2: hostname n3 -3.
			// e2's pref anti 10 selects the pod → zone z2 -10. e3's required affinity → zone z3 +1.
			// n1: 5, n2: 5, n3: -10-3 = -13, n4: 1. min -13, max 5, diff 18:
			// 100*18/18 = 100, 100, 0, 100*14/18 = 77.
			world: world{nodes: nodes(), pods: existing()},
			pod: withPreferredPodAntiAffinity(
				withPreferredPodAffinity(rt.Pod("default", "p").Label("app", "web").Obj(),
					podTerm(5, v1.LabelTopologyZone, map[string]string{"app": "db"})),
				podTerm(3, v1.LabelHostname, map[string]string{"app": "cache"})),
			wantRaw:  []int64{5, 5, -13, 1},
			wantNorm: []int64{100, 100, 0, 77},
		},
		"incoming pod without terms: existing pods' terms only": {
			// z2 -10, z3 +1: n1 0, n2 0, n3 -10, n4 1. min -10, max 1, diff 11:
			// 100*10/11 = 90, 90, 0, 100.
			world:    world{nodes: nodes(), pods: existing()},
			pod:      rt.Pod("default", "p").Label("app", "web").Obj(),
			wantRaw:  []int64{0, 0, -10, 1},
			wantNorm: []int64{90, 90, 0, 100},
		},
		"nothing counts: skipped": {
			world:    world{nodes: nodes(), pods: existing()},
			pod:      rt.Pod("default", "p").Label("app", "other").Obj(),
			wantSkip: true,
		},
		"all feasible nodes equal: scored, all zero": {
			// e3 counts z3 +1; only n4 feasible... with n1, n2 (z1): raw 0, 0; diff 0 → 0.
			world:    world{nodes: nodes(), pods: existing()},
			pod:      rt.Pod("default", "p").Label("app", "web").Obj(),
			feasible: []string{"n1", "n2"},
			wantRaw:  []int64{0, 0},
			wantNorm: []int64{0, 0},
		},
		"namespace selectors": {
			// Incoming pod in "web" (team=web-team), pref affinity 4 (hostname, app=db,
			// namespaceSelector team=a): selects d1 (ns ta) on n2, not d2 (ns tb) on n3 → n2 +4.
			// e on n3 (ns tb) requires app=web in namespaces team=web-team → hostname n3 +1.
			// n1 0, n2 4, n3 1. min 0, max 4: 0, 100, 100*1/4 = 25.
			world: world{
				nodes: nodes()[:3],
				nss: []*v1.Namespace{
					namespace("web", map[string]string{"team": "web-team"}),
					namespace("ta", map[string]string{"team": "a"}),
					namespace("tb", map[string]string{"team": "b"}),
				},
				pods: []*v1.Pod{
					rt.Pod("ta", "d1").Label("app", "db").On("n2").Obj(),
					rt.Pod("tb", "d2").Label("app", "db").On("n3").Obj(),
					func() *v1.Pod {
						p := rt.Pod("tb", "e").On("n3").Obj()
						p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
							TopologyKey:       v1.LabelHostname,
							LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
							NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "web-team"}},
						}}}}
						return p
					}(),
				},
			},
			pod: func() *v1.Pod {
				term := podTerm(4, v1.LabelHostname, map[string]string{"app": "db"})
				term.PodAffinityTerm.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}
				return withPreferredPodAffinity(rt.Pod("web", "p").Label("app", "web").Obj(), term)
			}(),
			wantRaw:  []int64{0, 4, 1},
			wantNorm: []int64{0, 100, 25},
		},
		"existing pod's preferred affinity to the incoming pod": {
			// e (n1, z1) prefers app=web in its zone with weight 7: z1 +7.
			// n1 7, n3 0. min 0, max 7: 100, 0.
			world: world{nodes: nodes(), pods: []*v1.Pod{
				withPreferredPodAffinity(rt.Pod("default", "e").On("n1").Obj(),
					podTerm(7, v1.LabelTopologyZone, map[string]string{"app": "web"})),
			}},
			pod:      rt.Pod("default", "p").Label("app", "web").Obj(),
			feasible: []string{"n1", "n3"},
			wantRaw:  []int64{7, 0},
			wantNorm: []int64{100, 0},
		},
	})
}

func TestDefaultNormalize(t *testing.T) {
	tests := map[string]struct {
		raw          []int64
		reverse      bool
		wantNormed   []int64
		wantReversed []int64
	}{
		"scaled":    {raw: []int64{0, 1, 3}, wantNormed: []int64{0, 33, 100}, wantReversed: []int64{100, 67, 0}},
		"all zero":  {raw: []int64{0, 0}, wantNormed: []int64{0, 0}, wantReversed: []int64{100, 100}},
		"no scores": {raw: []int64{}, wantNormed: []int64{}, wantReversed: []int64{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.wantNormed, defaultNormalize(tc.raw, false)); diff != "" {
				t.Errorf("normalize (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantReversed, defaultNormalize(tc.raw, true)); diff != "" {
				t.Errorf("reverse (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestScore(t *testing.T) {
	tests := map[string]struct {
		world       world
		pod         *v1.Pod
		opts        Options
		wantSkipped []string
		wantTotal   []int64
		wantHost    string
	}{
		"resources only": {
			// TaintToleration: no taints, reversed → 100 × 3 = 300 each.
			// NodeResourcesFit: n1 56, n2 57 (see TestLeastAllocated).
			// BalancedAllocation: n1 71, n2 68 (see TestBalancedAllocation).
			// ImageLocality: image not on any node → 0.
			// n1: 300 + 56 + 71 = 427; n2: 300 + 57 + 68 = 425.
			world: world{
				nodes: []*v1.Node{rt.Node("n1").CPU("4").Memory("8Gi").Obj(), rt.Node("n2").CPU("2").Memory("4Gi").Obj()},
				pods: []*v1.Pod{
					rt.Pod("default", "p1").Req("1", "2Gi").On("n1").Obj(),
					rt.Pod("default", "be").On("n2").Obj(),
				},
			},
			pod:         rt.Pod("default", "p").Req("1", "1Gi").Obj(),
			wantSkipped: []string{NodeAffinity, PodTopologySpread, InterPodAffinity},
			wantTotal:   []int64{427, 425},
			wantHost:    "n1",
		},
		"every plugin": {
			// Three 4-cpu/8Gi nodes, n1 and n2 in z1, n3 in z2 with a PreferNoSchedule taint;
			// n1 runs a web pod (1 cpu, 1Gi). The pod: app=web, 1 cpu, 1Gi, prefers z2 (10).
			// TaintToleration: raw 0, 0, 1 → 100, 100, 0; × 3 = 300, 300, 0.
			// NodeAffinity: raw 0, 0, 10 → 0, 0, 100; × 2 = 0, 0, 200.
			// NodeResourcesFit: n1 cpu (4000-2000)*100/4000 = 50, mem (8Gi-2Gi)*100/8Gi = 75 → 62;
			//   n2, n3: cpu 75, mem (8Gi-1Gi)*100/8Gi = 87 → 81.
			// PodTopologySpread (defaults, selector app=web): hostname w = ln 5 = 1.609438,
			//   zone (z1, z2) w = ln 4 = 1.386294; zone counts z1 1, z2 0.
			//   n1: 1.609438+2 + 1.386294+4 = 8.995732 → 9; n2: 2 + 5.386294 → 7; n3: 2 + 4 = 6.
			//   min 6, max 9: 100*(15-9)/9 = 66, 100*(15-7)/9 = 88, 100*(15-6)/9 = 100; × 2 = 132, 176, 200.
			// InterPodAffinity: no terms → skipped.
			// BalancedAllocation: n1 with (.5, .25) → 87, without (.25, .125) → 93: 50 + 44/2 = 72;
			//   n2, n3 with (.25, .125) → 93, without → 100: 50 + 43/2 = 71.
			// ImageLocality: 0.
			// n1: 300+0+62+132+72 = 566; n2: 300+0+81+176+71 = 628; n3: 0+200+81+200+71 = 552.
			world: world{
				nodes: []*v1.Node{
					rt.Node("n1").Zone("z1").CPU("4").Memory("8Gi").Obj(),
					rt.Node("n2").Zone("z1").CPU("4").Memory("8Gi").Obj(),
					rt.Node("n3").Zone("z2").CPU("4").Memory("8Gi").Taint("spot", "", v1.TaintEffectPreferNoSchedule).Obj(),
				},
				pods: []*v1.Pod{rt.Pod("default", "w").Label("app", "web").Req("1", "1Gi").On("n1").Obj()},
				sels: snapshot.SelectorObjects{Services: []*v1.Service{rt.Service("default", "web", map[string]string{"app": "web"})}},
			},
			pod: withPreferredNodeAffinity(rt.Pod("default", "p").Label("app", "web").Req("1", "1Gi").Obj(),
				prefTerm(10, v1.LabelTopologyZone, v1.NodeSelectorOpIn, "z2")),
			wantSkipped: []string{InterPodAffinity},
			wantTotal:   []int64{566, 628, 552},
			wantHost:    "n2",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := setup(t, tc.world, tc.pod)
			plugins, err := ScorePlugins(c.snap, c.pod, c.feasible, tc.opts)
			if err != nil {
				t.Fatalf("ScorePlugins: %v", err)
			}
			var skipped []string
			for _, p := range plugins {
				if p.Skipped {
					skipped = append(skipped, p.Plugin)
				}
			}
			if diff := cmp.Diff(tc.wantSkipped, skipped); diff != "" {
				t.Errorf("skipped plugins (-want,+got):\n%s", diff)
			}
			total := Score(c.snap, c.pod, c.feasible, tc.opts)
			if diff := cmp.Diff(tc.wantTotal, total); diff != "" {
				t.Errorf("total scores (-want,+got):\n%s", diff)
			}
			if got := SelectHost(c.feasible, total); got == nil || got.Name != tc.wantHost {
				t.Errorf("SelectHost = %v, want %s", got, tc.wantHost)
			}
		})
	}
}

func TestScorePluginsError(t *testing.T) {
	// An invalid selector in a ScheduleAnyway constraint only fails at PreScore.
	pod := rt.Pod("default", "p").SpreadWith(1, v1.LabelTopologyZone, nil, func(c *v1.TopologySpreadConstraint) {
		c.WhenUnsatisfiable = v1.ScheduleAnyway
		c.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
	}).Obj()
	c := setup(t, world{nodes: []*v1.Node{rt.Node("n1").Zone("z1").Obj(), rt.Node("n2").Zone("z1").Obj()}}, pod)
	plugins, err := ScorePlugins(c.snap, c.pod, c.feasible, Options{})
	if err == nil {
		t.Fatal("ScorePlugins: no error")
	}
	for _, p := range plugins {
		if p.Plugin == PodTopologySpread && !p.Skipped {
			t.Errorf("PodTopologySpread not skipped after its error")
		}
	}
	// TaintToleration 100 × 3, BalancedAllocation skipped (no requests),
	// NodeResourcesFit 0 (no allocatable), ImageLocality 0.
	if diff := cmp.Diff([]int64{300, 300}, Score(c.snap, c.pod, c.feasible, Options{})); diff != "" {
		t.Errorf("Score (-want,+got):\n%s", diff)
	}
}

func TestSelectHost(t *testing.T) {
	tests := map[string]struct {
		scores []int64
		want   string // "" for nil
	}{
		"none":              {scores: nil, want: ""},
		"single":            {scores: []int64{7}, want: "A"},
		"unique maximum":    {scores: []int64{1, 9, 3}, want: "B"},
		"all equal: first":  {scores: []int64{5, 5, 5}, want: "A"},
		"tie, first at top": {scores: []int64{5, 1, 5}, want: "A"},
		// heap.Init over [A1 B3 C5 D5]: down(1) swaps B and D (5 > 3) → [A D C B];
		// down(0): children D, C are equal so D is taken, D > A → [D A C B] → D at the root.
		"tie resolved by the heap, not by order": {scores: []int64{1, 3, 5, 5}, want: "D"},
		// [A1 B5 C5 D5 E5]: down(1) keeps B; down(0) swaps A and B → root B.
		"tie after a low first node": {scores: []int64{1, 5, 5, 5, 5}, want: "B"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var nodes []*snapshot.Node
			for i := range tc.scores {
				nodes = append(nodes, &snapshot.Node{Name: string(rune('A' + i))})
			}
			// Without extenders upstream has no randomness here.
			got := SelectHost(nodes, tc.scores)
			name := ""
			if got != nil {
				name = got.Name
			}
			if name != tc.want {
				t.Fatalf("SelectHost = %q, want %q", name, tc.want)
			}
		})
	}
}

func TestNumFeasibleNodesToFind(t *testing.T) {
	tests := map[int]int{
		0:  0,
		50: 50, // below 100: all
		99: 99,
		// 50 - 100/125 = 50% of 100 = 50 < 100 → 100.
		100: 100,
		// 50 - 500/125 = 46% of 500 = 230.
		500: 230,
		// 50 - 1000/125 = 42% → 420 (upstream's own test case).
		1000: 420,
		// 50 - 5000/125 = 10% → 500.
		5000: 500,
		// 50 - 6000/125 = 2% → at least 5% → 300.
		6000: 300,
	}
	for n, want := range tests {
		if got := NumFeasibleNodesToFind(n); got != want {
			t.Errorf("NumFeasibleNodesToFind(%d) = %d, want %d", n, got, want)
		}
	}
}
