// Package kube connects reprieve's scheduler core to a real Kubernetes API
// server: informers feed the scheduler's cache, and Cluster carries out its
// decisions with the calls kube-scheduler makes (pods/binding, status
// patches, graceful deletes, events.k8s.io/v1 events). It also lists a live
// cluster into a snapshot for `whatif --kubeconfig`, with list calls only.
package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"

	"github.com/reprieve/reprieve/internal/scheduler"
)

// Cluster implements scheduler.Cluster against an API server.
type Cluster struct {
	client   kubernetes.Interface
	recorder events.EventRecorder

	// evicted holds the UIDs of the victims this Cluster has sent a delete
	// for, in two generations (cur, then prev once cur fills), so that a
	// victim chosen again before the watch shows its deletionTimestamp —
	// its preemptor deleted and another preemptor taking the node — is not
	// deleted (and reported Preempted) a second time.
	mu       sync.Mutex
	evicted  map[types.UID]struct{}
	evictedP map[types.UID]struct{}
}

// evictedGeneration is how many victims a generation of Cluster.evicted
// holds; a victim's deletion shows in the informer long before two
// generations have passed.
const evictedGeneration = 4096

// markEvicted records uid as evicted, reporting false if it already was.
func (c *Cluster) markEvicted(uid types.UID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.evicted[uid]; ok {
		return false
	}
	if _, ok := c.evictedP[uid]; ok {
		return false
	}
	if c.evicted == nil || len(c.evicted) >= evictedGeneration {
		c.evictedP, c.evicted = c.evicted, map[types.UID]struct{}{}
	}
	c.evicted[uid] = struct{}{}
	return true
}

// unmarkEvicted forgets uid (its delete failed: a later attempt may retry).
func (c *Cluster) unmarkEvicted(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.evicted, uid)
	delete(c.evictedP, uid)
}

var _ scheduler.Cluster = (*Cluster)(nil)

// NewCluster returns a Cluster using client, recording events with recorder.
func NewCluster(client kubernetes.Interface, recorder events.EventRecorder) *Cluster {
	return &Cluster{client: client, recorder: recorder}
}

// Bind posts a Binding for the pod, as kube-scheduler's DefaultBinder does,
// ahead of the client's other waiting requests (WithBindingsFirst).
func (c *Cluster) Bind(ctx context.Context, pod *v1.Pod, node string) error {
	ctx = urgent(ctx)
	b := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target:     v1.ObjectReference{Kind: "Node", Name: node},
	}
	return c.client.CoreV1().Pods(pod.Namespace).Bind(ctx, b, metav1.CreateOptions{})
}

// SetUnschedulable patches the pod's PodScheduled condition and, when asked,
// its nominatedNodeName, through the status subresource.
func (c *Cluster) SetUnschedulable(ctx context.Context, pod *v1.Pod, reason, message string, setNominated bool, nominated string) error {
	return c.patchStatus(ctx, pod, func(st *v1.PodStatus) {
		setCondition(st, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: reason, Message: message})
		if setNominated {
			st.NominatedNodeName = nominated
		}
	})
}

// Preempt adds the DisruptionTarget condition to the victim through the
// status subresource, then deletes it with its own grace period. A victim
// already gone, or one this Cluster has already deleted, returns an error
// wrapping scheduler.ErrVictimGone.
func (c *Cluster) Preempt(ctx context.Context, victim *v1.Pod, condition v1.PodCondition) error {
	if !c.markEvicted(victim.UID) {
		return fmt.Errorf("%w: %s/%s is already being deleted", scheduler.ErrVictimGone, victim.Namespace, victim.Name)
	}
	err := c.patchStatus(ctx, victim, func(st *v1.PodStatus) { setCondition(st, condition) })
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%w: %v", scheduler.ErrVictimGone, err)
	}
	if err != nil {
		c.unmarkEvicted(victim.UID)
		return fmt.Errorf("adding DisruptionTarget condition: %w", err)
	}
	err = c.client.CoreV1().Pods(victim.Namespace).Delete(ctx, victim.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &victim.UID}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		// Gone, or replaced by a new pod of the same name: nothing to evict.
		return fmt.Errorf("%w: %v", scheduler.ErrVictimGone, err)
	}
	if err != nil {
		c.unmarkEvicted(victim.UID)
	}
	return err
}

// ClearNominatedNode removes the pod's nominatedNodeName.
func (c *Cluster) ClearNominatedNode(ctx context.Context, pod *v1.Pod) error {
	err := c.patchStatus(ctx, pod, func(st *v1.PodStatus) { st.NominatedNodeName = "" })
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// Event records an events.k8s.io/v1 event.
func (c *Cluster) Event(regarding, related *v1.Pod, eventType, reason, action, note string) {
	if related != nil {
		c.recorder.Eventf(regarding, related, eventType, reason, action, "%s", note)
		return
	}
	c.recorder.Eventf(regarding, nil, eventType, reason, action, "%s", note)
}

// patchStatus applies change to the pod's status as a strategic merge patch
// computed from the status it had, retrying on conflicts with a fresh read.
func (c *Cluster) patchStatus(ctx context.Context, pod *v1.Pod, change func(*v1.PodStatus)) error {
	old := pod
	return retry.OnError(retry.DefaultBackoff, func(err error) bool {
		return apierrors.IsConflict(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err)
	}, func() error {
		newStatus := old.Status.DeepCopy()
		change(newStatus)
		oldData, err := json.Marshal(v1.Pod{Status: old.Status})
		if err != nil {
			return err
		}
		newData, err := json.Marshal(v1.Pod{Status: *newStatus})
		if err != nil {
			return err
		}
		patch, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, &v1.Pod{})
		if err != nil {
			return err
		}
		if string(patch) == "{}" {
			return nil
		}
		_, err = c.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		if apierrors.IsConflict(err) {
			fresh, getErr := c.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
			if getErr != nil {
				return getErr
			}
			old = fresh
		}
		return err
	})
}

func setCondition(st *v1.PodStatus, c v1.PodCondition) {
	c.LastTransitionTime = metav1.Now()
	for i := range st.Conditions {
		if st.Conditions[i].Type == c.Type {
			if st.Conditions[i].Status == c.Status {
				c.LastTransitionTime = st.Conditions[i].LastTransitionTime
			}
			st.Conditions[i] = c
			return
		}
	}
	st.Conditions = append(st.Conditions, c)
}
