package kube

import (
	"context"
	"strings"
	"testing"

	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"

	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	"github.com/reprieve/reprieve/internal/scheduler"
)

// TestListGroups: the pod group kinds are listed only with the gates that
// bring them in; a kind the API server does not serve has no objects and
// no warning, one it refuses is a warning.
func TestListGroups(t *testing.T) {
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "train"}}
	cpg := &schedulingv1alpha3.CompositePodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "job"}}
	workload := profile.Features{GenericWorkload: true}
	composite := profile.Features{GenericWorkload: true, CompositePodGroup: true}
	refuse := func(resource string, err error) func(*fake.Clientset) {
		return func(c *fake.Clientset) {
			c.PrependReactor("list", resource, func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, err })
		}
	}
	gr := schema.GroupResource{Group: "scheduling.k8s.io", Resource: "podgroups"}
	tests := map[string]struct {
		features       profile.Features
		react          func(*fake.Clientset)
		wantPG, wantCG int
		wantWarning    string
	}{
		"no gate: none listed":         {},
		"GenericWorkload: PodGroups":   {features: workload, wantPG: 1},
		"CompositePodGroup: both":      {features: composite, wantPG: 1, wantCG: 1},
		"not served: none, no warning": {features: workload, react: refuse("podgroups", apierrors.NewNotFound(gr, ""))},
		"refused: a warning":           {features: workload, react: refuse("podgroups", apierrors.NewForbidden(gr, "", nil)), wantWarning: "cannot list podgroups"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			client := fake.NewClientset(pg, cpg)
			if tc.react != nil {
				tc.react(client)
			}
			var objs snapshot.Objects
			warnings := listGroups(context.Background(), client, &objs, tc.features)
			if len(objs.PodGroups) != tc.wantPG || len(objs.CompositePodGroups) != tc.wantCG {
				t.Errorf("listed %d PodGroups, %d CompositePodGroups; want %d, %d", len(objs.PodGroups), len(objs.CompositePodGroups), tc.wantPG, tc.wantCG)
			}
			if got := strings.Join(warnings, "\n"); (tc.wantWarning == "") != (got == "") || !strings.Contains(got, tc.wantWarning) {
				t.Errorf("warnings %q, want %q", got, tc.wantWarning)
			}
		})
	}
}

// TestGroupHandlers: the live scheduler watches the pod group kinds the
// gates bring in, except a kind the API server does not serve (its
// informer would never sync).
func TestGroupHandlers(t *testing.T) {
	gr := schema.GroupResource{Group: "scheduling.k8s.io", Resource: "compositepodgroups"}
	for name, tc := range map[string]struct {
		features    profile.Features
		notServed   bool
		wantWatched int
	}{
		"no gate":                       {},
		"GenericWorkload":               {features: profile.Features{GenericWorkload: true}, wantWatched: 1},
		"CompositePodGroup":             {features: profile.Features{GenericWorkload: true, CompositePodGroup: true}, wantWatched: 2},
		"CompositePodGroups not served": {features: profile.Features{GenericWorkload: true, CompositePodGroup: true}, notServed: true, wantWatched: 1},
	} {
		t.Run(name, func(t *testing.T) {
			client := fake.NewClientset()
			if tc.notServed {
				client.PrependReactor("list", "compositepodgroups", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewNotFound(gr, "")
				})
			}
			live := scheduler.NewLive(NewCluster(client, nil), clock.RealClock{}, scheduler.Options{})
			hs := groupHandlers(context.Background(), client, informers.NewSharedInformerFactory(client, 0), live, tc.features)
			if len(hs) != tc.wantWatched {
				t.Errorf("%d kinds watched, want %d", len(hs), tc.wantWatched)
			}
		})
	}
}
