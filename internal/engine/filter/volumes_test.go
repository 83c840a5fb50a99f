package filter_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

const driver = "csi.example.com"

// volumeCluster has node-a in zone a and node-b in zone b, each with a
// CSINode allowing two csi.example.com attachments, and the classes local
// (no provisioner), fast (WaitForFirstConsumer) and standard (Immediate).
func volumeCluster(pods []*v1.Pod, st snapshot.StorageObjects) snapshot.Objects {
	st.StorageClasses = append(st.StorageClasses,
		rt.StorageClass("local", "kubernetes.io/no-provisioner", true),
		rt.StorageClass("fast", driver, true),
		rt.StorageClass("standard", driver, false))
	if st.CSINodes == nil {
		st.CSINodes = []*storagev1.CSINode{rt.CSINode("node-a", driver, 2), rt.CSINode("node-b", driver, 2)}
	}
	return snapshot.Objects{
		Nodes:   []*v1.Node{rt.Node("node-a").CPU("4").Zone("a").Obj(), rt.Node("node-b").CPU("4").Zone("b").Obj()},
		Pods:    pods,
		Storage: st,
	}
}

func status(code filter.Code, plugin string, reasons ...string) filter.Status {
	return filter.Status{Code: code, Plugin: plugin, Reasons: reasons}
}

// TestVolumeFilters runs PreFilter and Filter of the volume plugins on both
// nodes and compares the statuses with upstream's.
func TestVolumeFilters(t *testing.T) {
	pod := func() *rt.PodBuilder { return rt.Pod("default", "p").Req("100m", "") }
	uu, un := filter.UnschedulableAndUnresolvable, filter.Unschedulable
	cases := map[string]struct {
		objs          snapshot.Objects
		pod           *v1.Pod
		wantPreFilter filter.Status
		wantA, wantB  filter.Status
	}{
		"missing claim": {
			objs:          volumeCluster(nil, snapshot.StorageObjects{}),
			pod:           pod().PVC("data", "nope").Obj(),
			wantPreFilter: status(uu, filter.VolumeRestrictions, `persistentvolumeclaim "nope" not found`),
		},
		"unbound immediate claim": {
			objs: volumeCluster(nil, snapshot.StorageObjects{PersistentVolumeClaims: []*v1.PersistentVolumeClaim{
				rt.PVC("default", "c", "standard", "1Gi").Obj()}}),
			pod:           pod().PVC("data", "c").Obj(),
			wantPreFilter: status(uu, filter.VolumeBinding, filter.ReasonUnboundImmediateClaims),
		},
		"prebound claim counts as unbound immediate": {
			objs: volumeCluster(nil, snapshot.StorageObjects{PersistentVolumeClaims: []*v1.PersistentVolumeClaim{
				func() *v1.PersistentVolumeClaim {
					c := rt.PVC("default", "c", "fast", "1Gi").Obj()
					c.Spec.VolumeName = "pv-1"
					return c
				}()}}),
			pod:           pod().PVC("data", "c").Obj(),
			wantPreFilter: status(uu, filter.VolumeBinding, filter.ReasonUnboundImmediateClaims),
		},
		"missing ephemeral claim": {
			objs:          volumeCluster(nil, snapshot.StorageObjects{}),
			pod:           pod().Ephemeral("scratch", "fast").Obj(),
			wantPreFilter: status(uu, filter.VolumeBinding, `waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch"`),
		},
		"ephemeral claim of another pod": {
			objs: volumeCluster(nil, snapshot.StorageObjects{PersistentVolumeClaims: []*v1.PersistentVolumeClaim{
				rt.PVC("default", "p-scratch", "fast", "1Gi").Obj()}}),
			pod:           pod().Ephemeral("scratch", "fast").Obj(),
			wantPreFilter: status(uu, filter.VolumeBinding, "PVC default/p-scratch was not created for pod default/p (pod is not owner)"),
		},
		"bound claim of a missing PV": {
			objs: volumeCluster(nil, snapshot.StorageObjects{PersistentVolumeClaims: []*v1.PersistentVolumeClaim{
				rt.PVC("default", "c", "standard", "1Gi").BoundTo("gone").Obj()}}),
			pod:           pod().PVC("data", "c").Obj(),
			wantPreFilter: status(uu, filter.VolumeZone, `persistentvolume "gone" not found`),
		},
		"bound zonal volume": {
			objs: volumeCluster(nil, snapshot.StorageObjects{
				PersistentVolumeClaims: []*v1.PersistentVolumeClaim{rt.PVC("default", "c", "standard", "1Gi").BoundTo("pv-a").Obj()},
				PersistentVolumes:      []*v1.PersistentVolume{rt.PV("pv-a", "standard", driver, "1Gi").Zone("a").ClaimedBy("default", "c").Obj()},
			}),
			pod:   pod().PVC("data", "c").Obj(),
			wantB: status(uu, filter.VolumeBinding, filter.ReasonVolumeNodeConflict),
		},
		"zone label without node affinity": {
			objs: volumeCluster(nil, snapshot.StorageObjects{
				PersistentVolumeClaims: []*v1.PersistentVolumeClaim{rt.PVC("default", "c", "standard", "1Gi").BoundTo("pv-a").Obj()},
				PersistentVolumes: []*v1.PersistentVolume{func() *v1.PersistentVolume {
					pv := rt.PV("pv-a", "standard", driver, "1Gi").ClaimedBy("default", "c").Obj()
					pv.Labels[v1.LabelFailureDomainBetaZone] = "a__c"
					return pv
				}()},
			}),
			pod:   pod().PVC("data", "c").Obj(),
			wantB: status(uu, filter.VolumeZone, filter.ReasonVolumeZone),
		},
		"local volume on node-b only, smallest that fits": {
			objs: volumeCluster(nil, snapshot.StorageObjects{
				PersistentVolumeClaims: []*v1.PersistentVolumeClaim{rt.PVC("default", "c", "local", "5Gi").Obj()},
				PersistentVolumes: []*v1.PersistentVolume{
					rt.PV("small-a", "local", driver, "1Gi").NodeAffinityIn(v1.LabelHostname, "node-a").Obj(),
					rt.PV("big-b", "local", driver, "10Gi").NodeAffinityIn(v1.LabelHostname, "node-b").Obj(),
				},
			}),
			pod:   pod().PVC("data", "c").Obj(),
			wantA: status(uu, filter.VolumeBinding, filter.ReasonVolumeBindConflict),
		},
		"provisioning limited by allowed topologies": {
			objs: func() snapshot.Objects {
				o := volumeCluster(nil, snapshot.StorageObjects{PersistentVolumeClaims: []*v1.PersistentVolumeClaim{
					rt.PVC("default", "c", "zonal", "1Gi").Obj()}})
				sc := rt.StorageClass("zonal", driver, true)
				sc.AllowedTopologies = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{
					{Key: v1.LabelTopologyZone, Values: []string{"b"}}}}}
				o.Storage.StorageClasses = append(o.Storage.StorageClasses, sc)
				return o
			}(),
			pod:   pod().PVC("data", "c").Obj(),
			wantA: status(uu, filter.VolumeBinding, filter.ReasonVolumeBindConflict),
		},
		"storage capacity": {
			objs: func() snapshot.Objects {
				t := true
				o := volumeCluster(nil, snapshot.StorageObjects{PersistentVolumeClaims: []*v1.PersistentVolumeClaim{
					rt.PVC("default", "c", "cap", "5Gi").Obj()}})
				o.Storage.StorageClasses = append(o.Storage.StorageClasses, rt.StorageClass("cap", "cap.example.com", true))
				o.Storage.CSIDrivers = []*storagev1.CSIDriver{{ObjectMeta: metav1.ObjectMeta{Name: "cap.example.com"}, Spec: storagev1.CSIDriverSpec{StorageCapacity: &t}}}
				capacity := func(zone, size string) *storagev1.CSIStorageCapacity {
					q := resource.MustParse(size)
					return &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "cap-" + zone},
						StorageClassName: "cap", Capacity: &q,
						NodeTopology: &metav1.LabelSelector{MatchLabels: map[string]string{v1.LabelTopologyZone: zone}}}
				}
				o.Storage.CSIStorageCapacities = []*storagev1.CSIStorageCapacity{capacity("a", "4Gi"), capacity("b", "8Gi")}
				return o
			}(),
			pod:   pod().PVC("data", "c").Obj(),
			wantA: status(uu, filter.VolumeBinding, filter.ReasonNotEnoughSpace),
		},
		"selected node": {
			objs: volumeCluster(nil, snapshot.StorageObjects{PersistentVolumeClaims: []*v1.PersistentVolumeClaim{func() *v1.PersistentVolumeClaim {
				c := rt.PVC("default", "c", "fast", "1Gi").Obj()
				c.Annotations = map[string]string{"volume.kubernetes.io/selected-node": "node-b"}
				return c
			}()}}),
			pod:   pod().PVC("data", "c").Obj(),
			wantA: status(uu, filter.VolumeBinding, filter.ReasonVolumeBindConflict),
		},
		"ReadWriteOncePod claim in use": {
			objs: volumeCluster([]*v1.Pod{rt.Pod("default", "holder").PVC("data", "c").On("node-b").Obj()},
				snapshot.StorageObjects{PersistentVolumeClaims: []*v1.PersistentVolumeClaim{rt.PVC("default", "c", "fast", "1Gi").RWOP().Obj()}}),
			pod:   pod().PVC("data", "c").Obj(),
			wantA: status(un, filter.VolumeRestrictions, filter.ReasonRWOPConflict),
			wantB: status(un, filter.VolumeRestrictions, filter.ReasonRWOPConflict),
		},
		"inline disk in use": {
			objs:  volumeCluster([]*v1.Pod{rt.Pod("default", "holder").GCEDisk("d", "pd-1", false).On("node-a").Obj()}, snapshot.StorageObjects{}),
			pod:   pod().GCEDisk("d", "pd-1", true).Obj(),
			wantA: status(un, filter.VolumeRestrictions, filter.ReasonDiskConflict),
		},
		"inline disk read-only on both sides": {
			objs: volumeCluster([]*v1.Pod{rt.Pod("default", "holder").GCEDisk("d", "pd-1", true).On("node-a").Obj()}, snapshot.StorageObjects{}),
			pod:  pod().GCEDisk("d", "pd-1", true).Obj(),
		},
		"attach limit with a VolumeAttachment": {
			objs: volumeCluster([]*v1.Pod{rt.Pod("default", "holder").PVC("data", "held").On("node-a").Obj()}, snapshot.StorageObjects{
				PersistentVolumeClaims: []*v1.PersistentVolumeClaim{
					rt.PVC("default", "held", "standard", "1Gi").BoundTo("pv-held").Obj(),
					rt.PVC("default", "c", "standard", "1Gi").BoundTo("pv-c").Obj(),
				},
				PersistentVolumes: []*v1.PersistentVolume{
					rt.PV("pv-held", "standard", driver, "1Gi").ClaimedBy("default", "held").Obj(),
					rt.PV("pv-c", "standard", driver, "1Gi").ClaimedBy("default", "c").Obj(),
					rt.PV("pv-stale", "standard", driver, "1Gi").Obj(),
				},
				VolumeAttachments: []*storagev1.VolumeAttachment{rt.VolumeAttachment("va-1", driver, "pv-stale", "node-a")},
			}),
			pod:   pod().PVC("data", "c").Obj(),
			wantA: status(un, filter.NodeVolumeLimits, filter.ReasonMaxVolumeCount),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap, err := snapshot.New(tc.objs)
			if err != nil {
				t.Fatal(err)
			}
			p, err := snap.NewPod(tc.pod)
			if err != nil {
				t.Fatal(err)
			}
			c := filter.NewCycle(snap, p, filter.Options{Parallelism: 1})
			if diff := cmp.Diff(tc.wantPreFilter, c.PreFilterStatus()); diff != "" {
				t.Fatalf("PreFilter (-want,+got):\n%s", diff)
			}
			if !tc.wantPreFilter.IsSuccess() {
				return
			}
			if c.ResourcesOnly() {
				t.Error("ResourcesOnly() = true for a pod with volumes")
			}
			for node, want := range map[string]filter.Status{"node-a": tc.wantA, "node-b": tc.wantB} {
				if diff := cmp.Diff(want, c.FilterOne(snap.Node(node))); diff != "" {
					t.Errorf("%s (-want,+got):\n%s", node, diff)
				}
			}
		})
	}
}

// TestVolumeDryRun: removing pods frees a ReadWriteOncePod claim only when
// its user goes, wherever it runs, and frees an attach slot on its node;
// a VolumeAttachment keeps counting. Adding the pods back restores the
// verdicts.
func TestVolumeDryRun(t *testing.T) {
	objs := volumeCluster([]*v1.Pod{
		rt.Pod("default", "rwop-holder").PVC("data", "rwop").On("node-b").Obj(),
		rt.Pod("default", "attached").PVC("data", "held").On("node-a").Obj(),
	}, snapshot.StorageObjects{
		CSINodes: []*storagev1.CSINode{rt.CSINode("node-a", driver, 2), rt.CSINode("node-b", driver, 3)},
		PersistentVolumeClaims: []*v1.PersistentVolumeClaim{
			rt.PVC("default", "rwop", "standard", "1Gi").RWOP().BoundTo("pv-rwop").Obj(),
			rt.PVC("default", "held", "standard", "1Gi").BoundTo("pv-held").Obj(),
			rt.PVC("default", "c", "standard", "1Gi").BoundTo("pv-c").Obj(),
		},
		PersistentVolumes: []*v1.PersistentVolume{
			rt.PV("pv-rwop", "standard", driver, "1Gi").ClaimedBy("default", "rwop").Obj(),
			rt.PV("pv-held", "standard", driver, "1Gi").ClaimedBy("default", "held").Obj(),
			rt.PV("pv-c", "standard", driver, "1Gi").ClaimedBy("default", "c").Obj(),
			rt.PV("pv-stale", "standard", driver, "1Gi").Obj(),
		},
		VolumeAttachments: []*storagev1.VolumeAttachment{rt.VolumeAttachment("va-1", driver, "pv-stale", "node-a")},
	})
	snap, err := snapshot.New(objs)
	if err != nil {
		t.Fatal(err)
	}
	p, err := snap.NewPod(rt.Pod("default", "p").PVC("a", "rwop").PVC("b", "c").Obj())
	if err != nil {
		t.Fatal(err)
	}
	c := filter.NewCycle(snap, p, filter.Options{Parallelism: 1})
	holder, attached := snap.Pod("default/rwop-holder"), snap.Pod("default/attached")
	nodeA, nodeB := snap.Node("node-a"), snap.Node("node-b")
	rwop := status(filter.Unschedulable, filter.VolumeRestrictions, filter.ReasonRWOPConflict)
	limit := status(filter.Unschedulable, filter.NodeVolumeLimits, filter.ReasonMaxVolumeCount)

	st := c.NewState()
	nv := c.NewNodeView(nodeA)
	check := func(step string, want filter.Status) {
		t.Helper()
		if diff := cmp.Diff(want, c.FilterWithNominatedPods(st, nv, true)); diff != "" {
			t.Errorf("%s (-want,+got):\n%s", step, diff)
		}
	}
	check("before", rwop)
	c.RemovePod(st, nv, attached, nodeA)
	check("attached pod removed", rwop)
	c.RemovePod(st, nv, holder, nodeB)
	// node-a: the claim is free, but pv-stale's attachment and the two new
	// volumes make 3 attachments for a limit of 2.
	check("holder removed elsewhere", limit)
	c.AddPod(st, nv, holder, nodeB)
	check("holder back", rwop)
	c.RemovePod(st, nv, holder, nodeB)

	// On node-b, with its limit of 3, only the holder stands in the way.
	st2 := c.NewState()
	nv2 := c.NewNodeView(nodeB)
	if s := c.FilterWithNominatedPods(st2, nv2, true); !cmp.Equal(s, rwop) {
		t.Errorf("node-b before: %v", s)
	}
	c.RemovePod(st2, nv2, holder, nodeB)
	if s := c.FilterWithNominatedPods(st2, nv2, true); !s.IsSuccess() {
		t.Errorf("node-b without the holder: %v, want success", s)
	}
}

// TestVolumeFiltersParallel: filtering a pod with volumes over a cluster
// large enough to be split between goroutines gives the statuses of a
// sequential run (run with -race to check the volume state is only read).
func TestVolumeFiltersParallel(t *testing.T) {
	var nodes []*v1.Node
	var pods []*v1.Pod
	st := snapshot.StorageObjects{
		StorageClasses: []*storagev1.StorageClass{rt.StorageClass("standard", driver, false), rt.StorageClass("local", "kubernetes.io/no-provisioner", true)},
		PersistentVolumeClaims: []*v1.PersistentVolumeClaim{
			rt.PVC("default", "zonal", "standard", "1Gi").BoundTo("pv-zonal").Obj(),
			rt.PVC("default", "local", "local", "1Gi").Obj(),
		},
		PersistentVolumes: []*v1.PersistentVolume{rt.PV("pv-zonal", "standard", driver, "1Gi").Zone("z1").ClaimedBy("default", "zonal").Obj()},
	}
	for i := range 700 {
		name := "node-" + string(rune('a'+i%26)) + "-" + itoa(i)
		nodes = append(nodes, rt.Node(name).CPU("4").Zone("z"+itoa(i%3)).Obj())
		st.CSINodes = append(st.CSINodes, rt.CSINode(name, driver, int32(i%3)))
		if i%5 == 0 {
			st.PersistentVolumes = append(st.PersistentVolumes, rt.PV("local-"+itoa(i), "local", driver, "2Gi").NodeAffinityIn(v1.LabelHostname, name).Obj())
		}
		if i%2 == 0 {
			claim := "held-" + itoa(i)
			st.PersistentVolumeClaims = append(st.PersistentVolumeClaims, rt.PVC("default", claim, "standard", "1Gi").BoundTo("pv-"+claim).Obj())
			st.PersistentVolumes = append(st.PersistentVolumes, rt.PV("pv-"+claim, "standard", driver, "1Gi").ClaimedBy("default", claim).Obj())
			pods = append(pods, rt.Pod("default", "p-"+itoa(i)).PVC("data", claim).On(name).Obj())
		}
	}
	snap, err := snapshot.New(snapshot.Objects{Nodes: nodes, Pods: pods, Storage: st})
	if err != nil {
		t.Fatal(err)
	}
	p, err := snap.NewPod(rt.Pod("default", "p").PVC("a", "zonal").PVC("b", "local").Obj())
	if err != nil {
		t.Fatal(err)
	}
	seq := filter.NewCycle(snap, p, filter.Options{Parallelism: 1}).FilterAll()
	par := filter.NewCycle(snap, p, filter.Options{Parallelism: 4}).FilterAll()
	if diff := cmp.Diff(seq.Statuses, par.Statuses); diff != "" {
		t.Errorf("statuses differ (-sequential,+parallel):\n%s", diff)
	}
	if len(seq.Feasible) == 0 || len(seq.Feasible) != len(par.Feasible) {
		t.Errorf("%d feasible nodes sequentially, %d in parallel; want the same, more than 0", len(seq.Feasible), len(par.Feasible))
	}
}

func itoa(i int) string { return fmt.Sprint(i) }
