package gen

import (
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// SelectorObjects are the objects whose selectors PodTopologySpread's
// default constraints take (upstream's helper.DefaultSelector): Services
// that select pods of their namespace, and the ReplicationControllers,
// ReplicaSets and StatefulSets that pods name as their controller.
type SelectorObjects struct {
	Services               []*v1.Service
	ReplicationControllers []*v1.ReplicationController
	ReplicaSets            []*appsv1.ReplicaSet
	StatefulSets           []*appsv1.StatefulSet
}

// genSelectors gives the cluster Services and controllers over its pods,
// as a cluster of Deployments and StatefulSets behind Services has them:
// Services in each namespace selecting some of its pods (or none, or
// nothing at all: a Service without a selector), and controllers whose
// pods carry a controller reference to them. Now and then a reference
// names a controller that is gone, one whose selector the pod no longer
// matches, another apiVersion, or is not the controller reference, which
// upstream reads each its own way. The preemptor is often selected, so
// that default spreading decides where it goes. It runs last: the rest of
// the scenario is as it was without it.
func (g *generator) genSelectors() {
	sel := &g.s.Selectors
	byNamespace := map[string][]*v1.Pod{}
	for _, p := range slices.Concat(g.bound, g.pending, []*v1.Pod{g.s.Preemptor}) {
		byNamespace[p.Namespace] = append(byNamespace[p.Namespace], p)
	}
	for _, ns := range g.namespaces {
		pods := byNamespace[ns]
		if len(pods) == 0 {
			continue
		}
		// Services.
		for range g.between(0, 3) {
			sel.Services = append(sel.Services, g.service(ns, g.serviceSelector(pods)))
		}
		// Controllers, each over the labels of one of its pods.
		var ctrls []controllerRef
		for range g.between(0, 3) {
			ctrls = append(ctrls, g.controller(ns, pick(g, pods...)))
		}
		for _, p := range pods {
			if p == g.s.Preemptor || !g.chance(0.5) {
				continue
			}
			g.own(p, ctrls)
		}
	}

	// The preemptor: a Service over some of its labels, a controller of
	// its own, or both, often.
	pre := g.s.Preemptor
	if g.chance(0.45) && len(pre.Labels) > 0 {
		keys := slices.Sorted(maps.Keys(pre.Labels))
		some := map[string]string{}
		for _, k := range keys {
			if len(some) == 0 || g.chance(0.4) {
				some[k] = pre.Labels[k]
			}
		}
		sel.Services = append(sel.Services, g.service(pre.Namespace, some))
	}
	if g.chance(0.55) {
		g.own(pre, []controllerRef{g.controller(pre.Namespace, pre)})
	}
}

// controllerRef is a controller as a pod's owner reference names it, with
// its selector.
type controllerRef struct {
	ref      metav1.OwnerReference
	selector labels.Selector
}

// service returns a Service of ns with selector (nil: none).
func (g *generator) service(ns string, selector map[string]string) *v1.Service {
	name := g.nextName("svc")
	svc := &v1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name), CreationTimestamp: minutesAgo(g.between(60, 60*24*90))},
		Spec: v1.ServiceSpec{
			Type:            v1.ServiceTypeClusterIP,
			Selector:        selector,
			SessionAffinity: v1.ServiceAffinityNone,
			Ports:           []v1.ServicePort{{Name: "http", Protocol: v1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	if selector == nil && g.chance(0.5) {
		svc.Spec.Type = v1.ServiceTypeExternalName
		svc.Spec.ExternalName = "db.example.com"
		svc.Spec.Ports = nil
	}
	return svc
}

// serviceSelector is the selector of a Service among pods: one or two of
// a pod's labels, the shared vocabulary, a label no pod has, or none.
func (g *generator) serviceSelector(pods []*v1.Pod) map[string]string {
	switch x := g.r.IntN(100); {
	case x < 45:
		p := pick(g, pods...)
		keys := slices.Sorted(maps.Keys(p.Labels))
		if len(keys) == 0 {
			return map[string]string{labelApp: pick(g, apps...)}
		}
		k := pick(g, keys...)
		s := map[string]string{k: p.Labels[k]}
		if len(keys) > 1 && g.chance(0.4) {
			k2 := pick(g, keys...)
			s[k2] = p.Labels[k2]
		}
		return s
	case x < 70:
		return map[string]string{labelApp: pick(g, apps...)}
	case x < 80:
		return map[string]string{labelTier: pick(g, tiers...)}
	case x < 85:
		return map[string]string{labelApp: "z"}
	default:
		return nil
	}
}

// controller returns a ReplicaSet, StatefulSet or ReplicationController of
// ns whose selector selects p (some of its labels; for a ReplicaSet at times
// an expression), added to the scenario.
func (g *generator) controller(ns string, p *v1.Pod) controllerRef {
	keys := slices.Sorted(maps.Keys(p.Labels))
	match := map[string]string{}
	for _, k := range keys {
		if len(match) == 0 || g.chance(0.5) {
			match[k] = p.Labels[k]
		}
	}
	if len(match) == 0 {
		match[labelApp] = pick(g, apps...)
	}
	yes := true
	meta := func(prefix string) metav1.ObjectMeta {
		name := g.nextName(prefix)
		return metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name), Generation: 1,
			CreationTimestamp: minutesAgo(g.between(60, 60*24*90))}
	}
	replicas := int32(g.between(1, 5))
	template := v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(match)},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "main", Image: pauseImage}}}}
	switch x := g.r.IntN(100); {
	case x < 55:
		ls := &metav1.LabelSelector{MatchLabels: match}
		if g.chance(0.2) {
			// matchExpressions: the pod's app among others, or just there.
			k := keys[0]
			if v, ok := p.Labels[labelApp]; ok {
				ls = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: labelApp, Operator: metav1.LabelSelectorOpIn, Values: slices.Sorted(slices.Values([]string{v, "z"}))}}}
			} else {
				ls = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: k, Operator: metav1.LabelSelectorOpExists}}}
			}
		}
		rs := &appsv1.ReplicaSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"}, ObjectMeta: meta("rs"),
			Spec:   appsv1.ReplicaSetSpec{Replicas: &replicas, Selector: ls, Template: template},
			Status: appsv1.ReplicaSetStatus{Replicas: replicas, ObservedGeneration: 1}}
		g.s.Selectors.ReplicaSets = append(g.s.Selectors.ReplicaSets, rs)
		s, _ := metav1.LabelSelectorAsSelector(ls)
		return controllerRef{metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &yes, BlockOwnerDeletion: &yes}, s}
	case x < 80:
		ss := &appsv1.StatefulSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"}, ObjectMeta: meta("ss"),
			Spec: appsv1.StatefulSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: match}, Template: template,
				ServiceName: "headless", PodManagementPolicy: appsv1.OrderedReadyPodManagement,
				UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType}},
			Status: appsv1.StatefulSetStatus{Replicas: replicas, ObservedGeneration: 1}}
		g.s.Selectors.StatefulSets = append(g.s.Selectors.StatefulSets, ss)
		return controllerRef{metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: ss.Name, UID: ss.UID, Controller: &yes, BlockOwnerDeletion: &yes},
			labels.SelectorFromSet(match)}
	default:
		rc := &v1.ReplicationController{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ReplicationController"}, ObjectMeta: meta("rc"),
			Spec:   v1.ReplicationControllerSpec{Replicas: &replicas, Selector: match, Template: &template},
			Status: v1.ReplicationControllerStatus{Replicas: replicas, ObservedGeneration: 1}}
		g.s.Selectors.ReplicationControllers = append(g.s.Selectors.ReplicationControllers, rc)
		return controllerRef{metav1.OwnerReference{APIVersion: "v1", Kind: "ReplicationController", Name: rc.Name, UID: rc.UID, Controller: &yes, BlockOwnerDeletion: &yes},
			labels.SelectorFromSet(match)}
	}
}

// own gives p a controller reference to one of ctrls that selects it, as a
// controller would; rarely one that upstream does not follow, or one to a
// controller that does not select it or no longer exists.
func (g *generator) own(p *v1.Pod, ctrls []controllerRef) {
	var matching []controllerRef
	for _, c := range ctrls {
		if c.selector.Matches(labels.Set(p.Labels)) {
			matching = append(matching, c)
		}
	}
	var ref metav1.OwnerReference
	switch x := g.r.IntN(100); {
	case x < 80 && len(matching) > 0:
		ref = pick(g, matching...).ref
	case x < 85 && len(ctrls) > 0:
		// Orphaned and adopted elsewhere, or relabelled: a controller
		// whose selector need not match.
		ref = pick(g, ctrls...).ref
	case x < 90:
		// Its controller was deleted (the garbage collector has not run).
		yes := true
		name := g.nextName("gone")
		ref = metav1.OwnerReference{APIVersion: "apps/v1", Kind: pick(g, "ReplicaSet", "StatefulSet"), Name: name, UID: types.UID("uid-" + name), Controller: &yes}
	case x < 95 && len(matching) > 0:
		// Not the controller reference: upstream does not follow it.
		ref = pick(g, matching...).ref
		ref.Controller = nil
	case len(matching) > 0:
		// Another apiVersion of the same kind: upstream does not follow it.
		ref = pick(g, matching...).ref
		if ref.APIVersion == "apps/v1" {
			ref.APIVersion = "apps/v1beta2"
		} else {
			ref.Kind = "ReplicaSet"
		}
	default:
		return
	}
	p.OwnerReferences = append(p.OwnerReferences, ref)
}
