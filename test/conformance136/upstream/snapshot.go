package upstream

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/features"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// SchedulerSnapshot is upstream's scheduler cache filled with nodes and
// bound pods, and the snapshot a scheduling cycle reads, taken from it: the
// cluster state a running kube-scheduler keeps besides its informers. It
// exists to measure that state (e.g. its memory); it has no other use.
type SchedulerSnapshot struct {
	cache    internalcache.Cache
	snapshot *internalcache.Snapshot
	cancel   context.CancelFunc
}

// BuildSchedulerSnapshot adds nodes and every pod of pods that is bound to
// a node (spec.nodeName set) to a new scheduler cache, as the scheduler's
// informer handlers do, and updates a snapshot from it. The objects are used
// as given, not copied, as the scheduler shares them with its informers:
// pods need a UID. The cache's background goroutine runs until Close.
func BuildSchedulerSnapshot(ctx context.Context, nodes []*v1.Node, pods []*v1.Pod) (_ *SchedulerSnapshot, err error) {
	metrics.Register()
	logger := klog.FromContext(ctx)
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		if err != nil {
			cancel()
		}
	}()
	cache := internalcache.New(ctx, nil, utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload))
	for _, n := range nodes {
		cache.AddNode(logger, n)
	}
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			continue
		}
		if err := cache.AddPod(logger, p); err != nil {
			return nil, fmt.Errorf("adding pod %s/%s to the scheduler cache: %w", p.Namespace, p.Name, err)
		}
	}
	snapshot := internalcache.NewEmptySnapshot()
	if err := cache.UpdateSnapshot(logger, snapshot); err != nil {
		return nil, fmt.Errorf("updating snapshot: %w", err)
	}
	return &SchedulerSnapshot{cache: cache, snapshot: snapshot, cancel: cancel}, nil
}

// NumPods is the number of pods in the snapshot, summed over its nodes.
func (s *SchedulerSnapshot) NumPods() int {
	nodes, _ := s.snapshot.NodeInfos().List() // never fails
	n := 0
	for _, ni := range nodes {
		n += len(ni.GetPods())
	}
	return n
}

// Close stops the cache's background goroutine. The snapshot stays readable.
func (s *SchedulerSnapshot) Close() { s.cancel() }
