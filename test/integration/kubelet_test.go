package integration

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// startedAtAnnotation, on a pod, is the status.startTime the fake kubelet
// gives it (RFC 3339), so tests control the victims' start-time order.
const startedAtAnnotation = "integration.reprieve.dev/started-at"

// fakeKubelet plays every node's kubelet for pods bound to a node: it marks
// them Running (phase, startTime, Ready) and, when a graceful deletion's
// grace period is over, finishes it by deleting the pod with grace 0, as a
// kubelet does once the containers have stopped.
type fakeKubelet struct {
	client kubernetes.Interface
	queue  workqueue.TypedRateLimitingInterface[string]
	store  cache.Store

	mu        sync.Mutex
	timers    map[types.UID]bool
	finalized map[string]int // namespace/name -> deletions finished
}

func startFakeKubelet(t *testing.T, client kubernetes.Interface) *fakeKubelet {
	ctx, cancel := context.WithCancel(context.Background())
	k := &fakeKubelet{
		client:    client,
		queue:     workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](50*time.Millisecond, 2*time.Second)),
		timers:    map[types.UID]bool{},
		finalized: map[string]int{},
	}
	f := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = "spec.nodeName!="
	}))
	inf := f.Core().V1().Pods().Informer()
	k.store = inf.GetStore()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { k.observe(o.(*v1.Pod)) },
		UpdateFunc: func(_, o any) { k.observe(o.(*v1.Pod)) },
	})
	f.Start(ctx.Done())
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k.work(ctx) {
			}
		}()
	}
	t.Cleanup(func() {
		cancel()
		k.queue.ShutDown()
		wg.Wait()
		f.Shutdown()
	})
	return k
}

func (k *fakeKubelet) observe(pod *v1.Pod) {
	key, _ := cache.MetaNamespaceKeyFunc(pod)
	if pod.DeletionTimestamp == nil {
		if pod.Status.Phase == v1.PodPending || pod.Status.Phase == "" {
			k.queue.Add(key)
		}
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.timers[pod.UID] {
		return
	}
	k.timers[pod.UID] = true
	time.AfterFunc(time.Until(pod.DeletionTimestamp.Time), func() { k.queue.Add(key) })
}

// work handles one pod key; it returns false when the queue shuts down.
func (k *fakeKubelet) work(ctx context.Context) bool {
	key, quit := k.queue.Get()
	if quit {
		return false
	}
	defer k.queue.Done(key)
	if err := k.sync(ctx, key); err != nil && ctx.Err() == nil {
		k.queue.AddRateLimited(key)
		return true
	}
	k.queue.Forget(key)
	return true
}

func (k *fakeKubelet) sync(ctx context.Context, key string) error {
	o, exists, err := k.store.GetByKey(key)
	if err != nil || !exists {
		return err
	}
	pod := o.(*v1.Pod)
	if pod.DeletionTimestamp != nil {
		if time.Now().Before(pod.DeletionTimestamp.Time) {
			return nil // its timer will bring it back
		}
		uid := pod.UID
		err := k.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
			GracePeriodSeconds: new(int64),
			Preconditions:      &metav1.Preconditions{UID: &uid},
		})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		if err == nil {
			k.mu.Lock()
			k.finalized[key]++
			k.mu.Unlock()
		}
		return err
	}
	if pod.Status.Phase != v1.PodPending && pod.Status.Phase != "" {
		return nil
	}
	start := metav1.Now()
	if s := pod.Annotations[startedAtAnnotation]; s != "" {
		if ts, err := time.Parse(time.RFC3339, s); err == nil {
			start = metav1.NewTime(ts)
		}
	}
	patch, _ := json.Marshal(map[string]any{
		"status": map[string]any{
			"phase":     v1.PodRunning,
			"startTime": start,
			"conditions": []v1.PodCondition{
				{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: start},
				{Type: v1.ContainersReady, Status: v1.ConditionTrue, LastTransitionTime: start},
				{Type: v1.PodInitialized, Status: v1.ConditionTrue, LastTransitionTime: start},
			},
		},
	})
	_, err = k.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
