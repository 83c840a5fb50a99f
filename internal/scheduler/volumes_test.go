package scheduler

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// volumeCluster is fakeCluster with VolumeBinding's PreBind: it records
// the bindings and fails them when fail is set.
type volumeCluster struct {
	*fakeCluster
	fail error
}

func (v *volumeCluster) BindVolumes(_ context.Context, pod *v1.Pod, node string, b *filter.VolumeBindings) error {
	call := fmt.Sprintf("bind volumes %s %s:", pod.Name, node)
	for _, pv := range b.Static {
		call += " pv " + pv.Name + "->" + pv.Spec.ClaimRef.Name
	}
	for _, c := range b.Provision {
		call += " provision " + c.Name + "@" + c.Annotations["volume.kubernetes.io/selected-node"]
	}
	v.calls = append(v.calls, call)
	return v.fail
}

// TestPreBindVolumes: a pod with unbound WaitForFirstConsumer claims has
// them bound (static PV on its node) and provisioned (selected node) before
// it is bound; when that fails, the pod is not bound.
func TestPreBindVolumes(t *testing.T) {
	for name, tc := range map[string]struct {
		fail      error
		wantCalls []string
	}{
		"bound": {wantCalls: []string{
			"bind volumes p n2: pv local-n2->local provision fast@n2",
			"bind p n2",
			"event p Scheduled: Successfully assigned ns/p to n2",
		}},
		"binding the volumes fails": {fail: errors.New("timed out"), wantCalls: []string{
			"bind volumes p n2: pv local-n2->local provision fast@n2",
			"unschedulable p reason=SchedulerError",
			`event p FailedScheduling: running PreBind plugin "VolumeBinding": timed out`,
		}},
	} {
		t.Run(name, func(t *testing.T) {
			f := &volumeCluster{fakeCluster: &fakeCluster{pods: map[string]*v1.Pod{}}, fail: tc.fail}
			s := New(f, testingclock.NewFakeClock(t0), Options{Seed: 1})
			f.s = s
			for _, n := range []*v1.Node{rt.Node("n1").CPU("4").Obj(), rt.Node("n2").CPU("4").Obj()} {
				s.OnNodeAdd(n)
			}
			s.OnStorage(func(snap *snapshot.Snapshot) {
				snap.SetStorageClass(rt.StorageClass("local", "kubernetes.io/no-provisioner", true))
				snap.SetStorageClass(rt.StorageClass("fast", "csi.example.com", true))
				snap.SetPersistentVolume(rt.PV("local-n2", "local", "csi.example.com", "1Gi").NodeAffinityIn(v1.LabelHostname, "n2").Obj())
				snap.SetPersistentVolumeClaim(rt.PVC("ns", "local", "local", "1Gi").Obj())
				snap.SetPersistentVolumeClaim(rt.PVC("ns", "fast", "fast", "1Gi").Obj())
			}, true)
			p := rt.Pod("ns", "p").Priority(1).Req("1", "").PVC("a", "local").PVC("b", "fast").Obj()
			p.Spec.SchedulerName = v1.DefaultSchedulerName
			f.pods[podKey(p)] = p
			s.OnPodAdd(p)
			s.ScheduleOne(context.Background())
			if diff := cmp.Diff(tc.wantCalls, f.calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}
