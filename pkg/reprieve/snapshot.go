package reprieve

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/reprieve/reprieve/internal/adapter/manifest"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// Snapshot is a cluster as the engine reads it: its nodes, pods, budgets,
// priority classes, pod groups, storage and DRA objects, indexed once.
// Evaluations only read it, so several goroutines may evaluate on one
// Snapshot at once.
type Snapshot struct {
	snap     *snapshot.Snapshot
	warnings []string
}

// Objects are the API objects a Snapshot is built from, as a client lists
// them. Services, ReplicationControllers, ReplicaSets and StatefulSets give
// PodTopologySpread's default constraints their selector, as upstream's
// informers give it them.
type Objects struct {
	Nodes              []*v1.Node
	Pods               []*v1.Pod
	PDBs               []*policyv1.PodDisruptionBudget
	PriorityClasses    []*schedulingv1.PriorityClass
	Namespaces         []*v1.Namespace
	PodGroups          []*schedulingv1beta1.PodGroup
	CompositePodGroups []*schedulingv1alpha3.CompositePodGroup

	Services               []*v1.Service
	ReplicationControllers []*v1.ReplicationController
	ReplicaSets            []*appsv1.ReplicaSet
	StatefulSets           []*appsv1.StatefulSet

	PersistentVolumes      []*v1.PersistentVolume
	PersistentVolumeClaims []*v1.PersistentVolumeClaim
	StorageClasses         []*storagev1.StorageClass
	CSINodes               []*storagev1.CSINode
	CSIDrivers             []*storagev1.CSIDriver
	CSIStorageCapacities   []*storagev1.CSIStorageCapacity
	VolumeAttachments      []*storagev1.VolumeAttachment

	ResourceSlices []*resourceapi.ResourceSlice
	DeviceClasses  []*resourceapi.DeviceClass
	ResourceClaims []*resourceapi.ResourceClaim
}

// LoadSnapshot reads manifests: YAML or JSON files of one or many
// documents (`kind: List` too, as `kubectl get -o yaml` writes them) or
// directories of such files, as `reprieve whatif --snapshot` reads them.
// Unknown and duplicate fields are errors.
func LoadSnapshot(paths ...string) (*Snapshot, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: no manifest to load", ErrInput)
	}
	// Lean, as whatif loads: the pods keep what decisions read.
	set, err := manifest.LoadWith(manifest.Options{Validation: manifest.ValidateStrict, Lean: true}, paths...)
	if err != nil {
		return nil, inputError(err)
	}
	return build(set)
}

// NewSnapshot builds a snapshot from objs, which it does not change: each
// object is admitted as the loader admits a manifest (encoded as JSON and
// read back, so times keep whole seconds). An error names the object by
// its field, such as "Objects.Pods[3]".
func NewSnapshot(objs Objects) (*Snapshot, error) {
	set := manifest.NewSet()
	for _, add := range []func() error{
		func() error { return addObjects(set, "Namespaces", "v1", "Namespace", objs.Namespaces) },
		func() error {
			return addObjects(set, "PriorityClasses", "scheduling.k8s.io/v1", "PriorityClass", objs.PriorityClasses)
		},
		func() error { return addObjects(set, "Nodes", "v1", "Node", objs.Nodes) },
		func() error { return addObjects(set, "Pods", "v1", "Pod", objs.Pods) },
		func() error { return addObjects(set, "PDBs", "policy/v1", "PodDisruptionBudget", objs.PDBs) },
		func() error {
			return addObjects(set, "PodGroups", "scheduling.k8s.io/v1beta1", "PodGroup", objs.PodGroups)
		},
		func() error {
			return addObjects(set, "CompositePodGroups", "scheduling.k8s.io/v1alpha3", "CompositePodGroup", objs.CompositePodGroups)
		},
		func() error { return addObjects(set, "Services", "v1", "Service", objs.Services) },
		func() error {
			return addObjects(set, "ReplicationControllers", "v1", "ReplicationController", objs.ReplicationControllers)
		},
		func() error { return addObjects(set, "ReplicaSets", "apps/v1", "ReplicaSet", objs.ReplicaSets) },
		func() error { return addObjects(set, "StatefulSets", "apps/v1", "StatefulSet", objs.StatefulSets) },
		func() error {
			return addObjects(set, "PersistentVolumes", "v1", "PersistentVolume", objs.PersistentVolumes)
		},
		func() error {
			return addObjects(set, "PersistentVolumeClaims", "v1", "PersistentVolumeClaim", objs.PersistentVolumeClaims)
		},
		func() error {
			return addObjects(set, "StorageClasses", "storage.k8s.io/v1", "StorageClass", objs.StorageClasses)
		},
		func() error { return addObjects(set, "CSINodes", "storage.k8s.io/v1", "CSINode", objs.CSINodes) },
		func() error { return addObjects(set, "CSIDrivers", "storage.k8s.io/v1", "CSIDriver", objs.CSIDrivers) },
		func() error {
			return addObjects(set, "CSIStorageCapacities", "storage.k8s.io/v1", "CSIStorageCapacity", objs.CSIStorageCapacities)
		},
		func() error {
			return addObjects(set, "VolumeAttachments", "storage.k8s.io/v1", "VolumeAttachment", objs.VolumeAttachments)
		},
		func() error {
			return addObjects(set, "ResourceSlices", "resource.k8s.io/v1", "ResourceSlice", objs.ResourceSlices)
		},
		func() error {
			return addObjects(set, "DeviceClasses", "resource.k8s.io/v1", "DeviceClass", objs.DeviceClasses)
		},
		func() error {
			return addObjects(set, "ResourceClaims", "resource.k8s.io/v1", "ResourceClaim", objs.ResourceClaims)
		},
	} {
		if err := add(); err != nil {
			return nil, err
		}
	}
	return build(set)
}

// addObjects adds objs to set as the loader reads them, each named
// Objects.field[i] in messages. An object is copied (shallowly) to set its
// kind, which typed objects often leave empty, and encoded.
func addObjects[T any, P interface {
	*T
	runtime.Object
}](set *manifest.Set, field, apiVersion, kind string, objs []P) error {
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	for i, obj := range objs {
		name := fmt.Sprintf("Objects.%s[%d]", field, i)
		if obj == nil {
			return fmt.Errorf("%w: %s: nil %s", ErrInput, name, kind)
		}
		c := *obj
		P(&c).GetObjectKind().SetGroupVersionKind(gvk)
		data, err := json.Marshal(P(&c))
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrInput, name, err)
		}
		if err := set.AddBytes(name, data); err != nil {
			return inputError(err)
		}
	}
	return nil
}

// build builds the snapshot of a loaded set, with the warnings
// `reprieve whatif` prints for it.
func build(set *manifest.Set) (*Snapshot, error) {
	// A budget without a status gets the disruption controller's, from
	// the snapshot's pods; no clock is read: such a budget has no
	// disrupted pods whose deletion could be overdue.
	if err := set.CompleteBudgets(context.Background(), time.Time{}); err != nil {
		return nil, inputError(err)
	}
	snap, err := set.Build()
	if err != nil {
		return nil, inputError(err)
	}
	warnings := slices.Concat(set.Warnings, set.SkippedLines(), set.WorkloadLines())
	if len(set.Objects.Nodes) == 0 {
		warnings = append(warnings, "the snapshot has no nodes: every pod is unschedulable")
	}
	return &Snapshot{snap: snap, warnings: warnings}, nil
}

// Warnings lists, one line each, what the snapshot's input held that the
// engine does not use (other kinds, workload controllers), each
// PodDisruptionBudget without a status and the status computed for it,
// and a snapshot without nodes.
func (s *Snapshot) Warnings() []string { return slices.Clone(s.warnings) }

// PendingPods lists the snapshot's pods that EvaluatePending may name:
// bound to no node and not finished, as "namespace/name", sorted.
func (s *Snapshot) PendingPods() []string {
	var keys []string
	for _, p := range s.snap.Pods() {
		if p.NodeName() == "" && !p.Finished() {
			keys = append(keys, p.Key)
		}
	}
	slices.Sort(keys)
	return keys
}

// LoadPods reads pods to evaluate, as `reprieve whatif -f` reads them: a
// file of one or many Pods, or a directory of such files, none bound. A
// pod that names no namespace gets "default".
func LoadPods(path string) ([]*v1.Pod, error) {
	pods, _, err := manifest.LoadPodsSet(manifest.Options{Validation: manifest.ValidateStrict}, path)
	if err != nil {
		return nil, inputError(err)
	}
	return pods, nil
}
