package workload

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// The labels the daemonset controller gives its pods.
const (
	templateGenerationLabel = "pod-template-generation"
	daemonRevisionLabel     = appsv1.DefaultDaemonSetUniqueLabelKey
)

// daemonSet makes one pod per node, in the order of their names, that the
// daemonset controller decides should run one (NodeShouldRunDaemonPod):
// the template's nodeName, if any, is the node's, the node matches its
// nodeSelector and required node affinity, and every NoSchedule and
// NoExecute taint of the node is tolerated by the template's tolerations
// and those the controller adds. Each pod has those tolerations, the
// template generation and revision hash labels, and its required node
// affinity replaced by its node's name.
func daemonSet(in *appsv1.DaemonSet, nodes []*v1.Node, n *Namer) (*Workload, error) {
	ds := in.DeepCopy()
	setUID(ds, "DaemonSet", n)
	w := &Workload{Kind: "DaemonSet", Namespace: ds.Namespace, Name: ds.Name}
	hash, err := revisionHash(ds)
	if err != nil {
		return nil, fmt.Errorf("daemonset %s/%s: %w", ds.Namespace, ds.Name, err)
	}
	t := ds.Spec.Template.DeepCopy()
	addDaemonTolerations(&t.Spec)
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	generation := ds.Annotations[appsv1.DeprecatedTemplateGeneration]
	if generation != "" {
		t.Labels[templateGenerationLabel] = generation
	}
	t.Labels[daemonRevisionLabel] = hash
	required := nodeaffinity.NewRequiredNodeAffinity(ds.Spec.Template.Spec.NodeSelector, ds.Spec.Template.Spec.Affinity)
	sorted := slices.SortedFunc(slices.Values(nodes), func(a, b *v1.Node) int { return strings.Compare(a.Name, b.Name) })
	for _, node := range sorted {
		if !shouldRun(node, t.Spec.NodeName, t.Spec.Tolerations, required) {
			continue
		}
		pt := t.DeepCopy()
		pt.Spec.Affinity = onlyNode(pt.Spec.Affinity, node.Name)
		pod, err := admit(podFromTemplate(pt, ds, daemonSetKind), n)
		if err != nil {
			return nil, err
		}
		w.Pods = append(w.Pods, pod)
	}
	return w, nil
}

// shouldRun is the daemonset controller's decision that a daemon pod
// should run on node.
func shouldRun(node *v1.Node, nodeName string, tolerations []v1.Toleration, required nodeaffinity.RequiredNodeAffinity) bool {
	if nodeName != "" && nodeName != node.Name {
		return false
	}
	// Errors are ignored, as the controller ignores them.
	if fits, _ := required.Match(node); !fits {
		return false
	}
	_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, tolerations, func(t *v1.Taint) bool {
		return t.Effect == v1.TaintEffectNoExecute || t.Effect == v1.TaintEffectNoSchedule
	}, false)
	return !untolerated
}

// addDaemonTolerations adds the tolerations every daemon pod gets: node
// problems (not ready, unreachable: NoExecute; disk, memory and PID
// pressure, unschedulable: NoSchedule) and, with host networking, an
// unavailable network. A toleration of the same key, operator, value and
// effect is replaced.
func addDaemonTolerations(s *v1.PodSpec) {
	add := func(key string, effect v1.TaintEffect) {
		t := v1.Toleration{Key: key, Operator: v1.TolerationOpExists, Effect: effect}
		for i := range s.Tolerations {
			if t.MatchToleration(&s.Tolerations[i]) {
				if !reflect.DeepEqual(t, s.Tolerations[i]) {
					s.Tolerations[i] = t
				}
				return
			}
		}
		s.Tolerations = append(s.Tolerations, t)
	}
	add(v1.TaintNodeNotReady, v1.TaintEffectNoExecute)
	add(v1.TaintNodeUnreachable, v1.TaintEffectNoExecute)
	add(v1.TaintNodeDiskPressure, v1.TaintEffectNoSchedule)
	add(v1.TaintNodeMemoryPressure, v1.TaintEffectNoSchedule)
	add(v1.TaintNodePIDPressure, v1.TaintEffectNoSchedule)
	add(v1.TaintNodeUnschedulable, v1.TaintEffectNoSchedule)
	if s.HostNetwork {
		add(v1.TaintNodeNetworkUnavailable, v1.TaintEffectNoSchedule)
	}
}

// onlyNode returns affinity whose required node affinity is one term
// matching the node's name, as the controller replaces it.
func onlyNode(affinity *v1.Affinity, node string) *v1.Affinity {
	sel := &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchFields: []v1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{node}}},
	}}}
	if affinity == nil {
		affinity = &v1.Affinity{}
	}
	if affinity.NodeAffinity == nil {
		affinity.NodeAffinity = &v1.NodeAffinity{}
	}
	affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = sel
	return affinity
}
