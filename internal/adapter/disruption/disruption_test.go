package disruption

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

var now = rt.BaseTime.Add(time.Hour)

// budget is a budget over app=web in ns "shop" without a status.
func budget(minAvailable, maxUnavailable *intstr.IntOrString) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Generation: 1},
		Spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			MinAvailable: minAvailable, MaxUnavailable: maxUnavailable},
	}
}

func ptrInt(i int) *intstr.IntOrString     { v := intstr.FromInt32(int32(i)); return &v }
func ptrPct(s string) *intstr.IntOrString  { v := intstr.FromString(s); return &v }
func web(name string) *rt.PodBuilder       { return rt.Pod("shop", name).Label("app", "web").On("n1") }
func readyWeb(name string) *rt.PodBuilder  { return web(name).Ready(true) }
func rsPod(name, rs string) *rt.PodBuilder { return readyWeb(name).ControlledBy(replicaSet(rs, 4)) }
func stsPod(name string) *rt.PodBuilder    { return readyWeb(name).ControlledBy(statefulSet("db", 3)) }
func replicaSet(name string, n int32) *appsv1.ReplicaSet {
	rs := rt.ReplicaSet("shop", name, map[string]string{"app": "web"})
	rs.Spec.Replicas = &n
	return rs
}
func statefulSet(name string, n int32) *appsv1.StatefulSet {
	s := rt.StatefulSet("shop", name, map[string]string{"app": "web"})
	s.Spec.Replicas = &n
	return s
}

// TestSync holds Sync to the disruption controller's arithmetic.
func TestSync(t *testing.T) {
	deployment := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "front", UID: "uid-front"},
		Spec: appsv1.DeploymentSpec{Replicas: ptrInt32(5)}}
	owned := replicaSet("front-7d9f", 5)
	yes := true
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "front", UID: "uid-front", Controller: &yes}}
	jobPod := readyWeb("job-1").Obj()
	jobPod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "j", UID: "uid-j", Controller: &yes}}
	scales := NewControllers(nil, []*appsv1.Deployment{deployment}, []*appsv1.ReplicaSet{replicaSet("rs", 4), owned}, []*appsv1.StatefulSet{statefulSet("db", 3)})

	tests := map[string]struct {
		pdb           *policyv1.PodDisruptionBudget
		pods          []*v1.Pod
		wantExpected  int32
		wantHealthy   int32
		wantDesired   int32
		wantAllowed   int32
		wantUnmanaged []string
		wantErr       error
	}{
		"int minAvailable, 4 ready": {
			pdb:  budget(ptrInt(3), nil),
			pods: []*v1.Pod{readyWeb("a").Obj(), readyWeb("b").Obj(), readyWeb("c").Obj(), readyWeb("d").Obj()},
			// The pods selected are expected, whatever their controllers.
			wantExpected: 4, wantHealthy: 4, wantDesired: 3, wantAllowed: 1,
		},
		"int minAvailable, not ready pods count as expected, not healthy": {
			pdb:          budget(ptrInt(2), nil),
			pods:         []*v1.Pod{readyWeb("a").Obj(), readyWeb("b").Obj(), web("c").Ready(false).Obj(), web("d").Obj()},
			wantExpected: 4, wantHealthy: 2, wantDesired: 2, wantAllowed: 0,
		},
		"pods being deleted are not healthy": {
			pdb:          budget(ptrInt(1), nil),
			pods:         []*v1.Pod{readyWeb("a").Obj(), readyWeb("b").Terminating().Obj(), readyWeb("c").TerminatingByPreemption().Obj()},
			wantExpected: 3, wantHealthy: 1, wantDesired: 1, wantAllowed: 0,
		},
		"no pods: nothing expected, nothing allowed": {
			pdb:         budget(ptrInt(0), nil),
			wantAllowed: 0,
		},
		"other namespaces and labels are not selected": {
			pdb:          budget(ptrInt(0), nil),
			pods:         []*v1.Pod{readyWeb("a").Obj(), rt.Pod("other", "b").Label("app", "web").Ready(true).Obj(), rt.Pod("shop", "c").Label("app", "db").Ready(true).Obj()},
			wantExpected: 1, wantHealthy: 1, wantAllowed: 1,
		},
		"percent minAvailable against the ReplicaSet's scale": {
			// 50% of 4 replicas, rounded up: 2; 3 ready of the 4.
			pdb:          budget(ptrPct("50%"), nil),
			pods:         []*v1.Pod{rsPod("a", "rs").Obj(), rsPod("b", "rs").Obj(), rsPod("c", "rs").Obj(), web("d").ControlledBy(replicaSet("rs", 4)).Obj()},
			wantExpected: 4, wantHealthy: 3, wantDesired: 2, wantAllowed: 1,
		},
		"percent minAvailable rounds up": {
			// 34% of 3: 1.02, rounded up to 2.
			pdb:          budget(ptrPct("34%"), nil),
			pods:         []*v1.Pod{stsPod("db-0").Obj(), stsPod("db-1").Obj(), stsPod("db-2").Obj()},
			wantExpected: 3, wantHealthy: 3, wantDesired: 2, wantAllowed: 1,
		},
		"a Deployment's pods count its replicas, not its ReplicaSet's": {
			pdb:          budget(nil, ptrInt(1)),
			pods:         []*v1.Pod{readyWeb("a").ControlledBy(owned).Obj(), readyWeb("b").ControlledBy(owned).Obj()},
			wantExpected: 5, wantHealthy: 2, wantDesired: 4, wantAllowed: 0,
		},
		"int maxUnavailable": {
			pdb:          budget(nil, ptrInt(1)),
			pods:         []*v1.Pod{stsPod("db-0").Obj(), stsPod("db-1").Obj(), stsPod("db-2").Obj()},
			wantExpected: 3, wantHealthy: 3, wantDesired: 2, wantAllowed: 1,
		},
		"percent maxUnavailable rounds up": {
			// 10% of 3 rounds up to 1 unavailable: 2 desired.
			pdb:          budget(nil, ptrPct("10%")),
			pods:         []*v1.Pod{stsPod("db-0").Obj(), stsPod("db-1").Obj(), stsPod("db-2").Obj()},
			wantExpected: 3, wantHealthy: 3, wantDesired: 2, wantAllowed: 1,
		},
		"maxUnavailable over unmanaged pods: nothing expected": {
			pdb:          budget(nil, ptrInt(1)),
			pods:         []*v1.Pod{readyWeb("a").Obj(), readyWeb("b").Obj()},
			wantExpected: 0, wantHealthy: 2, wantDesired: 0, wantAllowed: 0,
			wantUnmanaged: []string{"a", "b"},
		},
		"unmanaged pods beside managed ones count as healthy, not expected": {
			pdb:          budget(nil, ptrInt(1)),
			pods:         []*v1.Pod{stsPod("db-0").Obj(), stsPod("db-1").Obj(), stsPod("db-2").Obj(), readyWeb("extra").Obj()},
			wantExpected: 3, wantHealthy: 4, wantDesired: 2, wantAllowed: 2,
			wantUnmanaged: []string{"extra"},
		},
		"a controller without a scale fails safe": {
			pdb:     budget(ptrPct("50%"), nil),
			pods:    []*v1.Pod{jobPod},
			wantErr: ErrNoController,
		},
		"a controller missing from the snapshot fails safe": {
			pdb:     budget(nil, ptrInt(1)),
			pods:    []*v1.Pod{readyWeb("a").ControlledBy(replicaSet("gone", 2)).Obj()},
			wantErr: ErrNoController,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before := tc.pdb.DeepCopy()
			r := Sync(tc.pdb, tc.pods, scales, now)
			if diff := cmp.Diff(before, tc.pdb); diff != "" {
				t.Errorf("Sync changed the budget (-before,+after):\n%s", diff)
			}
			if !errors.Is(r.Err, tc.wantErr) {
				t.Fatalf("Err = %v, want %v", r.Err, tc.wantErr)
			}
			st := r.Status
			got := [4]int32{st.ExpectedPods, st.CurrentHealthy, st.DesiredHealthy, st.DisruptionsAllowed}
			want := [4]int32{tc.wantExpected, tc.wantHealthy, tc.wantDesired, tc.wantAllowed}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("expected, healthy, desired, allowed (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantUnmanaged, r.Unmanaged); diff != "" {
				t.Errorf("Unmanaged (-want,+got):\n%s", diff)
			}
			wantCond := metav1.Condition{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionFalse, Reason: policyv1.InsufficientPodsReason, ObservedGeneration: 1}
			switch {
			case tc.wantErr != nil:
				wantCond.Reason, wantCond.Message, wantCond.ObservedGeneration = policyv1.SyncFailedReason, r.Err.Error(), 0
			case tc.wantAllowed > 0:
				wantCond.Status, wantCond.Reason = metav1.ConditionTrue, policyv1.SufficientPodsReason
			}
			wantCond.LastTransitionTime = metav1.NewTime(now)
			if diff := cmp.Diff([]metav1.Condition{wantCond}, st.Conditions); diff != "" {
				t.Errorf("conditions (-want,+got):\n%s", diff)
			}
			if tc.wantErr == nil && st.ObservedGeneration != 1 {
				t.Errorf("ObservedGeneration = %d, want the budget's generation 1", st.ObservedGeneration)
			}
		})
	}
}

// TestSyncDisruptedPods: a pod the eviction API recorded as disrupted is
// not healthy until DeletionTimeout has passed, and the budget is to be
// synced again then.
func TestSyncDisruptedPods(t *testing.T) {
	pdb := budget(ptrInt(1), nil)
	evicted := metav1.NewTime(now.Add(-time.Minute))
	stale := metav1.NewTime(now.Add(-3 * time.Minute))
	pdb.Status.DisruptedPods = map[string]metav1.Time{"a": evicted, "b": stale, "gone": evicted}
	pods := []*v1.Pod{readyWeb("a").Obj(), readyWeb("b").Obj(), readyWeb("c").Obj()}
	r := Sync(pdb, pods, nil, now)
	if diff := cmp.Diff(map[string]metav1.Time{"a": evicted}, r.Status.DisruptedPods); diff != "" {
		t.Errorf("DisruptedPods (-want,+got):\n%s", diff)
	}
	if r.Status.CurrentHealthy != 2 || r.Status.DisruptionsAllowed != 1 {
		t.Errorf("healthy %d, allowed %d; want 2 and 1", r.Status.CurrentHealthy, r.Status.DisruptionsAllowed)
	}
	if want := evicted.Add(DeletionTimeout); !r.Recheck.Equal(want) {
		t.Errorf("Recheck = %v, want %v", r.Recheck, want)
	}
}

// TestComplete: only budgets without a status are computed, each with
// one warning line.
func TestComplete(t *testing.T) {
	unset := budget(ptrInt(3), nil)
	given := budget(ptrInt(3), nil)
	given.Name = "given"
	given.Status.DisruptionsAllowed = 5 // written by hand: kept
	pods := []*v1.Pod{readyWeb("a").Obj(), readyWeb("b").Obj(), readyWeb("c").Obj(), readyWeb("d").Obj()}
	if !NeedsPods([]*policyv1.PodDisruptionBudget{unset, given}) || NeedsPods([]*policyv1.PodDisruptionBudget{given}) {
		t.Error("NeedsPods is not true exactly when a budget has no status")
	}
	warnings := Complete([]*policyv1.PodDisruptionBudget{unset, given}, pods, nil, now)
	want := []string{"PodDisruptionBudget shop/web has no status: computed as the disruption controller would from the snapshot's pods: 4 expected, 4 healthy (Ready), 3 desired: 1 disruption allowed"}
	if diff := cmp.Diff(want, warnings); diff != "" {
		t.Errorf("warnings (-want,+got):\n%s", diff)
	}
	if unset.Status.DisruptionsAllowed != 1 || given.Status.DisruptionsAllowed != 5 {
		t.Errorf("allowed: computed %d (want 1), given %d (want 5)", unset.Status.DisruptionsAllowed, given.Status.DisruptionsAllowed)
	}
	if Unset(unset) {
		t.Error("a computed budget still reads as without status")
	}
}

func ptrInt32(i int32) *int32 { return &i }
