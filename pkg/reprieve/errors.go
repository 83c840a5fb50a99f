package reprieve

import (
	"errors"

	"github.com/reprieve/reprieve/internal/adapter/manifest"
)

var (
	// ErrInput marks every error caused by bad input (manifests, objects,
	// pods, configurations, feature gates, policy names), as opposed to
	// I/O failures.
	ErrInput = errors.New("invalid input")
	// ErrNoClock is the error of an evaluation without Options.Now.
	ErrNoClock = errors.New("reprieve: Options.Now is not set: the engine never reads the clock")
	// ErrNoProfile is the error of an evaluation whose Options.Config has
	// no profile for the pod's schedulerName: kube-scheduler would leave
	// the pod alone.
	ErrNoProfile = errors.New("no profile for schedulerName")
)

// inputError makes the loader's errors of bad input match ErrInput; it
// leaves other errors (I/O) as they are.
func inputError(err error) error {
	if errors.Is(err, manifest.ErrInput) {
		return markedInput{err}
	}
	return err
}

// markedInput is an error of the loader's that matches ErrInput.
type markedInput struct{ error }

func (e markedInput) Is(target error) bool { return target == ErrInput }

func (e markedInput) Unwrap() error { return e.error }
