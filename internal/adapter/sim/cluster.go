package sim

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func (w *world) Bind(_ context.Context, pod *v1.Pod, node string) error {
	w.calls++
	key := pod.Namespace + "/" + pod.Name
	p, ok := w.pods[key]
	if !ok || p.UID != pod.UID {
		return errNotFound{key}
	}
	if p.Spec.NodeName != "" {
		return fmt.Errorf("pod %s is already assigned to node %q", key, p.Spec.NodeName)
	}
	if _, ok := w.nodes[node]; !ok {
		return fmt.Errorf("node %q not found", node)
	}
	if w.waitForVolumes(pod) {
		// VolumeBinding's PreBind is still waiting for the claims: the pod
		// stays assumed until they are bound (finishBind).
		return nil
	}
	w.finishBind(p, node)
	return nil
}

// finishBind binds the stored pod p to node and starts it.
func (w *world) finishBind(pod *v1.Pod, node string) {
	key := pod.Namespace + "/" + pod.Name
	p, ok := w.pods[key]
	if !ok || p.UID != pod.UID || p.Spec.NodeName != "" || p.DeletionTimestamp != nil {
		return
	}
	if _, ok := w.nodes[node]; !ok {
		return
	}
	old := p
	p = p.DeepCopy()
	p.Spec.NodeName = node
	if p.Status.NominatedNodeName != "" {
		w.rec.nominationEnded(p, node, w.now())
	}
	p.Status.NominatedNodeName = ""
	w.startPod(p)
	w.updatePod(old, p)
	w.rec.podBound(p, node, w.now())
	w.scheduleCompletion(p)
}

func (w *world) SetUnschedulable(_ context.Context, pod *v1.Pod, reason, message string, setNominated bool, nominated string) error {
	w.calls++
	key := pod.Namespace + "/" + pod.Name
	p, ok := w.pods[key]
	if !ok || p.UID != pod.UID {
		return errNotFound{key}
	}
	old := p
	p = p.DeepCopy()
	setCondition(&p.Status, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: reason,
		Message: message, LastTransitionTime: metav1.NewTime(w.now())})
	if setNominated && p.Status.NominatedNodeName != nominated {
		if p.Status.NominatedNodeName != "" {
			w.rec.nominationEnded(p, "", w.now())
		}
		p.Status.NominatedNodeName = nominated
		if nominated != "" {
			w.rec.nominated(p, nominated, w.now())
		}
	}
	w.updatePod(old, p)
	return nil
}

func (w *world) Preempt(_ context.Context, victim *v1.Pod, condition v1.PodCondition) error {
	key := victim.Namespace + "/" + victim.Name
	p, ok := w.pods[key]
	if !ok || p.UID != victim.UID {
		return nil // already gone
	}
	w.calls += 2 // the DisruptionTarget condition, then the delete
	old := p
	p = p.DeepCopy()
	condition.LastTransitionTime = metav1.NewTime(w.now())
	setCondition(&p.Status, condition)
	w.updatePod(old, p)
	w.rec.preempted(p, w.now())
	if c := w.ownerOf(p); c != nil {
		c.lostToPreemption++
	}
	w.deletePod(key)
	return nil
}

func (w *world) ClearNominatedNode(_ context.Context, pod *v1.Pod) error {
	key := pod.Namespace + "/" + pod.Name
	p, ok := w.pods[key]
	if !ok || p.Status.NominatedNodeName == "" {
		return nil
	}
	w.calls++
	old := p
	p = p.DeepCopy()
	w.rec.nominationEnded(p, "", w.now())
	p.Status.NominatedNodeName = ""
	w.updatePod(old, p)
	return nil
}

func (w *world) Event(regarding, related *v1.Pod, eventType, reason, action, note string) {
	e := Event{Time: w.now().Sub(w.start), Type: eventType, Reason: reason, Action: action, Object: "pod/" + regarding.Name, Namespace: regarding.Namespace, Message: note}
	if related != nil {
		e.Related, e.RelatedNamespace = "pod/"+related.Name, related.Namespace
	}
	w.rec.event(e)
}

func (w *world) event(ref *v1.ObjectReference, eventType, reason, note string) {
	w.rec.event(Event{Time: w.now().Sub(w.start), Type: eventType, Reason: reason,
		Object: lowerKind(ref.Kind) + "/" + ref.Name, Namespace: ref.Namespace, Message: note})
}

func podRef(p *v1.Pod) *v1.ObjectReference {
	return &v1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
}

func lowerKind(k string) string {
	b := []byte(k)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
