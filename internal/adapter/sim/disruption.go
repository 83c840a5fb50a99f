package sim

import (
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reprieve/reprieve/internal/adapter/disruption"
	"github.com/reprieve/reprieve/internal/adapter/manifest"
)

// DefaultDisruptionSyncDelay is how long the simulated disruption
// controller takes, by default, to write a budget's status after a
// change of its pods (its informers' latency and its queue's).
const DefaultDisruptionSyncDelay = time.Second

// AnnotationReadySeconds on a pod (or a controller's pod template) is how
// long the pod takes, once running, to become Ready (default: at once).
const AnnotationReadySeconds = "reprieve.dev/ready-seconds"

// budgets is the simulated disruption controller: it keeps every
// PodDisruptionBudget's status as kube-controller-manager's does
// (disruption.Sync), writing it delay after a change of a pod the budget
// selects (a pod created, becoming Ready, terminating or gone) or of the
// budget; the scheduler reads it from there, so preemption's PDB
// violations and the strict-pdb policy follow it. Upstream enqueues one
// of several budgets that select a pod (and the others at its 30 s
// resync); this one enqueues them all.
type budgets struct {
	delay time.Duration
	// pdbs are the budgets by namespace/name, with their last status.
	pdbs map[string]*policyv1.PodDisruptionBudget
	// selectors are the budgets' selectors, parsed once, as the
	// controller's lister finds a pod's budgets: nil for one that matches
	// nothing (nil, empty or invalid).
	selectors map[string]labels.Selector
	// queued are the budgets whose sync is due.
	queued map[string]bool
	// files are the controllers of the scenario's files, for the pods
	// that name them but that the simulator does not run as theirs
	// (ReplicationControllers, and the controllers of a snapshot's pods).
	files                  *disruption.Controllers
	replicationControllers []*v1.ReplicationController
	deployments            []*appsv1.Deployment
	replicaSets            []*appsv1.ReplicaSet
	statefulSets           []*appsv1.StatefulSet
}

// addControllers adds the controllers of a set the scenario creates.
func (b *budgets) addControllers(set *manifest.Set) {
	sel := &set.Objects.Selectors
	b.replicationControllers = append(b.replicationControllers, sel.ReplicationControllers...)
	b.deployments = append(b.deployments, set.Deployments...)
	b.replicaSets = append(b.replicaSets, set.ReplicaSets...)
	b.statefulSets = append(b.statefulSets, set.StatefulSets...)
	b.files = disruption.NewControllers(b.replicationControllers, b.deployments, b.replicaSets, b.statefulSets)
}

func newBudgets(delay time.Duration) budgets {
	return budgets{delay: delay, pdbs: map[string]*policyv1.PodDisruptionBudget{}, selectors: map[string]labels.Selector{}, queued: map[string]bool{}}
}

// addPDB creates or replaces a budget, as the API server stores it (its
// generation 1 when it has none), and syncs it after the delay.
func (w *world) addPDB(pdb *policyv1.PodDisruptionBudget) {
	pdb = pdb.DeepCopy()
	if pdb.Generation == 0 {
		pdb.Generation = 1
	}
	key := pdb.Namespace + "/" + pdb.Name
	w.budgets.pdbs[key] = pdb
	w.budgets.selectors[key] = nil
	if sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err == nil && !sel.Empty() {
		w.budgets.selectors[key] = sel
	}
	w.sched.OnPDB(pdb)
	w.queueBudget(key)
}

// deletePDB deletes a budget.
func (w *world) deletePDB(namespace, name string) {
	delete(w.budgets.pdbs, namespace+"/"+name)
	delete(w.budgets.selectors, namespace+"/"+name)
	w.sched.OnPDBDelete(namespace, name)
}

// budgetsSee tells the controller that a pod changed: old is its previous
// state (nil for a new pod), cur its new one (nil once gone).
func (w *world) budgetsSee(old, cur *v1.Pod) {
	if len(w.budgets.pdbs) == 0 {
		return
	}
	for _, p := range []*v1.Pod{old, cur} {
		if p == nil {
			continue
		}
		for key, pdb := range w.budgets.pdbs {
			if pdb.Namespace != p.Namespace || w.budgets.queued[key] {
				continue
			}
			if sel := w.budgets.selectors[key]; sel != nil && sel.Matches(labelsOf(p)) {
				w.queueBudget(key)
			}
		}
	}
}

// queueBudget syncs the budget key after the delay, unless a sync is due.
func (w *world) queueBudget(key string) {
	if w.budgets.queued[key] {
		return
	}
	w.budgets.queued[key] = true
	w.after(w.budgets.delay, func() { w.syncBudget(key) })
}

// syncBudget writes the budget's status from the pods as they are now,
// telling the scheduler when it changed.
func (w *world) syncBudget(key string) {
	delete(w.budgets.queued, key)
	pdb := w.budgets.pdbs[key]
	if pdb == nil {
		return
	}
	var pods []*v1.Pod
	for _, p := range w.pods {
		if p.Namespace == pdb.Namespace {
			pods = append(pods, p)
		}
	}
	// In name order: a failed sync's message names the first pod at fault.
	slices.SortFunc(pods, func(a, b *v1.Pod) int { return cmpString(a.Name, b.Name) })
	r := disruption.Sync(pdb, pods, w, w.now())
	if !r.Recheck.IsZero() {
		w.after(r.Recheck.Sub(w.now()), func() { w.queueBudget(key) })
	}
	if equality.Semantic.DeepEqual(pdb.Status, r.Status) {
		return
	}
	updated := pdb.DeepCopy()
	updated.Status = r.Status
	w.budgets.pdbs[key] = updated
	w.sched.OnPDB(updated)
}

// Scale implements disruption.Scales: the replicas of a controller the
// simulator runs, or of one of the scenario's files.
func (w *world) Scale(namespace string, ref *metav1.OwnerReference) (types.UID, int32, bool) {
	if c := w.owners[ref.UID]; c != nil && !c.deleted {
		switch c.kind {
		case "Deployment", "ReplicaSet", "StatefulSet":
			return c.uid, c.replicas, true
		}
		return "", 0, false // a Job has no scale
	}
	if w.budgets.files != nil {
		return w.budgets.files.Scale(namespace, ref)
	}
	return "", 0, false
}

// becomeReady makes a pod that starts running Ready, as the kubelet does
// once its containers are ready: at once, or after the pod's
// ready-seconds (not Ready meanwhile). A pod read with a Ready condition
// keeps it.
func (w *world) becomeReady(p *v1.Pod) {
	if slices.ContainsFunc(p.Status.Conditions, func(c v1.PodCondition) bool { return c.Type == v1.PodReady }) {
		return
	}
	wait, _ := annotationSeconds(p.Annotations, AnnotationReadySeconds)
	if wait <= 0 {
		setReady(&p.Status, v1.ConditionTrue, metav1.NewTime(w.now()))
		return
	}
	setReady(&p.Status, v1.ConditionFalse, metav1.NewTime(w.now()))
	key, uid := p.Namespace+"/"+p.Name, p.UID
	w.after(wait, func() {
		q, ok := w.pods[key]
		if !ok || q.UID != uid || q.DeletionTimestamp != nil || q.Status.Phase != v1.PodRunning {
			return
		}
		old := q
		q = q.DeepCopy()
		setReady(&q.Status, v1.ConditionTrue, metav1.NewTime(w.now()))
		w.updatePod(old, q)
	})
}

// setReady sets the pod's Ready and ContainersReady conditions.
func setReady(st *v1.PodStatus, status v1.ConditionStatus, t metav1.Time) {
	setCondition(st, v1.PodCondition{Type: v1.ContainersReady, Status: status, LastTransitionTime: t})
	setCondition(st, v1.PodCondition{Type: v1.PodReady, Status: status, LastTransitionTime: t})
}

// labelsOf is a pod's labels as a selector reads them.
func labelsOf(p *v1.Pod) labels.Set { return labels.Set(p.Labels) }
