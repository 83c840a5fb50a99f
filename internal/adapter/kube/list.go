package kube

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// List reads the objects a snapshot needs from a live cluster with list
// calls only (nodes, pods, PodDisruptionBudgets, PriorityClasses,
// namespaces, the storage objects of liststorage.go, the DRA objects, and
// the Services, ReplicationControllers, ReplicaSets and StatefulSets whose
// selectors PodTopologySpread's default constraints take, cluster-wide), so
// it works under a read-only identity. Namespaces, the DRA objects and the
// selecting objects are optional: a kind that cannot be listed is skipped
// with a warning (namespaces only matter for pod affinity
// namespaceSelectors).
func List(ctx context.Context, client kubernetes.Interface) (snapshot.Objects, []string, error) {
	return ListWith(ctx, client, ListOptions{})
}

// ListOptions tune how List reads a cluster.
type ListOptions struct {
	// ChunkSize is the page size of the node and pod lists (kubectl's
	// --chunk-size, whose default is 500; 0 lists each kind in one
	// response).
	ChunkSize int64
	// Progress, when set, is called with the number of nodes and pods
	// read so far after each page (from the listing goroutines, one call
	// at a time).
	Progress func(nodes, pods int)
	// Features are the feature gates: with GenericWorkload the PodGroups
	// are listed too, with CompositePodGroup the CompositePodGroups.
	Features profile.Features

	// typed lists nodes and pods with the typed clients even when a REST
	// client is at hand (tests compare both ways).
	typed bool
}

// ListWith is List with options. The kinds are listed concurrently; nodes
// and pods page by page, the next page requested while one is decoded,
// each page kept as it is decoded, without its managed fields (often most
// of an object as the API server returns it; nothing reads them, and
// pkg/loader drops them too).
func ListWith(ctx context.Context, client kubernetes.Interface, opts ListOptions) (snapshot.Objects, []string, error) {
	chunk := max(opts.ChunkSize, 0)
	var (
		objs              snapshot.Objects
		nodes             []*v1.Node
		pods              []*v1.Pod
		nodeCount, podCnt atomic.Int64
		nsWarning         string
		draWarnings       []string
		groupWarnings     []string
		selWarnings       []string
	)
	var progressMu sync.Mutex
	progress := func() {
		if opts.Progress != nil {
			progressMu.Lock()
			defer progressMu.Unlock()
			opts.Progress(int(nodeCount.Load()), int(podCnt.Load()))
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	// run lists on a goroutine of its own; the first error stops the
	// others. what names the kind ("" when f's errors name it).
	run := func(what string, f func() error) {
		wg.Go(func() {
			err := f()
			if err == nil {
				return
			}
			if what != "" {
				err = fmt.Errorf("listing %s: %w", what, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if firstErr == nil {
				firstErr = err
				cancel()
			}
		})
	}
	run("nodes", func() error {
		reset := func() { nodes = nil; nodeCount.Store(0) }
		return listPages(ctx, chunk, nodePages(client, opts.typed), func(items []v1.Node) {
			for i := range items {
				items[i].ManagedFields = nil
				nodes = append(nodes, &items[i])
			}
			nodeCount.Add(int64(len(items)))
			progress()
		}, reset)
	})
	run("pods", func() error {
		reset := func() { pods = nil; podCnt.Store(0) }
		return listPages(ctx, chunk, podPages(client, opts.typed), func(items []v1.Pod) {
			for i := range items {
				items[i].ManagedFields = nil
				pods = append(pods, &items[i])
			}
			podCnt.Add(int64(len(items)))
			progress()
		}, reset)
	})
	run("poddisruptionbudgets", func() error {
		l, err := client.PolicyV1().PodDisruptionBudgets(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err == nil {
			for i := range l.Items {
				objs.PDBs = append(objs.PDBs, &l.Items[i])
			}
		}
		return err
	})
	run("priorityclasses", func() error {
		l, err := client.SchedulingV1().PriorityClasses().List(ctx, metav1.ListOptions{})
		if err == nil {
			for i := range l.Items {
				objs.PriorityClasses = append(objs.PriorityClasses, &l.Items[i])
			}
		}
		return err
	})
	run("", func() error { return listStorage(ctx, client, &objs.Storage) })
	run("namespaces", func() error {
		l, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			nsWarning = fmt.Sprintf("cannot list namespaces (%v); pod affinity namespaceSelectors will see no labels", err)
			return nil
		}
		for i := range l.Items {
			objs.Namespaces = append(objs.Namespaces, &l.Items[i])
		}
		return nil
	})
	run("DRA objects", func() error {
		draWarnings = listDRA(ctx, client, &objs)
		return nil
	})
	run("pod groups", func() error {
		groupWarnings = listGroups(ctx, client, &objs, opts.Features)
		return nil
	})
	run("", func() error {
		selWarnings = listSelectors(ctx, client, &objs.Selectors)
		return nil
	})
	wg.Wait()
	if firstErr != nil {
		return snapshot.Objects{}, nil, firstErr
	}
	var warnings []string
	objs.Nodes = nodes
	known := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		known[n.Name] = true
	}
	for _, p := range pods {
		if p.Spec.NodeName != "" && !known[p.Spec.NodeName] {
			warnings = append(warnings, fmt.Sprintf("pod %s/%s is bound to node %q, which no longer exists; ignoring it", p.Namespace, p.Name, p.Spec.NodeName))
			continue
		}
		objs.Pods = append(objs.Pods, p)
	}
	if nsWarning != "" {
		warnings = append(warnings, nsWarning)
	}
	warnings = append(warnings, draWarnings...)
	warnings = append(warnings, groupWarnings...)
	warnings = append(warnings, selWarnings...)
	return objs, warnings, nil
}

// nodePages fetches the node list's pages: as bytes decoded by rawPages
// when client has a REST client (unless typed), else with the typed List.
func nodePages(client kubernetes.Interface, typed bool) fetchPage[v1.Node] {
	if rc := restClient(client); rc != nil && !typed {
		return newRawPages[v1.Node](rc, "nodes", "NodeList",
			func() runtime.Object { return &v1.NodeList{} },
			func(l runtime.Object) []v1.Node { return l.(*v1.NodeList).Items }).fetch
	}
	return typedPages(client.CoreV1().Nodes().List, func(l *v1.NodeList) []v1.Node { return l.Items })
}

// podPages is nodePages for the pods of every namespace.
func podPages(client kubernetes.Interface, typed bool) fetchPage[v1.Pod] {
	if rc := restClient(client); rc != nil && !typed {
		return newRawPages[v1.Pod](rc, "pods", "PodList",
			func() runtime.Object { return &v1.PodList{} },
			func(l runtime.Object) []v1.Pod { return l.(*v1.PodList).Items }).fetch
	}
	return typedPages(client.CoreV1().Pods(metav1.NamespaceAll).List, func(l *v1.PodList) []v1.Pod { return l.Items })
}

// restClient returns client's core REST client, or nil when it has none
// (a fake clientset's is a nil pointer).
func restClient(client kubernetes.Interface) rest.Interface {
	rc, ok := client.CoreV1().RESTClient().(*rest.RESTClient)
	if !ok || rc == nil {
		return nil
	}
	return rc
}
