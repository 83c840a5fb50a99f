package scoring

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
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

// volumeWorld is a cluster with storage and a pod whose claims are all
// unbound WaitForFirstConsumer claims.
type volumeWorld struct {
	nodes      []*v1.Node
	classes    []*storagev1.StorageClass
	drivers    []*storagev1.CSIDriver
	pvs        []*v1.PersistentVolume
	claims     []*v1.PersistentVolumeClaim
	capacities []*storagev1.CSIStorageCapacity
	pod        *v1.Pod
}

const trackedDriver = "tracked.csi.example.com"

func genVolumeWorld(r *rand.Rand) volumeWorld {
	var w volumeWorld
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	for _, c := range []struct{ name, provisioner string }{
		{"local", "kubernetes.io/no-provisioner"}, {"fast", trackedDriver}, {"slow", "untracked.csi.example.com"},
	} {
		w.classes = append(w.classes, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: c.name}, Provisioner: c.provisioner, VolumeBindingMode: &wffc})
	}
	tracking := true
	w.drivers = []*storagev1.CSIDriver{{ObjectMeta: metav1.ObjectMeta{Name: trackedDriver}, Spec: storagev1.CSIDriverSpec{StorageCapacity: &tracking}}}
	sizes := []string{"5Gi", "10Gi", "20Gi", "50Gi", "100Gi", "200Gi"}
	nn := 2 + r.IntN(5)
	for i := range nn {
		name := fmt.Sprintf("node-%d", i)
		w.nodes = append(w.nodes, &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{v1.LabelHostname: name, v1.LabelTopologyZone: pick(r, "z0", "z1")}},
			Status:     v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourcePods: resource.MustParse("110"), v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi")}},
		})
		// At most one capacity per node and class: with several that fit,
		// upstream takes the first its informer lists, in no set order.
		for j, class := range []string{"fast", "slow"} {
			if r.IntN(3) == 0 {
				continue
			}
			q := resource.MustParse(pick(r, sizes...))
			c := &storagev1.CSIStorageCapacity{
				ObjectMeta:       metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("cap-%d-%d", i, j)},
				StorageClassName: class,
				NodeTopology:     &metav1.LabelSelector{MatchLabels: map[string]string{v1.LabelHostname: name}},
				Capacity:         &q,
			}
			if r.IntN(3) == 0 {
				m := resource.MustParse(pick(r, sizes...))
				c.MaximumVolumeSize = &m
			}
			w.capacities = append(w.capacities, c)
		}
	}
	fs := v1.PersistentVolumeFilesystem
	for i := range r.IntN(9) {
		name := fmt.Sprintf("pv-%d", i)
		key, value := v1.LabelHostname, fmt.Sprintf("node-%d", r.IntN(nn))
		if r.IntN(4) == 0 {
			key, value = v1.LabelTopologyZone, pick(r, "z0", "z1")
		}
		w.pvs = append(w.pvs, &v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
			Spec: v1.PersistentVolumeSpec{
				Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse(pick(r, sizes...))},
				AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				PersistentVolumeSource:        v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/" + name}},
				PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
				StorageClassName:              "local",
				VolumeMode:                    &fs,
				NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
					MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: []string{value}}},
				}}}},
			},
			Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
		})
	}
	w.pod = &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "incoming", Namespace: "default", UID: "uid-incoming"},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "img"}}},
	}
	for i := range 1 + r.IntN(3) {
		name := fmt.Sprintf("claim-%d", i)
		class := pick(r, "local", "local", "fast", "fast", "slow")
		w.claims = append(w.claims, &v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
			Spec: v1.PersistentVolumeClaimSpec{
				AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(pick(r, "5Gi", "10Gi", "20Gi", "50Gi"))}},
				StorageClassName: &class,
				VolumeMode:       &fs,
			},
			Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
		})
		w.pod.Spec.Volumes = append(w.pod.Spec.Volumes, v1.Volume{Name: name, VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: name}}})
	}
	return w
}

// upstreamVolumeScores runs the default profile's PreFilter, Filter on
// every node, PreScore and Score, and returns the nodes that passed and
// VolumeBinding's weighted scores on them (skip: PreFilter failed or no
// node passed).
func upstreamVolumeScores(t *testing.T, w volumeWorld) (feasible []string, scores []int64, skip bool) {
	var versioned configv1.KubeSchedulerConfiguration
	scheme.Scheme.Default(&versioned)
	var cfg schedulerapi.KubeSchedulerConfiguration
	if err := scheme.Scheme.Convert(&versioned, &cfg, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logger := klog.FromContext(ctx)
	var objs []runtime.Object
	for _, o := range w.nodes {
		objs = append(objs, o)
	}
	for _, o := range w.classes {
		objs = append(objs, o)
	}
	for _, o := range w.drivers {
		objs = append(objs, o)
	}
	for _, o := range w.pvs {
		objs = append(objs, o)
	}
	for _, o := range w.claims {
		objs = append(objs, o)
	}
	for _, o := range w.capacities {
		objs = append(objs, o)
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
	f, err := frameworkruntime.NewFramework(ctx, frameworkplugins.NewInTreeRegistry(), &cfg.Profiles[0],
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
		t.Fatal(err)
	}
	inf.Start(ctx.Done())
	inf.WaitForCacheSync(ctx.Done())
	defer func() { cancel(); inf.Shutdown() }()
	for _, n := range w.nodes {
		cache.AddNode(logger, n)
	}
	if err := cache.UpdateSnapshot(logger, snap); err != nil {
		t.Fatal(err)
	}
	state := framework.NewCycleState()
	if _, s, _ := f.RunPreFilterPlugins(ctx, state, w.pod); !s.IsSuccess() {
		return nil, nil, true
	}
	var nodes []fwk.NodeInfo
	for _, n := range w.nodes {
		ni, err := snap.NodeInfos().Get(n.Name)
		if err != nil {
			t.Fatal(err)
		}
		if st := f.RunFilterPlugins(ctx, state, w.pod, ni); st.IsSuccess() {
			nodes = append(nodes, ni)
			feasible = append(feasible, n.Name)
		}
	}
	if len(nodes) == 0 {
		return nil, nil, true
	}
	if st := f.RunPreScorePlugins(ctx, state, w.pod, nodes); !st.IsSuccess() {
		t.Fatalf("prescore: %v", st)
	}
	res, st := f.RunScorePlugins(ctx, state, w.pod, nodes)
	if !st.IsSuccess() {
		t.Fatalf("score: %v", st)
	}
	scores = make([]int64, len(res))
	for i, r := range res {
		for _, ps := range r.Scores {
			if ps.Name == score.VolumeBinding {
				scores[i] = ps.Score
			}
		}
	}
	return feasible, scores, false
}

// TestVolumeBindingScoreDifferential compares VolumeBinding's Score with
// upstream's on random clusters of local PVs, CSIStorageCapacities and
// pods with unbound WaitForFirstConsumer claims (REPRIEVE_VOLUME_SCENARIOS,
// default 200), on the nodes upstream's filters pass.
func TestVolumeBindingScoreDifferential(t *testing.T) {
	metrics.Register()
	n := 200
	if v, err := strconv.Atoi(os.Getenv("REPRIEVE_VOLUME_SCENARIOS")); err == nil && v > 0 {
		n = v
	}
	compared, varied := 0, 0
	for seed := range n {
		w := genVolumeWorld(rand.New(rand.NewPCG(uint64(seed), 7)))
		feasibleNames, want, skip := upstreamVolumeScores(t, w)
		if skip {
			continue
		}
		snap, err := snapshot.New(snapshot.Objects{Nodes: w.nodes, Storage: snapshot.StorageObjects{
			StorageClasses: w.classes, CSIDrivers: w.drivers, PersistentVolumes: w.pvs,
			PersistentVolumeClaims: w.claims, CSIStorageCapacities: w.capacities,
		}})
		if err != nil {
			t.Fatal(err)
		}
		pod, err := snap.NewPod(w.pod)
		if err != nil {
			t.Fatal(err)
		}
		var feasible []*snapshot.Node
		for _, name := range feasibleNames {
			feasible = append(feasible, snap.Node(name))
		}
		plugins, err := score.ScorePlugins(snap, pod, feasible, score.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := make([]int64, len(feasible))
		for _, p := range plugins {
			if p.Plugin == score.VolumeBinding && !p.Skipped {
				for i, s := range p.Normalized {
					got[i] = s * p.Weight
				}
			}
		}
		compared++
		for _, x := range want {
			if x != want[0] {
				varied++
				break
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("seed %d: VolumeBinding on %v: upstream %v reprieve %v", seed, feasibleNames, want, got)
		}
	}
	t.Logf("%d of %d scenarios compared (the others failed PreFilter or every Filter); VolumeBinding's scores vary across nodes in %d", compared, n, varied)
	if compared == 0 {
		t.Fatal("no scenario compared")
	}
}
