package sim

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/reprieve/reprieve/internal/adapter/admission"
	"github.com/reprieve/reprieve/internal/adapter/manifest"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// Annotations the simulator understands.
const (
	// AnnotationShutdownSeconds on a pod (or a controller's pod template)
	// is how long the pod takes to exit once deleted, if shorter than its
	// terminationGracePeriodSeconds.
	AnnotationShutdownSeconds = "reprieve.dev/shutdown-seconds"
	// AnnotationRunSeconds on a Job (or its pod template) is how long each
	// of its pods runs before it succeeds.
	AnnotationRunSeconds = "reprieve.dev/run-seconds"
)

// DefaultStart is the virtual start time of a scenario that gives none and
// whose objects hold no timestamp.
var DefaultStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Simulation is the document that turns a cluster into a scenario: how long
// to run and what happens when.
//
//	apiVersion: reprieve.dev/v1alpha1
//	kind: Simulation
//	metadata: {name: story}
//	spec:
//	  end: 10m
//	  costs: {cycle: 500us, apiQPS: 50, apiBurst: 100}
//	  actions:
//	  - at: 30s
//	    create: [{apiVersion: v1, kind: Pod, ...}]
//	  - at: 2m
//	    scale: {kind: Deployment, namespace: shop, name: web, replicas: 6}
type Simulation struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              SimulationSpec `json:"spec"`
}

// SimulationSpec is what to simulate.
type SimulationSpec struct {
	// End is how much virtual time to simulate.
	End metav1.Duration `json:"end"`
	// Start is the virtual time the simulation starts at. By default it is
	// the latest timestamp of the scenario's objects (creation, start,
	// conditions' times...), so that a snapshot's pods started before the
	// run, or DefaultStart when they have none.
	Start *metav1.Time `json:"start,omitempty"`
	// Seed seeds the scheduler's random choices; the --seed flag overrides it.
	Seed *uint64 `json:"seed,omitempty"`
	// Actions happen at their time, in order.
	Actions []Action `json:"actions,omitempty"`
	// ProvisioningDelay is how long the simulated provisioner takes to
	// provision a WaitForFirstConsumer claim once the scheduler selected
	// its node (default 1s); the pod is bound when its claims are.
	ProvisioningDelay *metav1.Duration `json:"provisioningDelay,omitempty"`
	// DisruptionSyncDelay is how long the simulated disruption controller
	// takes to write a PodDisruptionBudget's status after its pods change
	// (default 1s).
	DisruptionSyncDelay *metav1.Duration `json:"disruptionSyncDelay,omitempty"`
	// Costs is what the scheduler's own work costs in virtual time.
	Costs *Costs `json:"costs,omitempty"`
}

// Costs model the scheduler's own work in virtual time, so that a queue of
// pods takes time to drain as it does on a live scheduler.
type Costs struct {
	// Cycle is how long one scheduling cycle (filter, score or preemption's
	// dry run) takes; the next cycle starts after it (default
	// DefaultCycleCost).
	Cycle *metav1.Duration `json:"cycle,omitempty"`
	// APIQPS and APIBurst rate-limit the scheduler's API calls (binding,
	// status updates, each victim's status update and delete) as client-go's
	// token bucket does, kube-scheduler's clientConnection.qps and burst
	// (defaults 50 and 100); a negative APIQPS removes the limit.
	APIQPS   *float64 `json:"apiQPS,omitempty"`
	APIBurst *int32   `json:"apiBurst,omitempty"`
}

// Action is something that happens at a given time. Exactly one of its
// fields besides At is set.
type Action struct {
	// At is the time since the start.
	At metav1.Duration `json:"at"`
	// Create creates objects: Pods, Nodes, Deployments, ReplicaSets, Jobs,
	// StatefulSets, PodDisruptionBudgets, PriorityClasses, Namespaces,
	// Services and ReplicationControllers (not run: their selectors give
	// PodTopologySpread's default constraints theirs).
	Create []json.RawMessage `json:"create,omitempty"`
	// CreatePods creates count bare pods from a template, named
	// <template name>-00001, -00002, ...
	CreatePods *CreatePods `json:"createPods,omitempty"`
	// CreateNodes creates count nodes from a template, named
	// <template name>-00001, ..., with their hostname label set.
	CreateNodes *CreateNodes `json:"createNodes,omitempty"`
	// Delete deletes objects (pods gracefully).
	Delete []ObjectRef `json:"delete,omitempty"`
	// Scale sets the replicas of a Deployment or ReplicaSet, or the
	// parallelism of a Job.
	Scale *Scale `json:"scale,omitempty"`
	// Cordon and Uncordon mark a node (un)schedulable.
	Cordon   string `json:"cordon,omitempty"`
	Uncordon string `json:"uncordon,omitempty"`
	// RemoveNode deletes a node; its pods are deleted at once, as by a
	// node lifecycle controller after the node is gone.
	RemoveNode string `json:"removeNode,omitempty"`
}

// CreatePods creates many bare pods at once.
type CreatePods struct {
	Count    int    `json:"count"`
	Template v1.Pod `json:"template"`
}

// CreateNodes creates many nodes at once.
type CreateNodes struct {
	Count    int     `json:"count"`
	Template v1.Node `json:"template"`
}

// ObjectRef names an object.
type ObjectRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// Scale is a scale action.
type Scale struct {
	ObjectRef `json:",inline"`
	Replicas  int32 `json:"replicas"`
}

// Scenario is a loaded simulation: the starting cluster and the timed actions.
type Scenario struct {
	Objects     *manifest.Set
	Name        string
	Start       time.Time
	End         time.Duration
	Seed        uint64
	Actions     []TimedAction
	HasSeed     bool
	Description string
	// Estimate is the work the scenario was found to ask for at load.
	Estimate Estimate
	// ProvisioningDelay is spec.provisioningDelay, defaulted.
	ProvisioningDelay time.Duration
	// DisruptionSyncDelay is spec.disruptionSyncDelay, defaulted.
	DisruptionSyncDelay time.Duration
	// Costs is spec.costs, defaulted.
	Costs CostModel
}

// TimedAction is an action with its objects decoded.
type TimedAction struct {
	At     time.Duration
	Source string
	Create *manifest.Set
	Action Action
	// Index is the action's position in spec.actions.
	Index int
}

// DefaultMaxObjects is the default bound on the objects a scenario may
// create over its run.
const DefaultMaxObjects = 1_000_000

// Memory one simulated object holds over a run (the object, the
// scheduler's view of it, its history and events) at the peak of the
// process's memory with Go's default GC target, for the up-front estimate
// only. Measured with /usr/bin/time (peak RSS less an empty run's): pods
// of a one-container template (about 400 bytes of JSON, defaulted), created
// and left pending, 5.8 kB each at 100,000 and 4.1 kB at 900,000; pods of
// a template with 20 labels and two containers of 15 variables each (2.6
// kB of JSON more) 10.3 kB; nodes 3.3 kB.
const (
	// podBytes is a pod's cost besides templateFactor times the JSON size
	// of its template (a controller's or createPods').
	podBytes       = 5 << 10
	templateFactor = 2
	// objectBytes is the cost of a node or any other object, besides
	// templateFactor times createNodes' template.
	objectBytes = 3 << 10
)

// retryPeriod is how often, at the least, kube-scheduler retries an
// unschedulable pod (podMaxInUnschedulablePodsDuration).
const retryPeriod = 5 * time.Minute

// attemptsPerObject bounds scheduling attempts relative to MaxObjects.
const attemptsPerObject = 1000

// Limits bound the work a scenario may ask for; the zero value means the
// defaults.
type Limits struct {
	// MaxObjects bounds the objects (nodes, pods, controllers and so on)
	// created over the run; 0 means DefaultMaxObjects.
	MaxObjects int64
	// MaxBytes bounds the memory those objects need (Estimate.Bytes); 0
	// means what the process may use: GOMEMLIMIT when set, else the
	// cgroup's memory limit when set, else 3/4 of physical memory
	// (never above the cgroup's limit). Negative means no bound.
	MaxBytes int64
}

// maxBytes is the memory bound and what sets it ("" with no bound).
func (l Limits) maxBytes() memoryLimit {
	switch {
	case l.MaxBytes < 0:
		return memoryLimit{}
	case l.MaxBytes > 0:
		return memoryLimit{Bytes: l.MaxBytes, Source: "the limit given"}
	}
	return processMemoryLimit()
}

func (l Limits) maxObjects() int64 {
	if l.MaxObjects <= 0 {
		return DefaultMaxObjects
	}
	return l.MaxObjects
}

// Estimate is the work a scenario asks for, counted before it runs.
type Estimate struct {
	// Objects is how many objects the run creates at most, counting every
	// pod its controllers create (replicas, parallelism, completions) but
	// not replacements of preempted pods.
	Objects int64
	// Pods is the part of Objects that are pods.
	Pods int64
	// Attempts bounds the scheduling attempts: each pod retried at least
	// every five minutes until the end.
	Attempts int64
	// Bytes is about how much memory the objects need over the run.
	Bytes int64
}

// ErrTooBig marks a scenario that asks for more work than its limits.
var ErrTooBig = errors.New("scenario too big")

// LoadScenario reads a scenario from files or directories: plain Kubernetes
// manifests for the starting cluster plus exactly one Simulation document.
func LoadScenario(paths ...string) (*Scenario, error) {
	return LoadScenarioWith(manifest.Options{}, Limits{}, paths...)
}

// LoadScenarioWith is LoadScenario with loader options and limits.
func LoadScenarioWith(opts manifest.Options, limits Limits, paths ...string) (*Scenario, error) {
	set, err := manifest.LoadWith(opts, paths...)
	if err != nil {
		return nil, err
	}
	return NewScenarioWith(set, limits)
}

// NewScenario builds a scenario from loaded documents, with the default limits.
func NewScenario(set *manifest.Set) (*Scenario, error) { return NewScenarioWith(set, Limits{}) }

// NewScenarioWith builds a scenario from loaded documents. It refuses, each
// with an *manifest.InputError naming the field, a malformed Simulation,
// actions on objects that will not exist when they happen, and counts over
// the limits.
func NewScenarioWith(set *manifest.Set, limits Limits) (*Scenario, error) {
	doc, simDoc, err := simulationDocument(set)
	if err != nil {
		return nil, err
	}
	id := "Simulation " + simDoc.Name
	fail := func(field, detail string) error {
		return &manifest.InputError{Source: doc.Source, Object: id, Field: field, Detail: detail}
	}
	sc := &Scenario{Objects: set, Name: simDoc.Name, End: simDoc.Spec.End.Duration, Start: DefaultStart, Description: simDoc.Annotations["description"]}
	if simDoc.Spec.Seed != nil {
		sc.Seed, sc.HasSeed = *simDoc.Spec.Seed, true
	}
	if sc.End <= 0 {
		return nil, fail("spec.end", "must be a positive duration such as 10m")
	}
	sc.ProvisioningDelay = DefaultProvisioningDelay
	if d := simDoc.Spec.ProvisioningDelay; d != nil {
		if d.Duration < 0 {
			return nil, fail("spec.provisioningDelay", "must not be negative")
		}
		sc.ProvisioningDelay = d.Duration
	}
	sc.DisruptionSyncDelay = DefaultDisruptionSyncDelay
	if d := simDoc.Spec.DisruptionSyncDelay; d != nil {
		if d.Duration < 0 {
			return nil, fail("spec.disruptionSyncDelay", "must not be negative")
		}
		sc.DisruptionSyncDelay = d.Duration
	}
	if sc.Costs, err = costModel(simDoc.Spec.Costs, fail); err != nil {
		return nil, err
	}
	created := []*manifest.Set{set}
	for i, a := range simDoc.Spec.Actions {
		ta, err := timedAction(set, doc.Source, created, i, a, sc.End, fail)
		if err != nil {
			return nil, err
		}
		if ta.Create != nil {
			created = append(created, ta.Create)
		}
		sc.Actions = append(sc.Actions, ta)
	}
	slices.SortStableFunc(sc.Actions, func(a, b TimedAction) int { return cmp.Compare(a.At, b.At) })
	if simDoc.Spec.Start != nil {
		sc.Start = simDoc.Spec.Start.UTC()
	} else if latest, ok := latestTimestamp(created); ok {
		sc.Start = latest
	}
	var bound []*v1.Pod
	origins := map[any]string{}
	for _, cs := range created {
		for _, p := range cs.Objects.Pods {
			bound = append(bound, p)
			origins[p] = cs.Origin(p)
		}
	}
	if err := manifest.CheckNodeSums(&snapshot.Objects{Pods: bound}, func(o any) string { return origins[o] }); err != nil {
		return nil, err
	}
	if err := checkTimeAnnotations(set, doc.Source, id, sc.Actions); err != nil {
		return nil, err
	}
	sc.Estimate = estimate(sc)
	if err := checkLimits(sc, limits, doc.Source, id); err != nil {
		return nil, err
	}
	if err := checkReferences(sc, doc.Source, id); err != nil {
		return nil, err
	}
	return sc, nil
}

// simulationDocument returns the set's one Simulation document, decoded
// strictly.
func simulationDocument(set *manifest.Set) (manifest.RawDocument, Simulation, error) {
	var simDoc Simulation
	switch len(set.Simulations) {
	case 0:
		src := strings.Join(sources(set), ", ")
		return manifest.RawDocument{}, simDoc, &manifest.InputError{Source: src, Detail: "no Simulation document (apiVersion " + manifest.SimulationAPIVersion + ", kind Simulation)"}
	case 1:
	default:
		return manifest.RawDocument{}, simDoc, &manifest.InputError{Source: set.Simulations[1].Source, Object: "Simulation", Detail: "more than one Simulation document"}
	}
	doc := set.Simulations[0]
	if err := checkDurations(doc); err != nil {
		return doc, simDoc, err
	}
	unknown, err := manifest.DecodeStrict(doc.Data, &simDoc)
	if err != nil {
		return doc, simDoc, &manifest.InputError{Source: doc.Source, Object: "Simulation " + simDoc.Name, Detail: strings.TrimPrefix(oneLine(err.Error()), "json: ")}
	}
	for _, u := range unknown {
		if err := set.Strict(doc.Source, "Simulation "+simDoc.Name, oneLine(u.Error())); err != nil {
			return doc, simDoc, err
		}
	}
	return doc, simDoc, nil
}

// timedAction checks spec.actions[i] of a scenario ending at end and loads
// the objects it creates (admitted after those created before it).
func timedAction(set *manifest.Set, source string, created []*manifest.Set, i int, a Action, end time.Duration, fail func(field, detail string) error) (TimedAction, error) {
	field := fmt.Sprintf("spec.actions[%d]", i)
	n := len(a.Delete)
	for _, given := range []bool{len(a.Create) > 0, a.CreatePods != nil, a.CreateNodes != nil, a.Scale != nil, a.Cordon != "", a.Uncordon != "", a.RemoveNode != ""} {
		if given {
			n++
		}
	}
	ta := TimedAction{At: a.At.Duration, Source: source, Action: a, Index: i}
	if n == 0 {
		return ta, fail(field, "says nothing to do: set one of create, createPods, createNodes, delete, scale, cordon, uncordon, removeNode")
	}
	if a.At.Duration < 0 || a.At.Duration > end {
		return ta, fail(field+".at", fmt.Sprintf("%s is outside [0, end=%s]", a.At.Duration, end))
	}
	if len(a.Create) > 0 {
		cs := manifest.NewSetWith(set.Options())
		for _, prev := range created {
			cs.AdmitFrom(prev)
		}
		for j, raw := range a.Create {
			if err := cs.AddBytes(fmt.Sprintf("%s %s.create[%d]", source, field, j), raw); err != nil {
				return ta, err
			}
		}
		if len(cs.Skipped) > 0 {
			return ta, fail(field+".create", cs.Skipped[0])
		}
		if len(cs.Simulations) > 0 {
			return ta, fail(field+".create", "a Simulation cannot be created by a Simulation")
		}
		set.Warnings = append(set.Warnings, cs.Warnings...)
		ta.Create = cs
	}
	if cp := a.CreatePods; cp != nil {
		if cp.Count <= 0 {
			return ta, fail(field+".createPods.count", "must be positive")
		}
		if cp.Template.Name == "" || len(cp.Template.Spec.Containers) == 0 {
			return ta, fail(field+".createPods.template", "needs metadata.name and at least one container")
		}
		if err := admitTemplate(set, source, field+".createPods.template", &cp.Template, cp.Count); err != nil {
			return ta, err
		}
	}
	if cn := a.CreateNodes; cn != nil {
		if cn.Count <= 0 || cn.Template.Name == "" {
			return ta, fail(field+".createNodes", "needs a positive count and template.metadata.name")
		}
		if err := admitTemplate(set, source, field+".createNodes.template", &cn.Template, cn.Count); err != nil {
			return ta, err
		}
	}
	if s := a.Scale; s != nil {
		switch s.Kind {
		case "Deployment", "ReplicaSet", "Job", "StatefulSet":
		default:
			return ta, fail(field+".scale.kind", fmt.Sprintf("%q cannot be scaled (Deployment, ReplicaSet, StatefulSet or Job)", s.Kind))
		}
		if s.Replicas < 0 {
			return ta, fail(field+".scale.replicas", "must not be negative")
		}
	}
	for j, d := range a.Delete {
		if d.Kind == "" || d.Name == "" {
			return ta, fail(fmt.Sprintf("%s.delete[%d]", field, j), "needs kind and name")
		}
	}
	return ta, nil
}

// admitTemplate defaults and validates a createPods or createNodes
// template as the API server will see the objects made from it, named as
// the last of them.
func admitTemplate[T interface {
	*v1.Pod | *v1.Node
	metav1.Object
}](set *manifest.Set, src, field string, t T, count int) error {
	last := any(t).(runtime.Object).DeepCopyObject().(T)
	last.SetName(fmt.Sprintf("%s-%05d", t.GetName(), count))
	if last.GetNamespace() == "" {
		if _, pod := any(last).(*v1.Pod); pod {
			last.SetNamespace(metav1.NamespaceDefault)
		}
	}
	if err := set.Admit(src+" "+field, last); err != nil {
		return err
	}
	// The template itself is what the run copies: default it too.
	switch x := any(t).(type) {
	case *v1.Pod:
		admission.DefaultPod(x)
	case *v1.Node:
		admission.DefaultNode(x)
	}
	return nil
}

// checkDurations parses spec.end, spec.start, spec.costs and every action's
// at before the document is decoded, so that a bad value is reported with
// its field ("spec.actions[2].at: time: invalid duration \"soon\"").
func checkDurations(doc manifest.RawDocument) error {
	var probe struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			End   json.RawMessage `json:"end"`
			Start json.RawMessage `json:"start"`
			Costs struct {
				Cycle    json.RawMessage `json:"cycle"`
				APIQPS   json.RawMessage `json:"apiQPS"`
				APIBurst json.RawMessage `json:"apiBurst"`
			} `json:"costs"`
			Actions []struct {
				At json.RawMessage `json:"at"`
			} `json:"actions"`
		} `json:"spec"`
	}
	if json.Unmarshal(doc.Data, &probe) != nil {
		return nil // the strict decode reports it
	}
	check := func(field string, raw json.RawMessage, into any) error {
		if len(raw) == 0 {
			return nil
		}
		if err := json.Unmarshal(raw, into); err != nil {
			return &manifest.InputError{Source: doc.Source, Object: strings.TrimSpace("Simulation " + probe.Metadata.Name), Field: field, Detail: strings.TrimPrefix(oneLine(err.Error()), "json: ")}
		}
		return nil
	}
	if err := check("spec.end", probe.Spec.End, new(metav1.Duration)); err != nil {
		return err
	}
	if err := check("spec.start", probe.Spec.Start, new(metav1.Time)); err != nil {
		return err
	}
	if err := check("spec.costs.cycle", probe.Spec.Costs.Cycle, new(metav1.Duration)); err != nil {
		return err
	}
	if err := check("spec.costs.apiQPS", probe.Spec.Costs.APIQPS, new(float64)); err != nil {
		return err
	}
	if err := check("spec.costs.apiBurst", probe.Spec.Costs.APIBurst, new(int32)); err != nil {
		return err
	}
	for i, a := range probe.Spec.Actions {
		if err := check(fmt.Sprintf("spec.actions[%d].at", i), a.At, new(metav1.Duration)); err != nil {
			return err
		}
	}
	return nil
}

// HasNodes reports whether the scenario starts with a node or creates one.
func (sc *Scenario) HasNodes() bool {
	if len(sc.Objects.Objects.Nodes) > 0 {
		return true
	}
	for _, a := range sc.Actions {
		if a.Action.CreateNodes != nil || a.Create != nil && len(a.Create.Objects.Nodes) > 0 {
			return true
		}
	}
	return false
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func sources(set *manifest.Set) []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if i := strings.IndexAny(s, "# "); i > 0 {
			s = s[:i]
		}
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, n := range set.Objects.Nodes {
		add(set.Origin(n))
	}
	for _, p := range set.Objects.Pods {
		add(set.Origin(p))
	}
	if len(out) == 0 {
		out = append(out, "scenario")
	}
	return out
}

// objects lists a set's objects in creation order: namespaces and priority
// classes, nodes, budgets, controllers, then pods.
type objects struct {
	namespaces      []*v1.Namespace
	priorityClasses []*schedulingv1.PriorityClass
	nodes           []*v1.Node
	pdbs            []*policyv1.PodDisruptionBudget
	deployments     []*appsv1.Deployment
	replicaSets     []*appsv1.ReplicaSet
	jobs            []*batchv1.Job
	statefulSets    []*appsv1.StatefulSet
	// services and replicationControllers only select pods.
	services               []*v1.Service
	replicationControllers []*v1.ReplicationController
	pods                   []*v1.Pod
}

func objectsOf(set *manifest.Set) objects {
	o := set.Objects
	return objects{namespaces: o.Namespaces, priorityClasses: o.PriorityClasses, nodes: o.Nodes, pdbs: o.PDBs,
		deployments: set.Deployments, replicaSets: set.ReplicaSets, jobs: set.Jobs, statefulSets: set.StatefulSets,
		services: o.Selectors.Services, replicationControllers: o.Selectors.ReplicationControllers, pods: o.Pods}
}
