package workload

import (
	"fmt"
	"maps"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// statefulSet makes a StatefulSet's pods as the statefulset controller
// does: ordinals from spec.ordinals.start, each pod NAME-ORDINAL with its
// identity (pod-name and pod-index labels, hostname, subdomain), the
// revision's controller-revision-hash label, and a volume per claim
// template naming its claim TEMPLATE-NAME-ORDINAL, made here with the
// selector's labels. OrderedReady creation, which waits for each pod to
// be Ready, is taken as done: every replica is made.
func statefulSet(in *appsv1.StatefulSet, n *Namer) (*Workload, error) {
	set := in.DeepCopy()
	setUID(set, "StatefulSet", n)
	w := &Workload{Kind: "StatefulSet", Namespace: set.Namespace, Name: set.Name, Replicated: true, StatefulSets: []*appsv1.StatefulSet{set}}
	hash, err := revisionHash(set)
	if err != nil {
		return nil, fmt.Errorf("statefulset %s/%s: %w", set.Namespace, set.Name, err)
	}
	revision := revisionName(set.Name, hash)
	start := 0
	if set.Spec.Ordinals != nil {
		start = int(set.Spec.Ordinals.Start)
	}
	for ordinal := start; ordinal < start+count(set.Spec.Replicas); ordinal++ {
		pod := podFromTemplate(&set.Spec.Template, set, statefulSetKind)
		pod.Name = fmt.Sprintf("%s-%d", set.Name, ordinal)
		pod.Labels[appsv1.StatefulSetPodNameLabel] = pod.Name
		pod.Labels[appsv1.PodIndexLabel] = strconv.Itoa(ordinal)
		pod.Labels[appsv1.StatefulSetRevisionLabel] = revision
		pod.Spec.Hostname = pod.Name
		pod.Spec.Subdomain = set.Spec.ServiceName
		claims := setClaims(set, ordinal)
		pod.Spec.Volumes = withClaims(pod.Spec.Volumes, set.Spec.VolumeClaimTemplates, claims)
		w.Claims = append(w.Claims, claims...)
		pod, err := admit(pod, n)
		if err != nil {
			return nil, err
		}
		w.Pods = append(w.Pods, pod)
	}
	return w, nil
}

// setClaims are the claims of the pod of set at ordinal, one per claim
// template in order, as the controller creates them (pending, unbound).
func setClaims(set *appsv1.StatefulSet, ordinal int) []*v1.PersistentVolumeClaim {
	var out []*v1.PersistentVolumeClaim
	for _, t := range set.Spec.VolumeClaimTemplates {
		c := t.DeepCopy()
		c.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"}
		c.Name = fmt.Sprintf("%s-%s-%d", t.Name, set.Name, ordinal)
		c.Namespace = set.Namespace
		if c.Labels == nil {
			c.Labels = map[string]string{}
		}
		if set.Spec.Selector != nil {
			maps.Copy(c.Labels, set.Spec.Selector.MatchLabels)
		}
		if c.Status.Phase == "" {
			c.Status.Phase = v1.ClaimPending
		}
		out = append(out, c)
	}
	return out
}

// withClaims returns a pod's volumes with one volume per claim template
// (named as the template, in its order) naming its claim, in place of
// any volume of that name.
func withClaims(vols []v1.Volume, templates []v1.PersistentVolumeClaim, claims []*v1.PersistentVolumeClaim) []v1.Volume {
	out := make([]v1.Volume, 0, len(vols)+len(claims))
	names := map[string]bool{}
	for i, t := range templates {
		names[t.Name] = true
		out = append(out, v1.Volume{Name: t.Name, VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claims[i].Name},
		}})
	}
	for _, v := range vols {
		if !names[v.Name] {
			out = append(out, v)
		}
	}
	return out
}
