package sim

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/adapter/disruption"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// statefulSet is what the simulated StatefulSet controller keeps beyond a
// controller's fields.
type statefulSet struct {
	claimTemplates []v1.PersistentVolumeClaim
	// parallel is podManagementPolicy Parallel; OrderedReady creates
	// replica i only once replicas 0..i-1 run and are Ready.
	parallel bool
	// matchLabels are the selector's labels, which the controller copies
	// onto the claims it creates.
	matchLabels map[string]string
}

func (w *world) addStatefulSet(s *appsv1.StatefulSet) error {
	sel, err := metav1.LabelSelectorAsSelector(s.Spec.Selector)
	if err != nil {
		return err
	}
	w.sched.OnSelector(func(snap *snapshot.Snapshot) { snap.SetStatefulSet(s) })
	w.addController(&controller{kind: "StatefulSet", namespace: s.Namespace, name: s.Name, uid: w.newUID(), selector: sel,
		template: s.Spec.Template, replicas: ptrOr(s.Spec.Replicas, 1), podPrefix: s.Name + "-",
		sts: &statefulSet{claimTemplates: s.Spec.VolumeClaimTemplates, parallel: s.Spec.PodManagementPolicy == appsv1.ParallelPodManagement,
			matchLabels: s.Spec.Selector.MatchLabels}})
	return nil
}

// reconcileStatefulSet is the StatefulSet controller: replicas named
// <name>-<ordinal>, each with one claim per template named
// <template>-<name>-<ordinal>, created before the pod if missing and kept
// when the pod goes (persistentVolumeClaimRetentionPolicy Retain), so a
// replacement uses its predecessor's volume. A replica is re-created only
// once its predecessor is gone (names are unique). OrderedReady creates
// them one at a time in ordinal order, each once the lower ones run and
// are Ready;
// scaling down deletes the highest ordinals first.
func (w *world) reconcileStatefulSet(c *controller) {
	ref := &v1.ObjectReference{Kind: "StatefulSet", Namespace: c.namespace, Name: c.name}
	for i := int32(0); i < c.replicas; i++ {
		name := c.name + "-" + strconv.Itoa(int(i))
		if p := w.pods[c.namespace+"/"+name]; p != nil {
			if !c.sts.parallel && (p.Spec.NodeName == "" || p.DeletionTimestamp != nil || p.Status.Phase != v1.PodRunning || !disruption.Ready(p)) {
				return
			}
			continue
		}
		if w.stopped() {
			return
		}
		p := &v1.Pod{ObjectMeta: *c.template.ObjectMeta.DeepCopy(), Spec: *c.template.Spec.DeepCopy()}
		p.Namespace, p.Name = c.namespace, name
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		p.Labels[appsv1.StatefulSetPodNameLabel] = name
		p.Labels[appsv1.PodIndexLabel] = strconv.Itoa(int(i))
		p.Spec.Hostname = name
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: c.name, UID: c.uid, Controller: &yes, BlockOwnerDeletion: &yes}}
		for _, t := range c.sts.claimTemplates {
			claim := t.Name + "-" + name
			if w.storage.claims[c.namespace+"/"+claim] == nil {
				pvc := t.DeepCopy()
				pvc.Namespace, pvc.Name = c.namespace, claim
				if pvc.Labels == nil {
					pvc.Labels = map[string]string{}
				}
				for k, v := range c.sts.matchLabels {
					pvc.Labels[k] = v
				}
				w.createClaim(pvc)
				w.event(ref, v1.EventTypeNormal, "SuccessfulCreate",
					fmt.Sprintf("create Claim %s Pod %s in StatefulSet %s success", claim, name, c.name))
			}
			vol := v1.Volume{Name: t.Name, VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}
			replaced := false
			for j := range p.Spec.Volumes {
				if p.Spec.Volumes[j].Name == t.Name {
					p.Spec.Volumes[j], replaced = vol, true
				}
			}
			if !replaced {
				p.Spec.Volumes = append(p.Spec.Volumes, vol)
			}
		}
		if err := w.createPod(p); err != nil {
			w.event(ref, v1.EventTypeWarning, "FailedCreate", fmt.Sprintf("create Pod %s in StatefulSet %s failed error: %v", name, c.name, err))
			return
		}
		w.event(ref, v1.EventTypeNormal, "SuccessfulCreate", fmt.Sprintf("create Pod %s in StatefulSet %s successful", name, c.name))
		if !c.sts.parallel {
			return
		}
	}
	// Scale down: the highest ordinal first.
	var excess []int
	for key := range c.pods {
		p := w.pods[key]
		if p == nil || p.DeletionTimestamp != nil {
			continue
		}
		if n, err := strconv.Atoi(p.Name[len(c.podPrefix):]); err == nil && n >= int(c.replicas) {
			excess = append(excess, n)
		}
	}
	if len(excess) == 0 {
		return
	}
	highest := excess[0]
	for _, n := range excess {
		highest = max(highest, n)
	}
	name := c.name + "-" + strconv.Itoa(highest)
	w.event(ref, v1.EventTypeNormal, "SuccessfulDelete", fmt.Sprintf("delete Pod %s in StatefulSet %s successful", name, c.name))
	w.deletePod(c.namespace + "/" + name)
}
