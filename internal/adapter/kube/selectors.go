package kube

import (
	"context"
	"fmt"
	"slices"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
	"github.com/reprieve/reprieve/internal/scheduler"
)

// listSelectors lists the objects whose selectors give PodTopologySpread's
// default constraints theirs (Services, ReplicationControllers, ReplicaSets,
// StatefulSets), cluster-wide, concurrently. A kind that cannot be listed
// is left out with a warning: the default constraints then miss its
// selectors.
func listSelectors(ctx context.Context, client kubernetes.Interface, objs *snapshot.SelectorObjects) []string {
	opts := metav1.ListOptions{}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		warnings []string
	)
	run := func(resource string, list func() error) {
		wg.Go(func() {
			if err := list(); err != nil {
				mu.Lock()
				defer mu.Unlock()
				warnings = append(warnings, fmt.Sprintf("cannot list %s (%v); PodTopologySpread's default constraints will miss their selectors", resource, err))
			}
		})
	}
	run("services", func() error {
		l, err := client.CoreV1().Services(metav1.NamespaceAll).List(ctx, opts)
		if err == nil {
			objs.Services = pointers(l.Items)
		}
		return err
	})
	run("replicationcontrollers", func() error {
		l, err := client.CoreV1().ReplicationControllers(metav1.NamespaceAll).List(ctx, opts)
		if err == nil {
			objs.ReplicationControllers = pointers(l.Items)
		}
		return err
	})
	run("replicasets", func() error {
		l, err := client.AppsV1().ReplicaSets(metav1.NamespaceAll).List(ctx, opts)
		if err == nil {
			objs.ReplicaSets = pointers(l.Items)
		}
		return err
	})
	run("statefulsets", func() error {
		l, err := client.AppsV1().StatefulSets(metav1.NamespaceAll).List(ctx, opts)
		if err == nil {
			objs.StatefulSets = pointers(l.Items)
		}
		return err
	})
	wg.Wait()
	// In a fixed order, whichever listing failed first.
	slices.Sort(warnings)
	return warnings
}

// pointers returns pointers to items, without their managed fields.
func pointers[T any, P interface {
	*T
	metav1.Object
}](items []T) []P {
	out := make([]P, len(items))
	for i := range items {
		p := P(&items[i])
		p.SetManagedFields(nil)
		out[i] = p
	}
	return out
}

// selectorHandlers are the informers of the objects whose selectors give
// PodTopologySpread's default constraints theirs, as kube-scheduler's
// PodTopologySpread registers them.
func selectorHandlers(f informers.SharedInformerFactory, s *scheduler.Live) []storageHandler {
	core, apps := f.Core().V1(), f.Apps().V1()
	return []storageHandler{
		{core.Services().Informer(), selectorFuncs(s,
			(*snapshot.Snapshot).SetService,
			func(snap *snapshot.Snapshot, o *v1.Service) { snap.RemoveService(o.Namespace, o.Name) })},
		{core.ReplicationControllers().Informer(), selectorFuncs(s,
			(*snapshot.Snapshot).SetReplicationController,
			func(snap *snapshot.Snapshot, o *v1.ReplicationController) {
				snap.RemoveReplicationController(o.Namespace, o.Name)
			})},
		{apps.ReplicaSets().Informer(), selectorFuncs(s,
			(*snapshot.Snapshot).SetReplicaSet,
			func(snap *snapshot.Snapshot, o *appsv1.ReplicaSet) { snap.RemoveReplicaSet(o.Namespace, o.Name) })},
		{apps.StatefulSets().Informer(), selectorFuncs(s,
			(*snapshot.Snapshot).SetStatefulSet,
			func(snap *snapshot.Snapshot, o *appsv1.StatefulSet) { snap.RemoveStatefulSet(o.Namespace, o.Name) })},
	}
}

// selectorFuncs builds the handler of one kind from its set and remove
// operations on the snapshot.
func selectorFuncs[T any](s *scheduler.Live, set func(*snapshot.Snapshot, T), remove func(*snapshot.Snapshot, T)) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			if t, ok := o.(T); ok {
				s.OnSelector(func(snap *snapshot.Snapshot) { set(snap, t) })
			}
		},
		UpdateFunc: func(_, o any) {
			if t, ok := o.(T); ok {
				s.OnSelector(func(snap *snapshot.Snapshot) { set(snap, t) })
			}
		},
		DeleteFunc: func(o any) {
			if t, ok := unwrap[T](o); ok {
				s.OnSelector(func(snap *snapshot.Snapshot) { remove(snap, t) })
			}
		},
	}
}
