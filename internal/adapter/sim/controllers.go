package sim

import (
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

func (w *world) ownerOf(p *v1.Pod) *controller {
	for _, ref := range p.OwnerReferences {
		if ref.Controller != nil && *ref.Controller {
			return w.owners[ref.UID]
		}
	}
	return nil
}

func (w *world) addController(c *controller) {
	c.pods = map[string]bool{}
	w.owners[c.uid] = c
	w.ctrls = append(w.ctrls, c)
	w.dirty[c] = true
}

func (w *world) addReplicaSet(rs *appsv1.ReplicaSet, kind string, name string) error {
	sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		return err
	}
	// The ReplicaSet (a Deployment's too) is what the scheduler's informers
	// see: its selector gives PodTopologySpread's default constraints theirs.
	w.sched.OnSelector(func(s *snapshot.Snapshot) { s.SetReplicaSet(rs) })
	replicas := int32(1)
	if rs.Spec.Replicas != nil {
		replicas = *rs.Spec.Replicas
	}
	w.addController(&controller{kind: kind, namespace: rs.Namespace, name: name, uid: w.newUID(), selector: sel,
		template: rs.Spec.Template, replicas: replicas, podPrefix: rs.Name + "-"})
	return nil
}

// forgetSelector removes a deleted controller's ReplicaSet or StatefulSet
// from the scheduler's snapshot.
func (c *controller) forgetSelector(s *snapshot.Snapshot) {
	switch c.kind {
	case "Deployment", "ReplicaSet":
		s.RemoveReplicaSet(c.namespace, c.podPrefix[:len(c.podPrefix)-1])
	case "StatefulSet":
		s.RemoveStatefulSet(c.namespace, c.name)
	}
}

func (w *world) addDeployment(d *appsv1.Deployment) error {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: d.Name + "-" + w.suffix(10)},
		Spec: appsv1.ReplicaSetSpec{Replicas: d.Spec.Replicas, Selector: d.Spec.Selector, Template: d.Spec.Template}}
	return w.addReplicaSet(rs, "Deployment", d.Name)
}

func (w *world) addJob(j *batchv1.Job) error {
	// The loader defaulted parallelism (1) and, when neither was set,
	// completions (1); completions unset is a work queue.
	parallelism, completions := int32(1), int32(-1)
	if j.Spec.Parallelism != nil {
		parallelism = *j.Spec.Parallelism
	}
	if j.Spec.Completions != nil {
		completions = *j.Spec.Completions
	} else if j.Spec.Parallelism == nil {
		completions = 1
	}
	var runFor time.Duration
	for _, a := range []map[string]string{j.Annotations, j.Spec.Template.Annotations} {
		if s, ok := annotationSeconds(a, AnnotationRunSeconds); ok && s > 0 {
			runFor = s
			break
		}
	}
	sel := labels.SelectorFromSet(j.Spec.Template.Labels)
	w.addController(&controller{kind: "Job", namespace: j.Namespace, name: j.Name, uid: w.newUID(), selector: sel,
		template: j.Spec.Template, replicas: parallelism, completions: completions, runFor: runFor, podPrefix: j.Name + "-"})
	return nil
}

func (w *world) findController(kind, namespace, name string) *controller {
	for _, c := range w.ctrls {
		if c.kind == kind && c.namespace == namespace && c.name == name && !c.deleted {
			return c
		}
	}
	return nil
}

// suffix returns n random characters as Kubernetes name generators use.
func (w *world) suffix(n int) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[w.rng.IntN(len(alphabet))]
	}
	return string(b)
}

// reconcile runs the controllers whose pods changed, in creation order.
func (w *world) reconcile() {
	for len(w.dirty) > 0 && !w.stopped() {
		for _, c := range w.ctrls {
			if !w.dirty[c] {
				continue
			}
			delete(w.dirty, c)
			w.reconcileOne(c)
		}
	}
}

// reconcileOne creates or deletes pods so that the controller's active
// pods (not finished, not terminating) match its target.
func (w *world) reconcileOne(c *controller) {
	if c.deleted {
		return
	}
	if c.sts != nil {
		w.reconcileStatefulSet(c)
		return
	}
	var active []string
	for key := range c.pods {
		p := w.pods[key]
		if p != nil && p.DeletionTimestamp == nil && !terminalPhase(p) {
			active = append(active, key)
		}
	}
	slices.Sort(active)
	want := c.replicas
	if c.kind == "Job" {
		switch {
		case c.completions >= 0:
			want = min(c.replicas, c.completions-c.succeeded)
		case c.succeeded > 0:
			// A work queue creates no pods once one has succeeded.
			want = 0
		}
	}
	want = max(want, 0)
	ref := &v1.ObjectReference{Kind: c.kind, Namespace: c.namespace, Name: c.name}
	if c.kind == "Deployment" {
		ref.Kind = "ReplicaSet"
		ref.Name = c.podPrefix[:len(c.podPrefix)-1]
	}
	for n := int32(len(active)); n < want; n++ {
		if n%1024 == 0 && w.stopped() {
			return
		}
		p := &v1.Pod{ObjectMeta: *c.template.ObjectMeta.DeepCopy(), Spec: *c.template.Spec.DeepCopy()}
		p.Namespace = c.namespace
		p.Name = c.podPrefix + w.suffix(5)
		for w.pods[p.Namespace+"/"+p.Name] != nil {
			p.Name = c.podPrefix + w.suffix(5)
		}
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: ref.Kind, Name: ref.Name, UID: c.uid, Controller: &yes}}
		if c.kind == "Job" {
			p.OwnerReferences[0].APIVersion = "batch/v1"
			if p.Spec.RestartPolicy == "" {
				p.Spec.RestartPolicy = v1.RestartPolicyNever
			}
		}
		if err := w.createPod(p); err != nil {
			w.event(ref, v1.EventTypeWarning, "FailedCreate", "Error creating: "+err.Error())
			return
		}
		w.event(ref, v1.EventTypeNormal, "SuccessfulCreate", "Created pod: "+p.Name)
	}
	// Scale down: unscheduled pods first, then the newest.
	if excess := int32(len(active)) - want; excess > 0 {
		slices.SortFunc(active, func(a, b string) int {
			pa, pb := w.pods[a], w.pods[b]
			if (pa.Spec.NodeName == "") != (pb.Spec.NodeName == "") {
				if pa.Spec.NodeName == "" {
					return -1
				}
				return 1
			}
			if !pa.CreationTimestamp.Equal(&pb.CreationTimestamp) {
				return pb.CreationTimestamp.Compare(pa.CreationTimestamp.Time)
			}
			return cmpString(b, a)
		})
		for _, key := range active[:excess] {
			w.event(ref, v1.EventTypeNormal, "SuccessfulDelete", "Deleted pod: "+w.pods[key].Name)
			w.deletePod(key)
		}
	}
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (w *world) sortedPodKeys() []string {
	keys := make([]string, 0, len(w.pods))
	for k := range w.pods {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
