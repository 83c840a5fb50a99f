package snapshot_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

func TestDefaultSelector(t *testing.T) {
	web := map[string]string{"app": "web"}
	rs := rt.ReplicaSet("default", "web-1", map[string]string{"app": "web", "pod-template-hash": "1"})
	ss := rt.StatefulSet("default", "db", map[string]string{"app": "db"})
	rc := rt.ReplicationController("default", "legacy", map[string]string{"app": "legacy", "tier": "x"})
	exprRS := rt.ReplicaSet("default", "expr", nil)
	exprRS.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "api"}}}}
	nilRS := rt.ReplicaSet("default", "nil", nil)
	nilRS.Spec.Selector = nil
	tests := map[string]struct {
		objs snapshot.SelectorObjects
		pod  *v1.Pod
		// want is the selector's String(); "" is empty: no default constraints.
		want string
	}{
		"nothing selects the pod": {
			pod: rt.Pod("default", "p").Label("app", "web").Obj(),
		},
		"a Service selecting the pod": {
			objs: snapshot.SelectorObjects{Services: []*v1.Service{rt.Service("default", "s", web)}},
			pod:  rt.Pod("default", "p").Label("app", "web").Label("v", "1").Obj(),
			want: "app=web",
		},
		"Services selecting the pod merge, others do not count": {
			objs: snapshot.SelectorObjects{Services: []*v1.Service{
				rt.Service("default", "s1", web),
				rt.Service("default", "s2", map[string]string{"v": "1"}),
				rt.Service("default", "s3", map[string]string{"app": "db"}),
				rt.Service("other", "s4", map[string]string{"team": "a"}),
				rt.Service("default", "headless", nil),
			}},
			pod:  rt.Pod("default", "p").Label("app", "web").Label("v", "1").Label("team", "a").Obj(),
			want: "app=web,v=1",
		},
		"a Service with an empty selector selects the pod and adds nothing": {
			objs: snapshot.SelectorObjects{Services: []*v1.Service{rt.Service("default", "all", map[string]string{})}},
			pod:  rt.Pod("default", "p").Label("app", "web").Obj(),
		},
		"the controlling ReplicaSet, without a Service": {
			objs: snapshot.SelectorObjects{ReplicaSets: []*appsv1.ReplicaSet{rs}},
			pod:  rt.Pod("default", "p").Label("app", "web").Label("pod-template-hash", "1").ControlledBy(rs).Obj(),
			want: "app=web,pod-template-hash=1",
		},
		"the controlling ReplicaSet's requirements are added to the Services'": {
			objs: snapshot.SelectorObjects{Services: []*v1.Service{rt.Service("default", "s", web)}, ReplicaSets: []*appsv1.ReplicaSet{rs}},
			pod:  rt.Pod("default", "p").Label("app", "web").Label("pod-template-hash", "1").ControlledBy(rs).Obj(),
			want: "app=web,app=web,pod-template-hash=1",
		},
		"the controller's selector counts even when it does not match the pod": {
			objs: snapshot.SelectorObjects{ReplicaSets: []*appsv1.ReplicaSet{rs}},
			pod:  rt.Pod("default", "p").Label("app", "other").ControlledBy(rs).Obj(),
			want: "app=web,pod-template-hash=1",
		},
		"a ReplicaSet that does not control the pod does not count": {
			objs: snapshot.SelectorObjects{ReplicaSets: []*appsv1.ReplicaSet{rs}},
			pod:  rt.Pod("default", "p").Label("app", "web").Label("pod-template-hash", "1").Obj(),
		},
		"a controller the snapshot does not hold": {
			pod: rt.Pod("default", "p").Label("app", "web").ControlledBy(rs).Obj(),
		},
		"a controller of another apiVersion": {
			objs: snapshot.SelectorObjects{ReplicaSets: []*appsv1.ReplicaSet{rs}},
			pod: func() *v1.Pod {
				p := rt.Pod("default", "p").Label("app", "web").ControlledBy(rs).Obj()
				p.OwnerReferences[0].APIVersion = "apps/v1beta2"
				return p
			}(),
		},
		"an owner that is not the controller": {
			objs: snapshot.SelectorObjects{ReplicaSets: []*appsv1.ReplicaSet{rs}},
			pod: func() *v1.Pod {
				p := rt.Pod("default", "p").Label("app", "web").ControlledBy(rs).Obj()
				p.OwnerReferences[0].Controller = nil
				return p
			}(),
		},
		"a StatefulSet's expressions": {
			objs: snapshot.SelectorObjects{StatefulSets: []*appsv1.StatefulSet{ss}, ReplicaSets: []*appsv1.ReplicaSet{exprRS}},
			pod:  rt.Pod("default", "p").Label("app", "api").ControlledBy(exprRS).Obj(),
			want: "app in (api,web)",
		},
		"a StatefulSet": {
			objs: snapshot.SelectorObjects{StatefulSets: []*appsv1.StatefulSet{ss}},
			pod:  rt.Pod("default", "db-0").Label("app", "db").ControlledBy(ss).Obj(),
			want: "app=db",
		},
		"a ReplicaSet without a selector adds nothing": {
			objs: snapshot.SelectorObjects{Services: []*v1.Service{rt.Service("default", "s", web)}, ReplicaSets: []*appsv1.ReplicaSet{nilRS}},
			pod:  rt.Pod("default", "p").Label("app", "web").ControlledBy(nilRS).Obj(),
			want: "app=web",
		},
		"a ReplicationController's selector is merged as labels, over the Services'": {
			objs: snapshot.SelectorObjects{
				Services:               []*v1.Service{rt.Service("default", "s", map[string]string{"app": "web"})},
				ReplicationControllers: []*v1.ReplicationController{rc},
			},
			pod:  rt.Pod("default", "p").Label("app", "web").ControlledBy(rc).Obj(),
			want: "app=legacy,tier=x",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			snap, err := snapshot.New(snapshot.Objects{Selectors: tc.objs})
			if err != nil {
				t.Fatal(err)
			}
			got := snap.DefaultSelector(tc.pod)
			if diff := cmp.Diff(tc.want, got.String()); diff != "" {
				t.Errorf("selector (-want,+got):\n%s", diff)
			}
			if got.Empty() != (tc.want == "") {
				t.Errorf("Empty() = %v for %q", got.Empty(), got.String())
			}
		})
	}
}

// TestSelectorsMaintained sets, replaces and removes each kind as the
// scheduler's informers do.
func TestSelectorsMaintained(t *testing.T) {
	snap := snapshot.Empty()
	rs := rt.ReplicaSet("default", "web-1", map[string]string{"app": "web"})
	ss := rt.StatefulSet("default", "db", map[string]string{"app": "db"})
	rc := rt.ReplicationController("default", "legacy", map[string]string{"app": "legacy"})
	steps := []struct {
		do   func()
		pod  *v1.Pod
		want string
	}{
		{func() { snap.SetService(rt.Service("", "s", map[string]string{"app": "web"})) }, rt.Pod("default", "p").Label("app", "web").Obj(), "app=web"},
		{func() { snap.SetService(rt.Service("default", "s", map[string]string{"app": "db"})) }, rt.Pod("default", "p").Label("app", "web").Obj(), ""},
		{func() { snap.SetService(rt.Service("default", "s", nil)) }, rt.Pod("default", "p").Label("app", "db").Obj(), ""},
		{func() { snap.SetReplicaSet(rs) }, rt.Pod("default", "p").ControlledBy(rs).Obj(), "app=web"},
		{func() { snap.RemoveReplicaSet("default", "web-1") }, rt.Pod("default", "p").ControlledBy(rs).Obj(), ""},
		{func() { snap.SetStatefulSet(ss) }, rt.Pod("default", "p").ControlledBy(ss).Obj(), "app=db"},
		{func() { snap.RemoveStatefulSet("default", "db") }, rt.Pod("default", "p").ControlledBy(ss).Obj(), ""},
		{func() { snap.SetReplicationController(rc) }, rt.Pod("default", "p").ControlledBy(rc).Obj(), "app=legacy"},
		{func() { snap.RemoveReplicationController("default", "legacy") }, rt.Pod("default", "p").ControlledBy(rc).Obj(), ""},
		{func() {
			snap.SetService(rt.Service("default", "s", map[string]string{"app": "web"}))
			snap.RemoveService("default", "s")
		}, rt.Pod("default", "p").Label("app", "web").Obj(), ""},
	}
	for i, st := range steps {
		st.do()
		if got := snap.DefaultSelector(st.pod).String(); got != st.want {
			t.Errorf("step %d: selector %q, want %q", i, got, st.want)
		}
	}
}

func TestSelectorsDuplicates(t *testing.T) {
	svc := rt.Service("default", "s", map[string]string{"app": "web"})
	rs := rt.ReplicaSet("default", "web", map[string]string{"app": "web"})
	ss := rt.StatefulSet("default", "web", map[string]string{"app": "web"})
	for name, objs := range map[string]snapshot.SelectorObjects{
		"Service":    {Services: []*v1.Service{svc, rt.Service("", "s", nil)}},
		"ReplicaSet": {ReplicaSets: []*appsv1.ReplicaSet{rs, rs}},
	} {
		_, err := snapshot.New(snapshot.Objects{Selectors: objs})
		var oe *snapshot.ObjectError
		if !errors.As(err, &oe) || oe.Kind != name || oe.Detail != "duplicate object" {
			t.Errorf("%s: error %v, want a duplicate %s", name, err, name)
		}
	}
	// Kinds do not clash: a Service, a ReplicaSet and a StatefulSet may share a name.
	if _, err := snapshot.New(snapshot.Objects{Selectors: snapshot.SelectorObjects{
		Services: []*v1.Service{rt.Service("default", "web", nil)}, ReplicaSets: []*appsv1.ReplicaSet{rs}, StatefulSets: []*appsv1.StatefulSet{ss}}}); err != nil {
		t.Errorf("distinct kinds of one name: %v", err)
	}
}
