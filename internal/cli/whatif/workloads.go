package whatif

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/adapter/admission"
	"github.com/reprieve/reprieve/internal/adapter/manifest"
	"github.com/reprieve/reprieve/internal/adapter/workload"
	"github.com/reprieve/reprieve/internal/cli/clierr"
	"github.com/reprieve/reprieve/internal/whatif"
)

// inputs are what -f holds, as loaded: pods and workloads in order, and
// the objects that join the snapshot.
type inputs struct {
	set   *manifest.Set
	namer *workload.Namer
}

// loadInputs reads -f, naming what the API server would name with a
// Namer seeded by --seed, and gives every object without a namespace
// the one kubectl would (namespaces).
func (o *Options) loadInputs() (inputs, error) {
	namer := workload.NewNamer(o.Seed)
	opts := o.load
	opts.GenerateName = namer.GenerateName
	set, err := manifest.LoadInputs(opts, o.PodFiles...)
	if err != nil {
		return inputs{}, clierr.NameFlag("-f", err)
	}
	// An object skipped is named, one line each: -f is small.
	for _, line := range append(set.Warnings, set.Skipped...) {
		fmt.Fprintln(o.errOut, "warning:", line)
	}
	in := inputs{set: set, namer: namer}
	return in, o.namespaces(in)
}

// namespaces gives each namespaced object of -f without a namespace the
// -n namespace, or else (no --snapshot) the context's, and refuses, as
// kubectl does, an object naming another namespace than -n.
func (o *Options) namespaces(in inputs) error {
	s := in.set
	var objs []metav1.Object
	for _, obj := range s.Inputs {
		objs = append(objs, obj.(metav1.Object))
	}
	o2 := &s.Objects
	objs = appendObjects(objs, o2.Selectors.Services)
	objs = appendObjects(objs, o2.Storage.PersistentVolumeClaims)
	objs = appendObjects(objs, o2.ResourceClaims)
	objs = appendObjects(objs, o2.PDBs)
	for _, obj := range objs {
		switch {
		case s.NamespaceGiven(obj) && o.Kube.Namespace() != "" && obj.GetNamespace() != o.Kube.Namespace():
			return clierr.Usagef("-f %s: the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.",
				s.Origin(obj), obj.GetNamespace(), o.Kube.Namespace(), obj.GetNamespace())
		case s.NamespaceGiven(obj):
		case o.Kube.Namespace() != "":
			obj.SetNamespace(o.Kube.Namespace())
		case len(o.Snapshots) == 0:
			obj.SetNamespace(o.Kube.DefaultNamespace())
		}
	}
	return nil
}

func appendObjects[T metav1.Object](out []metav1.Object, objs []T) []metav1.Object {
	for _, obj := range objs {
		out = append(out, obj)
	}
	return out
}

// made is one object of -f and the pods it makes: a bare pod makes
// itself (w is nil).
type made struct {
	w    *workload.Workload
	src  string
	pods []*v1.Pod
}

// expand makes the pods of every object of -f, in order, and adds to the
// snapshot's set what joins it: the objects of -f that the scheduler reads
// (Services, claims, budgets, PriorityClasses, Namespaces) and the
// workloads' own (their ReplicaSets, StatefulSets, ReplicationControllers
// and Deployments, and a StatefulSet's claims unless the snapshot has
// them, as the controller keeps a claim that exists).
func (o *Options) expand(in inputs, set *manifest.Set) ([]made, error) {
	f := &in.set.Objects
	so := &set.Objects
	so.Selectors.Services = upsert(so.Selectors.Services, f.Selectors.Services...)
	// Claims are created now: the API server gives those without a
	// class the cluster's default one.
	for _, c := range f.Storage.PersistentVolumeClaims {
		admission.DefaultClaimClass(c, so.Storage.StorageClasses)
	}
	so.Storage.PersistentVolumeClaims = upsert(so.Storage.PersistentVolumeClaims, f.Storage.PersistentVolumeClaims...)
	so.ResourceClaims = upsert(so.ResourceClaims, f.ResourceClaims...)
	so.PDBs = upsert(so.PDBs, f.PDBs...)
	so.PriorityClasses = upsert(so.PriorityClasses, f.PriorityClasses...)
	so.Namespaces = upsert(so.Namespaces, f.Namespaces...)
	cluster := workload.Cluster{Nodes: so.Nodes, Now: o.now}
	var out []made
	for _, obj := range in.set.Inputs {
		src := in.set.Origin(obj)
		if pod, ok := obj.(*v1.Pod); ok {
			out = append(out, made{src: src, pods: []*v1.Pod{pod}})
			continue
		}
		w, err := workload.Expand(obj, cluster, in.namer)
		if err != nil {
			m := obj.(metav1.Object)
			var we *workload.Error
			if errors.As(err, &we) {
				return nil, &manifest.InputError{Source: src, Object: w2kind(obj) + " " + m.GetNamespace() + "/" + m.GetName(), Field: we.Field, Detail: "the pod " + we.Pod + " it makes: " + we.Detail}
			}
			return nil, err
		}
		set.Deployments = upsert(set.Deployments, w.Deployments...)
		so.Selectors.ReplicaSets = upsert(so.Selectors.ReplicaSets, w.ReplicaSets...)
		so.Selectors.StatefulSets = upsert(so.Selectors.StatefulSets, w.StatefulSets...)
		so.Selectors.ReplicationControllers = upsert(so.Selectors.ReplicationControllers, w.ReplicationControllers...)
		for _, c := range w.Claims {
			if !slices.ContainsFunc(so.Storage.PersistentVolumeClaims, sameObject(c)) {
				admission.DefaultClaimClass(c, so.Storage.StorageClasses)
				so.Storage.PersistentVolumeClaims = append(so.Storage.PersistentVolumeClaims, c)
			}
		}
		out = append(out, made{w: w, src: src, pods: w.Pods})
	}
	return out, nil
}

// w2kind is the kind of a workload object of -f: its Go type's name, as
// for every API type.
func w2kind(obj any) string { return reflect.TypeOf(obj).Elem().Name() }

// upsert returns list with each of objs in place of the object of its
// namespace and name, or added.
func upsert[T metav1.Object](list []T, objs ...T) []T {
	for _, obj := range objs {
		if i := slices.IndexFunc(list, sameObject(obj)); i >= 0 {
			list[i] = obj
		} else {
			list = append(list, obj)
		}
	}
	return list
}

// sameObject matches the objects of obj's namespace and name.
func sameObject[T metav1.Object](obj T) func(T) bool {
	return func(x T) bool { return x.GetNamespace() == obj.GetNamespace() && x.GetName() == obj.GetName() }
}

// hasWorkload reports whether ms hold a workload.
func hasWorkload(ms []made) bool {
	return slices.ContainsFunc(ms, func(m made) bool { return m.w != nil })
}

// printWorkloads writes, for a table, one line per workload of ms saying
// what became of its pods, whose decisions are ds in order.
func printWorkloads(w io.Writer, ms []made, ds []*whatif.Decision, nodes int) {
	first := true
	i := 0
	for _, m := range ms {
		n := len(m.pods)
		if m.w == nil {
			i += n
			continue
		}
		if first {
			fmt.Fprintln(w)
			first = false
		}
		fmt.Fprintln(w, workloadLine(m.w, ds[i:i+n], nodes))
		i += n
	}
}

// workloadLine says what became of w's pods, decided ds: "Deployment
// shop/web: 3 of 5 replicas placed; 2 preempt 4 pods on node-a, node-b".
func workloadLine(w *workload.Workload, ds []*whatif.Decision, nodes int) string {
	noun := "pods"
	if w.Replicated {
		noun = "replicas"
	}
	var placed, preempting, victims, pending int
	var on []string
	for _, d := range ds {
		switch {
		case d.Placement != nil:
			placed++
		case d.NominatedNode != "":
			preempting++
			victims += len(d.Victims)
			if !slices.Contains(on, d.NominatedNode) {
				on = append(on, d.NominatedNode)
			}
		default:
			pending++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s/%s: ", w.Kind, w.Namespace, w.Name)
	if w.Kind == "DaemonSet" {
		fmt.Fprintf(&b, "targets %d of %d nodes; ", len(ds), nodes)
	}
	fmt.Fprintf(&b, "%d of %d %s placed", placed, len(ds), noun)
	if preempting > 0 {
		slices.Sort(on)
		fmt.Fprintf(&b, "; %d %s %s on %s", preempting, plural(preempting, "preempts", "preempt"), plural(victims, "1 pod", fmt.Sprintf("%d pods", victims)), someOf(on, maxTiedNamed))
	}
	if pending > 0 {
		fmt.Fprintf(&b, "; %d %s nowhere, even by preemption", pending, plural(pending, "fits", "fit"))
	}
	if w.Note != "" {
		fmt.Fprintf(&b, " (%s)", w.Note)
	}
	return b.String()
}

// plural is one if n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
