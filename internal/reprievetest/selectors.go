package reprievetest

import (
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Service returns a Service of ns selecting selector (nil: a Service
// without a selector, which selects nothing).
func Service(ns, name string, selector map[string]string) *v1.Service {
	return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1.ServiceSpec{Selector: selector}}
}

// ReplicaSet returns a ReplicaSet of ns whose selector is matchLabels.
func ReplicaSet(ns, name string, matchLabels map[string]string) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{ObjectMeta: objectMeta(ns, name, "replicaset"),
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: matchLabels}}}
}

// StatefulSet returns a StatefulSet of ns whose selector is matchLabels.
func StatefulSet(ns, name string, matchLabels map[string]string) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{ObjectMeta: objectMeta(ns, name, "statefulset"),
		Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: matchLabels}}}
}

// ReplicationController returns a ReplicationController of ns with selector.
func ReplicationController(ns, name string, selector map[string]string) *v1.ReplicationController {
	return &v1.ReplicationController{ObjectMeta: objectMeta(ns, name, "replicationcontroller"),
		Spec: v1.ReplicationControllerSpec{Selector: selector}}
}

func objectMeta(ns, name, kind string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + kind + "-" + ns + "-" + name)}
}

// ControlledBy gives the pod a controller reference to owner (a ReplicaSet,
// StatefulSet or ReplicationController of these builders), as its
// controller sets it.
func (b *PodBuilder) ControlledBy(owner metav1.Object) *PodBuilder {
	var apiVersion, kind string
	switch owner.(type) {
	case *appsv1.ReplicaSet:
		apiVersion, kind = "apps/v1", "ReplicaSet"
	case *appsv1.StatefulSet:
		apiVersion, kind = "apps/v1", "StatefulSet"
	case *v1.ReplicationController:
		apiVersion, kind = "v1", "ReplicationController"
	default:
		panic("reprievetest: ControlledBy takes a ReplicaSet, StatefulSet or ReplicationController")
	}
	yes := true
	b.p.OwnerReferences = append(b.p.OwnerReferences, metav1.OwnerReference{
		APIVersion: apiVersion, Kind: kind, Name: owner.GetName(), UID: owner.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes})
	return b
}
