package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
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
	"k8s.io/apimachinery/pkg/runtime/schema"
	sjson "sigs.k8s.io/json"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

type header struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
}

// objectHeader is the part of a header the loader keeps per object: a
// header holds a whole ObjectMeta, and a large List has many objects
// prepared at once.
type objectHeader struct {
	APIVersion, Kind, Name, Namespace string
}

func (h *header) short() objectHeader {
	return objectHeader{APIVersion: h.APIVersion, Kind: h.Kind, Name: h.Name, Namespace: h.Namespace}
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
	"Simulation":            SimulationAPIVersion,
	"ResourceSlice":         draAPIVersion,
	"DeviceClass":           draAPIVersion,
	"ResourceClaim":         draAPIVersion,
	"ResourceClaimTemplate": draAPIVersion,
}

// SimulationAPIVersion is the apiVersion of reprieve's Simulation document.
const SimulationAPIVersion = "reprieve.dev/v1alpha1"

func (s *Set) addDocument(src string, raw []byte, depth int) error {
	if s.dec == nil {
		s.dec = &fastDecoder{}
	}
	return s.commit(source{path: src}, raw, prepare(raw, s.opts.Lean, s.dec), depth)
}

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
// defaults and validates it (and with lean drops what Options.Lean says).
// It touches nothing shared but dec, the goroutine's decoder.
func prepare(raw []byte, lean bool, dec *fastDecoder) prepared {
	p, ok, tried := prepareSniffed(raw, lean, dec)
	if ok {
		return p
	}
	if tried {
		dec = nil // it has read raw already: DecodeStrict words the rest
	}
	p = prepared{}
	h, ok := scanHeader(raw)
	if !ok {
		h = header{}
		if err := sjson.UnmarshalCaseSensitivePreserveInts(raw, &h); err != nil {
			if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
				p.problemsToSet().err = &InputError{Detail: "expected a Kubernetes object (a mapping with apiVersion and kind)"}
				return p
			}
			field, detail := splitJSONError(err)
			p.problemsToSet().err = &InputError{Field: field, Detail: detail}
			return p
		}
	}
	p.h = h.short()
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
	obj, unknown, err := decodeTyped(dec, h.Kind, raw)
	p.setDecoded(obj, unknown, err)
	if err != nil {
		return p
	}
	p.finish(lean)
	return p
}

// prepareSniffed is prepare's fast path for the common case: an object of
// a kind the loader reads, with a plain first "kind" key (kubectl writes
// apiVersion and kind first), a name, the apiVersion the loader accepts,
// that decodes — by dec, which parses no quantity checkQuantities could
// refuse, or else by DecodeStrict when raw holds no suspicious number.
// Its object is decoded on the kind that key names without walking its
// header first; the decoded kind, apiVersion and name are then checked to
// be what prepare would have read. Anything else returns false, and
// prepare takes the general path, which gives the same result or words
// the error; tried reports that dec was given raw to decode.
func prepareSniffed(raw []byte, lean bool, dec *fastDecoder) (p prepared, ok, tried bool) {
	kind := sniffKind(raw)
	if kind == "" || kind == "Simulation" || isListKind(kind) || !p.setKind(kind, "") {
		return prepared{}, false, false
	}
	obj, fast := decodeFast(dec, kind, raw)
	tried = dec != nil && obj != nil
	var unknown []error
	if !fast {
		if suspiciousNumbers(raw) {
			return prepared{}, false, tried
		}
		var err error
		if obj, unknown, err = decodeTyped(nil, kind, raw); err != nil {
			return prepared{}, false, tried
		}
	}
	tk, ok := obj.(interface{ GetObjectKind() schema.ObjectKind })
	m, isMeta := obj.(metav1.Object)
	if !ok || !isMeta {
		return prepared{}, false, tried
	}
	tm, ok := tk.GetObjectKind().(*metav1.TypeMeta)
	if !ok || tm.Kind != kind || tm.APIVersion != p.apiVersion || m.GetName() == "" {
		return prepared{}, false, tried
	}
	p.h = objectHeader{APIVersion: tm.APIVersion, Kind: kind, Name: m.GetName(), Namespace: m.GetNamespace()}
	p.setKind(kind, p.h.Namespace)
	p.setDecoded(obj, unknown, nil)
	p.finish(lean)
	return p, true, tried
}

// sniffKind returns the value of the first "kind" key in raw when it is a
// plain string, else "".
func sniffKind(raw []byte) string {
	i := bytes.Index(raw, []byte(`"kind"`))
	if i < 0 {
		return ""
	}
	i = skipSpace(raw, i+len(`"kind"`))
	if i >= len(raw) || raw[i] != ':' {
		return ""
	}
	i = skipSpace(raw, i+1)
	if i >= len(raw) || raw[i] != '"' {
		return ""
	}
	end := bytes.IndexByte(raw[i+1:], '"')
	if end < 0 {
		return ""
	}
	kind, ok := plainString(raw[i : i+end+2])
	if !ok {
		return ""
	}
	return kind
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
func (s *Set) commit(at source, raw []byte, p prepared, depth int) error {
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
		return s.addList(src(), raw, h, depth)
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
	if prev, dup := s.seen.add(key, at); dup {
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
		s.ReplicaSets = append(s.ReplicaSets, o)
	case *batchv1.Job:
		s.Jobs = append(s.Jobs, o)
	case *appsv1.StatefulSet:
		s.StatefulSets = append(s.StatefulSets, o)
	default:
		if s.addStorage(obj, ns) {
			break
		}
		if err := s.addDRAObject(obj, ns); err != nil {
			err.Source = src()
			return err
		}
	}
	return nil
}

// addList reads the items of a List, or of a typed list such as PodList
// whose items may omit their kind and apiVersion. The items are found by
// the scanner (slices of raw, not copies); only the List without them goes
// through the decoder.
func (s *Set) addList(src string, raw []byte, h objectHeader, depth int) error {
	var items [][]byte
	rest := raw
	walked := objectMembers(raw, func(key, value []byte, at int) {
		if string(key) != "items" {
			return
		}
		if elems, ok := arrayElements(value); ok {
			items = elems
			rest = slices.Concat(raw[:at], []byte("null"), raw[at+len(value):])
		}
	})
	if !walked {
		items, rest = nil, raw
	}
	return s.addItems(src, rest, h, items, depth)
}

// addItems adds the items of a List: rest is the List, whose own fields
// are checked strictly, and items its items already cut out, or nil to
// take them from rest. Items are prepared in parallel and committed in
// order.
func (s *Set) addItems(src string, rest []byte, h objectHeader, items [][]byte, depth int) error {
	listItems, err := s.checkList(src, rest, h, depth)
	if err != nil {
		return err
	}
	if items == nil {
		items = make([][]byte, len(listItems))
		for i, item := range listItems {
			items[i] = item
		}
	}
	if itemKind := strings.TrimSuffix(h.Kind, "List"); itemKind != "" {
		for i, item := range items {
			items[i] = withTypeMeta(item, itemKind, h.APIVersion)
		}
	}
	s.reserve(len(items))
	preps := make([]prepared, len(items))
	s.parallelEach(len(items), func() func(int) {
		prep, _ := s.preparer()
		return func(i int) {
			preps[i] = prep(items[i])
			if preps[i].decoded() {
				items[i] = nil // commit needs the JSON only to word an error
			}
		}
	})
	for i, item := range items {
		if err := s.commitItem(src, i, item, preps[i], depth); err != nil {
			return err
		}
	}
	return nil
}

// preparer returns how one goroutine prepares documents: with prepare,
// or on a lean load through a pod memo of the goroutine's own, which it
// also returns (nil without).
func (s *Set) preparer() (func(raw []byte) prepared, *podMemo) {
	if s.opts.Lean && !s.noMemo {
		hits := new(int)
		s.memosMu.Lock()
		s.memoHitCounts = append(s.memoHitCounts, hits)
		s.memosMu.Unlock()
		m := newPodMemo(hits)
		return m.prepare, m
	}
	lean := s.opts.Lean
	dec := &fastDecoder{}
	return func(raw []byte) prepared { return prepare(raw, lean, dec) }, nil
}

// checkList checks a List without its items (rest) strictly, and returns
// the items rest still holds.
func (s *Set) checkList(src string, rest []byte, h objectHeader, depth int) ([]json.RawMessage, error) {
	if depth > 0 {
		return nil, &InputError{Source: src, Field: "kind", Detail: "nested List"}
	}
	var list struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        metav1.ListMeta   `json:"metadata"`
		Items           []json.RawMessage `json:"items"`
	}
	unknown, err := sjson.UnmarshalStrict(rest, &list)
	if err != nil {
		return nil, &InputError{Source: src, Object: h.Kind, Field: "items", Detail: oneLine(err.Error())}
	}
	for _, u := range unknown {
		if err := s.strict(src, h.Kind, oneLine(u.Error())); err != nil {
			return nil, err
		}
	}
	return list.Items, nil
}

// commitItem commits item i of the List src (of depth), prepared as p
// (item is its JSON, or nil once p holds it decoded).
func (s *Set) commitItem(src string, i int, item []byte, p prepared, depth int) error {
	return s.commit(source{path: src, item: i + 1}, item, p, depth+1)
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
// sensitive; unknown and duplicate fields come back as strict errors. A
// node or a pod is decoded by dec (when not nil) if it reads it, into the
// object DecodeStrict would make without error or strict error.
func decodeTyped(dec *fastDecoder, kind string, raw []byte) (obj any, strict []error, err error) {
	if obj, ok := decodeFast(dec, kind, raw); ok {
		return obj, nil, nil
	}
	if obj = newObject(kind); obj == nil {
		return nil, nil, fmt.Errorf("no type for kind %s", kind)
	}
	strict, err = sjson.UnmarshalStrict(raw, obj)
	if err != nil {
		return nil, nil, err
	}
	return obj, strict, nil
}

// decodeFast decodes a node or a pod with dec (when not nil), and reports
// whether dec read it: then it is what DecodeStrict would make of raw,
// without error or strict error.
func decodeFast(dec *fastDecoder, kind string, raw []byte) (any, bool) {
	if dec == nil || (kind != "Pod" && kind != "Node") {
		return nil, false
	}
	obj := newObject(kind)
	return obj, dec.decode(raw, obj)
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
