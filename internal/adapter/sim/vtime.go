package sim

import (
	"fmt"
	"math"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/adapter/manifest"
)

// Virtual time saturates: a duration longer than time.Duration holds is
// the longest, which is past any run's end, and what is due past the end
// never comes (world.after sets no timer for it). The API server accepts
// terminationGracePeriodSeconds up to MaxInt64, which multiplied by
// time.Second wraps round to a negative duration, and so does a float
// number of seconds converted past 2^63 nanoseconds.

// maxDuration is the longest duration: "never" within any run.
const maxDuration = time.Duration(math.MaxInt64)

// Seconds converts seconds to a duration, rounded to the nanosecond: the
// longest for any that does not fit, 0 for negative ones and NaN. Output
// prints a result's seconds through it, so that no duration shows
// negative or wrapped round.
func Seconds(s float64) time.Duration {
	ns := s * float64(time.Second)
	switch {
	case !(ns > 0):
		return 0
	case ns >= float64(maxDuration): // 2^63: the first float past it
		return maxDuration
	}
	return time.Duration(math.Round(ns))
}

// satAddDuration adds non-negative durations, the longest for a sum that
// does not fit.
func satAddDuration(a, b time.Duration) time.Duration {
	return time.Duration(satAdd(int64(a), int64(b)))
}

// wholeSeconds converts a whole number of seconds to a duration: the
// longest for any that does not fit, 0 for negative ones.
func wholeSeconds(s int64) time.Duration {
	switch {
	case s <= 0:
		return 0
	case s > int64(maxDuration/time.Second):
		return maxDuration
	}
	return time.Duration(s) * time.Second
}

// parseSeconds reads an annotation's number of seconds: a non-negative
// decimal number ("30", "2.5", "1e3"). ok is false, and the detail says
// why, for anything else.
func parseSeconds(value string) (d time.Duration, detail string, ok bool) {
	s, err := strconv.ParseFloat(value, 64)
	switch {
	case err != nil || math.IsNaN(s) || math.IsInf(s, 0):
		return 0, fmt.Sprintf("%q is not a number of seconds: want a non-negative number such as 30 or 2.5", value), false
	case s < 0:
		return 0, fmt.Sprintf("%q is negative: want a number of seconds such as 30 or 2.5", value), false
	}
	return Seconds(s), "", true
}

// annotationSeconds is the duration an object's annotation gives; ok is
// false when the annotation is absent (or, past admission, invalid).
func annotationSeconds(annotations map[string]string, key string) (time.Duration, bool) {
	value, set := annotations[key]
	if !set {
		return 0, false
	}
	d, _, ok := parseSeconds(value)
	return d, ok
}

// timeAnnotations are where the simulator reads its annotations: on a pod,
// on a pod template, on a Job.
var (
	podTimeAnnotations = []string{AnnotationShutdownSeconds, AnnotationReadySeconds}
	jobTimeAnnotations = []string{AnnotationRunSeconds}
)

// checkTimeAnnotations refuses, at load, a value of the simulator's time
// annotations that is not a non-negative number of seconds, naming the
// object and the annotation. set's pods and controllers' templates are
// checked, and createPods' templates of the actions.
func checkTimeAnnotations(set *manifest.Set, simSource, simID string, actions []TimedAction) error {
	check := func(source, object, field string, annotations map[string]string, keys []string) error {
		for _, key := range keys {
			value, set := annotations[key]
			if !set {
				continue
			}
			if _, detail, ok := parseSeconds(value); !ok {
				return &manifest.InputError{Source: source, Object: object, Field: field + "metadata.annotations[" + key + "]", Detail: detail}
			}
		}
		return nil
	}
	checkSet := func(set *manifest.Set) error {
		for _, p := range set.Objects.Pods {
			if err := check(set.Origin(p), "Pod "+p.Namespace+"/"+p.Name, "", p.Annotations, podTimeAnnotations); err != nil {
				return err
			}
		}
		templates := func(kind, ns, name string, origin string, t *v1.PodTemplateSpec) error {
			return check(origin, kind+" "+ns+"/"+name, "spec.template.", t.Annotations, podTimeAnnotations)
		}
		for _, d := range set.Deployments {
			if err := templates("Deployment", d.Namespace, d.Name, set.Origin(d), &d.Spec.Template); err != nil {
				return err
			}
		}
		for _, rs := range set.ReplicaSets {
			if err := templates("ReplicaSet", rs.Namespace, rs.Name, set.Origin(rs), &rs.Spec.Template); err != nil {
				return err
			}
		}
		for _, st := range set.StatefulSets {
			if err := templates("StatefulSet", st.Namespace, st.Name, set.Origin(st), &st.Spec.Template); err != nil {
				return err
			}
		}
		for _, j := range set.Jobs {
			object := "Job " + j.Namespace + "/" + j.Name
			if err := check(set.Origin(j), object, "", j.Annotations, jobTimeAnnotations); err != nil {
				return err
			}
			if err := check(set.Origin(j), object, "spec.template.", j.Spec.Template.Annotations, []string{AnnotationShutdownSeconds, AnnotationReadySeconds, AnnotationRunSeconds}); err != nil {
				return err
			}
		}
		return nil
	}
	if err := checkSet(set); err != nil {
		return err
	}
	for _, a := range actions {
		if a.Create != nil {
			if err := checkSet(a.Create); err != nil {
				return err
			}
		}
		if cp := a.Action.CreatePods; cp != nil {
			field := fmt.Sprintf("spec.actions[%d].createPods.template.", a.Index)
			if err := check(simSource, simID, field, cp.Template.Annotations, podTimeAnnotations); err != nil {
				return err
			}
		}
	}
	return nil
}
