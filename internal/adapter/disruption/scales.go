package disruption

import (
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Controllers finds scales among controller objects, as the disruption
// controller's finders do, in their order: a ReplicationController, a
// Deployment through the ReplicaSet it owns, a ReplicaSet no Deployment
// owns, a StatefulSet. A controller matches a reference by kind, group,
// name and UID; one read from a file without a UID matches by name (the
// API server would have given it the UID its pods name).
type Controllers struct {
	rcs          map[string]*v1.ReplicationController
	deployments  map[string]*appsv1.Deployment
	replicaSets  map[string]*appsv1.ReplicaSet
	statefulSets map[string]*appsv1.StatefulSet
}

var _ Scales = (*Controllers)(nil)

// NewControllers indexes the controllers (any slice may be nil).
func NewControllers(rcs []*v1.ReplicationController, deployments []*appsv1.Deployment, replicaSets []*appsv1.ReplicaSet, statefulSets []*appsv1.StatefulSet) *Controllers {
	return &Controllers{rcs: byKey(rcs), deployments: byKey(deployments), replicaSets: byKey(replicaSets), statefulSets: byKey(statefulSets)}
}

func byKey[T metav1.Object](objs []T) map[string]T {
	m := make(map[string]T, len(objs))
	for _, o := range objs {
		m[o.GetNamespace()+"/"+o.GetName()] = o
	}
	return m
}

// Scale implements Scales.
func (c *Controllers) Scale(namespace string, ref *metav1.OwnerReference) (types.UID, int32, bool) {
	key := namespace + "/" + ref.Name
	switch {
	case isKind(ref, "ReplicationController", ""):
		if rc := c.rcs[key]; rc != nil && sameUID(rc, ref.UID) {
			return uidOf(rc, "ReplicationController"), replicas(rc.Spec.Replicas), true
		}
	case isKind(ref, "ReplicaSet", "apps", "extensions"):
		rs := c.replicaSets[key]
		if rs == nil || !sameUID(rs, ref.UID) {
			return "", 0, false
		}
		if owner := metav1.GetControllerOf(rs); owner != nil && owner.Kind == "Deployment" {
			// The Deployment's scale, or none: a ReplicaSet a
			// Deployment owns is never taken for itself.
			d := c.deployments[namespace+"/"+owner.Name]
			if d == nil || !isKind(owner, "Deployment", "apps", "extensions") || !sameUID(d, owner.UID) {
				return "", 0, false
			}
			return uidOf(d, "Deployment"), replicas(d.Spec.Replicas), true
		}
		return uidOf(rs, "ReplicaSet"), replicas(rs.Spec.Replicas), true
	case isKind(ref, "StatefulSet", "apps"):
		if s := c.statefulSets[key]; s != nil && sameUID(s, ref.UID) {
			return uidOf(s, "StatefulSet"), replicas(s.Spec.Replicas), true
		}
	}
	return "", 0, false
}

// isKind reports whether ref names kind in one of groups (verifyGroupKind).
func isKind(ref *metav1.OwnerReference, kind string, groups ...string) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || ref.Kind != kind {
		return false
	}
	for _, g := range groups {
		if gv.Group == g {
			return true
		}
	}
	return false
}

// sameUID reports whether o is the object of uid (or has no UID at all).
func sameUID(o metav1.Object, uid types.UID) bool { return o.GetUID() == "" || o.GetUID() == uid }

// uidOf is o's UID, or for one without, a key of its own: two controllers
// read without UIDs are not one.
func uidOf(o metav1.Object, kind string) types.UID {
	if uid := o.GetUID(); uid != "" {
		return uid
	}
	return types.UID(kind + "/" + o.GetNamespace() + "/" + o.GetName())
}

// replicas is spec.replicas, 1 when unset (as defaulted).
func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}
