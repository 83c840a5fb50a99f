// Package loader reads cluster snapshots written as plain Kubernetes
// manifests: YAML or JSON files with one or many documents, `kind: List`
// documents as `kubectl get -o yaml` writes them, or directories of such
// files. Every problem is reported as one line naming the file, the object
// and the field.
package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/adapter/admission"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

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
	// Lean drops, once a pod is admitted, the fields of pods that no
	// scheduling or preemption decision reads (see leanPod): a snapshot of
	// a large cluster then holds much less, and Origin does not know its
	// pods and nodes. For commands that only evaluate (whatif); whoever
	// writes objects back or runs them (simulate, snapshot) leaves it off.
	Lean bool
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
	// ResourceClaimTemplates are the templates the simulator's
	// resource-claim controller makes pods' claims from.
	ResourceClaimTemplates []*resourceapi.ResourceClaimTemplate
	// Simulations are the raw reprieve.dev/v1alpha1 Simulation documents.
	Simulations []RawDocument
	// Skipped lists one line per object of a kind the engine does not use.
	Skipped []string
	// Warnings lists unknown and duplicate fields under --validate=warn.
	Warnings []string

	opts      Options
	stdinRead bool
	// streamMin overrides streamMinSize (tests stream small files);
	// streamed counts the files read by streaming.
	streamMin int64
	streamed  int
	// noMemo turns the lean load's pod memo off (tests compare).
	noMemo bool
	// memoHitCounts are the counters of the pod memos of the load's
	// goroutines (preparer), each counting its own hits (held apart from
	// the memos, which go with their loads); memosMu guards the slice.
	memoHitCounts []*int
	memosMu       sync.Mutex
	// dec decodes the documents the set prepares on its own goroutine.
	dec       *fastDecoder
	skipped   []skippedObject // what each Skipped line names
	origin    map[any]source
	seen      objectIndex
	defaulted map[any]bool
	globals   admission.GlobalDefaults
}

// NewSet returns an empty set that validates strictly.
func NewSet() *Set { return NewSetWith(Options{}) }

// NewSetWith returns an empty set reading with opts.
func NewSetWith(opts Options) *Set {
	return &Set{opts: opts, origin: map[any]source{}, defaulted: map[any]bool{}}
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
	for _, t := range s.ResourceClaimTemplates {
		out = append(out, fmt.Sprintf("%s: skipping %s %s: kind not used by whatif", s.origin[t], draAPIVersion, objectName("ResourceClaimTemplate", t.Namespace, t.Name)))
	}
	for _, r := range s.Simulations {
		out = append(out, fmt.Sprintf("%s: skipping reprieve.dev/v1alpha1 Simulation: kind not used by whatif", r.Source))
	}
	return out
}

// reserve makes room in the set's map of origins for n more objects: a
// large load then does not grow it step by step as it commits.
func (s *Set) reserve(n int) {
	if n < 1024 {
		return
	}
	if !s.opts.Lean {
		origin := make(map[any]source, len(s.origin)+n)
		maps.Copy(origin, s.origin)
		s.origin = origin
	}
}

// Origin returns where obj was read from ("" if unknown, and for the pods
// and nodes of a lean set).
func (s *Set) Origin(obj any) string { return s.origin[obj].String() }

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
	files, err := dirFiles(path)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return &InputError{Source: path, Detail: "directory has no .yaml, .yml or .json files"}
	}
	return s.addFiles(files)
}

// dirFiles returns the .yaml, .yml and .json files under the directory
// path, in lexical order: the files AddPath reads for it.
func dirFiles(path string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
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
	slices.Sort(files)
	return files, err
}

// InputSize returns the size in bytes of the files AddPath reads for
// paths; standard input, and what cannot be read (which AddPath reports),
// count nothing.
func InputSize(paths ...string) int64 {
	var n int64
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil || !info.IsDir() {
			if err == nil {
				n += info.Size()
			}
			continue
		}
		files, _ := dirFiles(p)
		for _, f := range files {
			if info, err := os.Stat(f); err == nil {
				n += info.Size()
			}
		}
	}
	return n
}

// addFiles adds files in order. Runs of small files (most of a directory
// of manifests) are read, converted and prepared in parallel, a file per
// goroutine, and committed in order; a large file is read as addFile
// reads it, with its own parallelism.
func (s *Set) addFiles(files []string) error {
	for len(files) > 0 {
		n := 0
		for n < len(files) && s.smallFile(files[n]) {
			n++
		}
		if n == 0 {
			if err := s.addFile(files[0]); err != nil {
				return err
			}
			files = files[1:]
			continue
		}
		type read struct {
			docs []document
			err  error
		}
		reads := make([]read, n)
		s.parallel(n, func(i int) {
			data, err := os.ReadFile(files[i])
			if err != nil {
				reads[i].err = fileError(files[i], err)
				return
			}
			reads[i].docs, reads[i].err = s.splitDocuments(files[i], data, s.opts.Validation != ValidateIgnore)
		})
		for i := range reads {
			if reads[i].err != nil {
				return reads[i].err
			}
			if err := s.commitDocuments(files[i], reads[i].docs); err != nil {
				return err
			}
			reads[i] = read{}
		}
		files = files[n:]
	}
	return nil
}

// smallFile reports whether path is a regular file addFile would read
// whole (not stream); one that cannot be read is small too, for the
// reading to word the error.
func (s *Set) smallFile(path string) bool {
	info, err := os.Stat(path)
	if err != nil {
		return true
	}
	return !info.Mode().IsRegular() || info.Size() < s.streamThreshold()
}

// streamThreshold is the size from which a file is streamed.
func (s *Set) streamThreshold() int64 {
	if s.streamMin > 0 {
		return s.streamMin
	}
	return streamMinSize
}

func (s *Set) addFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fileError(path, err)
	}
	defer func() { _ = f.Close() }()
	info, err := f.Stat()
	if err != nil {
		return fileError(path, err)
	}
	if info.Mode().IsRegular() && info.Size() >= s.streamThreshold() {
		if done, err := s.streamFile(path, f); done {
			s.streamed++
			return err
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fileError(path, err)
		}
	}
	data, err := readWhole(f, info)
	if err != nil {
		return fileError(path, err)
	}
	return s.AddBytes(path, data)
}

// readWhole reads the rest of f, of info: a regular file into one buffer
// of its size, as os.ReadFile does (io.ReadAll grows its buffer as it
// reads, allocating about twice what it returns).
func readWhole(f *os.File, info fs.FileInfo) ([]byte, error) {
	var buf bytes.Buffer
	if info.Mode().IsRegular() {
		buf.Grow(int(info.Size()) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(f)
	return buf.Bytes(), err
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
	return s.commitDocuments(name, docs)
}

// commitDocuments commits the documents of name, split and prepared, in
// order.
func (s *Set) commitDocuments(name string, docs []document) error {
	s.reserve(len(docs))
	for i, doc := range docs {
		// The document's number is worded only for a message.
		at := source{path: name}
		if len(docs) > 1 {
			at.doc = i + 1
		}
		if doc.list != nil {
			if err := s.addConvertedList(at.String(), *doc.list); err != nil {
				return err
			}
			docs[i].list = nil
			continue
		}
		if doc.duplicate != "" {
			if err := s.strict(at.String(), "", doc.duplicate); err != nil {
				return err
			}
		}
		if err := s.commit(at, doc.data, doc.prep, 0); err != nil {
			return err
		}
		docs[i] = document{}
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

// Admit defaults and validates obj as the API server would on create
// (see internal/admission), and refuses a second globalDefault
// PriorityClass in the set. src names where obj came from.
func (s *Set) Admit(src string, obj any) error {
	if err := admit(obj); err != nil {
		err.Source = src
		return err
	}
	return s.admitGlobal(source{path: src}, obj)
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
func (s *Set) admitGlobal(at source, obj any) error {
	if pc, ok := obj.(*schedulingv1.PriorityClass); ok {
		if fe := s.globals.Add(pc); fe != nil {
			return &InputError{Source: at.String(), Object: objectName(kindOf(obj), "", pc.Name), Field: fe.Field, Detail: fe.ErrorBody()}
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
