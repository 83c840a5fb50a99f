package manifest

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/adapter/disruption"
)

// input is a path a set read, or the bytes it read as name (standard
// input, or AddBytes).
type input struct {
	path string
	data []byte
}

// keepInput records what a lean set reads: a budget without a status
// needs its pods' Ready conditions, which a lean set drops.
func (s *Set) keepInput(in input) {
	if s.opts.Lean {
		s.inputs = append(s.inputs, in)
	}
}

// CompleteBudgets gives each PodDisruptionBudget of the set that has no
// status (disruption.Unset) the status the disruption controller would
// compute at now from the set's pods and controllers, and adds one line
// per such budget to Warnings. A lean set's pods have lost their Ready
// conditions: its inputs are then read again, whole, for them — once,
// and only when a budget has no status (a dump of a live cluster has its
// controller's statuses). The set lets its inputs go either way.
func (s *Set) CompleteBudgets(ctx context.Context, now time.Time) error {
	defer func() { s.inputs = nil }()
	if !disruption.NeedsPods(s.Objects.PDBs) {
		return nil
	}
	pods := s.Objects.Pods
	if s.opts.Lean {
		var err error
		if pods, err = s.wholePods(ctx); err != nil {
			return err
		}
	}
	sel := &s.Objects.Selectors
	scales := disruption.NewControllers(sel.ReplicationControllers, s.Deployments, sel.ReplicaSets, sel.StatefulSets)
	s.Warnings = append(s.Warnings, disruption.Complete(s.Objects.PDBs, pods, scales, now)...)
	return nil
}

// wholePods reads a lean set's inputs again, not lean, for their pods.
func (s *Set) wholePods(ctx context.Context) ([]*v1.Pod, error) {
	opts := s.opts
	opts.Lean, opts.Stdin = false, nil
	again := NewSetWith(opts)
	for _, in := range s.inputs {
		var err error
		if in.data != nil {
			err = again.addBytes(ctx, in.path, in.data)
		} else {
			err = again.addPath(ctx, in.path)
		}
		if err != nil {
			return nil, err
		}
	}
	return again.Objects.Pods, nil
}
