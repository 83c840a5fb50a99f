package sim

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/adapter/manifest"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// contributor is one count in a scenario, for naming the largest in an
// error: count objects of bytes each.
type contributor struct {
	source, object, field string
	count, bytes          int64
}

func (c contributor) total() int64 { return satMul(c.count, c.bytes) }

// estimate counts the objects a scenario creates over its run, the memory
// they need, and bounds its scheduling attempts.
func estimate(sc *Scenario) Estimate {
	e, _, _ := estimateWithLargest(sc)
	return e
}

// estimateWithLargest is estimate, with the contributors of the most
// objects and of the most memory.
func estimateWithLargest(sc *Scenario) (e Estimate, most, heaviest contributor) {
	add := func(c contributor, pods bool) {
		e.Objects = satAdd(e.Objects, c.count)
		e.Bytes = satAdd(e.Bytes, c.total())
		if pods {
			e.Pods = satAdd(e.Pods, c.count)
		}
		if c.count > most.count {
			most = c
		}
		if c.total() > heaviest.total() {
			heaviest = c
		}
	}
	// The most replicas each controller is ever scaled to.
	scaled := map[string]int64{}
	for _, a := range sc.Actions {
		if s := a.Action.Scale; s != nil {
			key := s.Kind + " " + nsOrDefault(s.Namespace) + "/" + s.Name
			scaled[key] = max(scaled[key], int64(s.Replicas))
		}
	}
	addSet := func(set *manifest.Set) {
		o := set.Objects
		add(contributor{count: int64(len(o.Nodes) + len(o.Namespaces) + len(o.PriorityClasses) + len(o.PDBs) + len(o.PodGroups) + len(o.CompositePodGroups)), bytes: objectBytes}, false)
		add(contributor{count: int64(len(o.Pods)), bytes: podBytes}, true)
		for _, d := range set.Deployments {
			n := max(int64(ptrOr(d.Spec.Replicas, 1)), scaled["Deployment "+d.Namespace+"/"+d.Name])
			add(contributor{set.Origin(d), "Deployment " + d.Namespace + "/" + d.Name, "spec.replicas", n, templateBytes(podBytes, &d.Spec.Template)}, true)
		}
		for _, rs := range set.ReplicaSets {
			n := max(int64(ptrOr(rs.Spec.Replicas, 1)), scaled["ReplicaSet "+rs.Namespace+"/"+rs.Name])
			add(contributor{set.Origin(rs), "ReplicaSet " + rs.Namespace + "/" + rs.Name, "spec.replicas", n, templateBytes(podBytes, &rs.Spec.Template)}, true)
		}
		for _, st := range set.StatefulSets {
			n := max(int64(ptrOr(st.Spec.Replicas, 1)), scaled["StatefulSet "+st.Namespace+"/"+st.Name])
			add(contributor{set.Origin(st), "StatefulSet " + st.Namespace + "/" + st.Name, "spec.replicas", n, templateBytes(podBytes, &st.Spec.Template)}, true)
			// One claim per template per replica.
			add(contributor{count: satMul(n, int64(len(st.Spec.VolumeClaimTemplates))), bytes: objectBytes}, false)
		}
		for _, j := range set.Jobs {
			field, n := "spec.parallelism", max(int64(ptrOr(j.Spec.Parallelism, 1)), scaled["Job "+j.Namespace+"/"+j.Name])
			if j.Spec.Completions != nil {
				field, n = "spec.completions", max(n, int64(*j.Spec.Completions))
			}
			add(contributor{set.Origin(j), "Job " + j.Namespace + "/" + j.Name, field, n, templateBytes(podBytes, &j.Spec.Template)}, true)
		}
		add(contributor{count: int64(len(set.Deployments) + len(set.ReplicaSets) + len(set.Jobs) + len(set.StatefulSets)), bytes: objectBytes}, false)
	}
	addSet(sc.Objects)
	for _, a := range sc.Actions {
		if a.Create != nil {
			addSet(a.Create)
		}
		field := fmt.Sprintf("spec.actions[%d]", a.Index)
		if cp := a.Action.CreatePods; cp != nil {
			add(contributor{a.Source, "Simulation " + sc.Name, field + ".createPods.count", int64(cp.Count), templateBytes(podBytes, &cp.Template)}, true)
		}
		if cn := a.Action.CreateNodes; cn != nil {
			add(contributor{a.Source, "Simulation " + sc.Name, field + ".createNodes.count", int64(cn.Count), templateBytes(objectBytes, &cn.Template)}, false)
		}
	}
	retries := int64(sc.End/retryPeriod) + 1
	e.Attempts = satMul(e.Pods, retries)
	return e, most, heaviest
}

// templateBytes is the memory of an object made from template: base and
// templateFactor times the template's size in JSON.
func templateBytes(base int64, template any) int64 {
	data, err := json.Marshal(template)
	if err != nil {
		return base
	}
	return satAdd(base, satMul(templateFactor, int64(len(data))))
}

// checkLimits refuses a scenario whose counts or memory exceed the limits,
// before it runs, naming the field that asks for the most.
func checkLimits(sc *Scenario, limits Limits, src, id string) error {
	e, most, heaviest := estimateWithLargest(sc)
	orScenario := func(c contributor) contributor {
		if c.source == "" {
			c.source, c.object = src, id
		}
		return c
	}
	maxObjects := limits.maxObjects()
	if e.Objects > maxObjects {
		most = orScenario(most)
		return &manifest.InputError{Source: most.source, Object: most.object, Field: most.field, Err: ErrTooBig,
			Detail: fmt.Sprintf("the scenario creates up to %d objects over its run, more than the limit of %d (--max-objects); it would need about %s of memory",
				e.Objects, maxObjects, humanBytes(e.Bytes))}
	}
	if mem := limits.maxBytes(); mem.Bytes > 0 && e.Bytes > mem.Bytes {
		heaviest = orScenario(heaviest)
		return &manifest.InputError{Source: heaviest.source, Object: heaviest.object, Field: heaviest.field, Err: ErrTooBig,
			Detail: fmt.Sprintf("the scenario creates up to %d objects over its run, which need about %s of memory, more than the %s this process may use (%s)",
				e.Objects, humanBytes(e.Bytes), humanBytes(mem.Bytes), mem.Source)}
	}
	if maxAttempts := satMul(maxObjects, attemptsPerObject); e.Attempts > maxAttempts {
		return &manifest.InputError{Source: src, Object: id, Field: "spec.end", Err: ErrTooBig,
			Detail: fmt.Sprintf("%d pods retried every %s for %s may take up to %d scheduling attempts, more than the limit of %d (%d per object of --max-objects)",
				e.Pods, retryPeriod, sc.End, e.Attempts, maxAttempts, attemptsPerObject)}
	}
	return nil
}

func humanBytes(b int64) string {
	const unit = 1 << 10
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	v, suffix := float64(b), ""
	for _, s := range []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"} {
		v /= unit
		suffix = s
		if v < unit {
			break
		}
	}
	return fmt.Sprintf("%.1f %s", v, suffix)
}

func satAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func satMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

func nsOrDefault(ns string) string {
	if ns == "" {
		return metav1.NamespaceDefault
	}
	return ns
}

// series are the objects createPods or createNodes makes: prefix-00001 to
// prefix-<count>.
type series struct {
	prefix string
	count  int
}

func (s series) has(name string) bool {
	rest, ok := strings.CutPrefix(name, s.prefix+"-")
	if !ok {
		return false
	}
	i, err := strconv.Atoi(rest)
	return err == nil && i >= 1 && i <= s.count && fmt.Sprintf("%05d", i) == rest
}

// population is which objects exist at a point of a scenario, for
// checking that actions name objects that will exist when they happen.
type population struct {
	nodes, pods, controllers, pdbs map[string]bool
	// selecting are the Services and ReplicationControllers, by "Kind
	// namespace/name".
	selecting  map[string]bool
	nodeSeries []series
	podSeries  map[string][]series // by namespace
	gone       map[string]bool     // series members deleted
}

func newPopulation() *population {
	return &population{nodes: map[string]bool{}, pods: map[string]bool{}, controllers: map[string]bool{}, pdbs: map[string]bool{},
		selecting: map[string]bool{}, podSeries: map[string][]series{}, gone: map[string]bool{}}
}

func (p *population) add(set *manifest.Set) {
	o := set.Objects
	for _, n := range o.Nodes {
		p.nodes[n.Name] = true
	}
	for _, pdb := range o.PDBs {
		p.pdbs[pdb.Namespace+"/"+pdb.Name] = true
	}
	for _, d := range set.Deployments {
		p.controllers["Deployment "+d.Namespace+"/"+d.Name] = true
	}
	for _, rs := range set.ReplicaSets {
		p.controllers["ReplicaSet "+rs.Namespace+"/"+rs.Name] = true
	}
	for _, j := range set.Jobs {
		p.controllers["Job "+j.Namespace+"/"+j.Name] = true
	}
	for _, st := range set.StatefulSets {
		p.controllers["StatefulSet "+st.Namespace+"/"+st.Name] = true
	}
	for _, pod := range o.Pods {
		p.pods[pod.Namespace+"/"+pod.Name] = true
	}
	for _, key := range selectingKeys(o.Selectors) {
		p.selecting[key] = true
	}
}

// selectingKeys are the "Kind namespace/name" of the Services and
// ReplicationControllers of sel.
func selectingKeys(sel snapshot.SelectorObjects) []string {
	var keys []string
	for _, svc := range sel.Services {
		keys = append(keys, "Service "+svc.Namespace+"/"+svc.Name)
	}
	for _, rc := range sel.ReplicationControllers {
		keys = append(keys, "ReplicationController "+rc.Namespace+"/"+rc.Name)
	}
	return keys
}

// existing names the first object of set that exists already, or "".
func (p *population) existing(set *manifest.Set) string {
	for _, n := range set.Objects.Nodes {
		if p.hasNode(n.Name) {
			return "Node " + n.Name
		}
	}
	for _, pod := range set.Objects.Pods {
		if key := pod.Namespace + "/" + pod.Name; p.pods[key] {
			return "Pod " + key
		}
	}
	for _, d := range set.Deployments {
		if key := "Deployment " + d.Namespace + "/" + d.Name; p.controllers[key] {
			return key
		}
	}
	for _, rs := range set.ReplicaSets {
		if key := "ReplicaSet " + rs.Namespace + "/" + rs.Name; p.controllers[key] {
			return key
		}
	}
	for _, j := range set.Jobs {
		if key := "Job " + j.Namespace + "/" + j.Name; p.controllers[key] {
			return key
		}
	}
	for _, st := range set.StatefulSets {
		if key := "StatefulSet " + st.Namespace + "/" + st.Name; p.controllers[key] {
			return key
		}
	}
	for _, key := range selectingKeys(set.Objects.Selectors) {
		if p.selecting[key] {
			return key
		}
	}
	return ""
}

func (p *population) hasNode(name string) bool {
	if p.nodes[name] {
		return true
	}
	if p.gone["Node "+name] {
		return false
	}
	for _, s := range p.nodeSeries {
		if s.has(name) {
			return true
		}
	}
	return false
}

func (p *population) removeNode(name string) {
	delete(p.nodes, name)
	p.gone["Node "+name] = true
}

// mayHavePod reports whether a pod ns/name may exist: created by name, or
// named like the pods of a controller in its namespace.
func (p *population) mayHavePod(ns, name string) bool {
	key := ns + "/" + name
	if p.pods[key] {
		return true
	}
	if p.gone["Pod "+key] {
		return false
	}
	for _, s := range p.podSeries[ns] {
		if s.has(name) {
			return true
		}
	}
	for c := range p.controllers {
		_, rest, _ := strings.Cut(c, " ")
		cns, cname, _ := strings.Cut(rest, "/")
		if cns == ns && strings.HasPrefix(name, cname+"-") {
			return true
		}
	}
	return false
}

// checkReferences walks the actions in time order, refusing any that names
// a node, pod, controller or PodDisruptionBudget that will not exist then.
func checkReferences(sc *Scenario, src, id string) error {
	p := newPopulation()
	p.add(sc.Objects)
	for _, a := range sc.Actions {
		x := a.Action
		field := fmt.Sprintf("spec.actions[%d]", a.Index)
		missing := func(f, what string) error {
			return &manifest.InputError{Source: src, Object: id, Field: f,
				Detail: fmt.Sprintf("%s does not exist at %s: no object of the scenario has that name then", what, a.At)}
		}
		if a.Create != nil {
			if what := p.existing(a.Create); what != "" {
				return &manifest.InputError{Source: src, Object: id, Field: field + ".create",
					Detail: fmt.Sprintf("%s already exists at %s", what, a.At)}
			}
			p.add(a.Create)
		}
		if cn := x.CreateNodes; cn != nil {
			p.nodeSeries = append(p.nodeSeries, series{cn.Template.Name, cn.Count})
		}
		if cp := x.CreatePods; cp != nil {
			ns := nsOrDefault(cp.Template.Namespace)
			p.podSeries[ns] = append(p.podSeries[ns], series{cp.Template.Name, cp.Count})
		}
		for j, d := range x.Delete {
			f := fmt.Sprintf("%s.delete[%d]", field, j)
			ns := nsOrDefault(d.Namespace)
			switch d.Kind {
			case "Pod":
				if !p.mayHavePod(ns, d.Name) {
					return missing(f, "Pod "+ns+"/"+d.Name)
				}
				delete(p.pods, ns+"/"+d.Name)
				p.gone["Pod "+ns+"/"+d.Name] = true
			case "Node":
				if !p.hasNode(d.Name) {
					return missing(f, "Node "+d.Name)
				}
				p.removeNode(d.Name)
			case "Deployment", "ReplicaSet", "Job", "StatefulSet":
				key := d.Kind + " " + ns + "/" + d.Name
				if !p.controllers[key] {
					return missing(f, key)
				}
				delete(p.controllers, key)
			case "PodDisruptionBudget":
				if !p.pdbs[ns+"/"+d.Name] {
					return missing(f, "PodDisruptionBudget "+ns+"/"+d.Name)
				}
				delete(p.pdbs, ns+"/"+d.Name)
			case "Service", "ReplicationController":
				key := d.Kind + " " + ns + "/" + d.Name
				if !p.selecting[key] {
					return missing(f, key)
				}
				delete(p.selecting, key)
			default:
				return &manifest.InputError{Source: src, Object: id, Field: f + ".kind",
					Detail: fmt.Sprintf("%q cannot be deleted (Pod, Node, Deployment, ReplicaSet, StatefulSet, Job, PodDisruptionBudget, Service or ReplicationController)", d.Kind)}
			}
		}
		if s := x.Scale; s != nil {
			key := s.Kind + " " + nsOrDefault(s.Namespace) + "/" + s.Name
			if !p.controllers[key] {
				return missing(field+".scale", key)
			}
		}
		for _, n := range []struct{ field, name string }{{"cordon", x.Cordon}, {"uncordon", x.Uncordon}, {"removeNode", x.RemoveNode}} {
			if n.name != "" && !p.hasNode(n.name) {
				return missing(field+"."+n.field, "Node "+n.name)
			}
		}
		if x.RemoveNode != "" {
			p.removeNode(x.RemoveNode)
		}
	}
	return nil
}
