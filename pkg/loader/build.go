package loader

import (
	"errors"
	"fmt"
	"math"
	"runtime"

	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/admission"
	"github.com/reprieve/reprieve/internal/snapshot"
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
	bounds := map[string]int64{}
	fits := true
	for p := range objs.AllPods() {
		node := p.Spec.NodeName
		if node == "" || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		b, ok := admission.RequestsBound(p)
		if !ok || bounds[node] > math.MaxInt64-b {
			fits = false
			break
		}
		bounds[node] += b
	}
	if fits {
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
		if node == "" || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
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
