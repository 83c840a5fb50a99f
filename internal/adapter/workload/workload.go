// Package workload makes the pods of workload objects (Deployments,
// ReplicaSets, StatefulSets, Jobs, CronJobs, DaemonSets and
// ReplicationControllers) as their controllers and the API server would
// make them: the objects the controllers create on the way (a
// Deployment's ReplicaSet, a CronJob's Job, a StatefulSet's claims), the
// pods' names, labels, owner references and spec, each pod defaulted and
// validated by admission. It is pure: objects in, objects out; names the
// API server would draw at random come from a seeded Namer.
package workload

import (
	"fmt"
	"maps"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/reprieve/reprieve/internal/adapter/admission"
)

// Cluster is what the controllers read of the cluster to make pods.
type Cluster struct {
	// Nodes are the nodes a DaemonSet may target.
	Nodes []*v1.Node
	// Now is when a CronJob's job is scheduled.
	Now time.Time
}

// Workload is what the controllers make for one workload object.
type Workload struct {
	// Kind, Namespace and Name name the object read.
	Kind, Namespace, Name string
	// Replicated is set for kinds whose pods are replicas (Deployments,
	// ReplicaSets, StatefulSets, ReplicationControllers).
	Replicated bool
	// Pods are the pods made, in the order the controllers make them,
	// defaulted and validated.
	Pods []*v1.Pod
	// Note says why the controller makes fewer pods than the object asks
	// for (a paused Deployment, a suspended Job), or is "".
	Note string

	// The objects the scheduler's default topology spreading and the
	// disruption controller read: the object itself and those its
	// controllers make, with the UIDs the pods' owner references name.
	Deployments            []*appsv1.Deployment
	ReplicaSets            []*appsv1.ReplicaSet
	StatefulSets           []*appsv1.StatefulSet
	ReplicationControllers []*v1.ReplicationController
	// Claims are the PersistentVolumeClaims a StatefulSet's pods need,
	// made from its volumeClaimTemplates.
	Claims []*v1.PersistentVolumeClaim
}

// Error is a problem with what a controller makes: a pod the API server
// refuses. Field and Detail are admission's.
type Error struct {
	// Pod is the name of the pod refused.
	Pod           string
	Field, Detail string
}

func (e *Error) Error() string {
	return fmt.Sprintf("the pod %s it makes: %s: %s", e.Pod, e.Field, e.Detail)
}

// Kinds are the workload kinds Expand reads, by kind, with their
// apiVersion.
var Kinds = map[string]string{
	"Deployment":            "apps/v1",
	"ReplicaSet":            "apps/v1",
	"StatefulSet":           "apps/v1",
	"DaemonSet":             "apps/v1",
	"Job":                   "batch/v1",
	"CronJob":               "batch/v1",
	"ReplicationController": "v1",
}

// Is reports whether obj is of a workload kind Expand reads.
func Is(obj any) bool {
	switch obj.(type) {
	case *appsv1.Deployment, *appsv1.ReplicaSet, *appsv1.StatefulSet, *appsv1.DaemonSet,
		*batchv1.Job, *batchv1.CronJob, *v1.ReplicationController:
		return true
	}
	return false
}

// Expand returns what the controllers make of obj, an admitted workload
// object (see Is), in c; obj is not changed. The error is an *Error.
func Expand(obj any, c Cluster, n *Namer) (*Workload, error) {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return deployment(o, n)
	case *appsv1.ReplicaSet:
		return replicaSet(o, n)
	case *v1.ReplicationController:
		return replicationController(o, n)
	case *appsv1.StatefulSet:
		return statefulSet(o, n)
	case *batchv1.Job:
		return job(o, n)
	case *batchv1.CronJob:
		return cronJob(o, c.Now, n)
	case *appsv1.DaemonSet:
		return daemonSet(o, c.Nodes, n)
	}
	return nil, fmt.Errorf("workload: %T is no workload kind", obj)
}

// The group-version-kinds of the owners pods and objects name.
var (
	deploymentKind  = appsv1.SchemeGroupVersion.WithKind("Deployment")
	replicaSetKind  = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	statefulSetKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
	daemonSetKind   = appsv1.SchemeGroupVersion.WithKind("DaemonSet")
	jobKind         = batchv1.SchemeGroupVersion.WithKind("Job")
	cronJobKind     = batchv1.SchemeGroupVersion.WithKind("CronJob")
	rcKind          = v1.SchemeGroupVersion.WithKind("ReplicationController")
)

// podFromTemplate is the pod a controller asks the API server for, as
// upstream's controller.GetPodFromTemplate makes it: the template's
// labels, annotations, finalizers and spec, owned by the controller
// owner (of kind gvk), named by the API server from generateName (unless
// the caller names it).
func podFromTemplate(t *v1.PodTemplateSpec, owner metav1.Object, gvk schema.GroupVersionKind) *v1.Pod {
	labels := maps.Clone(t.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	annotations := maps.Clone(t.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	return &v1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       owner.GetNamespace(),
			GenerateName:    podsPrefix(owner.GetName()),
			Labels:          labels,
			Annotations:     annotations,
			Finalizers:      append([]string(nil), t.Finalizers...),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(owner, gvk)},
		},
		Spec: *t.Spec.DeepCopy(),
	}
}

// podsPrefix is the generateName of a controller's pods: its name and a
// dash, unless that is too long a name.
func podsPrefix(name string) string {
	if len(name)+1 > maxNameLength {
		return name
	}
	return name + "-"
}

// maxNameLength is the longest object name (a DNS subdomain).
const maxNameLength = 253

// admit names pod (from its generateName unless named) and admits it as
// the API server does on create.
func admit(pod *v1.Pod, n *Namer) (*v1.Pod, error) {
	if pod.Name == "" {
		pod.Name = n.GenerateName(pod.Namespace, pod.GenerateName)
	}
	if pod.UID == "" {
		pod.UID = n.UID("Pod", pod.Namespace, pod.Name)
	}
	if fe := admission.Admit(pod); fe != nil {
		return nil, &Error{Pod: pod.Name, Field: fe.Field, Detail: fe.ErrorBody()}
	}
	return pod, nil
}

// count is *p, or 0.
func count(p *int32) int {
	if p == nil {
		return 0
	}
	return int(*p)
}
