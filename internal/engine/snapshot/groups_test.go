package snapshot_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

func podGroup(name, class string, prio *int32, parent string) *schedulingv1beta1.PodGroup {
	g := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
	g.Spec.PriorityClassName, g.Spec.Priority = class, prio
	if parent != "" {
		g.Spec.ParentCompositePodGroupName = &parent
	}
	return g
}

func inGroup(p *v1.Pod, name string) *v1.Pod {
	p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &name}
	return p
}

// TestPodGroupPriority: a pod group's priority is resolved as the Priority
// admission plugin resolves it for pod groups.
func TestPodGroupPriority(t *testing.T) {
	seven := int32(7)
	tests := map[string]struct {
		classes []*schedulingv1.PriorityClass
		group   *schedulingv1beta1.PodGroup
		want    int32
		wantErr bool
	}{
		"explicit priority wins (already admitted)": {group: podGroup("g", "gold", &seven, ""), classes: []*schedulingv1.PriorityClass{rt.PriorityClass("gold", 1000, false, false)}, want: 7},
		"class value":                  {group: podGroup("g", "gold", nil, ""), classes: []*schedulingv1.PriorityClass{rt.PriorityClass("gold", 1000, false, false)}, want: 1000},
		"global default, lowest value": {group: podGroup("g", "", nil, ""), classes: []*schedulingv1.PriorityClass{rt.PriorityClass("d1", 20, true, false), rt.PriorityClass("d2", 10, true, false)}, want: 10},
		"no class, no default: 0":      {group: podGroup("g", "", nil, ""), want: 0},
		"built-in system class":        {group: podGroup("g", snapshot.SystemClusterCritical, nil, ""), want: 2000000000},
		"unknown class":                {group: podGroup("g", "bronze", nil, ""), wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			snap, err := snapshot.New(snapshot.Objects{PriorityClasses: tc.classes, PodGroups: []*schedulingv1beta1.PodGroup{tc.group}})
			if tc.wantErr {
				var oe *snapshot.ObjectError
				if !errors.As(err, &oe) || oe.Kind != "PodGroup" || oe.Field != "spec.priorityClassName" {
					t.Fatalf("err = %v, want an ObjectError on PodGroup spec.priorityClassName", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := snap.PodGroup("ns", "g").Priority; got != tc.want {
				t.Errorf("priority %d, want %d", got, tc.want)
			}
		})
	}
}

// TestPodGroupMembers: a group's scheduled pods are its bound, unfinished
// pods, kept up to date as pods come and go; children are linked to their
// parent whether it exists or not.
func TestPodGroupMembers(t *testing.T) {
	zero := int32(0)
	snap, err := snapshot.New(snapshot.Objects{
		Nodes: []*v1.Node{rt.Node("n1").Obj(), rt.Node("n2").Obj()},
		Pods: []*v1.Pod{
			inGroup(rt.Pod("ns", "a").On("n1").Obj(), "g"),
			inGroup(rt.Pod("ns", "b").On("n2").Obj(), "g"),
			inGroup(rt.Pod("ns", "pending").Obj(), "g"),
			inGroup(rt.Pod("ns", "done").On("n1").Phase(v1.PodSucceeded).Obj(), "g"),
			inGroup(rt.Pod("other", "elsewhere").On("n1").Obj(), "g"),
			inGroup(rt.Pod("ns", "orphan").On("n1").Obj(), "missing"),
		},
		PodGroups: []*schedulingv1beta1.PodGroup{podGroup("g", "", &zero, "top"), podGroup("h", "", &zero, "top")},
		CompositePodGroups: []*schedulingv1alpha3.CompositePodGroup{
			{ObjectMeta: metav1.ObjectMeta{Name: "mid", Namespace: "ns"}, Spec: schedulingv1alpha3.CompositePodGroupSpec{Priority: &zero, ParentCompositePodGroupName: func() *string { s := "top"; return &s }()}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	names := func(ps []*snapshot.Pod) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Key)
		}
		return out
	}
	if diff := cmp.Diff([]string{"ns/a", "ns/b"}, names(snap.ScheduledPods("ns", "g"))); diff != "" {
		t.Errorf("scheduled pods (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ns/orphan"}, names(snap.ScheduledPods("ns", "missing"))); diff != "" {
		t.Errorf("scheduled pods of a missing group (-want,+got):\n%s", diff)
	}
	var children []string
	for _, c := range snap.GroupChildren("ns", "top") {
		children = append(children, c.Kind.String()+"/"+c.Name)
	}
	if diff := cmp.Diff([]string{"PodGroup/g", "PodGroup/h", "CompositePodGroup/mid"}, children); diff != "" {
		t.Errorf("children of a CompositePodGroup that does not exist (-want,+got):\n%s", diff)
	}

	// The pending pod binds, a member leaves, a group goes.
	if _, err := snap.UpdatePod(inGroup(rt.Pod("ns", "pending").On("n2").Obj(), "g")); err != nil {
		t.Fatal(err)
	}
	snap.RemovePod("ns/a")
	snap.RemovePodGroup("ns", "h")
	if diff := cmp.Diff([]string{"ns/b", "ns/pending"}, names(snap.ScheduledPods("ns", "g"))); diff != "" {
		t.Errorf("scheduled pods after updates (-want,+got):\n%s", diff)
	}
	if got := len(snap.GroupChildren("ns", "top")); got != 2 {
		t.Errorf("%d children after removing one, want 2", got)
	}
}

func TestPodGroupValidation(t *testing.T) {
	zero := int32(0)
	_, err := snapshot.New(snapshot.Objects{PodGroups: []*schedulingv1beta1.PodGroup{podGroup("g", "", &zero, ""), podGroup("g", "", &zero, "")}})
	var oe *snapshot.ObjectError
	if !errors.As(err, &oe) || oe.Detail != "duplicate object" {
		t.Errorf("duplicate PodGroup: err = %v", err)
	}
	bad := rt.Pod("ns", "p").Obj()
	bad.Spec.SchedulingGroup = &v1.PodSchedulingGroup{}
	if _, err := snapshot.New(snapshot.Objects{Pods: []*v1.Pod{bad}}); !errors.As(err, &oe) {
		t.Errorf("schedulingGroup without podGroupName: err = %v", err)
	}
}
