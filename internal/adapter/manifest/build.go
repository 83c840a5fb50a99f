package manifest

import (
	"errors"
	"fmt"
	"math"
	"runtime"

	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/adapter/admission"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// Build builds the snapshot, naming the file of any offending object.
func (s *Set) Build() (*snapshot.Snapshot, error) {
	if err := CheckNodeSums(&s.Objects, s.Origin); err != nil {
		return nil, err
	}
	workers := s.opts.Parallelism
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	snap, err := snapshot.NewParallel(s.Objects, workers)
	if err != nil {
		return nil, s.locate(err)
	}
	return snap, nil
}

// CheckNodeSums refuses pods bound to a node whose requests, added up as
// the scheduler adds them (also with the defaults it counts for scoring),
// do not fit the scheduler's 64-bit arithmetic: each pod is representable
// after admission, but many together could still wrap around. origin names
// a pod's file, given the pod as Objects holds it (*v1.Pod or
// *snapshot.PodParts).
func CheckNodeSums(objs *snapshot.Objects, origin func(any) string) error {
	// Most clusters' pods are far from the limit: when the bound of every
	// node's sums fits, nothing can overflow.
	if boundsFit(objs) {
		return nil
	}
	type sums struct{ cpu, mem, eph, nzCPU, nzMem int64 }
	byNode := map[string]*sums{}
	scalars := map[string]int64{}
	add := func(total *int64, v int64) bool {
		if v > 0 && *total > math.MaxInt64-v {
			return false
		}
		*total += v
		return true
	}
	for p, given := range objs.AllPods() {
		node := p.Spec.NodeName
		if !counted(node, p.Status.Phase) {
			continue
		}
		t := byNode[node]
		if t == nil {
			t = &sums{}
			byNode[node] = t
		}
		r := snapshot.AssignedPodRequests(p)
		nzCPU, nzMem := snapshot.NonZeroRequests(p)
		what := ""
		switch {
		case !add(&t.cpu, r.MilliCPU) || !add(&t.nzCPU, nzCPU):
			what = "cpu"
		case !add(&t.mem, r.Memory) || !add(&t.nzMem, nzMem):
			what = "memory"
		case !add(&t.eph, r.EphemeralStorage):
			what = "ephemeral-storage"
		}
		for _, sc := range r.Scalars {
			total := scalars[node+"\x00"+string(sc.Name)]
			if what == "" && !add(&total, sc.Value) {
				what = string(sc.Name)
			}
			scalars[node+"\x00"+string(sc.Name)] = total
		}
		if what != "" {
			return &InputError{Source: origin(given), Object: objectName("Pod", p.Namespace, p.Name), Field: "spec.nodeName",
				Detail: fmt.Sprintf("the pods bound to node %q together request more %s than the scheduler can count (%d units)", node, what, int64(math.MaxInt64))}
		}
	}
	return nil
}

// boundsFit reports whether the bound of the requests of the pods bound to
// each node (admission.RequestsBound) fits in 64 bits, node by node. A pod
// kept in parts whose status reports no container (a lean load drops the
// statuses that agree with the spec) has its shape's bound, worked out once
// for all the pods of the shape rather than for each pod made whole.
func boundsFit(objs *snapshot.Objects) bool {
	bounds := map[string]int64{}
	// add adds the bound b (ok: it fits in 64 bits) of a pod on node, or
	// reports that the node's sum would not fit.
	add := func(node string, b int64, ok bool) bool {
		if !ok || bounds[node] > math.MaxInt64-b {
			return false
		}
		bounds[node] += b
		return true
	}
	for _, p := range objs.Pods {
		if !counted(p.Spec.NodeName, p.Status.Phase) {
			continue
		}
		if b, ok := admission.RequestsBound(p); !add(p.Spec.NodeName, b, ok) {
			return false
		}
	}
	type bound struct {
		b  int64
		ok bool
	}
	shapes := map[*v1.Pod]bound{}
	var whole v1.Pod
	for _, parts := range objs.PodParts {
		if !counted(parts.NodeName, parts.Status.Phase) {
			continue
		}
		sb, known := shapes[parts.Shape]
		switch {
		case len(parts.Status.ContainerStatuses) > 0 || parts.Status.Rest != nil:
			// The status may count: the pod made whole.
			parts.Into(&whole)
			sb.b, sb.ok = admission.RequestsBound(&whole)
		case !known:
			sb.b, sb.ok = admission.RequestsBound(parts.Shape)
			shapes[parts.Shape] = sb
		}
		if !add(parts.NodeName, sb.b, sb.ok) {
			return false
		}
	}
	return true
}

// counted reports whether a pod on node in phase counts in the node's
// sums: it is bound and not finished.
func counted(node string, phase v1.PodPhase) bool {
	return node != "" && phase != v1.PodSucceeded && phase != v1.PodFailed
}

// locate turns a snapshot.ObjectError into an InputError with its file.
func (s *Set) locate(err error) error {
	var oe *snapshot.ObjectError
	if !errors.As(err, &oe) {
		return err
	}
	return &InputError{Source: s.Origin(oe.Obj), Object: objectName(oe.Kind, oe.Namespace, oe.Name), Field: oe.Field, Detail: oe.Detail}
}

// Locate is locate for callers that build snapshots or pods themselves.
func (s *Set) Locate(err error) error { return s.locate(err) }
