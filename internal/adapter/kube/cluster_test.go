package kube

import (
	"context"
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"

	rt "github.com/reprieve/reprieve/internal/reprievetest"
	"github.com/reprieve/reprieve/internal/scheduler"
)

func actions(c *fake.Clientset) []string {
	var out []string
	for _, a := range c.Actions() {
		s := a.GetVerb() + " " + a.GetResource().Resource
		if sub := a.GetSubresource(); sub != "" {
			s += "/" + sub
		}
		out = append(out, s)
	}
	return out
}

func TestPreemptPatchesConditionBeforeDeleting(t *testing.T) {
	victim := rt.Pod("ns", "victim").On("n1").Obj()
	client := fake.NewClientset(victim)
	c := NewCluster(client, events.NewFakeRecorder(10))
	cond := v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonPreemptionByScheduler, Message: "reprieve: preempting to accommodate a higher priority pod"}
	if err := c.Preempt(context.Background(), victim, cond); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(actions(client), ", ")
	if got != "patch pods/status, delete pods" {
		t.Fatalf("calls = %s, want the status patch before the delete", got)
	}
	patch := client.Actions()[0].(clienttesting.PatchAction)
	if !strings.Contains(string(patch.GetPatch()), `"reason":"PreemptionByScheduler"`) || !strings.Contains(string(patch.GetPatch()), `"type":"DisruptionTarget"`) {
		t.Errorf("patch %s lacks the DisruptionTarget condition", patch.GetPatch())
	}
	del := client.Actions()[1].(clienttesting.DeleteAction)
	if pre := del.GetDeleteOptions().Preconditions; pre == nil || pre.UID == nil || *pre.UID != victim.UID {
		t.Errorf("delete without a UID precondition: %+v", del.GetDeleteOptions())
	}
}

func TestPreemptToleratesVictimsAlreadyGone(t *testing.T) {
	client := fake.NewClientset()
	c := NewCluster(client, events.NewFakeRecorder(10))
	if err := c.Preempt(context.Background(), rt.Pod("ns", "gone").On("n1").Obj(), v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue}); !errors.Is(err, scheduler.ErrVictimGone) {
		t.Errorf("preempting a victim already gone: %v, want ErrVictimGone", err)
	}
}

func TestPreemptDeletesAVictimOnce(t *testing.T) {
	cond := v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonPreemptionByScheduler}
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		// failFirst makes the first delete fail with a server error.
		failFirst bool
		wantCalls string
		wantGone  bool
	}{
		{name: "deleted, then chosen again before the watch shows it terminating", wantCalls: "patch pods/status, delete pods", wantGone: true},
		{name: "first delete failed: the second attempt deletes", failFirst: true, wantCalls: "patch pods/status, delete pods, patch pods/status, delete pods"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			victim := rt.Pod("ns", "victim").On("n1").Obj()
			client := fake.NewClientset(victim)
			deletes := 0
			// A graceful delete leaves the pod in place (terminating).
			client.PrependReactor("delete", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
				deletes++
				if tc.failFirst && deletes == 1 {
					return true, nil, boom
				}
				return true, nil, nil
			})
			c := NewCluster(client, events.NewFakeRecorder(10))
			err := c.Preempt(context.Background(), victim, cond)
			if tc.failFirst != errors.Is(err, boom) {
				t.Fatalf("first Preempt: %v", err)
			}
			// The scheduler's cached victim is unchanged: no deletionTimestamp.
			err = c.Preempt(context.Background(), victim, cond)
			if got := errors.Is(err, scheduler.ErrVictimGone); got != tc.wantGone {
				t.Errorf("second Preempt: %v, want ErrVictimGone %v", err, tc.wantGone)
			}
			if got := strings.Join(actions(client), ", "); got != tc.wantCalls {
				t.Errorf("calls = %s, want %s", got, tc.wantCalls)
			}
		})
	}
}

func TestBindAndNomination(t *testing.T) {
	pod := rt.Pod("ns", "p").Obj()
	client := fake.NewClientset(pod)
	var bound string
	client.PrependReactor("create", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "binding" {
			bound = a.(clienttesting.CreateAction).GetObject().(*v1.Binding).Target.Name
			return true, nil, nil
		}
		return false, nil, nil
	})
	c := NewCluster(client, events.NewFakeRecorder(10))
	ctx := context.Background()
	if err := c.SetUnschedulable(ctx, pod, v1.PodReasonUnschedulable, "0/1 nodes are available", true, "n1"); err != nil {
		t.Fatal(err)
	}
	got, _ := client.CoreV1().Pods("ns").Get(ctx, "p", metav1.GetOptions{})
	if got.Status.NominatedNodeName != "n1" || len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Reason != v1.PodReasonUnschedulable {
		t.Errorf("status after SetUnschedulable = %+v", got.Status)
	}
	if err := c.ClearNominatedNode(ctx, got); err != nil {
		t.Fatal(err)
	}
	got, _ = client.CoreV1().Pods("ns").Get(ctx, "p", metav1.GetOptions{})
	if got.Status.NominatedNodeName != "" {
		t.Errorf("nomination not cleared: %q", got.Status.NominatedNodeName)
	}
	if err := c.Bind(ctx, pod, "n1"); err != nil || bound != "n1" {
		t.Errorf("bind: %v, bound to %q", err, bound)
	}
}
