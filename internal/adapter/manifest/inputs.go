package manifest

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// inputKinds are the kinds a Workloads set reads that a snapshot skips,
// with their apiVersion.
var inputKinds = map[string]string{
	"DaemonSet": "apps/v1",
	"CronJob":   "batch/v1",
}

// isInput reports whether obj is what whatif -f evaluates: a Pod or a
// workload object.
func isInput(obj any) bool {
	switch obj.(type) {
	case *v1.Pod, *appsv1.Deployment, *appsv1.ReplicaSet, *appsv1.StatefulSet, *appsv1.DaemonSet,
		*batchv1.Job, *batchv1.CronJob, *v1.ReplicationController:
		return true
	}
	return false
}

// prepareInput prepares, for a Workloads set, what prepare leaves to a
// snapshot's loader to skip or refuse: a DaemonSet or a CronJob, and a Pod
// named by metadata.generateName alone, which is named here as the API
// server names it before admission. Any other p is returned as it is.
func (s *Set) prepareInput(raw []byte, p prepared) prepared {
	h := p.h
	if p.problems().err != nil || raw == nil {
		return p
	}
	apiVersion, extra := inputKinds[h.Kind]
	generated := h.Kind == "Pod" && h.Name == "" && h.APIVersion == "v1" && s.opts.GenerateName != nil
	if !extra && !generated {
		return p
	}
	q := prepared{h: h, known: true, namespaced: true, apiVersion: apiVersion, ns: h.Namespace}
	if generated {
		q.apiVersion = "v1"
	}
	if q.ns == "" {
		q.ns = metav1.NamespaceDefault
	}
	if h.APIVersion != q.apiVersion || (extra && h.Name == "") {
		return q // commit words what is wrong
	}
	if field, detail := checkQuantities(raw); field != "" {
		pr := q.problemsToSet()
		pr.quantityField, pr.quantityDetail = field, detail
		return q
	}
	obj, unknown, err := decodeTyped(h.Kind, raw)
	if err == nil && generated {
		pod := obj.(*v1.Pod)
		if pod.GenerateName == "" {
			return p // commit says the name is missing
		}
		pod.Name = s.opts.GenerateName(q.ns, pod.GenerateName)
		q.h.Name = pod.Name
	}
	q.setDecoded(obj, unknown, err)
	if err == nil {
		q.finish(false)
	}
	return q
}

// LoadInputs reads, with opts, what whatif -f evaluates from paths (files,
// directories, "-" for standard input), with Options.Workloads: Pods, none
// bound, and workload objects, in Inputs in the order read, and the
// objects that join the snapshot with them (Services, PersistentVolumeClaims,
// ResourceClaims, PodDisruptionBudgets, PriorityClasses, Namespaces, and
// the workloads' ReplicaSets, StatefulSets and ReplicationControllers).
// Objects of any other kind are Skipped, one line each; a Node is an
// error, as the cluster goes in --snapshot.
func LoadInputs(opts Options, paths ...string) (*Set, error) {
	opts.Lean, opts.Workloads = false, true
	s := NewSetWith(opts)
	for _, path := range paths {
		if err := s.AddPath(path); err != nil {
			return nil, err
		}
	}
	name := strings.Join(paths, ", ")
	if name == "-" {
		name = StdinName
	}
	o := &s.Objects
	if len(o.Nodes) > 0 {
		n := o.Nodes[0]
		return nil, &InputError{Source: name, Detail: "-f must hold Pods and nothing else of the cluster: " + objectName("Node", "", n.Name) + " goes in --snapshot"}
	}
	for _, p := range o.Pods {
		if p.Spec.NodeName != "" {
			return nil, &InputError{Source: s.Origin(p), Object: objectName("Pod", p.Namespace, p.Name), Field: "spec.nodeName", Detail: "the pod is already bound; whatif needs a pod to schedule"}
		}
	}
	if len(s.Inputs) == 0 {
		return nil, &InputError{Source: name, Detail: "no Pod or workload found; -f must hold pods or workloads to evaluate"}
	}
	s.skipClusterObjects()
	return s, nil
}

// skipClusterObjects moves the objects of kinds that are the cluster's,
// not a workload's, to Skipped.
func (s *Set) skipClusterObjects() {
	skip := func(kind, apiVersion string, obj metav1.Object) {
		s.Skipped = append(s.Skipped, fmt.Sprintf("%s: skipping %s %s: kind not used in -f (the cluster goes in --snapshot)",
			s.Origin(obj), apiVersion, objectName(kind, obj.GetNamespace(), obj.GetName())))
		s.skipped = append(s.skipped, skippedObject{src: s.Origin(obj), kind: apiVersion + " " + kind})
	}
	o := &s.Objects
	for _, x := range o.PodGroups {
		skip("PodGroup", kinds["PodGroup"], x)
	}
	for _, x := range o.CompositePodGroups {
		skip("CompositePodGroup", kinds["CompositePodGroup"], x)
	}
	for _, x := range o.ResourceSlices {
		skip("ResourceSlice", draAPIVersion, x)
	}
	for _, x := range o.DeviceClasses {
		skip("DeviceClass", draAPIVersion, x)
	}
	for _, x := range s.ResourceClaimTemplates {
		skip("ResourceClaimTemplate", draAPIVersion, x)
	}
	st := &o.Storage
	for _, x := range st.PersistentVolumes {
		skip("PersistentVolume", "v1", x)
	}
	for _, x := range st.StorageClasses {
		skip("StorageClass", "storage.k8s.io/v1", x)
	}
	for _, x := range st.CSINodes {
		skip("CSINode", "storage.k8s.io/v1", x)
	}
	for _, x := range st.CSIDrivers {
		skip("CSIDriver", "storage.k8s.io/v1", x)
	}
	for _, x := range st.CSIStorageCapacities {
		skip("CSIStorageCapacity", "storage.k8s.io/v1", x)
	}
	for _, x := range st.VolumeAttachments {
		skip("VolumeAttachment", "storage.k8s.io/v1", x)
	}
	for _, r := range s.Simulations {
		s.Skipped = append(s.Skipped, r.Source+": skipping "+SimulationAPIVersion+" Simulation: kind not used in -f")
		s.skipped = append(s.skipped, skippedObject{src: r.Source, kind: SimulationAPIVersion + " Simulation"})
	}
	o.PodGroups, o.CompositePodGroups, o.ResourceSlices, o.DeviceClasses = nil, nil, nil, nil
	s.ResourceClaimTemplates, s.Simulations = nil, nil
	o.Storage = snapshot.StorageObjects{PersistentVolumeClaims: st.PersistentVolumeClaims}
}
