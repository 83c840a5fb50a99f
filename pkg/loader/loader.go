// Package loader reads cluster snapshots written as plain Kubernetes
// manifests: YAML or JSON files with one or many documents, `kind: List`
// documents as `kubectl get -o yaml` writes them, or directories of such
// files. Every problem is reported as one line naming the file, the object
// and the field.
package loader

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
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
	sjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/reprieve/reprieve/internal/admission"
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
	// Err is the underlying error, if any (such as a *fs.PathError).
	Err error
}

func (e *InputError) Error() string {
	var b strings.Builder
	b.WriteString(e.Source)
	if e.Object != "" {
		b.WriteString(": " + clip(e.Object, maxMessagePart))
	}
	if e.Field != "" {
		b.WriteString(": " + clip(e.Field, maxMessagePart))
	}
	b.WriteString(": " + clip(e.Detail, 4*maxMessagePart))
	return b.String()
}

// maxMessagePart bounds the object and field an error names (a 10 MB name
// is not repeated in the message).
const maxMessagePart = 200

// clip shortens s to about n bytes, keeping its start and end.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	keep := n/2 - 2
	return strings.ToValidUTF8(s[:keep]+" … "+s[len(s)-keep:], "")
}

// Is makes errors.Is(err, ErrInput) true for every InputError.
func (e *InputError) Is(target error) bool { return target == ErrInput }

// Unwrap returns the underlying error.
func (e *InputError) Unwrap() error { return e.Err }

// FieldValidation says what to do with unknown and duplicate fields, as
// kubectl's --validate does.
type FieldValidation string

// The field validation modes.
const (
	// ValidateStrict refuses unknown and duplicate fields (the default).
	ValidateStrict FieldValidation = "strict"
	// ValidateWarn reports them as warnings and goes on.
	ValidateWarn FieldValidation = "warn"
	// ValidateIgnore drops unknown fields silently; of duplicates the last wins.
	ValidateIgnore FieldValidation = "ignore"
)

// ParseFieldValidation parses a --validate value; "true" and "false" mean
// strict and ignore, as for kubectl.
func ParseFieldValidation(s string) (FieldValidation, error) {
	switch strings.ToLower(s) {
	case "", "strict", "true":
		return ValidateStrict, nil
	case "warn":
		return ValidateWarn, nil
	case "ignore", "false":
		return ValidateIgnore, nil
	}
	return "", fmt.Errorf("--validate must be strict, warn or ignore, got %q", s)
}

// Options configure how a Set reads its input.
type Options struct {
	// Validation handles unknown and duplicate fields ("" is strict).
	Validation FieldValidation
	// Stdin is read for the path "-".
	Stdin io.Reader
	// Parallelism bounds the goroutines that decode documents (0 is
	// GOMAXPROCS; 1 decodes on the caller's goroutine).
	Parallelism int
}

// Set is what a load produced: the objects and where each came from.
type Set struct {
	Objects snapshot.Objects
	// Workloads are the controllers the simulator runs.
	Deployments []*appsv1.Deployment
	ReplicaSets []*appsv1.ReplicaSet
	Jobs        []*batchv1.Job
	// StatefulSets are run by the simulator with their volume claims.
	StatefulSets []*appsv1.StatefulSet
	// Simulations are the raw reprieve.dev/v1alpha1 Simulation documents.
	Simulations []RawDocument
	// Skipped lists one line per object of a kind the engine does not use.
	Skipped []string
	// Warnings lists unknown and duplicate fields under --validate=warn.
	Warnings []string

	opts      Options
	stdinRead bool
	skipped   []skippedObject // what each Skipped line names
	origin    map[any]string
	seen      map[string]string
	defaulted map[any]bool
	globals   admission.GlobalDefaults
}

// NewSet returns an empty set that validates strictly.
func NewSet() *Set { return NewSetWith(Options{}) }

// NewSetWith returns an empty set reading with opts.
func NewSetWith(opts Options) *Set {
	return &Set{opts: opts, origin: map[any]string{}, seen: map[string]string{}, defaulted: map[any]bool{}}
}

// RawDocument is a document kept as JSON, with where it came from.
type RawDocument struct {
	Source string
	Data   []byte
}

// skippedObject is where a skipped object came from and its apiVersion
// and kind.
type skippedObject struct{ src, kind string }

// maxSkippedLines is how many objects of one skipped kind SkippedLines
// names before it counts the rest.
const maxSkippedLines = 3

// SkippedLines returns Skipped for a user to read: the objects of a kind
// named one by one while there are few of them, else one line per kind
// that counts them (a dump of a whole cluster skips thousands of Services).
func (s *Set) SkippedLines() []string {
	count := map[string]int{}
	for _, o := range s.skipped {
		count[o.kind]++
	}
	var lines []string
	counted := map[string]bool{}
	for i, line := range s.Skipped {
		o := s.skipped[i]
		switch {
		case count[o.kind] <= maxSkippedLines:
			lines = append(lines, line)
		case !counted[o.kind]:
			counted[o.kind] = true
			lines = append(lines, fmt.Sprintf("skipping %d %s objects: kind not used by reprieve (the first: %s)", count[o.kind], o.kind, o.src))
		}
	}
	return lines
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
	for _, st := range s.StatefulSets {
		out = append(out, fmt.Sprintf("%s: skipping apps/v1 %s: kind not used by whatif", s.origin[st], objectName("StatefulSet", st.Namespace, st.Name)))
	}
	for _, r := range s.Simulations {
		out = append(out, fmt.Sprintf("%s: skipping reprieve.dev/v1alpha1 Simulation: kind not used by whatif", r.Source))
	}
	return out
}

// Origin returns where obj was read from ("" if unknown).
func (s *Set) Origin(obj any) string { return s.origin[obj] }

// Load reads every path (file or directory) into a new Set.
func Load(paths ...string) (*Set, error) { return LoadWith(Options{}, paths...) }

// LoadWith is Load with options.
func LoadWith(opts Options, paths ...string) (*Set, error) {
	s := NewSetWith(opts)
	for _, p := range paths {
		if err := s.AddPath(p); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// AddPath reads a file, or every .yaml, .yml and .json file under a
// directory in lexical order, or standard input for "-". A path that cannot
// be read is an *InputError wrapping the *fs.PathError.
func (s *Set) AddPath(path string) error {
	if path == "-" {
		return s.addStdin()
	}
	info, err := os.Stat(path)
	if err != nil {
		return fileError(path, err)
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
		return fileError(path, err)
	}
	return s.AddBytes(path, data)
}

// StdinName is how standard input is named in messages.
const StdinName = "<stdin>"

func (s *Set) addStdin() error {
	if s.stdinRead {
		return &InputError{Source: StdinName, Detail: "standard input (-) given more than once"}
	}
	s.stdinRead = true
	if s.opts.Stdin == nil {
		return &InputError{Source: StdinName, Detail: "no standard input to read"}
	}
	data, err := io.ReadAll(s.opts.Stdin)
	if err != nil {
		return &InputError{Source: StdinName, Detail: "cannot read: " + err.Error(), Err: err}
	}
	return s.AddBytes(StdinName, data)
}

func fileError(path string, err error) error {
	detail := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		detail = pe.Err.Error()
	}
	return &InputError{Source: path, Detail: "cannot read: " + detail, Err: err}
}

// AddBytes reads manifests from data; name is used in messages.
func (s *Set) AddBytes(name string, data []byte) error {
	docs, err := s.splitDocuments(name, data, s.opts.Validation != ValidateIgnore)
	if err != nil {
		return err
	}
	for i, doc := range docs {
		src := name
		if len(docs) > 1 {
			src = fmt.Sprintf("%s#%d", name, i+1)
		}
		if doc.list != nil {
			if err := s.addConvertedList(src, *doc.list); err != nil {
				return err
			}
			docs[i].list = nil
			continue
		}
		if doc.duplicate != "" {
			if err := s.strict(src, "", doc.duplicate); err != nil {
				return err
			}
		}
		if err := s.addDocument(src, doc.data, 0); err != nil {
			return err
		}
	}
	return nil
}

// Options returns the options the set reads with.
func (s *Set) Options() Options { return s.opts }

// Strict handles an unknown or duplicate field found outside the loader
// (such as in a Simulation document) as the set's Validation says: an
// *InputError, a warning, or nothing.
func (s *Set) Strict(src, object, problem string) error { return s.strict(src, object, problem) }

// strict handles an unknown or duplicate field as --validate says.
func (s *Set) strict(src, object, problem string) error {
	switch s.opts.Validation {
	case ValidateIgnore:
		return nil
	case ValidateWarn:
		w := src
		if object != "" {
			w += ": " + object
		}
		s.Warnings = append(s.Warnings, w+": "+problem)
		return nil
	}
	return &InputError{Source: src, Object: object, Detail: problem + " (strict decoding; --validate=warn or ignore to accept)"}
}

// document is one document as JSON, with its first duplicate key if any,
// or a large YAML List converted by parts.
type document struct {
	data      []byte
	duplicate string
	list      *convertedList
}

// splitListSize is the smallest YAML document worth cutting into items.
const splitListSize = 64 << 10

// splitDocuments splits a YAML stream or a JSON document into raw JSON
// documents, dropping empty ones. YAML turned into JSON loses duplicate
// keys, so each YAML document's first duplicate key is found first (unless
// duplicates is false: under --validate=ignore they do not matter).
func (s *Set) splitDocuments(name string, data []byte, duplicates bool) ([]document, error) {
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		return splitJSON(name, data)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs []document
	for i := 1; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &InputError{Source: fmt.Sprintf("%s#%d", name, i), Detail: "malformed YAML: " + oneLine(err.Error())}
		}
		if len(doc) >= splitListSize {
			if l, ok := splitYAMLList(doc); ok {
				if c, ok := s.convertYAMLList(l, duplicates); ok {
					docs = append(docs, document{list: &c})
					continue
				}
			}
		}
		d, err := convertYAML(fmt.Sprintf("%s#%d", name, i), doc, duplicates)
		if err != nil {
			return nil, err
		}
		if d.data != nil {
			docs = append(docs, d)
		}
	}
	return docs, nil
}

// convertYAML converts one YAML document to JSON, with its first
// duplicate key (unless duplicates is false: under --validate=ignore they
// do not matter). An empty document has no data.
func convertYAML(src string, doc []byte, duplicates bool) (document, error) {
	// The fast conversion first (fastyaml.go; it declines duplicate keys
	// and whatever it does not read for certain). Then one generic parse
	// for a document without a duplicate key; only a document the strict
	// conversion refuses is parsed again, to name the duplicate field (or
	// to find there is none).
	var d document
	raw, fast := fastYAMLToJSON(doc)
	var err error
	if !fast && duplicates {
		if raw, err = yaml.YAMLToJSONStrict(doc); err != nil {
			d.duplicate = duplicateKey(doc)
		}
	}
	if raw == nil {
		if raw, err = yaml.YAMLToJSON(doc); err != nil {
			return document{}, &InputError{Source: src, Detail: "malformed YAML/JSON: " + oneLine(err.Error())}
		}
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return document{}, nil
	}
	d.data = raw
	return d, nil
}

func splitJSON(name string, data []byte) ([]document, error) {
	if values, ok := splitJSONValues(data); ok {
		docs := make([]document, len(values))
		for i, v := range values {
			docs[i] = document{data: v}
		}
		return docs, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var docs []document
	for i := 1; ; i++ {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &InputError{Source: fmt.Sprintf("%s#%d", name, i), Detail: "malformed YAML/JSON: " + oneLine(err.Error())}
		}
		if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
			continue
		}
		docs = append(docs, document{data: raw})
	}
	return docs, nil
}

// duplicateKey returns `duplicate field "a.b[0].c"` for the first mapping
// key of a YAML document given twice, or "". Aliases are not followed.
func duplicateKey(doc []byte) string {
	var root yamlv3.Node
	if yamlv3.Unmarshal(doc, &root) != nil {
		return ""
	}
	var walk func(n *yamlv3.Node, path string) string
	walk = func(n *yamlv3.Node, path string) string {
		switch n.Kind {
		case yamlv3.DocumentNode:
			for _, c := range n.Content {
				if d := walk(c, path); d != "" {
					return d
				}
			}
		case yamlv3.MappingNode:
			seen := map[string]bool{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				key := n.Content[i].Value
				p := key
				if path != "" {
					p = path + "." + key
				}
				if n.Content[i].Tag != "!!merge" && seen[key] {
					return fmt.Sprintf("duplicate field %q", p)
				}
				seen[key] = true
				if d := walk(n.Content[i+1], p); d != "" {
					return d
				}
			}
		case yamlv3.SequenceNode:
			for i, c := range n.Content {
				if d := walk(c, fmt.Sprintf("%s[%d]", path, i)); d != "" {
					return d
				}
			}
		}
		return ""
	}
	return walk(&root, "")
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
	"StatefulSet":         "apps/v1",
	"Simulation":          SimulationAPIVersion,
	"ResourceSlice":       draAPIVersion,
	"DeviceClass":         draAPIVersion,
	"ResourceClaim":       draAPIVersion,
}

// SimulationAPIVersion is the apiVersion of reprieve's Simulation document.
const SimulationAPIVersion = "reprieve.dev/v1alpha1"

func (s *Set) addDocument(src string, raw []byte, depth int) error {
	return s.commit(src, raw, prepare(raw), depth)
}

// prepared is what can be done for one document without the set: its
// header read, its object decoded, defaulted and validated. Documents are
// prepared in parallel and committed in order, so that the first error in
// the input is the one reported, as if they had been read one by one.
type prepared struct {
	h header
	// err is a document that is not an object with a kind and an
	// apiVersion (then nothing else is set).
	err *InputError
	// known is set for a kind the loader reads; apiVersion is what it
	// accepts.
	known      bool
	namespaced bool
	apiVersion string
	ns         string
	// quantity and decoded are set for an object of a known kind with a
	// name, in the order they are checked.
	quantityField, quantityDetail string
	obj                           any
	unknown                       []error
	decodeErr                     error
	admitErr                      *InputError // without Source
}

// decoded reports whether p holds an object decoded without error, for
// which commit does not read the document again.
func (p *prepared) decoded() bool {
	return p.err == nil && p.obj != nil && p.decodeErr == nil && p.quantityField == ""
}

// prepare reads raw's header and, for an object the loader reads, decodes,
// defaults and validates it. It touches nothing shared.
func prepare(raw []byte) prepared {
	var p prepared
	h, ok := scanHeader(raw)
	if !ok {
		h = header{}
		if err := sjson.UnmarshalCaseSensitivePreserveInts(raw, &h); err != nil {
			if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
				p.err = &InputError{Detail: "expected a Kubernetes object (a mapping with apiVersion and kind)"}
				return p
			}
			field, detail := splitJSONError(err)
			p.err = &InputError{Field: field, Detail: detail}
			return p
		}
	}
	p.h = h
	if h.Kind == "" || h.APIVersion == "" || isListKind(h.Kind) {
		return p
	}
	want, known := kinds[h.Kind]
	sk, isStorage := storageKinds[h.Kind]
	if isStorage {
		want, known = sk.apiVersion, true
	}
	if !known {
		return p
	}
	p.known, p.apiVersion = true, want
	p.namespaced = h.Kind != "Node" && h.Kind != "Namespace" && h.Kind != "PriorityClass" && (!isStorage || sk.namespaced)
	if n, dra := draKinds[h.Kind]; dra {
		p.namespaced = n
	}
	p.ns = h.Namespace
	if p.namespaced && p.ns == "" {
		p.ns = metav1.NamespaceDefault
	}
	if h.APIVersion != want || h.Kind == "Simulation" || h.Name == "" {
		return p
	}
	if p.quantityField, p.quantityDetail = checkQuantities(raw); p.quantityField != "" {
		return p
	}
	p.obj, p.unknown, p.decodeErr = decodeTyped(h.Kind, raw)
	if p.decodeErr != nil {
		return p
	}
	if p.namespaced {
		setNamespace(p.obj, p.ns)
	}
	p.admitErr = admit(p.obj)
	// Managed fields are often most of an object as the API server
	// returns it, and nothing reads them.
	if m, ok := p.obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return p
}

// commit adds a prepared document to the set, with the checks that need
// the set (duplicates, --validate, one globalDefault PriorityClass).
func (s *Set) commit(src string, raw []byte, p prepared, depth int) error {
	if p.err != nil {
		p.err.Source = src
		return p.err
	}
	h := p.h
	if h.Kind == "" {
		return &InputError{Source: src, Field: "kind", Detail: "missing"}
	}
	if h.APIVersion == "" {
		return &InputError{Source: src, Object: h.Kind + " " + h.Name, Field: "apiVersion", Detail: "missing"}
	}
	if isListKind(h.Kind) {
		return s.addList(src, raw, h, depth)
	}
	if !p.known {
		s.Skipped = append(s.Skipped, fmt.Sprintf("%s: skipping %s %s: kind not used by reprieve", src, h.APIVersion, objectName(h.Kind, h.Namespace, h.Name)))
		s.skipped = append(s.skipped, skippedObject{src: src, kind: h.APIVersion + " " + h.Kind})
		return nil
	}
	ns := p.ns
	if h.APIVersion != p.apiVersion {
		return &InputError{Source: src, Object: objectName(h.Kind, ns, h.Name), Field: "apiVersion",
			Detail: fmt.Sprintf("unsupported %q (want %q)", h.APIVersion, p.apiVersion)}
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

	id := objectName(h.Kind, ns, h.Name)
	if p.quantityField != "" {
		return &InputError{Source: src, Object: id, Field: p.quantityField, Detail: p.quantityDetail}
	}
	if p.decodeErr != nil {
		field, detail := splitJSONError(p.decodeErr)
		if field == "" {
			field = findBadQuantity(raw)
		}
		return &InputError{Source: src, Object: id, Field: field, Detail: detail}
	}
	for _, u := range p.unknown {
		if err := s.strict(src, id, oneLine(u.Error())); err != nil {
			return err
		}
	}
	obj := p.obj
	s.origin[obj] = src
	if p.namespaced && h.Namespace == "" {
		s.defaulted[obj] = true
	}
	if p.admitErr != nil {
		p.admitErr.Source = src
		return p.admitErr
	}
	if err := s.admitGlobal(src, obj); err != nil {
		return err
	}
	switch o := obj.(type) {
	case *v1.Node:
		s.Objects.Nodes = append(s.Objects.Nodes, o)
	case *v1.Pod:
		s.Objects.Pods = append(s.Objects.Pods, o)
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
			err.Source = src
			return err
		}
	}
	return nil
}

// addList reads the items of a List, or of a typed list such as PodList
// whose items may omit their kind and apiVersion. The items are found by
// the scanner (slices of raw, not copies); only the List without them goes
// through the decoder.
func (s *Set) addList(src string, raw []byte, h header, depth int) error {
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
func (s *Set) addItems(src string, rest []byte, h header, items [][]byte, depth int) error {
	if depth > 0 {
		return &InputError{Source: src, Field: "kind", Detail: "nested List"}
	}
	var list struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        metav1.ListMeta   `json:"metadata"`
		Items           []json.RawMessage `json:"items"`
	}
	unknown, err := sjson.UnmarshalStrict(rest, &list)
	if err != nil {
		return &InputError{Source: src, Object: h.Kind, Field: "items", Detail: oneLine(err.Error())}
	}
	for _, u := range unknown {
		if err := s.strict(src, h.Kind, oneLine(u.Error())); err != nil {
			return err
		}
	}
	if items == nil {
		items = make([][]byte, len(list.Items))
		for i, item := range list.Items {
			items[i] = item
		}
	}
	if itemKind := strings.TrimSuffix(h.Kind, "List"); itemKind != "" {
		for i, item := range items {
			items[i] = withTypeMeta(item, itemKind, h.APIVersion)
		}
	}
	preps := make([]prepared, len(items))
	s.parallel(len(items), func(i int) {
		preps[i] = prepare(items[i])
		if preps[i].decoded() {
			items[i] = nil // commit needs the JSON only to word an error
		}
	})
	for i, item := range items {
		if err := s.commit(fmt.Sprintf("%s items[%d]", src, i), item, preps[i], depth+1); err != nil {
			return err
		}
	}
	return nil
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

// Admit defaults and validates obj as the API server would on create
// (see internal/admission), and refuses a second globalDefault
// PriorityClass in the set. src names where obj came from.
func (s *Set) Admit(src string, obj any) error {
	if err := admit(obj); err != nil {
		err.Source = src
		return err
	}
	return s.admitGlobal(src, obj)
}

// admit defaults and validates obj alone (an error without its Source).
func admit(obj any) *InputError {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil
	}
	if fe := admission.Admit(obj); fe != nil {
		return &InputError{Object: objectName(kindOf(obj), m.GetNamespace(), m.GetName()), Field: fe.Field, Detail: fe.ErrorBody()}
	}
	return nil
}

// admitGlobal refuses a second globalDefault PriorityClass in the set.
func (s *Set) admitGlobal(src string, obj any) error {
	if pc, ok := obj.(*schedulingv1.PriorityClass); ok {
		if fe := s.globals.Add(pc); fe != nil {
			return &InputError{Source: src, Object: objectName(kindOf(obj), "", pc.Name), Field: fe.Field, Detail: fe.ErrorBody()}
		}
	}
	return nil
}

// AdmitFrom records in s the globalDefault PriorityClass of other, so that
// objects added to s later are checked against it.
func (s *Set) AdmitFrom(other *Set) {
	for _, pc := range other.Objects.PriorityClasses {
		_ = s.globals.Add(pc)
	}
}

// kindOf is the kind of an object the loader read: the name of its Go
// type, as for every API type.
func kindOf(obj any) string {
	t := reflect.TypeOf(obj)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
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
var quantityMaps = map[string]bool{"requests": true, "limits": true, "allocatable": true, "capacity": true, "overhead": true, "allocatedResources": true}

// quantityFields are fields that are one quantity.
var quantityFields = map[string]bool{"sizeLimit": true}

// maxQuantityLen bounds the text of a quantity: resource.ParseQuantity
// takes time growing with the square of a negative exponent ("1e-10000000"
// takes seconds), and no real quantity is longer.
const maxQuantityLen = 64

// maxExponent bounds a quantity's decimal exponent, for the same reason.
const maxExponent = 1000

// suspiciousNumbers reports whether raw holds a run of number characters
// that checkQuantities could refuse: longer than maxQuantityLen less a
// suffix's few letters, or an exponent of four digits or more. Documents
// without one need no closer look.
func suspiciousNumbers(raw []byte) bool {
	run, expDigits, inExp, prevDigit := 0, 0, false, false
	for _, c := range raw {
		digit := c >= '0' && c <= '9'
		switch {
		case digit:
			run++
			if inExp {
				if expDigits++; expDigits >= 4 {
					return true
				}
			}
		case (c == 'e' || c == 'E') && prevDigit:
			// An exponent: e right after a digit, as in 1e3.
			run++
			inExp, expDigits = true, 0
		case c == '.' || c == '+' || c == '-':
			run++
		default:
			run, inExp, expDigits, prevDigit = 0, false, 0, false
			continue
		}
		prevDigit = digit
		if run > maxQuantityLen-4 {
			return true
		}
	}
	return false
}

// checkQuantities refuses quantities too long or with too large an
// exponent to parse in bounded time, before they are parsed. It returns
// the field and what is wrong, or "".
func checkQuantities(raw []byte) (field, detail string) {
	if !suspiciousNumbers(raw) {
		return "", ""
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return "", ""
	}
	return walkQuantities(v, "", func(x any) string {
		var s string
		switch q := x.(type) {
		case string:
			s = q
		case json.Number:
			s = string(q)
		default:
			return ""
		}
		if len(s) > maxQuantityLen {
			return fmt.Sprintf("quantity of %d characters is too long (at most %d)", len(s), maxQuantityLen)
		}
		if i := strings.LastIndexAny(s, "eE"); i >= 0 {
			if e, err := strconv.Atoi(s[i+1:]); err == nil && (e > maxExponent || e < -maxExponent) {
				return fmt.Sprintf("quantity %q has an exponent out of range [-%d, %d]", s, maxExponent, maxExponent)
			}
		}
		return ""
	})
}

// findBadQuantity returns the path of the first quantity in raw that does
// not parse, or "". encoding/json does not say where a Quantity failed.
func findBadQuantity(raw []byte) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	path, _ := walkQuantities(v, "", func(q any) string {
		if _, err := resource.ParseQuantity(fmt.Sprint(q)); err != nil {
			return err.Error()
		}
		return ""
	})
	return path
}

// walkQuantities calls check on every quantity of a decoded document —
// the fields of quantityFields and the entries of the maps of quantityMaps
// — in key order, and returns the path of the first one it finds wrong
// and what check said.
func walkQuantities(v any, path string, check func(q any) string) (string, string) {
	join := func(path, k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	sortedKeys := func(m map[string]any) []string {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return keys
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			p := join(path, k)
			if quantityFields[k] {
				if d := check(x[k]); d != "" {
					return p, d
				}
			}
			if m, ok := x[k].(map[string]any); ok && quantityMaps[k] {
				for _, name := range sortedKeys(m) {
					if d := check(m[name]); d != "" {
						return join(p, name), d
					}
				}
				continue
			}
			if f, d := walkQuantities(x[k], p, check); f != "" {
				return f, d
			}
		}
	case []any:
		for i, e := range x {
			if f, d := walkQuantities(e, fmt.Sprintf("%s[%d]", path, i), check); f != "" {
				return f, d
			}
		}
	}
	return "", ""
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Build builds the snapshot, naming the file of any offending object.
func (s *Set) Build() (*snapshot.Snapshot, error) {
	if err := CheckNodeSums(s.Objects.Pods, s.Origin); err != nil {
		return nil, err
	}
	snap, err := snapshot.New(s.Objects)
	if err != nil {
		return nil, s.locate(err)
	}
	return snap, nil
}

// CheckNodeSums refuses pods bound to a node whose requests, added up as
// the scheduler adds them (also with the defaults it counts for scoring),
// do not fit the scheduler's 64-bit arithmetic: each pod is representable
// after admission, but many together could still wrap around. origin names
// a pod's file.
func CheckNodeSums(pods []*v1.Pod, origin func(any) string) error {
	// Most clusters' pods are far from the limit: when the bound of every
	// node's sums fits, nothing can overflow.
	bounds := map[string]int64{}
	fits := true
	for _, p := range pods {
		node := p.Spec.NodeName
		if node == "" || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		b, ok := admission.RequestsBound(p)
		if !ok || bounds[node] > math.MaxInt64-b {
			fits = false
			break
		}
		bounds[node] += b
	}
	if fits {
		return nil
	}
	type sums struct{ cpu, mem, eph, nzCPU, nzMem int64 }
	byNode := map[string]*sums{}
	scalars := map[string]int64{}
	add := func(total *int64, v int64) bool {
		if v > 0 && *total > math.MaxInt64-v {
			return false
		}
		*total += v
		return true
	}
	for _, p := range pods {
		node := p.Spec.NodeName
		if node == "" || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		t := byNode[node]
		if t == nil {
			t = &sums{}
			byNode[node] = t
		}
		r := snapshot.AssignedPodRequests(p)
		nzCPU, nzMem := snapshot.NonZeroRequests(p)
		what := ""
		switch {
		case !add(&t.cpu, r.MilliCPU) || !add(&t.nzCPU, nzCPU):
			what = "cpu"
		case !add(&t.mem, r.Memory) || !add(&t.nzMem, nzMem):
			what = "memory"
		case !add(&t.eph, r.EphemeralStorage):
			what = "ephemeral-storage"
		}
		for _, sc := range r.Scalars {
			total := scalars[node+"\x00"+string(sc.Name)]
			if what == "" && !add(&total, sc.Value) {
				what = string(sc.Name)
			}
			scalars[node+"\x00"+string(sc.Name)] = total
		}
		if what != "" {
			return &InputError{Source: origin(p), Object: objectName("Pod", p.Namespace, p.Name), Field: "spec.nodeName",
				Detail: fmt.Sprintf("the pods bound to node %q together request more %s than the scheduler can count (%d units)", node, what, int64(math.MaxInt64))}
		}
	}
	return nil
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
	p, s, err := loadPod(Options{}, path)
	if err != nil {
		return nil, false, err
	}
	return p, s.NamespaceGiven(p), nil
}

// LoadPodSet reads, with opts, a file that must hold exactly one Pod; the
// path "-" reads standard input. It returns the set the pod was read into,
// for its Warnings and NamespaceGiven.
func LoadPodSet(opts Options, path string) (*v1.Pod, *Set, error) { return loadPod(opts, path) }

// LoadPodsSet reads, with opts, the pods to evaluate: a file of one or
// many documents, a directory of such files, or "-" for standard input,
// holding Pods only, none bound yet. It returns them in file order with the
// set they were read into, for its Warnings and NamespaceGiven.
func LoadPodsSet(opts Options, path string) ([]*v1.Pod, *Set, error) {
	s := NewSetWith(opts)
	if err := s.AddPath(path); err != nil {
		return nil, nil, err
	}
	o := s.Objects
	others := len(o.Nodes) + len(o.PDBs) + len(o.PriorityClasses) + len(o.Namespaces) + len(s.Skipped) +
		len(o.PodGroups) + len(o.CompositePodGroups) +
		len(s.Deployments) + len(s.ReplicaSets) + len(s.Jobs) + len(s.StatefulSets) + len(s.Simulations)
	name := path
	if path == "-" {
		name = StdinName
	}
	switch {
	case len(o.Pods) == 0:
		return nil, nil, &InputError{Source: name, Detail: "no Pod found; -f must hold pods to evaluate"}
	case others > 0:
		return nil, nil, &InputError{Source: name, Detail: "-f must hold Pods and nothing else (the cluster goes in --snapshot)"}
	}
	for _, p := range o.Pods {
		if p.Spec.NodeName != "" {
			return nil, nil, &InputError{Source: s.origin[p], Object: objectName("Pod", p.Namespace, p.Name), Field: "spec.nodeName", Detail: "the pod is already bound; whatif needs a pod to schedule"}
		}
	}
	return o.Pods, s, nil
}

// NamespaceGiven reports whether obj's document named its namespace.
func (s *Set) NamespaceGiven(obj any) bool { return !s.defaulted[obj] }

func loadPod(opts Options, path string) (*v1.Pod, *Set, error) {
	s := NewSetWith(opts)
	name := path
	var data []byte
	var err error
	if path == "-" {
		name = StdinName
		if opts.Stdin == nil {
			return nil, nil, &InputError{Source: name, Detail: "no standard input to read"}
		}
		if data, err = io.ReadAll(opts.Stdin); err != nil {
			return nil, nil, &InputError{Source: name, Detail: "cannot read: " + err.Error(), Err: err}
		}
	} else if data, err = os.ReadFile(path); err != nil {
		return nil, nil, fileError(path, err)
	}
	return parsePodInto(s, name, data)
}

// ParsePod parses data that must hold exactly one Pod (see LoadPod).
func ParsePod(name string, data []byte) (*v1.Pod, bool, error) {
	p, s, err := parsePodInto(NewSet(), name, data)
	if err != nil {
		return nil, false, err
	}
	return p, !s.defaulted[p], nil
}

func parsePodInto(s *Set, name string, data []byte) (*v1.Pod, *Set, error) {
	if err := s.AddBytes(name, data); err != nil {
		return nil, nil, err
	}
	o := s.Objects
	others := len(o.Nodes) + len(o.PDBs) + len(o.PriorityClasses) + len(o.Namespaces) + len(s.Skipped) +
		len(o.PodGroups) + len(o.CompositePodGroups) + numDRAObjects(&o) +
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
