// Package loader reads cluster snapshots written as plain Kubernetes
// manifests: YAML or JSON files with one or many documents, `kind: List`
// documents as `kubectl get -o yaml` writes them, or directories of such
// files. Every problem is reported as one line naming the file, the object
// and the field.
package loader

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/reprieve/reprieve/pkg/snapshot"
)

// ErrInput marks every error caused by bad input (as opposed to I/O
// failures); callers map it to exit code 2.
var ErrInput = errors.New("invalid input")

// InputError is a problem in the input, located as precisely as possible.
type InputError struct {
	// Source is "file" or "file#N" for the N-th document (1-based).
	Source string
	// Object is "Kind namespace/name" when known.
	Object string
	// Field is the offending field path when known.
	Field string
	// Detail says what is wrong.
	Detail string
}

func (e *InputError) Error() string {
	var b strings.Builder
	b.WriteString(e.Source)
	if e.Object != "" {
		b.WriteString(": " + e.Object)
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	b.WriteString(": " + e.Detail)
	return b.String()
}

// Is makes errors.Is(err, ErrInput) true for every InputError.
func (e *InputError) Is(target error) bool { return target == ErrInput }

// Set is what a load produced: the objects and where each came from.
type Set struct {
	Objects snapshot.Objects
	// Workloads are the controllers the simulator runs.
	Deployments []*appsv1.Deployment
	ReplicaSets []*appsv1.ReplicaSet
	Jobs        []*batchv1.Job
	// Simulations are the raw reprieve.dev/v1alpha1 Simulation documents.
	Simulations []RawDocument
	// Skipped lists one line per object of a kind the engine does not use.
	Skipped []string

	origin    map[any]string
	seen      map[string]string
	defaulted map[any]bool
}

// NewSet returns an empty set.
func NewSet() *Set {
	return &Set{origin: map[any]string{}, seen: map[string]string{}, defaulted: map[any]bool{}}
}

// RawDocument is a document kept as JSON, with where it came from.
type RawDocument struct {
	Source string
	Data   []byte
}

// WorkloadLines returns one line per workload object, for commands that
// load snapshots but do not run controllers.
func (s *Set) WorkloadLines() []string {
	var out []string
	for _, d := range s.Deployments {
		out = append(out, fmt.Sprintf("%s: skipping apps/v1 %s: kind not used by whatif", s.origin[d], objectName("Deployment", d.Namespace, d.Name)))
	}
	for _, r := range s.ReplicaSets {
		out = append(out, fmt.Sprintf("%s: skipping apps/v1 %s: kind not used by whatif", s.origin[r], objectName("ReplicaSet", r.Namespace, r.Name)))
	}
	for _, j := range s.Jobs {
		out = append(out, fmt.Sprintf("%s: skipping batch/v1 %s: kind not used by whatif", s.origin[j], objectName("Job", j.Namespace, j.Name)))
	}
	for _, r := range s.Simulations {
		out = append(out, fmt.Sprintf("%s: skipping reprieve.dev/v1alpha1 Simulation: kind not used by whatif", r.Source))
	}
	return out
}

// Origin returns where obj was read from ("" if unknown).
func (s *Set) Origin(obj any) string { return s.origin[obj] }

// Load reads every path (file or directory) into a new Set.
func Load(paths ...string) (*Set, error) {
	s := NewSet()
	for _, p := range paths {
		if err := s.AddPath(p); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// AddPath reads a file, or every .yaml, .yml and .json file under a
// directory in lexical order.
func (s *Set) AddPath(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return s.addFile(path)
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yaml", ".yml", ".json":
			if !d.IsDir() {
				files = append(files, p)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	slices.Sort(files)
	if len(files) == 0 {
		return &InputError{Source: path, Detail: "directory has no .yaml, .yml or .json files"}
	}
	for _, f := range files {
		if err := s.addFile(f); err != nil {
			return err
		}
	}
	return nil
}

func (s *Set) addFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return s.AddBytes(path, data)
}

// AddBytes reads manifests from data; name is used in messages.
func (s *Set) AddBytes(name string, data []byte) error {
	docs, err := splitDocuments(name, data)
	if err != nil {
		return err
	}
	for i, doc := range docs {
		src := name
		if len(docs) > 1 {
			src = fmt.Sprintf("%s#%d", name, i+1)
		}
		if err := s.addDocument(src, doc, 0); err != nil {
			return err
		}
	}
	return nil
}

// splitDocuments splits a YAML stream or a JSON document into raw JSON
// documents, dropping empty ones.
func splitDocuments(name string, data []byte) ([]json.RawMessage, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var docs []json.RawMessage
	for i := 1; ; i++ {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, &InputError{Source: fmt.Sprintf("%s#%d", name, i), Detail: "malformed YAML/JSON: " + oneLine(err.Error())}
		}
		if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
			continue
		}
		docs = append(docs, raw)
	}
	return docs, nil
}

type header struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
}

// kinds are the objects the engine uses, by kind, with the apiVersion it
// accepts.
var kinds = map[string]string{
	"Node":                "v1",
	"Pod":                 "v1",
	"Namespace":           "v1",
	"PodDisruptionBudget": "policy/v1",
	"PriorityClass":       "scheduling.k8s.io/v1",
	"PodGroup":            "scheduling.k8s.io/v1beta1",
	"CompositePodGroup":   "scheduling.k8s.io/v1alpha3",
	"Deployment":          "apps/v1",
	"ReplicaSet":          "apps/v1",
	"Job":                 "batch/v1",
	"Simulation":          SimulationAPIVersion,
}

// SimulationAPIVersion is the apiVersion of reprieve's Simulation document.
const SimulationAPIVersion = "reprieve.dev/v1alpha1"

func (s *Set) addDocument(src string, raw []byte, depth int) error {
	var h header
	if err := json.Unmarshal(raw, &h); err != nil {
		if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
			return &InputError{Source: src, Detail: "expected a Kubernetes object (a mapping with apiVersion and kind)"}
		}
		field, detail := splitJSONError(err)
		return &InputError{Source: src, Field: field, Detail: detail}
	}
	if h.Kind == "" {
		return &InputError{Source: src, Field: "kind", Detail: "missing"}
	}
	if h.APIVersion == "" {
		return &InputError{Source: src, Object: h.Kind + " " + h.Name, Field: "apiVersion", Detail: "missing"}
	}
	if strings.HasSuffix(h.Kind, "List") {
		return s.addList(src, raw, h, depth)
	}
	want, known := kinds[h.Kind]
	sk, isStorage := storageKinds[h.Kind]
	if isStorage {
		want, known = sk.apiVersion, true
	}
	if !known {
		s.Skipped = append(s.Skipped, fmt.Sprintf("%s: skipping %s %s: kind not used by reprieve", src, h.APIVersion, objectName(h.Kind, h.Namespace, h.Name)))
		return nil
	}
	namespaced := h.Kind != "Node" && h.Kind != "Namespace" && h.Kind != "PriorityClass" && (!isStorage || sk.namespaced)
	ns := h.Namespace
	if namespaced && ns == "" {
		ns = metav1.NamespaceDefault
	}
	if h.APIVersion != want {
		return &InputError{Source: src, Object: objectName(h.Kind, ns, h.Name), Field: "apiVersion",
			Detail: fmt.Sprintf("unsupported %q (want %q)", h.APIVersion, want)}
	}
	if h.Kind == "Simulation" {
		s.Simulations = append(s.Simulations, RawDocument{Source: src, Data: raw})
		return nil
	}
	if h.Name == "" {
		return &InputError{Source: src, Object: h.Kind, Field: "metadata.name", Detail: "missing"}
	}
	key := h.Kind + " " + ns + "/" + h.Name
	if prev, dup := s.seen[key]; dup {
		return &InputError{Source: src, Object: objectName(h.Kind, ns, h.Name), Field: "metadata.name", Detail: "duplicate object (first defined in " + prev + ")"}
	}
	s.seen[key] = src

	obj, err := decodeTyped(h.Kind, raw)
	if err != nil {
		field, detail := splitJSONError(err)
		if field == "" {
			field = findBadQuantity(raw)
		}
		return &InputError{Source: src, Object: objectName(h.Kind, ns, h.Name), Field: field, Detail: detail}
	}
	s.origin[obj] = src
	if namespaced && h.Namespace == "" {
		s.defaulted[obj] = true
	}
	switch o := obj.(type) {
	case *v1.Node:
		s.Objects.Nodes = append(s.Objects.Nodes, o)
	case *v1.Pod:
		o.Namespace = ns
		if err := validatePod(o); err != nil {
			err.Source = src
			return err
		}
		s.Objects.Pods = append(s.Objects.Pods, o)
	case *v1.Namespace:
		s.Objects.Namespaces = append(s.Objects.Namespaces, o)
	case *policyv1.PodDisruptionBudget:
		o.Namespace = ns
		s.Objects.PDBs = append(s.Objects.PDBs, o)
	case *schedulingv1.PriorityClass:
		s.Objects.PriorityClasses = append(s.Objects.PriorityClasses, o)
	case *schedulingv1beta1.PodGroup:
		o.Namespace = ns
		s.Objects.PodGroups = append(s.Objects.PodGroups, o)
	case *schedulingv1alpha3.CompositePodGroup:
		o.Namespace = ns
		s.Objects.CompositePodGroups = append(s.Objects.CompositePodGroups, o)
	case *appsv1.Deployment:
		o.Namespace = ns
		s.Deployments = append(s.Deployments, o)
	case *appsv1.ReplicaSet:
		o.Namespace = ns
		s.ReplicaSets = append(s.ReplicaSets, o)
	case *batchv1.Job:
		o.Namespace = ns
		s.Jobs = append(s.Jobs, o)
	default:
		s.addStorage(obj, ns)
	}
	return nil
}

// addList reads the items of a List, or of a typed list such as PodList
// whose items may omit their kind and apiVersion.
func (s *Set) addList(src string, raw []byte, h header, depth int) error {
	if depth > 0 {
		return &InputError{Source: src, Field: "kind", Detail: "nested List"}
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return &InputError{Source: src, Object: h.Kind, Field: "items", Detail: oneLine(err.Error())}
	}
	itemKind := strings.TrimSuffix(h.Kind, "List")
	for i, item := range list.Items {
		if itemKind != "" {
			var m map[string]any
			if err := json.Unmarshal(item, &m); err == nil {
				if _, ok := m["kind"]; !ok {
					m["kind"] = itemKind
				}
				if _, ok := m["apiVersion"]; !ok {
					m["apiVersion"] = h.APIVersion
				}
				item, _ = json.Marshal(m)
			}
		}
		if err := s.addDocument(fmt.Sprintf("%s items[%d]", src, i), item, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func decodeTyped(kind string, raw []byte) (any, error) {
	var obj any
	switch kind {
	case "Node":
		obj = &v1.Node{}
	case "Pod":
		obj = &v1.Pod{}
	case "Namespace":
		obj = &v1.Namespace{}
	case "PodDisruptionBudget":
		obj = &policyv1.PodDisruptionBudget{}
	case "PriorityClass":
		obj = &schedulingv1.PriorityClass{}
	case "PodGroup":
		obj = &schedulingv1beta1.PodGroup{}
	case "CompositePodGroup":
		obj = &schedulingv1alpha3.CompositePodGroup{}
	case "Deployment":
		obj = &appsv1.Deployment{}
	case "ReplicaSet":
		obj = &appsv1.ReplicaSet{}
	case "Job":
		obj = &batchv1.Job{}
	default:
		if obj, ok, err := decodeStorage(kind, raw); ok {
			return obj, err
		}
	}
	if err := json.Unmarshal(raw, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// validatePod checks what the API server would have refused and the engine
// relies on.
func validatePod(p *v1.Pod) *InputError {
	id := objectName("Pod", p.Namespace, p.Name)
	if len(p.Spec.Containers) == 0 {
		return &InputError{Object: id, Field: "spec.containers", Detail: "a pod needs at least one container"}
	}
	for i, c := range p.Spec.Containers {
		if c.Name == "" {
			return &InputError{Object: id, Field: fmt.Sprintf("spec.containers[%d].name", i), Detail: "missing"}
		}
	}
	if sg := p.Spec.SchedulingGroup; sg != nil && (sg.PodGroupName == nil || *sg.PodGroupName == "") {
		return &InputError{Object: id, Field: "spec.schedulingGroup.podGroupName", Detail: "missing"}
	}
	return nil
}

func objectName(kind, ns, name string) string {
	if name == "" {
		name = "(unnamed)"
	}
	if ns != "" {
		return kind + " " + ns + "/" + name
	}
	return kind + " " + name
}

// splitJSONError turns encoding/json's messages into a field path and a
// short detail.
func splitJSONError(err error) (field, detail string) {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Field, fmt.Sprintf("cannot use %s as %s", te.Value, te.Type.String())
	}
	msg := oneLine(err.Error())
	msg = strings.TrimPrefix(msg, "json: ")
	// Quantity errors say nothing about where; that is the best we have.
	return "", msg
}

// quantityMaps are the fields whose values are resource quantities.
var quantityMaps = map[string]bool{"requests": true, "limits": true, "allocatable": true, "capacity": true, "overhead": true}

// findBadQuantity returns the path of the first quantity in raw that does
// not parse, or "". encoding/json does not say where a Quantity failed.
func findBadQuantity(raw []byte) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	var walk func(v any, path string, inQuantities bool) string
	walk = func(v any, path string, inQuantities bool) string {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				p := k
				if path != "" {
					p = path + "." + k
				}
				if inQuantities {
					if _, err := resource.ParseQuantity(fmt.Sprint(x[k])); err != nil {
						return p
					}
					continue
				}
				if r := walk(x[k], p, quantityMaps[k]); r != "" {
					return r
				}
			}
		case []any:
			for i, e := range x {
				if r := walk(e, fmt.Sprintf("%s[%d]", path, i), false); r != "" {
					return r
				}
			}
		}
		return ""
	}
	return walk(v, "", false)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Build builds the snapshot, naming the file of any offending object.
func (s *Set) Build() (*snapshot.Snapshot, error) {
	snap, err := snapshot.New(s.Objects)
	if err != nil {
		return nil, s.locate(err)
	}
	return snap, nil
}

// locate turns a snapshot.ObjectError into an InputError with its file.
func (s *Set) locate(err error) error {
	var oe *snapshot.ObjectError
	if !errors.As(err, &oe) {
		return err
	}
	return &InputError{Source: s.origin[oe.Obj], Object: objectName(oe.Kind, oe.Namespace, oe.Name), Field: oe.Field, Detail: oe.Detail}
}

// Locate is locate for callers that build snapshots or pods themselves.
func (s *Set) Locate(err error) error { return s.locate(err) }

// LoadPod reads a file that must hold exactly one Pod. A pod without a
// namespace gets "default"; namespaced reports whether the file named one.
func LoadPod(path string) (pod *v1.Pod, namespaced bool, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false, err
	}
	return ParsePod(path, data)
}

// ParsePod parses data that must hold exactly one Pod (see LoadPod).
func ParsePod(name string, data []byte) (*v1.Pod, bool, error) {
	p, s, err := parsePod(name, data)
	if err != nil {
		return nil, false, err
	}
	return p, !s.defaulted[p], nil
}

func parsePod(name string, data []byte) (*v1.Pod, *Set, error) {
	s := NewSet()
	if err := s.AddBytes(name, data); err != nil {
		return nil, nil, err
	}
	o := s.Objects
	others := len(o.Nodes) + len(o.PDBs) + len(o.PriorityClasses) + len(o.Namespaces) + len(s.Skipped) +
		len(o.PodGroups) + len(o.CompositePodGroups) +
		len(s.Deployments) + len(s.ReplicaSets) + len(s.Jobs) + len(s.Simulations)
	switch {
	case len(o.Pods) == 0:
		return nil, nil, &InputError{Source: name, Detail: "no Pod found; the file must hold exactly one Pod"}
	case len(o.Pods) > 1:
		return nil, nil, &InputError{Source: name, Detail: fmt.Sprintf("%d Pods found; the file must hold exactly one Pod", len(o.Pods))}
	case others > 0:
		return nil, nil, &InputError{Source: name, Detail: "the file must hold exactly one Pod and nothing else"}
	}
	p := o.Pods[0]
	if p.Spec.NodeName != "" {
		return nil, nil, &InputError{Source: s.origin[p], Object: objectName("Pod", p.Namespace, p.Name), Field: "spec.nodeName", Detail: "the pod is already bound; whatif needs a pod to schedule"}
	}
	return p, s, nil
}
