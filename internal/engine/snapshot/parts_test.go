package snapshot_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// nonZero sets v, settable, to a value other than its zero: so a test can
// set each field of a struct in turn, whatever fields a later API version
// adds.
func nonZero(t *testing.T, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem())
		v.Set(m)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[metav1.Time]() {
			v.Set(reflect.ValueOf(metav1.Unix(1, 0)))
			return
		}
		nonZero(t, v.Field(0))
	default:
		t.Fatalf("no non-zero value for %s", v.Type())
	}
}

// TestPartStatusFields: a status with any one of v1.PodStatus's fields
// set, and with all of them, comes back whole from PartStatus, so a field
// that PartStatus neither holds nor checks for Rest (as one a new API
// version adds would be) fails here.
func TestPartStatusFields(t *testing.T) {
	typ := reflect.TypeFor[v1.PodStatus]()
	var all v1.PodStatus
	for i := range typ.NumField() {
		var st v1.PodStatus
		nonZero(t, reflect.ValueOf(&st).Elem().Field(i))
		nonZero(t, reflect.ValueOf(&all).Elem().Field(i))
		var parts snapshot.PartStatus
		parts.Set(&st)
		var got v1.PodStatus
		parts.Into(&got)
		if diff := cmp.Diff(st, got); diff != "" {
			t.Errorf("status with %s: (-want +got)\n%s", typ.Field(i).Name, diff)
		}
	}
	var parts snapshot.PartStatus
	parts.Set(&all)
	var got v1.PodStatus
	parts.Into(&got)
	if diff := cmp.Diff(all, got); diff != "" {
		t.Errorf("status with every field: (-want +got)\n%s", diff)
	}
	parts.Set(&v1.PodStatus{Phase: v1.PodRunning, StartTime: &metav1.Time{}, QOSClass: v1.PodQOSBurstable})
	if parts.Rest != nil {
		t.Errorf("a running pod's usual status keeps a Rest: %+v", parts.Rest)
	}
}

// TestSplitPod: a pod split into parts is the same pod made whole, but
// for the annotations and managed fields a lean pod drops, and the pods of
// one shape read their own fields through the snapshot.
func TestSplitPod(t *testing.T) {
	obj := rt.Pod("ns", "p").Label("app", "a").Priority(5).Req("1", "1Gi").On("n1").Obj()
	obj.UID, obj.ResourceVersion, obj.CreationTimestamp = "u1", "7", metav1.Unix(5, 0)
	obj.Annotations = map[string]string{"a": "b"}
	obj.Spec.Volumes = []v1.Volume{{Name: "v"}}
	obj.Status = v1.PodStatus{Phase: v1.PodRunning, StartTime: &metav1.Time{Time: metav1.Unix(9, 0).Time}, Message: "m",
		Conditions: []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue}}}
	want := obj.DeepCopy()
	want.Annotations = nil

	parts := snapshot.SplitPod(obj.DeepCopy())
	if diff := cmp.Diff(want, parts.Pod()); diff != "" {
		t.Errorf("made whole (-want +got)\n%s", diff)
	}
	if parts.Shape.Name != "" || parts.Shape.Spec.NodeName != "" || parts.Shape.Status.Phase != "" || parts.Shape.Spec.Volumes != nil {
		t.Errorf("the shape keeps a pod's own fields: %+v", parts.Shape)
	}

	other := *parts
	other.Name, other.UID, other.NodeName = "q", "u2", "n2"
	other.Status.Phase = v1.PodSucceeded
	snap, err := snapshot.New(snapshot.Objects{
		Nodes:    []*v1.Node{rt.Node("n1").CPU("4").Memory("8Gi").Obj(), rt.Node("n2").CPU("4").Memory("8Gi").Obj()},
		PodParts: []*snapshot.PodParts{parts, &other},
	})
	if err != nil {
		t.Fatal(err)
	}
	p, q := snap.Pod("ns/p"), snap.Pod("ns/q")
	if p == nil || q == nil {
		t.Fatalf("pods ns/p %v, ns/q %v", p, q)
	}
	if p.Name() != "p" || p.UID() != "u1" || p.NodeName() != "n1" || p.Phase() != v1.PodRunning || len(p.Volumes()) != 1 ||
		p.Priority != 5 || p.Requests.MilliCPU != 1000 || !p.StartTime().Equal(want.Status.StartTime) {
		t.Errorf("ns/p reads %s %s %s %s %d volumes, priority %d, %dm", p.Name(), p.UID(), p.NodeName(), p.Phase(), len(p.Volumes()), p.Priority, p.Requests.MilliCPU)
	}
	if q.Name() != "q" || q.UID() != "u2" || q.NodeName() != "n2" || !q.Finished() || q.Labels()["app"] != "a" ||
		q.Priority != 5 || q.Requests.MilliCPU != 1000 || q.Key != "ns/q" || q.LabelSetID() != p.LabelSetID() || q.Seq != 1 {
		t.Errorf("ns/q reads %s %s %s finished %v, labels %v, priority %d, %dm, key %s, label set %d (ns/p %d), seq %d",
			q.Name(), q.UID(), q.NodeName(), q.Finished(), q.Labels(), q.Priority, q.Requests.MilliCPU, q.Key, q.LabelSetID(), p.LabelSetID(), q.Seq)
	}
	if n := snap.Node("n1"); len(n.Pods) != 1 || n.Pods[0] != p {
		t.Errorf("n1 holds %v, want ns/p", n.Pods)
	}
	if n := snap.Node("n2"); len(n.Pods) != 0 {
		t.Errorf("n2 holds %v, want none (ns/q has finished)", n.Pods)
	}
	if diff := cmp.Diff(want, p.Obj()); diff != "" {
		t.Errorf("Obj (-want +got)\n%s", diff)
	}
}

// TestPartsOfManyShapes: pods in parts of more shapes than the caches by
// shape hold, interleaved so that a shape's pods lie far apart, read as the
// same pods whole, made on one goroutine or ahead of adding them on
// several.
func TestPartsOfManyShapes(t *testing.T) {
	const shapes, pods = 5000, 12000
	nodes := []*v1.Node{rt.Node("n1").CPU("1000").Memory("1Ti").Obj(), rt.Node("n2").CPU("1000").Memory("1Ti").Obj()}
	var whole []*v1.Pod
	var parts []*snapshot.PodParts
	firsts := make([]*snapshot.PodParts, shapes)
	for i := range pods {
		k := i * 7919 % shapes
		obj := rt.Pod("ns", fmt.Sprintf("p%d", i)).Label("app", fmt.Sprint("a", k)).Priority(int32(k%100)).
			Req(fmt.Sprintf("%dm", 1+k%500), "1Mi").On(fmt.Sprintf("n%d", 1+i%2)).StartedAt(i % 13).Obj()
		whole = append(whole, obj)
		p := snapshot.SplitPod(obj.DeepCopy())
		// The pods of a shape share it, as a lean load's do.
		if first := firsts[k]; first != nil {
			p.Shape = first.Shape
		} else {
			firsts[k] = p
		}
		parts = append(parts, p)
	}
	want, err := snapshot.New(snapshot.Objects{Nodes: nodes, Pods: whole})
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 2, 3} {
		got, err := snapshot.NewParallel(snapshot.Objects{Nodes: nodes, PodParts: parts}, workers)
		if err != nil {
			t.Fatalf("%d goroutines: %v", workers, err)
		}
		if len(got.Pods()) != pods {
			t.Fatalf("%d goroutines: %d pods, want %d", workers, len(got.Pods()), pods)
		}
		for _, w := range want.Pods() {
			g := got.Pod(w.Key)
			if g == nil || g.Seq != w.Seq || g.Priority != w.Priority || !cmp.Equal(g.Requests, w.Requests) || g.NodeName() != w.NodeName() ||
				!g.StartTime().Equal(w.StartTime()) || !cmp.Equal(got.LabelSets()[g.LabelSetID()].Labels, want.LabelSets()[w.LabelSetID()].Labels) {
				t.Fatalf("%d goroutines: pod %s differs: %+v, want %+v", workers, w.Key, g, w)
			}
		}
	}
}
