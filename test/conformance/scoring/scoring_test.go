// Package scoring compares reprieve's scoring (internal/score) with upstream kube-scheduler's
// default-profile Score plugins on random clusters.
package scoring

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"

	"github.com/reprieve/reprieve/internal/engine/score"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

type world struct {
	nodes    []*v1.Node
	pods     []*v1.Pod
	nss      []*v1.Namespace
	services []*v1.Service
	// rcs, rss and sss are the controllers pods name in their controller
	// references.
	rcs      []*v1.ReplicationController
	rss      []*appsv1.ReplicaSet
	sss      []*appsv1.StatefulSet
	pod      *v1.Pod
	feasible []string
}

// selectors are w's Services and controllers as the snapshot takes them.
func (w world) selectors() snapshot.SelectorObjects {
	return snapshot.SelectorObjects{Services: w.services, ReplicationControllers: w.rcs, ReplicaSets: w.rss, StatefulSets: w.sss}
}

// genControllers adds Services and controllers over w's pods, with
// controller references to them, as upstream's DefaultSelector follows
// them: a ReplicaSet, StatefulSet or ReplicationController per app and
// namespace now and then, whose selector its pods match (mostly); some
// references name a controller that does not exist, or are not followed.
func genControllers(r *rand.Rand, w *world) {
	type ctrl struct {
		ref metav1.OwnerReference
		app string
	}
	yes := true
	byKey := map[string]ctrl{}
	for _, ns := range []string{"default", "ns1"} {
		for _, app := range []string{"web", "db", "cache"} {
			name := ns + "-" + app
			uid := types.UID("uid-ctrl-" + name)
			match := map[string]string{"app": app}
			if r.IntN(3) == 0 {
				match["tier"] = "t"
			}
			switch r.IntN(4) {
			case 0:
				continue
			case 1:
				sel := &metav1.LabelSelector{MatchLabels: match}
				if r.IntN(3) == 0 {
					sel = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{app, "other"}}}}
				}
				w.rss = append(w.rss, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: uid}, Spec: appsv1.ReplicaSetSpec{Selector: sel}})
				byKey[ns+"/"+app] = ctrl{metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: name, UID: uid, Controller: &yes}, app}
			case 2:
				w.sss = append(w.sss, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: uid}, Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: match}}})
				byKey[ns+"/"+app] = ctrl{metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: name, UID: uid, Controller: &yes}, app}
			case 3:
				w.rcs = append(w.rcs, &v1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: uid}, Spec: v1.ReplicationControllerSpec{Selector: match}})
				byKey[ns+"/"+app] = ctrl{metav1.OwnerReference{APIVersion: "v1", Kind: "ReplicationController", Name: name, UID: uid, Controller: &yes}, app}
			}
		}
		if r.IntN(3) == 0 {
			// A Service over a tier, or one without a selector.
			var sel map[string]string
			if r.IntN(2) == 0 {
				sel = map[string]string{"tier": "t"}
			}
			w.services = append(w.services, &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "extra", Namespace: ns}, Spec: v1.ServiceSpec{Selector: sel}})
		}
	}
	own := func(p *v1.Pod) {
		c, ok := byKey[p.Namespace+"/"+p.Labels["app"]]
		switch x := r.IntN(10); {
		case x < 5 && ok:
			p.OwnerReferences = []metav1.OwnerReference{c.ref}
		case x < 6:
			// A controller that is gone.
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "gone", UID: "uid-gone", Controller: &yes}}
		case x < 7 && ok:
			// Not the controller: not followed.
			ref := c.ref
			ref.Controller = nil
			p.OwnerReferences = []metav1.OwnerReference{ref}
		case x < 8 && len(byKey) > 0:
			// Another app's controller, whose selector need not match.
			keys := slices.Sorted(maps.Keys(byKey))
			p.OwnerReferences = []metav1.OwnerReference{byKey[keys[r.IntN(len(keys))]].ref}
		}
	}
	for _, p := range w.pods {
		own(p)
	}
	own(w.pod)
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

func randTerm(r *rand.Rand, ns string) v1.PodAffinityTerm {
	t := v1.PodAffinityTerm{
		TopologyKey:   pick(r, v1.LabelHostname, v1.LabelTopologyZone),
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": pick(r, "web", "db", "cache")}},
	}
	switch r.IntN(5) {
	case 0:
		t.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": pick(r, "x", "y")}}
	case 1:
		t.NamespaceSelector = &metav1.LabelSelector{}
	case 2:
		t.Namespaces = []string{pick(r, "default", "ns1")}
	}
	if r.IntN(6) == 0 {
		t.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpExists}}}
	}
	return t
}

func randWeighted(r *rand.Rand, ns string) []v1.WeightedPodAffinityTerm {
	var out []v1.WeightedPodAffinityTerm
	for range r.IntN(3) {
		out = append(out, v1.WeightedPodAffinityTerm{Weight: int32(1 + r.IntN(100)), PodAffinityTerm: randTerm(r, ns)})
	}
	return out
}

func randAffinity(r *rand.Rand, ns string, required bool) *v1.Affinity {
	if r.IntN(2) == 0 {
		return nil
	}
	a := &v1.Affinity{PodAffinity: &v1.PodAffinity{}, PodAntiAffinity: &v1.PodAntiAffinity{}}
	a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = randWeighted(r, ns)
	a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = randWeighted(r, ns)
	if required && r.IntN(2) == 0 {
		a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = []v1.PodAffinityTerm{randTerm(r, ns)}
	}
	if r.IntN(4) == 0 {
		a.PodAffinity = nil
	}
	return a
}

func randRequests(r *rand.Rand) v1.ResourceList {
	rl := v1.ResourceList{}
	switch r.IntN(5) {
	case 0:
		return nil
	case 1:
		rl[v1.ResourceCPU] = resource.MustParse(pick(r, "100m", "250m", "1", "3"))
	case 2:
		rl[v1.ResourceMemory] = resource.MustParse(pick(r, "100Mi", "1Gi", "3Gi"))
	default:
		rl[v1.ResourceCPU] = resource.MustParse(pick(r, "100m", "250m", "1", "3", "500m"))
		rl[v1.ResourceMemory] = resource.MustParse(pick(r, "100Mi", "1Gi", "3Gi", "512Mi"))
	}
	return rl
}

var images = []v1.ContainerImage{
	{Names: []string{"nginx:1.25"}, SizeBytes: 500 << 20},
	{Names: []string{"docker.io/library/busybox:latest", "busybox:latest"}, SizeBytes: 50 << 20},
	{Names: []string{"big:1"}, SizeBytes: 1500 << 20},
	{Names: []string{"redis:latest"}, SizeBytes: 120 << 20},
}

func genWorld(r *rand.Rand) world {
	var w world
	w.nss = []*v1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: "default", Labels: map[string]string{"team": "x"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "ns1", Labels: map[string]string{"team": "y"}}},
	}
	w.services = []*v1.Service{
		{ObjectMeta: metav1.ObjectMeta{Name: "s1", Namespace: "default"}, Spec: v1.ServiceSpec{Selector: map[string]string{"app": "web"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "s2", Namespace: "ns1"}, Spec: v1.ServiceSpec{Selector: map[string]string{"app": "db"}}},
	}
	nn := 2 + r.IntN(7)
	if r.IntN(4) == 0 {
		nn = 10 + r.IntN(30)
	}
	for i := range nn {
		name := fmt.Sprintf("node-%d", i)
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{v1.LabelHostname: name}}}
		if r.IntN(5) != 0 {
			n.Labels[v1.LabelTopologyZone] = pick(r, "z0", "z1", "z2")
		}
		if r.IntN(3) == 0 {
			n.Labels["disk"] = "ssd"
		}
		n.Status.Allocatable = v1.ResourceList{
			v1.ResourcePods: resource.MustParse("110"),
			v1.ResourceCPU:  resource.MustParse(pick(r, "1", "2", "4", "8", "3500m")),
		}
		if r.IntN(12) != 0 {
			n.Status.Allocatable[v1.ResourceMemory] = resource.MustParse(pick(r, "2Gi", "4Gi", "8Gi", "5000Mi"))
		}
		for _, k := range []string{"a", "b"} {
			if r.IntN(3) == 0 {
				n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: k, Value: "1", Effect: v1.TaintEffectPreferNoSchedule})
			}
		}
		if r.IntN(6) == 0 {
			n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: "ded", Effect: v1.TaintEffectNoSchedule})
		}
		for _, img := range images {
			if r.IntN(3) == 0 {
				n.Status.Images = append(n.Status.Images, img)
			}
		}
		w.nodes = append(w.nodes, n)
		for j := range r.IntN(6) {
			ns := pick(r, "default", "default", "ns1")
			pname := fmt.Sprintf("p-%d-%d", i, j)
			p := &v1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: pname, Namespace: ns, UID: types.UID("uid-" + pname), Labels: map[string]string{"app": pick(r, "web", "db", "cache")}},
				Spec: v1.PodSpec{NodeName: name, Containers: []v1.Container{{Name: "c", Image: "img",
					Resources: v1.ResourceRequirements{Requests: randRequests(r)}}},
					Affinity: randAffinity(r, ns, true)},
				Status: v1.PodStatus{Phase: v1.PodRunning},
			}
			if r.IntN(4) == 0 {
				p.Labels["tier"] = "t"
			}
			if r.IntN(10) == 0 {
				now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
				p.DeletionTimestamp = &now
			}
			w.pods = append(w.pods, p)
		}
	}
	ns := pick(r, "default", "ns1")
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "incoming", Namespace: ns, UID: "uid-incoming", Labels: map[string]string{"app": pick(r, "web", "db", "cache")}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: pick(r, "img", "nginx:1.25", "busybox", "big:1"),
			Resources: v1.ResourceRequirements{Requests: randRequests(r)}}},
			Affinity: randAffinity(r, ns, false)},
	}
	if r.IntN(2) == 0 {
		pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: "d", Image: pick(r, "redis", "nginx:1.25", "other")})
	}
	if r.IntN(3) == 0 {
		pod.Spec.InitContainers = []v1.Container{{Name: "i", Image: pick(r, "busybox:latest", "big:1")}}
	}
	if r.IntN(3) == 0 {
		if pod.Spec.Affinity == nil {
			pod.Spec.Affinity = &v1.Affinity{}
		}
		pod.Spec.Affinity.NodeAffinity = &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{
			{Weight: int32(1 + r.IntN(100)), Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "disk", Operator: v1.NodeSelectorOpExists}}}},
			{Weight: int32(1 + r.IntN(100)), Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{"z1"}}}}},
		}}
	}
	if r.IntN(4) == 0 {
		pod.Spec.NodeSelector = map[string]string{"disk": "ssd"}
	}
	for _, k := range []string{"a", "b", "ded"} {
		if r.IntN(3) == 0 {
			pod.Spec.Tolerations = append(pod.Spec.Tolerations, v1.Toleration{Key: k, Operator: v1.TolerationOpExists, Effect: pick(r, v1.TaintEffectPreferNoSchedule, "", v1.TaintEffectNoSchedule)})
		}
	}
	if r.IntN(5) == 0 {
		pod.Labels["tier"] = "t"
	}
	if r.IntN(3) == 0 {
		for range 1 + r.IntN(2) {
			c := v1.TopologySpreadConstraint{
				MaxSkew:           int32(1 + r.IntN(3)),
				TopologyKey:       pick(r, v1.LabelHostname, v1.LabelTopologyZone),
				WhenUnsatisfiable: pick(r, v1.ScheduleAnyway, v1.ScheduleAnyway, v1.DoNotSchedule),
				LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": pick(r, "web", "db")}},
			}
			if r.IntN(3) == 0 {
				c.MatchLabelKeys = []string{"tier"}
			}
			if r.IntN(3) == 0 {
				p := pick(r, v1.NodeInclusionPolicyHonor, v1.NodeInclusionPolicyIgnore)
				c.NodeTaintsPolicy = &p
			}
			if r.IntN(3) == 0 {
				p := pick(r, v1.NodeInclusionPolicyHonor, v1.NodeInclusionPolicyIgnore)
				c.NodeAffinityPolicy = &p
			}
			pod.Spec.TopologySpreadConstraints = append(pod.Spec.TopologySpreadConstraints, c)
		}
	}
	w.pod = pod
	perm := r.Perm(nn)
	k := 1 + r.IntN(nn)
	for _, i := range perm[:k] {
		w.feasible = append(w.feasible, w.nodes[i].Name)
	}
	genControllers(r, &w)
	return w
}

// upstreamScores returns the upstream total and per plugin weighted scores
// with the default profile.
func upstreamScores(t *testing.T, w world) (totals []int64, perPlugin map[string][]int64, best string, skip bool) {
	var versioned configv1.KubeSchedulerConfiguration
	scheme.Scheme.Default(&versioned)
	var cfg schedulerapi.KubeSchedulerConfiguration
	if err := scheme.Scheme.Convert(&versioned, &cfg, nil); err != nil {
		t.Fatal(err)
	}
	totals, perPlugin, best, _, skip, err := upstreamProfileScores(t, w, &cfg.Profiles[0])
	if err != nil {
		t.Fatal(err)
	}
	return totals, perPlugin, best, skip
}

// upstreamProfileScores returns the upstream total and per plugin weighted
// scores with profile, and the plugins its framework enabled; buildErr is
// the framework's refusal of the profile (a plugin's arguments, say).
func upstreamProfileScores(t *testing.T, w world, profile *schedulerapi.KubeSchedulerProfile) (totals []int64, perPlugin map[string][]int64, best string, plugins *schedulerapi.Plugins, skip bool, buildErr error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logger := klog.FromContext(ctx)
	var objs []runtime.Object
	for _, n := range w.nodes {
		objs = append(objs, n)
	}
	for _, p := range w.pods {
		objs = append(objs, p)
	}
	for _, n := range w.nss {
		objs = append(objs, n)
	}
	for _, s := range w.services {
		objs = append(objs, s)
	}
	for _, c := range w.rcs {
		objs = append(objs, c)
	}
	for _, c := range w.rss {
		objs = append(objs, c)
	}
	for _, c := range w.sss {
		objs = append(objs, c)
	}
	client := fake.NewClientset(objs...)
	inf := informers.NewSharedInformerFactory(client, 0)
	inf.Core().V1().Pods().Informer()
	inf.Core().V1().Nodes().Informer()
	claimCache := assumecache.NewAssumeCache(logger, inf.Resource().V1().ResourceClaims().Informer(), "ResourceClaim", "", nil)
	opts := resourceslicetracker.Options{
		EnableDeviceTaintRules:   utilfeature.DefaultFeatureGate.Enabled(features.DRADeviceTaintRules),
		EnableConsumableCapacity: utilfeature.DefaultFeatureGate.Enabled(features.DRAConsumableCapacity),
		SliceInformer:            inf.Resource().V1().ResourceSlices(),
		KubeClient:               client,
	}
	if opts.EnableDeviceTaintRules {
		opts.TaintInformer = inf.Resource().V1().DeviceTaintRules()
	}
	tracker, err := resourceslicetracker.StartTracker(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer tracker.Stop()
	draManager := dynamicresources.NewDRAManager(ctx, claimCache, tracker, inf)
	cache := internalcache.New(ctx, nil, false, false)
	snap := internalcache.NewEmptySnapshot()
	rec := metrics.NewMetricsAsyncRecorder(1000, time.Second, ctx.Done())
	f, err := frameworkruntime.NewFramework(ctx, frameworkplugins.NewInTreeRegistry(), profile,
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(inf),
		frameworkruntime.WithSharedDRAManager(draManager),
		frameworkruntime.WithSnapshotSharedLister(snap),
		frameworkruntime.WithMutableSnapshotLister(snap),
		frameworkruntime.WithMetricsRecorder(rec),
		frameworkruntime.WithWaitingPods(frameworkruntime.NewWaitingPodsMap()),
		frameworkruntime.WithPodsInPreBind(frameworkruntime.NewPodsInPreBindMap()),
		frameworkruntime.WithSharedCSIManager(nodevolumelimits.NewCSIManager(inf.Storage().V1().CSINodes().Lister())),
		frameworkruntime.WithPodGroupManager(cache),
	)
	if err != nil {
		return nil, nil, "", nil, false, err
	}
	inf.Start(ctx.Done())
	inf.WaitForCacheSync(ctx.Done())
	defer func() { cancel(); inf.Shutdown() }()
	for _, n := range w.nodes {
		cache.AddNode(logger, n)
	}
	for _, p := range w.pods {
		if err := cache.AddPod(logger, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := cache.UpdateSnapshot(logger, snap); err != nil {
		t.Fatal(err)
	}
	plugins = f.ListPlugins()
	state := framework.NewCycleState()
	_, s, _ := f.RunPreFilterPlugins(ctx, state, w.pod)
	if !s.IsSuccess() {
		return nil, nil, "", plugins, true, nil
	}
	var nodes []fwk.NodeInfo
	for _, name := range w.feasible {
		ni, err := snap.NodeInfos().Get(name)
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, ni)
	}
	if st := f.RunPreScorePlugins(ctx, state, w.pod, nodes); !st.IsSuccess() {
		t.Fatalf("prescore: %v", st)
	}
	res, st := f.RunScorePlugins(ctx, state, w.pod, nodes)
	if !st.IsSuccess() {
		t.Fatalf("score: %v", st)
	}
	perPlugin = map[string][]int64{}
	for i, r := range res {
		totals = append(totals, r.TotalScore)
		for _, ps := range r.Scores {
			if perPlugin[ps.Name] == nil {
				perPlugin[ps.Name] = make([]int64, len(res))
			}
			perPlugin[ps.Name][i] = ps.Score
		}
	}
	if len(res) > 0 {
		best = framework.NewSortedScoredNodes(res).Pop().Name
	}
	return totals, perPlugin, best, plugins, false, nil
}

// scenarios is the number of random clusters (REPRIEVE_SCORE_SCENARIOS).
func scenarios() int {
	if n, err := strconv.Atoi(os.Getenv("REPRIEVE_SCORE_SCENARIOS")); err == nil && n > 0 {
		return n
	}
	return 500
}

func TestScoreDifferential(t *testing.T) {
	metrics.Register()
	n := scenarios()
	skipped := 0
	varied := map[string]int{}
	tieCases := 0
	for seed := range n {
		r := rand.New(rand.NewPCG(uint64(seed), 99))
		w := genWorld(r)
		want, wantPer, wantBest, skip := upstreamScores(t, w)
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
		plugins, err := score.ScorePlugins(snap, pod, feasible, score.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := score.Total(plugins, len(feasible))
		gotPer := map[string][]int64{}
		for _, p := range plugins {
			if p.Skipped {
				continue
			}
			ws := make([]int64, len(feasible))
			for i, s := range p.Normalized {
				ws[i] = s * p.Weight
			}
			gotPer[p.Plugin] = ws
		}
		for k, v := range wantPer {
			for _, x := range v {
				if x != v[0] {
					varied[k]++
					break
				}
			}
		}
		if len(got) > 1 {
			mx, cnt := got[0], 0
			for _, x := range got {
				mx = max(mx, x)
			}
			for _, x := range got {
				if x == mx {
					cnt++
				}
			}
			if cnt > 1 {
				tieCases++
			}
		}
		bad := fmt.Sprint(want) != fmt.Sprint(got)
		var names []string
		for k := range wantPer {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
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
			t.Errorf("seed %d: totals upstream %v reprieve %v", seed, want, got)
		}
		if b := score.SelectHost(feasible, got); b.Name != wantBest {
			t.Errorf("seed %d: best upstream %s reprieve %s (scores %v)", seed, wantBest, b.Name, got)
		}
	}
	t.Logf("%d cases, %d skipped at PreFilter; cases where a plugin's scores vary: %v; tied best: %d", n, skipped, varied, tieCases)
}

func TestSelectHostHeap(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for c := range 20000 {
		n := 1 + r.IntN(20)
		list := make([]fwk.NodePluginScores, n)
		nodes := make([]*snapshot.Node, n)
		scores := make([]int64, n)
		for i := range n {
			name := fmt.Sprintf("n%d", i)
			scores[i] = int64(r.IntN(4))
			list[i] = fwk.NodePluginScores{Name: name, TotalScore: scores[i]}
			nodes[i] = &snapshot.Node{Name: name}
		}
		want := framework.NewSortedScoredNodes(list).Pop().Name
		if got := score.SelectHost(nodes, scores).Name; got != want {
			t.Fatalf("case %d %v: upstream %s reprieve %s", c, scores, want, got)
		}
	}
}
