package kube

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// pagedPods answers pod lists page by page as the API server does (limit,
// continue = the next index), expiring the first continue token when
// expireOnce is set.
type pagedPods struct {
	pods       []v1.Pod
	expireOnce bool
	requests   []metav1.ListOptions
}

func (p *pagedPods) react(a k8stesting.Action) (bool, runtime.Object, error) {
	opts := a.(k8stesting.ListActionImpl).ListOptions
	p.requests = append(p.requests, opts)
	start := 0
	if opts.Continue != "" {
		if p.expireOnce {
			p.expireOnce = false
			return true, nil, apierrors.NewResourceExpired("continue token expired")
		}
		start, _ = strconv.Atoi(opts.Continue)
	}
	end := len(p.pods)
	if opts.Limit > 0 {
		end = min(start+int(opts.Limit), end)
	}
	l := &v1.PodList{Items: append([]v1.Pod(nil), p.pods[start:end]...)}
	if end < len(p.pods) {
		l.Continue = strconv.Itoa(end)
	}
	return true, l, nil
}

func TestListPages(t *testing.T) {
	var nodes []runtime.Object
	for i := range 3 {
		nodes = append(nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i)}})
	}
	var pods []v1.Pod
	for i := range 1234 {
		pods = append(pods, v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%04d", i), Namespace: "default",
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}}}, Spec: v1.PodSpec{NodeName: fmt.Sprintf("n%d", i%4)}})
	}
	tests := map[string]struct {
		chunk      int64
		expireOnce bool
		wantCalls  int
	}{
		"kubectl's default chunk": {chunk: 500, wantCalls: 3},
		"small chunks":            {chunk: 100, wantCalls: 13},
		"no chunking":             {chunk: 0, wantCalls: 1},
		"continue token expired":  {chunk: 500, expireOnce: true, wantCalls: 3},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			client := fake.NewClientset(nodes...)
			paged := &pagedPods{pods: pods, expireOnce: tc.expireOnce}
			client.PrependReactor("list", "pods", paged.react)
			var lastPods int
			objs, warnings, err := ListWith(context.Background(), client, ListOptions{ChunkSize: tc.chunk, Progress: func(_, pods int) { lastPods = max(lastPods, pods) }})
			if err != nil {
				t.Fatal(err)
			}
			if len(paged.requests) != tc.wantCalls {
				t.Errorf("%d pod list calls, want %d", len(paged.requests), tc.wantCalls)
			}
			// Every fourth pod names node n3, which does not exist.
			if len(objs.Pods) != 1234-308 || len(warnings) != 308 || !strings.Contains(warnings[0], `"n3", which no longer exists`) {
				t.Errorf("%d pods, %d warnings (%q), want %d and 308", len(objs.Pods), len(warnings), warnings[:min(1, len(warnings))], 1234-308)
			}
			for i, p := range objs.Pods[1:] {
				if p.Name <= objs.Pods[i].Name {
					t.Fatalf("pods out of the server's order at %d: %s after %s", i+1, p.Name, objs.Pods[i].Name)
				}
			}
			for _, p := range objs.Pods {
				if p.ManagedFields != nil {
					t.Fatalf("pod %s kept its managed fields", p.Name)
				}
			}
			if len(objs.Nodes) != 3 || lastPods == 0 {
				t.Errorf("%d nodes, progress saw %d pods", len(objs.Nodes), lastPods)
			}
		})
	}
}

func TestListErrorNamesTheKind(t *testing.T) {
	client := fake.NewClientset()
	client.PrependReactor("list", "persistentvolumeclaims", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "persistentvolumeclaims"}, "", fmt.Errorf("no"))
	})
	client.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", fmt.Errorf("no"))
	})
	_, _, err := List(context.Background(), client)
	if err == nil || !strings.HasPrefix(err.Error(), "listing p") {
		t.Fatalf("error %v, want one naming the kind listed", err)
	}
}

// TestListSelectors: the Services, ReplicationControllers, ReplicaSets and
// StatefulSets whose selectors PodTopologySpread's default constraints
// take are listed, without managed fields; a kind that cannot be listed is
// skipped with a warning.
func TestListSelectors(t *testing.T) {
	mf := []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	client := fake.NewClientset(
		&v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "web", ManagedFields: mf}, Spec: v1.ServiceSpec{Selector: map[string]string{"app": "web"}}},
		&v1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "rc"}},
		&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "rs"}},
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "ss"}},
	)
	objs, warnings, err := List(context.Background(), client)
	if err != nil {
		t.Fatal(err)
	}
	sels := objs.Selectors
	if len(warnings) > 0 || len(sels.Services) != 1 || len(sels.ReplicationControllers) != 1 || len(sels.ReplicaSets) != 1 || len(sels.StatefulSets) != 1 {
		t.Fatalf("listed %d Services, %d ReplicationControllers, %d ReplicaSets, %d StatefulSets, warnings %q; want one of each and none",
			len(sels.Services), len(sels.ReplicationControllers), len(sels.ReplicaSets), len(sels.StatefulSets), warnings)
	}
	if sels.Services[0].ManagedFields != nil {
		t.Error("managed fields kept")
	}

	client.PrependReactor("list", "replicasets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "replicasets"}, "", fmt.Errorf("denied"))
	})
	objs, warnings, err = List(context.Background(), client)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs.Selectors.ReplicaSets) != 0 || len(objs.Selectors.Services) != 1 || len(warnings) != 1 || !strings.HasPrefix(warnings[0], "cannot list replicasets") {
		t.Errorf("forbidden ReplicaSets: %d listed, warnings %q", len(objs.Selectors.ReplicaSets), warnings)
	}
}
