package manifest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sjson "sigs.k8s.io/json"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// objectHeader is what the loader reads of every document first: its
// kind and apiVersion, name and namespace.
type objectHeader struct {
	APIVersion, Kind, Name, Namespace string
}

// readHeader reads raw's header, as a decoder of those four fields alone
// reads it: case-sensitive keys, the last of duplicates wins, other fields
// skipped. Its error has no Source.
func readHeader(raw []byte) (objectHeader, *InputError) {
	var h struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := sjson.UnmarshalCaseSensitivePreserveInts(raw, &h); err != nil {
		if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
			return objectHeader{}, &InputError{Detail: "expected a Kubernetes object (a mapping with apiVersion and kind)"}
		}
		field, detail := splitJSONError(err)
		return objectHeader{}, &InputError{Field: field, Detail: detail}
	}
	return objectHeader{APIVersion: h.APIVersion, Kind: h.Kind, Name: h.Metadata.Name, Namespace: h.Metadata.Namespace}, nil
}

// kinds are the objects the engine uses, by kind, with the apiVersion it
// accepts.
var kinds = map[string]string{
	"Node":                  "v1",
	"Pod":                   "v1",
	"Namespace":             "v1",
	"PodDisruptionBudget":   "policy/v1",
	"PriorityClass":         "scheduling.k8s.io/v1",
	"PodGroup":              "scheduling.k8s.io/v1beta1",
	"CompositePodGroup":     "scheduling.k8s.io/v1alpha3",
	"Deployment":            "apps/v1",
	"ReplicaSet":            "apps/v1",
	"Job":                   "batch/v1",
	"StatefulSet":           "apps/v1",
	"Service":               "v1", // for PodTopologySpread's default constraints
	"ReplicationController": "v1", // for PodTopologySpread's default constraints
	"Simulation":            SimulationAPIVersion,
	"ResourceSlice":         draAPIVersion,
	"DeviceClass":           draAPIVersion,
	"ResourceClaim":         draAPIVersion,
	"ResourceClaimTemplate": draAPIVersion,
}

// SimulationAPIVersion is the apiVersion of reprieve's Simulation document.
const SimulationAPIVersion = "reprieve.dev/v1alpha1"

// prepared is what can be done for one document without the set: its
// header read, its object decoded, defaulted and validated. Documents are
// prepared in parallel and committed in order, so that the first error in
// the input is the one reported, as if they had been read one by one.
type prepared struct {
	h objectHeader
	// known is set for a kind the loader reads; apiVersion is what it
	// accepts.
	known      bool
	namespaced bool
	apiVersion string
	ns         string
	// obj is set for an object of a known kind with a name.
	obj any
	// bad says what is wrong with the document, or is nil: it is kept
	// apart, as few documents have it and all stay prepared until
	// they are committed.
	bad *problems
}

// problems are what prepare found wrong with a document.
type problems struct {
	// err is a document that is not an object with a kind and an
	// apiVersion (then nothing else is set).
	err *InputError
	// quantity and decoded are set for an object of a known kind with a
	// name, in the order they are checked.
	quantityField, quantityDetail string
	unknown                       []error
	decodeErr                     error
	admitErr                      *InputError // without Source
}

// noProblems is the problems of a document without any.
var noProblems problems

// problems returns p's problems, to be read.
func (p *prepared) problems() *problems {
	if p.bad == nil {
		return &noProblems
	}
	return p.bad
}

// problemsToSet returns p's problems, to be written.
func (p *prepared) problemsToSet() *problems {
	if p.bad == nil {
		p.bad = &problems{}
	}
	return p.bad
}

// setDecoded records what decoding found: the object and, when not
// empty, its unknown fields and the error.
func (p *prepared) setDecoded(obj any, unknown []error, err error) {
	p.obj = obj
	if len(unknown) > 0 || err != nil {
		pr := p.problemsToSet()
		pr.unknown, pr.decodeErr = unknown, err
	}
}

// decoded reports whether p holds an object decoded without error, for
// which commit does not read the document again.
func (p *prepared) decoded() bool {
	pr := p.problems()
	return pr.err == nil && p.obj != nil && pr.decodeErr == nil && pr.quantityField == ""
}

// prepare reads raw's header and, for an object the loader reads, decodes,
// defaults and validates it (and with lean drops what Options.Lean says):
// the general path's way. It touches nothing shared.
func prepare(raw []byte, lean bool) prepared {
	var p prepared
	h, herr := readHeader(raw)
	if herr != nil {
		p.problemsToSet().err = herr
		return p
	}
	p.h = h
	if h.Kind == "" || h.APIVersion == "" || isListKind(h.Kind) {
		return p
	}
	if !p.setKind(h.Kind, h.Namespace) {
		return p
	}
	if h.APIVersion != p.apiVersion || h.Kind == "Simulation" || h.Name == "" {
		return p
	}
	if field, detail := checkQuantities(raw); field != "" {
		pr := p.problemsToSet()
		pr.quantityField, pr.quantityDetail = field, detail
		return p
	}
	obj, unknown, err := decodeTyped(h.Kind, raw)
	p.setDecoded(obj, unknown, err)
	if err != nil {
		return p
	}
	p.finish(lean)
	return p
}

// setKind records what the loader knows of kind: whether it reads it, the
// apiVersion it accepts, whether it is namespaced and so the namespace of
// an object that names ns. It reports whether the loader reads the kind.
func (p *prepared) setKind(kind, ns string) bool {
	want, known := kinds[kind]
	sk, isStorage := storageKinds[kind]
	if isStorage {
		want, known = sk.apiVersion, true
	}
	if !known {
		return false
	}
	p.known, p.apiVersion = true, want
	p.namespaced = kind != "Node" && kind != "Namespace" && kind != "PriorityClass" && (!isStorage || sk.namespaced)
	if n, dra := draKinds[kind]; dra {
		p.namespaced = n
	}
	p.ns = ns
	if p.namespaced && p.ns == "" {
		p.ns = metav1.NamespaceDefault
	}
	return true
}

// finish defaults, validates and trims a decoded object.
func (p *prepared) finish(lean bool) {
	if p.namespaced {
		setNamespace(p.obj, p.ns)
	}
	if err := admit(p.obj); err != nil {
		p.problemsToSet().admitErr = err
	}
	// Managed fields are often most of an object as the API server
	// returns it, and nothing reads them.
	if m, ok := p.obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	// A lean set keeps its pods in parts, as the memo makes them.
	if pod, ok := p.obj.(*v1.Pod); ok && lean && p.problems().admitErr == nil {
		leanPod(pod)
		p.obj = snapshot.SplitPod(pod)
	}
}

// commit adds a prepared document to the set, with the checks that need
// the set (duplicates, --validate, one globalDefault PriorityClass).
func (s *Set) commit(ctx context.Context, at source, raw []byte, p prepared, depth int) error {
	// src words an error; a document committed without one keeps at,
	// whose words are made only when asked for (Origin).
	src := at.String
	pr := p.problems()
	if pr.err != nil {
		pr.err.Source = src()
		return pr.err
	}
	h := p.h
	if h.Kind == "" {
		return &InputError{Source: src(), Field: "kind", Detail: "missing"}
	}
	if h.APIVersion == "" {
		return &InputError{Source: src(), Object: h.Kind + " " + h.Name, Field: "apiVersion", Detail: "missing"}
	}
	if isListKind(h.Kind) {
		return s.addList(ctx, src(), raw, h, depth)
	}
	if s.opts.Workloads {
		p = s.prepareInput(raw, p)
		h, pr = p.h, p.problems()
	}
	if !p.known {
		s.Skipped = append(s.Skipped, fmt.Sprintf("%s: skipping %s %s: kind not used by reprieve", src(), h.APIVersion, objectName(h.Kind, h.Namespace, h.Name)))
		s.skipped = append(s.skipped, skippedObject{src: src(), kind: h.APIVersion + " " + h.Kind})
		return nil
	}
	ns := p.ns
	if h.APIVersion != p.apiVersion {
		return &InputError{Source: src(), Object: objectName(h.Kind, ns, h.Name), Field: "apiVersion",
			Detail: fmt.Sprintf("unsupported %q (want %q)", h.APIVersion, p.apiVersion)}
	}
	if h.Kind == "Simulation" {
		s.Simulations = append(s.Simulations, RawDocument{Source: src(), Data: raw})
		return nil
	}
	if h.Name == "" {
		return &InputError{Source: src(), Object: h.Kind, Field: "metadata.name", Detail: "missing"}
	}
	key := objectKey{h.Kind, ns, h.Name}
	if prev, dup := s.addSeen(key, at); dup {
		return &InputError{Source: src(), Object: objectName(h.Kind, ns, h.Name), Field: "metadata.name", Detail: "duplicate object (first defined in " + prev.String() + ")"}
	}

	if pr.quantityField != "" {
		return &InputError{Source: src(), Object: objectName(h.Kind, ns, h.Name), Field: pr.quantityField, Detail: pr.quantityDetail}
	}
	if pr.decodeErr != nil {
		field, detail := splitJSONError(pr.decodeErr)
		if field == "" {
			field = findBadQuantity(raw)
		}
		return &InputError{Source: src(), Object: objectName(h.Kind, ns, h.Name), Field: field, Detail: detail}
	}
	for _, u := range pr.unknown {
		if err := s.strict(src(), objectName(h.Kind, ns, h.Name), oneLine(u.Error())); err != nil {
			return err
		}
	}
	obj := p.obj
	if !s.opts.Lean || !isPodOrNode(obj) {
		s.origin[obj] = at
	}
	if p.namespaced && h.Namespace == "" {
		s.defaulted[obj] = true
	}
	if pr.admitErr != nil {
		pr.admitErr.Source = src()
		return pr.admitErr
	}
	if err := s.admitGlobal(at, obj); err != nil {
		return err
	}
	switch o := obj.(type) {
	case *v1.Node:
		s.Objects.Nodes = append(s.Objects.Nodes, o)
	case *v1.Pod:
		s.Objects.Pods = append(s.Objects.Pods, o)
	case *snapshot.PodParts:
		s.Objects.PodParts = append(s.Objects.PodParts, o)
	case *v1.Namespace:
		s.Objects.Namespaces = append(s.Objects.Namespaces, o)
	case *policyv1.PodDisruptionBudget:
		s.Objects.PDBs = append(s.Objects.PDBs, o)
	case *schedulingv1.PriorityClass:
		s.Objects.PriorityClasses = append(s.Objects.PriorityClasses, o)
	case *schedulingv1beta1.PodGroup:
		s.Objects.PodGroups = append(s.Objects.PodGroups, o)
	case *schedulingv1alpha3.CompositePodGroup:
		s.Objects.CompositePodGroups = append(s.Objects.CompositePodGroups, o)
	case *appsv1.Deployment:
		s.Deployments = append(s.Deployments, o)
	case *appsv1.ReplicaSet:
		// Run by the simulator, and read by PodTopologySpread's defaults.
		s.ReplicaSets = append(s.ReplicaSets, o)
		s.Objects.Selectors.ReplicaSets = append(s.Objects.Selectors.ReplicaSets, o)
	case *batchv1.Job:
		s.Jobs = append(s.Jobs, o)
	case *appsv1.StatefulSet:
		s.StatefulSets = append(s.StatefulSets, o)
		s.Objects.Selectors.StatefulSets = append(s.Objects.Selectors.StatefulSets, o)
	case *appsv1.DaemonSet:
		s.DaemonSets = append(s.DaemonSets, o)
	case *batchv1.CronJob:
		s.CronJobs = append(s.CronJobs, o)
	case *v1.Service:
		s.Objects.Selectors.Services = append(s.Objects.Selectors.Services, o)
	case *v1.ReplicationController:
		s.Objects.Selectors.ReplicationControllers = append(s.Objects.Selectors.ReplicationControllers, o)
	default:
		if s.addStorage(obj, ns) {
			break
		}
		if err := s.addDRAObject(obj, ns); err != nil {
			err.Source = src()
			return err
		}
	}
	if s.opts.Workloads && isInput(obj) {
		s.Inputs = append(s.Inputs, obj)
	}
	return nil
}

// addList reads the items of a List, or of a typed list such as PodList
// whose items may omit their kind and apiVersion.
func (s *Set) addList(ctx context.Context, src string, raw []byte, h objectHeader, depth int) error {
	items, err := s.checkList(src, raw, h, depth)
	if err != nil {
		return err
	}
	if itemKind := strings.TrimSuffix(h.Kind, "List"); itemKind != "" {
		for i, item := range items {
			items[i] = withTypeMeta(item, itemKind, h.APIVersion)
		}
	}
	// Items are prepared in parallel and committed in order.
	s.reserve(len(items))
	preps := make([]prepared, len(items))
	s.parallelEach(ctx, len(items), func() func(int) {
		w := s.newWorker()
		return func(i int) {
			preps[i] = w.prepare(items[i])
			if preps[i].decoded() {
				items[i] = nil // commit needs the JSON only to word an error
			}
		}
	})
	for i, item := range items {
		if i%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := s.commitItem(ctx, src, i, item, preps[i], depth); err != nil {
			return err
		}
	}
	return nil
}

// checkList checks the List raw strictly but for its items, whose JSON
// it returns.
func (s *Set) checkList(src string, raw []byte, h objectHeader, depth int) ([][]byte, error) {
	if depth > 0 {
		return nil, &InputError{Source: src, Field: "kind", Detail: "nested List"}
	}
	var list struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        metav1.ListMeta   `json:"metadata"`
		Items           []json.RawMessage `json:"items"`
	}
	unknown, err := sjson.UnmarshalStrict(raw, &list)
	if err != nil {
		return nil, &InputError{Source: src, Object: h.Kind, Field: "items", Detail: oneLine(err.Error())}
	}
	for _, u := range unknown {
		if err := s.strict(src, h.Kind, oneLine(u.Error())); err != nil {
			return nil, err
		}
	}
	items := make([][]byte, len(list.Items))
	for i, item := range list.Items {
		items[i] = item
	}
	return items, nil
}

// commitItem commits item i of the List src (of depth), prepared as p
// (item is its JSON, or nil once p holds it decoded).
func (s *Set) commitItem(ctx context.Context, src string, i int, item []byte, p prepared, depth int) error {
	return s.commit(ctx, source{path: src, item: i + 1}, item, p, depth+1)
}

// source is where a document was read: a file (or standard input, or a
// document of a file), and for an item of a List there, 1 + its index.
type source struct {
	path string
	// doc is the document's number in a file of several, from 1 (0:
	// the file's only one); item an item's in a List, from 1 (0: none).
	doc, item int
}

// String words the source as errors and warnings name it: "path",
// "path#doc", "path items[i]" or "path#doc items[i]".
func (o source) String() string {
	s := o.path
	if o.doc > 0 {
		s += "#" + strconv.Itoa(o.doc)
	}
	if o.item > 0 {
		s += " items[" + strconv.Itoa(o.item-1) + "]"
	}
	return s
}

// objectKey is an object's kind, namespace and name.
type objectKey struct{ kind, namespace, name string }

// addSeen records that the object key was read at at, and returns where
// it was read before, if it was: the fast path keeps an index that holds
// less than the general path's map.
func (s *Set) addSeen(key objectKey, at source) (prev source, dup bool) {
	if s.fast != nil {
		return s.fast.addSeen(key, at)
	}
	if prev, dup := s.seen[key]; dup {
		return prev, true
	}
	if s.seen == nil {
		s.seen = map[objectKey]source{}
	}
	s.seen[key] = at
	return source{}, false
}

// isPodOrNode reports whether obj is a pod or a node: a lean set does not
// record where those were read from (a snapshot holds most of its objects
// in them, and nothing that reads a lean set asks).
func isPodOrNode(obj any) bool {
	switch obj.(type) {
	case *v1.Pod, *snapshot.PodParts, *v1.Node:
		return true
	}
	return false
}

// isListKind reports whether kind names a list (List, PodList, ...).
func isListKind(kind string) bool { return strings.HasSuffix(kind, "List") }

// withTypeMeta gives an item of a typed list (such as PodList) the kind
// and apiVersion it may omit.
func withTypeMeta(item []byte, kind, apiVersion string) []byte {
	var m map[string]any
	if err := json.Unmarshal(item, &m); err != nil {
		return item
	}
	if _, ok := m["kind"]; !ok {
		m["kind"] = kind
	}
	if _, ok := m["apiVersion"]; !ok {
		m["apiVersion"] = apiVersion
	}
	out, _ := json.Marshal(m)
	return out
}

// decodeTyped decodes raw as the API server does: field names are case
// sensitive; unknown and duplicate fields come back as strict errors.
func decodeTyped(kind string, raw []byte) (obj any, strict []error, err error) {
	if obj = newObject(kind); obj == nil {
		return nil, nil, fmt.Errorf("no type for kind %s", kind)
	}
	strict, err = sjson.UnmarshalStrict(raw, obj)
	if err != nil {
		return nil, nil, err
	}
	return obj, strict, nil
}

// newObject returns an empty object of a kind the loader reads, nil for
// other kinds.
func newObject(kind string) any {
	switch kind {
	case "Node":
		return &v1.Node{}
	case "Pod":
		return &v1.Pod{}
	case "Namespace":
		return &v1.Namespace{}
	case "PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}
	case "PriorityClass":
		return &schedulingv1.PriorityClass{}
	case "PodGroup":
		return &schedulingv1beta1.PodGroup{}
	case "CompositePodGroup":
		return &schedulingv1alpha3.CompositePodGroup{}
	case "Deployment":
		return &appsv1.Deployment{}
	case "ReplicaSet":
		return &appsv1.ReplicaSet{}
	case "Job":
		return &batchv1.Job{}
	case "StatefulSet":
		return &appsv1.StatefulSet{}
	case "Service":
		return &v1.Service{}
	case "ReplicationController":
		return &v1.ReplicationController{}
	case "DaemonSet":
		return &appsv1.DaemonSet{}
	case "CronJob":
		return &batchv1.CronJob{}
	}
	if obj := newDRAObject(kind); obj != nil {
		return obj
	}
	return newStorageObject(kind)
}

// DecodeStrict decodes data into obj as the loader decodes objects: case
// sensitive field names; unknown and duplicate fields are returned as
// strict errors naming their path.
func DecodeStrict(data []byte, obj any) (strict []error, err error) {
	return sjson.UnmarshalStrict(data, obj)
}

func setNamespace(obj any, ns string) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetNamespace(ns)
	}
}
