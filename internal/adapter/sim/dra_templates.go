package sim

import (
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// annotationPodClaimName is the annotation the resource-claim controller
// puts on a claim it made from a template: the pod's name for the claim.
const annotationPodClaimName = "resource.kubernetes.io/pod-claim-name"

// addClaimTemplate keeps a ResourceClaimTemplate and makes the claims of
// the pods that were waiting for it, as kube-controller-manager's
// resource-claim controller does when it syncs them again.
func (w *world) addClaimTemplate(t *resourceapi.ResourceClaimTemplate) {
	w.claimTemplates[t.Namespace+"/"+t.Name] = t
	for _, key := range w.sortedPodKeys() {
		p := w.pods[key]
		if p.Namespace != t.Namespace || p.Spec.NodeName != "" || p.DeletionTimestamp != nil ||
			!slices.ContainsFunc(p.Spec.ResourceClaims, func(pc v1.PodResourceClaim) bool { return w.templateToMake(p, pc) != nil }) {
			continue
		}
		q := p.DeepCopy()
		if w.createPodClaims(q) {
			w.updatePod(p, q)
		}
	}
}

// createPodClaims is the resource-claim controller's part for a new pod:
// each of its claims named by a template that exists, and not made yet, is
// created from the template (owned by the pod, named after it with a random
// suffix as the controller's generateName) and recorded in the pod's
// status.resourceClaimStatuses. A claim whose template is missing is left
// to come later: the scheduler keeps the pod pending meanwhile. It reports
// whether it changed the pod.
func (w *world) createPodClaims(p *v1.Pod) bool {
	changed := false
	for _, pc := range p.Spec.ResourceClaims {
		t := w.templateToMake(p, pc)
		if t == nil {
			continue
		}
		name := p.Name + "-" + pc.Name + "-" + w.suffix(5)
		annotations := maps.Clone(t.Annotations)
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[annotationPodClaimName] = pc.Name
		isController := true
		w.setResourceClaim(&resourceapi.ResourceClaim{
			ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: p.Namespace, UID: w.newUID(), CreationTimestamp: metav1.NewTime(w.now()),
				Labels: maps.Clone(t.Labels), Annotations: annotations,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID,
					Controller: &isController, BlockOwnerDeletion: &isController}},
			},
			Spec: *t.Spec.Spec.DeepCopy(),
		})
		p.Status.ResourceClaimStatuses = append(p.Status.ResourceClaimStatuses, v1.PodResourceClaimStatus{Name: pc.Name, ResourceClaimName: &name})
		changed = true
	}
	return changed
}

// templateToMake is the template to make the pod's claim pc from: nil when
// pc names no template, its claim is made already or its template is
// missing.
func (w *world) templateToMake(p *v1.Pod, pc v1.PodResourceClaim) *resourceapi.ResourceClaimTemplate {
	if pc.ResourceClaimTemplateName == nil || hasClaimStatus(p, pc.Name) {
		return nil
	}
	return w.claimTemplates[p.Namespace+"/"+*pc.ResourceClaimTemplateName]
}

func hasClaimStatus(p *v1.Pod, name string) bool {
	for _, s := range p.Status.ResourceClaimStatuses {
		if s.Name == name {
			return true
		}
	}
	return false
}

// deletePodClaims deletes the claims made for a pod that is gone (from its
// templates, and for its extended resources), as the garbage collector
// deletes what the pod owns.
func (w *world) deletePodClaims(p *v1.Pod) {
	for _, key := range podClaimKeys(p) {
		c := w.claims[key]
		if c == nil || !metav1.IsControlledBy(c, p) {
			continue
		}
		delete(w.claims, key)
		w.sched.OnResourceClaimDelete(c.Namespace, c.Name, c.UID)
	}
}
