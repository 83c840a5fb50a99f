package kube

import (
	"context"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/scheduler"
)

// Feed connects shared informers for nodes, pods, PodDisruptionBudgets,
// PriorityClasses, namespaces, the storage kinds (storageinformers.go), the
// Services, ReplicationControllers, ReplicaSets and StatefulSets whose
// selectors PodTopologySpread's default constraints take (selectors.go), the
// DRA kinds (drainformers.go) and the pod group kinds the feature gates
// bring in (groups.go) to the scheduler's event handlers, starts
// them and waits until the handlers have received every object of the
// initial lists. Finished pods are filtered out by the API server, as
// kube-scheduler does.
//
// The pod informer starts only once the nodes have been handed to the
// scheduler: the scheduler's cache drops a bound pod whose node it does not
// know yet, and the two watches are independent, so starting both at once
// lost running pods at random and let the scheduler overcommit their nodes.
func Feed(ctx context.Context, client kubernetes.Interface, s *scheduler.Live, features profile.Features) (informers.SharedInformerFactory, error) {
	f := informers.NewSharedInformerFactoryWithOptions(client, 0)
	podFactory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = "status.phase!=" + string(v1.PodSucceeded) + ",status.phase!=" + string(v1.PodFailed)
	}))
	podInformer := podFactory.Core().V1().Pods().Informer()
	handlers := []struct {
		inf cache.SharedIndexInformer
		h   cache.ResourceEventHandler
	}{
		{f.Core().V1().Nodes().Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { s.OnNodeAdd(o.(*v1.Node)) },
			UpdateFunc: func(_, o any) { s.OnNodeUpdate(o.(*v1.Node)) },
			DeleteFunc: func(o any) {
				if n, ok := unwrap[*v1.Node](o); ok {
					s.OnNodeDelete(n.Name)
				}
			},
		}},
		{podInformer, cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { s.OnPodAdd(o.(*v1.Pod)) },
			UpdateFunc: func(old, o any) { s.OnPodUpdate(old.(*v1.Pod), o.(*v1.Pod)) },
			DeleteFunc: func(o any) {
				if p, ok := unwrap[*v1.Pod](o); ok {
					s.OnPodDelete(p)
				}
			},
		}},
		{f.Policy().V1().PodDisruptionBudgets().Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { s.OnPDB(o.(*policyv1.PodDisruptionBudget)) },
			UpdateFunc: func(_, o any) { s.OnPDB(o.(*policyv1.PodDisruptionBudget)) },
			DeleteFunc: func(o any) {
				if p, ok := unwrap[*policyv1.PodDisruptionBudget](o); ok {
					s.OnPDBDelete(p.Namespace, p.Name)
				}
			},
		}},
		{f.Scheduling().V1().PriorityClasses().Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { s.OnPriorityClass(o.(*schedulingv1.PriorityClass)) },
			UpdateFunc: func(_, o any) { s.OnPriorityClass(o.(*schedulingv1.PriorityClass)) },
		}},
		{f.Core().V1().Namespaces().Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { s.OnNamespace(o.(*v1.Namespace)) },
			UpdateFunc: func(_, o any) { s.OnNamespace(o.(*v1.Namespace)) },
		}},
	}
	for _, sh := range slices.Concat(storageHandlers(f, s), selectorHandlers(f, s), draHandlers(f, s), groupHandlers(ctx, client, f, s, features)) {
		handlers = append(handlers, struct {
			inf cache.SharedIndexInformer
			h   cache.ResourceEventHandler
		}{sh.inf, sh.h})
	}
	var podsSynced, othersSynced []cache.InformerSynced
	for _, h := range handlers {
		reg, err := h.inf.AddEventHandler(h.h)
		if err != nil {
			return nil, err
		}
		// A registration has synced once its handler got the whole initial
		// list; the informer's own HasSynced only covers its store.
		if h.inf == podInformer {
			podsSynced = append(podsSynced, reg.HasSynced)
		} else {
			othersSynced = append(othersSynced, reg.HasSynced)
		}
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), othersSynced...) {
		return nil, fmt.Errorf("informers for nodes, poddisruptionbudgets, priorityclasses, namespaces, services, replicationcontrollers, replicasets, statefulsets, storage and DRA objects did not sync: %w", context.Cause(ctx))
	}
	podFactory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), podsSynced...) {
		return nil, fmt.Errorf("informer for pods did not sync: %w", context.Cause(ctx))
	}
	return f, nil
}

// unwrap returns the object of a delete notification, which may be a
// tombstone when the watch missed the deletion.
func unwrap[T any](o any) (T, bool) {
	if t, ok := o.(T); ok {
		return t, true
	}
	if tomb, ok := o.(cache.DeletedFinalStateUnknown); ok {
		t, ok := tomb.Obj.(T)
		return t, ok
	}
	var zero T
	return zero, false
}
