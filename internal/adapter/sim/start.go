package sim

import (
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/adapter/manifest"
)

// latestTimestamp is the latest time written in the objects of sets:
// creation and deletion timestamps, status.startTime, conditions' and
// containers' times, managed fields' — every metav1.Time and MicroTime. A
// scenario without spec.start starts then, so that a snapshot's pods have
// started, and its nodes reported, before the run: a victim's lost runtime
// is never negative. ok is false when the objects hold no time.
func latestTimestamp(sets []*manifest.Set) (latest time.Time, ok bool) {
	w := timeWalker{holds: map[reflect.Type]bool{}}
	for _, set := range sets {
		for _, v := range []any{&set.Objects, set.Deployments, set.ReplicaSets, set.Jobs, set.StatefulSets, set.ResourceClaimTemplates} {
			w.walk(reflect.ValueOf(v))
		}
	}
	return w.latest.UTC(), !w.latest.IsZero()
}

var (
	timeType      = reflect.TypeFor[metav1.Time]()
	microTimeType = reflect.TypeFor[metav1.MicroTime]()
)

// timeWalker finds the latest metav1.Time and MicroTime in values, looking
// only into the types that can hold one.
type timeWalker struct {
	holds  map[reflect.Type]bool
	latest time.Time
}

func (w *timeWalker) see(t time.Time) {
	if t.After(w.latest) {
		w.latest = t
	}
}

// mayHold reports whether a value of type t can hold a time.
func (w *timeWalker) mayHold(t reflect.Type) bool {
	if h, ok := w.holds[t]; ok {
		return h
	}
	w.holds[t] = false // a recursive type holds no time through itself
	h := false
	switch t.Kind() {
	case reflect.Struct:
		if t == timeType || t == microTimeType {
			h = true
			break
		}
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && w.mayHold(f.Type) {
				h = true
				break
			}
		}
	case reflect.Pointer, reflect.Slice, reflect.Array:
		h = w.mayHold(t.Elem())
	case reflect.Map:
		h = w.mayHold(t.Elem())
	case reflect.Interface:
		h = true
	}
	w.holds[t] = h
	return h
}

func (w *timeWalker) walk(v reflect.Value) {
	if !v.IsValid() || !w.mayHold(v.Type()) {
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		switch v.Type() {
		case timeType:
			w.see(v.Interface().(metav1.Time).Time)
			return
		case microTimeType:
			w.see(v.Interface().(metav1.MicroTime).Time)
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				w.walk(v.Field(i))
			}
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			w.walk(v.Elem())
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			w.walk(v.Index(i))
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			w.walk(it.Value())
		}
	}
}
