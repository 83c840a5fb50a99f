package workload

import (
	"maps"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The annotations the deployment controller gives its ReplicaSets.
const (
	revisionAnnotation        = "deployment.kubernetes.io/revision"
	desiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
	maxReplicasAnnotation     = "deployment.kubernetes.io/max-replicas"
)

// deployment makes a new Deployment's ReplicaSet, as the deployment
// controller does (named NAME-HASH, the template and selector given the
// pod-template-hash label, all replicas at once: no old ReplicaSet to
// scale down), and that ReplicaSet's pods. A paused Deployment gets
// neither.
func deployment(in *appsv1.Deployment, n *Namer) (*Workload, error) {
	d := in.DeepCopy()
	setUID(d, "Deployment", n)
	w := &Workload{Kind: "Deployment", Namespace: d.Namespace, Name: d.Name, Replicated: true, Deployments: []*appsv1.Deployment{d}}
	if d.Spec.Paused {
		w.Note = "paused: the deployment controller makes no ReplicaSet"
		return w, nil
	}
	hash := podTemplateHash(&d.Spec.Template, d.Status.CollisionCount)
	t := *d.Spec.Template.DeepCopy()
	t.Labels = withLabel(t.Labels, appsv1.DefaultDeploymentUniqueLabelKey, hash)
	sel := d.Spec.Selector.DeepCopy()
	sel.MatchLabels = withLabel(sel.MatchLabels, appsv1.DefaultDeploymentUniqueLabelKey, hash)
	replicas := count(d.Spec.Replicas)
	rs := &appsv1.ReplicaSet{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            replicaSetName(d.Name, hash),
			Namespace:       d.Namespace,
			Labels:          t.Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, deploymentKind)},
			Annotations: map[string]string{
				revisionAnnotation:        "1",
				desiredReplicasAnnotation: strconv.Itoa(replicas),
				maxReplicasAnnotation:     strconv.Itoa(replicas + maxSurge(d, replicas)),
			},
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        d.Spec.Replicas,
			MinReadySeconds: d.Spec.MinReadySeconds,
			Selector:        sel,
			Template:        t,
		},
	}
	setUID(rs, "ReplicaSet", n)
	made, err := replicaSet(rs, n)
	if err != nil {
		return nil, err
	}
	w.Pods, w.ReplicaSets = made.Pods, made.ReplicaSets
	return w, nil
}

// replicaSetName is the name of a Deployment's ReplicaSet for hash, the
// Deployment's name cut to leave room for it.
func replicaSetName(deployment, hash string) string {
	if room := maxNameLength - 1 - len(hash); len(deployment) > room && room > 0 {
		deployment = deployment[:room]
	}
	return deployment + "-" + hash
}

// maxSurge is how many pods above replicas a rolling update may add (its
// maxSurge, 25% by default, rounded up), 0 for Recreate.
func maxSurge(d *appsv1.Deployment, replicas int) int {
	if d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		return 0
	}
	surge := intstr.FromString("25%")
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil && ru.MaxSurge != nil {
		surge = *ru.MaxSurge
	}
	v, err := intstr.GetScaledValueFromIntOrPercent(&surge, replicas, true)
	if err != nil {
		return 0
	}
	return v
}

// replicaSet makes a ReplicaSet's replicas, named from NAME-.
func replicaSet(in *appsv1.ReplicaSet, n *Namer) (*Workload, error) {
	rs := in.DeepCopy()
	setUID(rs, "ReplicaSet", n)
	w := &Workload{Kind: "ReplicaSet", Namespace: rs.Namespace, Name: rs.Name, Replicated: true, ReplicaSets: []*appsv1.ReplicaSet{rs}}
	for range count(rs.Spec.Replicas) {
		pod, err := admit(podFromTemplate(&rs.Spec.Template, rs, replicaSetKind), n)
		if err != nil {
			return nil, err
		}
		w.Pods = append(w.Pods, pod)
	}
	return w, nil
}

// replicationController makes a ReplicationController's replicas, named
// from NAME-.
func replicationController(in *v1.ReplicationController, n *Namer) (*Workload, error) {
	rc := in.DeepCopy()
	setUID(rc, "ReplicationController", n)
	w := &Workload{Kind: "ReplicationController", Namespace: rc.Namespace, Name: rc.Name, Replicated: true, ReplicationControllers: []*v1.ReplicationController{rc}}
	if rc.Spec.Template == nil {
		return w, nil
	}
	for range count(rc.Spec.Replicas) {
		pod, err := admit(podFromTemplate(rc.Spec.Template, rc, rcKind), n)
		if err != nil {
			return nil, err
		}
		w.Pods = append(w.Pods, pod)
	}
	return w, nil
}

// withLabel returns a copy of labels with key set to value.
func withLabel(labels map[string]string, key, value string) map[string]string {
	out := maps.Clone(labels)
	if out == nil {
		out = map[string]string{}
	}
	out[key] = value
	return out
}

// setUID gives obj, of kind, the UID the API server would have given it,
// unless it has one.
func setUID(obj metav1.Object, kind string, n *Namer) {
	if obj.GetUID() == "" {
		obj.SetUID(n.UID(kind, obj.GetNamespace(), obj.GetName()))
	}
}
