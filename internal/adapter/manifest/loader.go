// Package manifest reads cluster snapshots written as plain Kubernetes
// manifests: YAML or JSON files with one or many documents, `kind: List`
// documents as `kubectl get -o yaml` writes them, or directories of such
// files. Every problem is reported as one line naming the file, the object
// and the field.
//
// The general path reads them with the libraries kubectl reads them with:
// apimachinery's YAML reader splits documents, sigs.k8s.io/yaml converts
// them to JSON, sigs.k8s.io/json decodes them strictly, and admission
// (internal/adapter/admission) defaults and validates each object as the
// API server would. What exists only for speed is reached through one seam,
// fastPath (fast.go), whose every step does its job as the general path
// would or declines; TestFastMatchesGeneral and FuzzFastMatchesGeneral
// hold the two paths to the same objects and the same errors.
package manifest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

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
	// Workloads reads what whatif -f evaluates (LoadInputs): DaemonSets
	// and CronJobs too, which a snapshot skips, and Pods named by
	// metadata.generateName alone, named by GenerateName; the Pods and
	// workload objects read are kept in order in Set.Inputs.
	Workloads bool
	// GenerateName names an object of namespace whose metadata has a
	// generateName prefix and no name, as the API server would (with
	// Workloads; nil leaves it unnamed, an error).
	GenerateName func(namespace, prefix string) string

	// general reads without the fast path (fast.go): the tests that hold
	// the two paths to the same results set it.
	general bool
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
	// DaemonSets and CronJobs are read with Options.Workloads only.
	DaemonSets []*appsv1.DaemonSet
	CronJobs   []*batchv1.CronJob
	// Inputs are, with Options.Workloads, the Pods and workload objects
	// read, in the order read.
	Inputs []any
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
	// fast is the seam to the speed machinery (fast.go); nil on the
	// general path.
	fast *fastPath
	// streamMin overrides streamMinSize (tests stream small inputs).
	streamMin int64
	skipped   []skippedObject // what each Skipped line names
	origin    map[any]source
	seen      map[objectKey]source // on the general path
	defaulted map[any]bool
	globals   admission.GlobalDefaults
	// inputs are what a lean set read, to be read again whole where a
	// budget's status needs its pods' conditions (budgets.go).
	inputs []input
}

// NewSet returns an empty set that validates strictly.
func NewSet() *Set { return NewSetWith(Options{}) }

// NewSetWith returns an empty set reading with opts.
func NewSetWith(opts Options) *Set {
	s := &Set{opts: opts, origin: map[any]source{}, defaulted: map[any]bool{}}
	if !opts.general {
		s.fast = newFastPath()
	}
	return s
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
// that counts them (a dump of a whole cluster skips thousands of ConfigMaps).
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

// WorkloadLines returns one line per workload object whatif does not use,
// for commands that load snapshots but do not run controllers: ReplicaSets
// and StatefulSets are used (their selectors give PodTopologySpread's
// default constraints theirs), Deployments and Jobs are not.
func (s *Set) WorkloadLines() []string {
	var out []string
	for _, d := range s.Deployments {
		out = append(out, fmt.Sprintf("%s: skipping apps/v1 %s: kind not used by whatif", s.origin[d], objectName("Deployment", d.Namespace, d.Name)))
	}
	for _, j := range s.Jobs {
		out = append(out, fmt.Sprintf("%s: skipping batch/v1 %s: kind not used by whatif", s.origin[j], objectName("Job", j.Namespace, j.Name)))
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
	if n < 1024 || s.opts.Lean {
		return
	}
	origin := make(map[any]source, len(s.origin)+n)
	maps.Copy(origin, s.origin)
	s.origin = origin
}

// Origin returns where obj was read from ("" if unknown, and for the pods
// and nodes of a lean set).
func (s *Set) Origin(obj any) string { return s.origin[obj].String() }

// Load reads every path (file or directory) into a new Set.
func Load(paths ...string) (*Set, error) { return LoadWith(Options{}, paths...) }

// LoadWith is Load with options.
func LoadWith(opts Options, paths ...string) (*Set, error) {
	return LoadContext(context.Background(), opts, paths...)
}

// LoadContext is LoadWith stopping once ctx is done — between files,
// documents, a List's items and the chunks of a large file — with ctx's
// error.
func LoadContext(ctx context.Context, opts Options, paths ...string) (*Set, error) {
	s := NewSetWith(opts)
	for _, p := range paths {
		if err := s.addPath(ctx, p); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// AddPath reads a file, or every .yaml, .yml and .json file under a
// directory in lexical order, or standard input for "-". A path that cannot
// be read is an *InputError wrapping the *fs.PathError; so is a path that
// is no regular file (a device, a FIFO, a socket) and a file too large to
// read (read.go).
func (s *Set) AddPath(path string) error { return s.addPath(context.Background(), path) }

func (s *Set) addPath(ctx context.Context, path string) error {
	if path == "-" {
		return s.addStdin(ctx)
	}
	s.keepInput(input{path: path})
	info, err := os.Stat(path)
	if err != nil {
		return fileError(path, err)
	}
	if !info.IsDir() {
		return s.addFile(ctx, path)
	}
	files, err := dirFiles(path)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return &InputError{Source: path, Detail: "directory has no .yaml, .yml or .json files"}
	}
	return s.addFiles(ctx, files)
}

// dirFiles returns the regular .yaml, .yml and .json files under the
// directory path, in lexical order: the files AddPath reads for it. A
// symbolic link counts as the file it points to when that is a regular
// file; other links, devices, FIFOs and sockets are left out (a FIFO is
// not even opened: that waits for a writer).
func dirFiles(path string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yaml", ".yml", ".json":
		default:
			return nil
		}
		switch {
		case d.Type().IsRegular():
			files = append(files, p)
		case d.Type()&fs.ModeSymlink != 0:
			if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
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
			if err == nil && info.Mode().IsRegular() {
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
func (s *Set) addFiles(ctx context.Context, files []string) error {
	for len(files) > 0 {
		n := 0
		for n < len(files) && s.smallFile(files[n]) {
			n++
		}
		if n == 0 {
			if err := s.addFile(ctx, files[0]); err != nil {
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
		s.parallel(ctx, n, func(i int) {
			data, err := readFile(files[i])
			if err != nil {
				reads[i].err = err
				return
			}
			reads[i].docs, reads[i].err = s.splitDocuments(ctx, files[i], data)
		})
		if err := ctx.Err(); err != nil {
			return err
		}
		for i := range reads {
			if reads[i].err != nil {
				return reads[i].err
			}
			if err := s.commitDocuments(ctx, files[i], reads[i].docs); err != nil {
				return err
			}
			reads[i] = read{}
		}
		files = files[n:]
	}
	return nil
}

// smallFile reports whether path is a file addFile reads whole, without
// offering it to the streaming reader; one that cannot be read, or is no
// regular file, is small too, for the reading to word the error.
func (s *Set) smallFile(path string) bool {
	info, err := os.Stat(path)
	if err != nil {
		return true
	}
	return !info.Mode().IsRegular() || info.Size() < s.streamThreshold()
}

// streamMinSize is the smallest input offered to the fast path's
// streaming reader: below it, reading the input whole costs little.
const streamMinSize = 1 << 20

// streamThreshold is the size from which an input is offered to the fast
// path's streaming reader.
func (s *Set) streamThreshold() int64 {
	if s.streamMin > 0 {
		return s.streamMin
	}
	return streamMinSize
}

// addFile reads the file path. A large one is offered to the fast path
// first, which reads it as it comes or declines, having changed nothing;
// the general path then reads it whole.
func (s *Set) addFile(ctx context.Context, path string) error {
	f, size, err := openFile(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	if s.fast != nil && size >= s.streamThreshold() {
		if done, err := s.fast.stream(ctx, s, path, bounded(path, f, maxFileSize)); done {
			return err
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fileError(path, err)
		}
	}
	data, err := readOpened(path, f, size)
	if err != nil {
		return err
	}
	return s.addData(ctx, path, data)
}

// StdinName is how standard input is named in messages.
const StdinName = "<stdin>"

func (s *Set) addStdin(ctx context.Context) error {
	if s.stdinRead {
		return &InputError{Source: StdinName, Detail: "standard input (-) given more than once"}
	}
	s.stdinRead = true
	data, err := readStdin(s.opts.Stdin)
	if err != nil {
		return err
	}
	s.keepInput(input{path: StdinName, data: data})
	return s.addBytes(ctx, StdinName, data)
}

// AddBytes reads manifests from data; name is used in messages.
func (s *Set) AddBytes(name string, data []byte) error {
	s.keepInput(input{path: name, data: data})
	return s.addBytes(context.Background(), name, data)
}

// addBytes adds data, offering a large input to the fast path first, as
// addFile does.
func (s *Set) addBytes(ctx context.Context, name string, data []byte) error {
	if s.fast != nil && int64(len(data)) >= s.streamThreshold() {
		if done, err := s.fast.stream(ctx, s, name, bytes.NewReader(data)); done {
			return err
		}
	}
	return s.addData(ctx, name, data)
}

// addData adds data read whole: its documents are split, converted and
// prepared, then committed in order.
func (s *Set) addData(ctx context.Context, name string, data []byte) error {
	docs, err := s.splitDocuments(ctx, name, data)
	if err != nil {
		return err
	}
	return s.commitDocuments(ctx, name, docs)
}

// commitDocuments commits the documents of name, split and prepared, in
// order.
func (s *Set) commitDocuments(ctx context.Context, name string, docs []document) error {
	s.reserve(len(docs))
	for i, doc := range docs {
		if i%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		// The document's number is worded only for a message.
		at := source{path: name}
		if len(docs) > 1 {
			at.doc = i + 1
		}
		if doc.duplicate != "" {
			if err := s.strict(at.String(), "", doc.duplicate); err != nil {
				return err
			}
		}
		if err := s.commit(ctx, at, doc.data, doc.prep, 0); err != nil {
			return err
		}
		docs[i] = document{}
	}
	return nil
}

// checkEvery is how many documents or items a loop handles between two
// looks at its context: often enough to stop at once, seldom enough to
// cost nothing.
const checkEvery = 256

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
