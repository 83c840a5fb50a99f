package whatif

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
	"github.com/reprieve/reprieve/internal/whatif"
)

// applyDecision carries out d for pod on snap, as the scheduler would
// before it takes the next pod (--sequence):
//   - a pod that fits is bound to its placement, started at now;
//   - a pod that preempts is nominated to its node; its victims are gone
//     (their graceful deletion is assumed finished), each taking one
//     disruption from every budget that covers it, and lower-priority pods
//     nominated to that node lose their nomination, as kube-scheduler
//     clears them;
//   - a pod that neither fits nor preempts stays pending and changes
//     nothing.
func applyDecision(snap *snapshot.Snapshot, pod *snapshot.Pod, d *whatif.Decision, now metav1.Time) error {
	obj := pod.Obj().DeepCopy()
	switch {
	case d.Placement != nil && d.Placement.Node != "":
		obj.Spec.NodeName = d.Placement.Node
		obj.Status.NominatedNodeName = ""
		obj.Status.Phase = v1.PodRunning
		obj.Status.StartTime = &now
	case d.NominatedNode != "":
		for _, v := range d.Victims {
			if err := evict(snap, v.Pod); err != nil {
				return err
			}
		}
		for _, np := range snap.NominatedPods(d.NominatedNode) {
			if np.Priority < pod.Priority && np.Key != pod.Key {
				cleared := np.Obj().DeepCopy()
				cleared.Status.NominatedNodeName = ""
				if _, err := snap.UpdatePod(cleared); err != nil {
					return fmt.Errorf("--sequence: clearing the nomination of %s: %w", np.Key, err)
				}
			}
		}
		obj.Status.NominatedNodeName = d.NominatedNode
	default:
		return nil
	}
	if _, err := snap.UpdatePod(obj); err != nil {
		return fmt.Errorf("--sequence: placing %s: %w", pod.Key, err)
	}
	return nil
}

// evict removes the pod key from snap, taking one disruption from every
// budget whose selector matches it.
func evict(snap *snapshot.Snapshot, key string) error {
	victim := snap.Pod(key)
	if victim == nil {
		return nil
	}
	// As preemption reads budgets: an empty selector covers nothing.
	var covering []*policyv1.PodDisruptionBudget
	for _, pdb := range snap.PDBs {
		if pdb.Namespace != victim.Namespace() {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err == nil && !sel.Empty() && sel.Matches(victim.Labels()) {
			covering = append(covering, pdb)
		}
	}
	for _, pdb := range covering {
		spent := pdb.DeepCopy()
		spent.Status.DisruptionsAllowed--
		if err := snap.SetPDB(spent); err != nil {
			return fmt.Errorf("--sequence: budget %s/%s: %w", pdb.Namespace, pdb.Name, err)
		}
	}
	snap.RemovePod(key)
	return nil
}
