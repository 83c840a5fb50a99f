package kube

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/reprieve/reprieve/pkg/snapshot"
)

// List reads the objects a snapshot needs from a live cluster with list
// calls only (nodes, pods, PodDisruptionBudgets, PriorityClasses,
// namespaces, the storage objects of liststorage.go and the DRA objects,
// cluster-wide), so it works under a read-only identity. Namespaces and the
// DRA objects are optional: if listing them fails they are skipped with a
// warning (namespaces only matter for pod affinity namespaceSelectors).
func List(ctx context.Context, client kubernetes.Interface) (snapshot.Objects, []string, error) {
	var objs snapshot.Objects
	var warnings []string
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return objs, nil, fmt.Errorf("listing nodes: %w", err)
	}
	for i := range nodes.Items {
		objs.Nodes = append(objs.Nodes, &nodes.Items[i])
	}
	pods, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return objs, nil, fmt.Errorf("listing pods: %w", err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName != "" && !hasNode(nodes.Items, p.Spec.NodeName) {
			warnings = append(warnings, fmt.Sprintf("pod %s/%s is bound to node %q, which no longer exists; ignoring it", p.Namespace, p.Name, p.Spec.NodeName))
			continue
		}
		objs.Pods = append(objs.Pods, p)
	}
	pdbs, err := client.PolicyV1().PodDisruptionBudgets(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return objs, nil, fmt.Errorf("listing poddisruptionbudgets: %w", err)
	}
	for i := range pdbs.Items {
		objs.PDBs = append(objs.PDBs, &pdbs.Items[i])
	}
	pcs, err := client.SchedulingV1().PriorityClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return objs, nil, fmt.Errorf("listing priorityclasses: %w", err)
	}
	for i := range pcs.Items {
		objs.PriorityClasses = append(objs.PriorityClasses, &pcs.Items[i])
	}
	if err := listStorage(ctx, client, &objs.Storage); err != nil {
		return objs, nil, err
	}
	nss, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		warnings = append(warnings, fmt.Sprintf("cannot list namespaces (%v); pod affinity namespaceSelectors will see no labels", err))
	} else {
		for i := range nss.Items {
			objs.Namespaces = append(objs.Namespaces, &nss.Items[i])
		}
	}
	warnings = append(warnings, listDRA(ctx, client, &objs)...)
	return objs, warnings, nil
}

func hasNode(nodes []v1.Node, name string) bool {
	for i := range nodes {
		if nodes[i].Name == name {
			return true
		}
	}
	return false
}
