package reprievetest

import (
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodGroup returns a PodGroup in namespace default with the priority, the
// disruption mode ("All", "Single" or "" for unset) and the parent
// CompositePodGroup ("" for none).
func PodGroup(name string, prio int32, mode, parent string) *schedulingv1beta1.PodGroup {
	g := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	g.Spec.Priority = &prio
	switch mode {
	case "All":
		g.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}}
	case "Single":
		g.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{Single: &schedulingv1beta1.SingleDisruptionMode{}}
	}
	if parent != "" {
		g.Spec.ParentCompositePodGroupName = &parent
	}
	return g
}

// CompositePodGroup is PodGroup for a CompositePodGroup.
func CompositePodGroup(name string, prio int32, mode, parent string) *schedulingv1alpha3.CompositePodGroup {
	g := &schedulingv1alpha3.CompositePodGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	g.Spec.Priority = &prio
	switch mode {
	case "All":
		g.Spec.DisruptionMode = &schedulingv1alpha3.CompositeDisruptionMode{All: &schedulingv1alpha3.AllCompositeDisruptionMode{}}
	case "Single":
		g.Spec.DisruptionMode = &schedulingv1alpha3.CompositeDisruptionMode{Single: &schedulingv1alpha3.SingleCompositeDisruptionMode{}}
	}
	if parent != "" {
		g.Spec.ParentCompositePodGroupName = &parent
	}
	return g
}
