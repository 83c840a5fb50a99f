package sim

import (
	"encoding/json"
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

	"github.com/reprieve/reprieve/pkg/loader"
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

// DefaultStart is the virtual start time when a scenario gives none.
var DefaultStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Simulation is the document that turns a cluster into a scenario: how long
// to run and what happens when.
//
//	apiVersion: reprieve.dev/v1alpha1
//	kind: Simulation
//	metadata: {name: story}
//	spec:
//	  end: 10m
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
	// Start is the virtual time the simulation starts at (default
	// 2026-01-01T00:00:00Z).
	Start *metav1.Time `json:"start,omitempty"`
	// Seed seeds the scheduler's random choices; the --seed flag overrides it.
	Seed *uint64 `json:"seed,omitempty"`
	// Actions happen at their time, in order.
	Actions []Action `json:"actions,omitempty"`
}

// Action is something that happens at a given time. Exactly one of its
// fields besides At is set.
type Action struct {
	// At is the time since the start.
	At metav1.Duration `json:"at"`
	// Create creates objects: Pods, Nodes, Deployments, ReplicaSets, Jobs,
	// PodDisruptionBudgets, PriorityClasses, Namespaces.
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
	Objects     *loader.Set
	Name        string
	Start       time.Time
	End         time.Duration
	Seed        uint64
	Actions     []TimedAction
	HasSeed     bool
	Description string
}

// TimedAction is an action with its objects decoded.
type TimedAction struct {
	At     time.Duration
	Source string
	Create *loader.Set
	Action Action
}

// LoadScenario reads a scenario from files or directories: plain Kubernetes
// manifests for the starting cluster plus exactly one Simulation document.
func LoadScenario(paths ...string) (*Scenario, error) {
	set, err := loader.Load(paths...)
	if err != nil {
		return nil, err
	}
	return NewScenario(set)
}

// NewScenario builds a scenario from loaded documents.
func NewScenario(set *loader.Set) (*Scenario, error) {
	src := strings.Join(sources(set), ", ")
	switch len(set.Simulations) {
	case 0:
		return nil, &loader.InputError{Source: src, Detail: "no Simulation document (apiVersion " + loader.SimulationAPIVersion + ", kind Simulation)"}
	case 1:
	default:
		return nil, &loader.InputError{Source: set.Simulations[1].Source, Object: "Simulation", Detail: "more than one Simulation document"}
	}
	doc := set.Simulations[0]
	var simDoc Simulation
	dec := json.NewDecoder(strings.NewReader(string(doc.Data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&simDoc); err != nil {
		return nil, &loader.InputError{Source: doc.Source, Object: "Simulation " + simDoc.Name, Detail: strings.TrimPrefix(err.Error(), "json: ")}
	}
	id := "Simulation " + simDoc.Name
	sc := &Scenario{Objects: set, Name: simDoc.Name, End: simDoc.Spec.End.Duration, Start: DefaultStart, Description: simDoc.Annotations["description"]}
	if simDoc.Spec.Start != nil {
		sc.Start = simDoc.Spec.Start.UTC()
	}
	if simDoc.Spec.Seed != nil {
		sc.Seed, sc.HasSeed = *simDoc.Spec.Seed, true
	}
	if sc.End <= 0 {
		return nil, &loader.InputError{Source: doc.Source, Object: id, Field: "spec.end", Detail: "must be a positive duration such as 10m"}
	}
	for i, a := range simDoc.Spec.Actions {
		field := fmt.Sprintf("spec.actions[%d]", i)
		n := len(a.Delete)
		for _, set := range []bool{len(a.Create) > 0, a.CreatePods != nil, a.CreateNodes != nil, a.Scale != nil, a.Cordon != "", a.Uncordon != "", a.RemoveNode != ""} {
			if set {
				n++
			}
		}
		if n == 0 {
			return nil, &loader.InputError{Source: doc.Source, Object: id, Field: field, Detail: "says nothing to do: set one of create, createPods, createNodes, delete, scale, cordon, uncordon, removeNode"}
		}
		if a.At.Duration < 0 || a.At.Duration > sc.End {
			return nil, &loader.InputError{Source: doc.Source, Object: id, Field: field + ".at", Detail: fmt.Sprintf("%s is outside [0, end=%s]", a.At.Duration, sc.End)}
		}
		ta := TimedAction{At: a.At.Duration, Source: doc.Source, Action: a}
		if len(a.Create) > 0 {
			cs := loader.NewSet()
			for j, raw := range a.Create {
				if err := cs.AddBytes(fmt.Sprintf("%s %s.create[%d]", doc.Source, field, j), raw); err != nil {
					return nil, err
				}
			}
			if len(cs.Skipped) > 0 {
				return nil, &loader.InputError{Source: doc.Source, Object: id, Field: field + ".create", Detail: cs.Skipped[0]}
			}
			ta.Create = cs
		}
		if cp := a.CreatePods; cp != nil {
			if cp.Count <= 0 {
				return nil, &loader.InputError{Source: doc.Source, Object: id, Field: field + ".createPods.count", Detail: "must be positive"}
			}
			if cp.Template.Name == "" || len(cp.Template.Spec.Containers) == 0 {
				return nil, &loader.InputError{Source: doc.Source, Object: id, Field: field + ".createPods.template", Detail: "needs metadata.name and at least one container"}
			}
		}
		if cn := a.CreateNodes; cn != nil && (cn.Count <= 0 || cn.Template.Name == "") {
			return nil, &loader.InputError{Source: doc.Source, Object: id, Field: field + ".createNodes", Detail: "needs a positive count and template.metadata.name"}
		}
		if s := a.Scale; s != nil {
			switch s.Kind {
			case "Deployment", "ReplicaSet", "Job":
			default:
				return nil, &loader.InputError{Source: doc.Source, Object: id, Field: field + ".scale.kind", Detail: fmt.Sprintf("%q cannot be scaled (Deployment, ReplicaSet or Job)", s.Kind)}
			}
			if s.Replicas < 0 {
				return nil, &loader.InputError{Source: doc.Source, Object: id, Field: field + ".scale.replicas", Detail: "must not be negative"}
			}
		}
		for j, d := range a.Delete {
			if d.Kind == "" || d.Name == "" {
				return nil, &loader.InputError{Source: doc.Source, Object: id, Field: fmt.Sprintf("%s.delete[%d]", field, j), Detail: "needs kind and name"}
			}
		}
		sc.Actions = append(sc.Actions, ta)
	}
	slices.SortStableFunc(sc.Actions, func(a, b TimedAction) int { return int(a.At - b.At) })
	return sc, nil
}

func sources(set *loader.Set) []string {
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
	pods            []*v1.Pod
}

func objectsOf(set *loader.Set) objects {
	o := set.Objects
	return objects{namespaces: o.Namespaces, priorityClasses: o.PriorityClasses, nodes: o.Nodes, pdbs: o.PDBs,
		deployments: set.Deployments, replicaSets: set.ReplicaSets, jobs: set.Jobs, pods: o.Pods}
}
