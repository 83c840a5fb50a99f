package reprieve

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/adapter/manifest"
	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	"github.com/reprieve/reprieve/internal/whatif"
)

// Options configure an evaluation. Only Now is required; the zero value of
// the others is kube-scheduler's default.
type Options struct {
	// Now is the evaluation time: pods without a start time count as
	// starting then. The engine never reads the clock.
	Now time.Time
	// Seed seeds the dry run's random offset and tie-breaks.
	Seed uint64
	// Config is the scheduler configuration, whose profile for the pod's
	// schedulerName decides; nil is kube-scheduler's default profile,
	// whatever the pod's schedulerName.
	Config *Config
	// Features are the feature gates (ParseFeatureGates).
	Features Features
	// Policy chooses the victims; "" is PolicyUpstream.
	Policy Policy
	// Parallelism bounds the goroutines of an evaluation, the caller's
	// included (1: the caller's alone); 0 is the configuration's
	// parallelism, at most GOMAXPROCS. The answer does not depend on it.
	Parallelism int
}

// Evaluate decides for pod as for a pod that is not part of snap yet
// (EvaluatePending decides for a pending pod of snap): where it fits, or
// what preemption would do to make room. The pod is admitted as `reprieve whatif -f` admits it (defaulted, validated, its
// namespace "default" if it names none) and must not be bound. The error
// is for what cannot be evaluated: bad input (ErrInput), options
// (ErrNoClock, ErrNoProfile); every answer about the pod, even "cannot
// evaluate", is a Decision.
func Evaluate(snap *Snapshot, pod *v1.Pod, opts Options) (*Decision, error) {
	if pod == nil {
		return nil, fmt.Errorf("%w: nil pod", ErrInput)
	}
	c := *pod
	c.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	data, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("%w: pod: %w", ErrInput, err)
	}
	obj, _, err := manifest.ParsePod("pod", data)
	if err != nil {
		return nil, inputError(err)
	}
	if obj.Status.Phase == "" {
		obj.Status.Phase = v1.PodPending
	}
	p, err := snap.snap.NewPod(obj)
	if err != nil {
		if oe, ok := errors.AsType[*snapshot.ObjectError](err); ok {
			return nil, inputError(&manifest.InputError{Source: "pod", Object: "Pod " + obj.Namespace + "/" + obj.Name, Field: oe.Field, Detail: oe.Detail})
		}
		return nil, err
	}
	return snap.evaluate(p, obj, opts)
}

// EvaluatePending is Evaluate for a pending pod of snap, named
// "namespace/name" (see Snapshot.PendingPods), as
// `reprieve whatif --pod` evaluates it.
func EvaluatePending(snap *Snapshot, key string, opts Options) (*Decision, error) {
	p := snap.snap.Pod(key)
	switch {
	case p == nil:
		return nil, fmt.Errorf("%w: pod %s: no such pod in the snapshot", ErrInput, key)
	case p.NodeName() != "":
		return nil, fmt.Errorf("%w: pod %s: already bound to %s", ErrInput, key, p.NodeName())
	case p.Finished():
		return nil, fmt.Errorf("%w: pod %s: finished (phase %s)", ErrInput, key, p.Phase())
	}
	return snap.evaluate(p, p.Obj(), opts)
}

// evaluate decides for p, whose object is obj, as `reprieve whatif` does.
func (s *Snapshot) evaluate(p *snapshot.Pod, obj *v1.Pod, opts Options) (*Decision, error) {
	if opts.Now.IsZero() {
		return nil, ErrNoClock
	}
	cfg := defaultConfig()
	if opts.Config != nil {
		cfg = opts.Config.c
	}
	name := obj.Spec.SchedulerName
	if name == "" {
		name = v1.DefaultSchedulerName
	}
	prof := cfg.Profile(name)
	if prof == nil {
		if opts.Config != nil {
			return nil, fmt.Errorf("pod %s: %w %q (the configuration's profiles: %s)", p.Key, ErrNoProfile, name, strings.Join(cfg.SchedulerNames(), ", "))
		}
		prof = &cfg.Profiles[0]
	}
	policy, err := profile.ParsePolicy(string(opts.Policy))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	parallelism := opts.Parallelism
	if parallelism <= 0 {
		parallelism = cfg.EffectiveParallelism()
	}
	d, err := whatif.Evaluate(s.snap, p, whatif.Options{
		Now:         opts.Now,
		Seed:        opts.Seed,
		Parallelism: parallelism,
		Profile:     prof,
		Features:    opts.Features.engine(),
		Policy:      policy,
	})
	if err != nil {
		return nil, err
	}
	return newDecision(d), nil
}
