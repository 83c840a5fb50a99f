// Package whatif is the `reprieve whatif` command: a dry run of scheduling
// and preemption for one pod over a cluster snapshot.
package whatif

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/adapter/config"
	"github.com/reprieve/reprieve/internal/adapter/kube"
	"github.com/reprieve/reprieve/internal/adapter/manifest"
	"github.com/reprieve/reprieve/internal/cli/clierr"
	"github.com/reprieve/reprieve/internal/cli/completion"
	"github.com/reprieve/reprieve/internal/cli/kubeflags"
	"github.com/reprieve/reprieve/internal/cli/output"
	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	"github.com/reprieve/reprieve/internal/whatif"
)

// Options are the flags of `reprieve whatif`.
type Options struct {
	// ChunkSize is the page size of live lists (kubectl's --chunk-size).
	ChunkSize  int64
	Snapshots  []string
	PodFiles   []string
	PodKey     string
	Output     string
	Explain    bool
	Seed       uint64
	ConfigFile string
	// Now fixes the evaluation time (RFC 3339), for reproducible output.
	Now string
	// FeatureGates are kube-scheduler feature gates, "Name=bool,...".
	FeatureGates string
	// KubeVersion is the kube-scheduler release to mirror ("1.38"); empty
	// is the live cluster's, or else the newest mirrored.
	KubeVersion string
	// VictimPolicy chooses the victims: upstream (kube-scheduler's own),
	// minimal or strict-pdb.
	VictimPolicy string
	// Kube connects to a live cluster when no --snapshot is given.
	Kube kubeflags.Flags
	// FieldValidation is kubectl's --validate: strict, warn or ignore unknown and
	// duplicate fields.
	FieldValidation string
	// AllowMissingKeys is kubectl's --allow-missing-template-keys.
	AllowMissingKeys bool
	// Sequence evaluates the pods of -f as if they arrived in that order,
	// each bound or nominated (its victims gone) before the next.
	Sequence bool

	in          io.Reader
	load        manifest.Options
	out, errOut io.Writer
	cfg         config.Config
	now         time.Time
	features    profile.Features
	release     profile.Release
	policy      profile.Policy
	format      output.Format
}

// NewCommand returns the whatif command writing to out and errOut.
func NewCommand(out, errOut io.Writer) *cobra.Command {
	o := &Options{out: out, errOut: errOut}
	cmd := &cobra.Command{
		Use:   "whatif --snapshot PATH... (-f POD.yaml | --pod NAMESPACE/NAME)",
		Short: "Say where a pod fits, or what preemption would evict to make room",
		Long: `whatif answers, without touching anything, what kube-scheduler v1.37.2 would do
with a pod: the nodes it fits on, or the node preemption would pick, the pods
it would evict, the PodDisruptionBudgets that would break, and why every other
node was rejected.

-o name prints node/NAME for the node, then "-n NAMESPACE pod/NAME" for each
victim: kubectl's arguments for one object a line, so that
"xargs -L1 kubectl get" reads them (kubectl's own -o name drops namespaces).`,
		Example: `  reprieve whatif --snapshot examples/cluster -f examples/pods/urgent.yaml
  kubectl get nodes,pods,pdb,priorityclasses -A -o yaml > cluster.yaml
  reprieve whatif --snapshot cluster.yaml --pod default/web-0 -o json --explain
  reprieve whatif --feature-gates GenericWorkload=true --snapshot examples/gang/cluster.yaml -f examples/gang/evict-the-gang.yaml
  reprieve whatif --kubeconfig ~/.kube/config -f pod.yaml     # a live cluster, read-only
  kubectl reprieve whatif -f pod.yaml                           # as a kubectl plugin
  reprieve whatif --snapshot cluster.yaml -f pod.yaml -o name | xargs -L1 kubectl get`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.in = cmd.InOrStdin()
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.Snapshots, "snapshot", nil, "cluster snapshot: a YAML/JSON file or a directory of them, - for standard input (repeatable)")
	f.StringArrayVarP(&o.PodFiles, "filename", "f", nil, "file or folder holding the pods to schedule, - for standard input; repeat for several")
	f.StringVar(&o.PodKey, "pod", "", "pending pod of the snapshot to schedule, as NAMESPACE/NAME")
	f.StringVarP(&o.Output, "output", "o", "table", "output format: table, wide (adds the candidates' criteria), json, yaml, name (node/NAME, then pod/NAME per victim), jsonpath=TEMPLATE, jsonpath-file=FILE, go-template=TEMPLATE or go-template-file=FILE (templates apply to the JSON form)")
	f.BoolVar(&o.Explain, "explain", false, "explain every node: why it was rejected, or its victims and score")
	f.Uint64Var(&o.Seed, "seed", 0, "seed for the random dry-run offset and tie-break")
	f.StringVar(&o.ConfigFile, "config", "", "KubeSchedulerConfiguration file: the pod's profile (by schedulerName), DefaultPreemption enabled and its args")
	f.StringVar(&o.FeatureGates, "feature-gates", "", "kube-scheduler feature gates that change preemption, as key=value pairs: GenericWorkload=true evicts pod groups whole, CompositePodGroup=true adds composite groups, DRAPreemption=true lets victims' resource claims free their devices (beyond v1.37, as planned for 1.38); all off by default, as in v1.37")
	clierr.AddKubeVersion(f, &o.KubeVersion, true)
	f.StringVar(&o.VictimPolicy, "victim-policy", string(profile.PolicyUpstream), "how victims are chosen: upstream (exactly kube-scheduler), minimal (the best victim set under kube-scheduler's own criteria among every subset of each node's lower-priority pods, never worse than upstream's), reschedulable (minimal that first evicts fewest victims which could run nowhere else, placed one after another; --explain says where each could go) or strict-pdb (minimal, never breaking a PodDisruptionBudget)")
	f.BoolVar(&o.Sequence, "sequence", false, "with several pods in -f: evaluate them as if they arrived in that order, each bound to its node or nominated (its victims gone, their budgets spent) before the next; without it each is evaluated as if alone")
	f.StringVar(&o.Now, "now", "", "evaluation time (RFC 3339); pods without a start time count as starting then")
	_ = f.MarkHidden("now")
	f.StringVar(&o.FieldValidation, "validate", "strict", "unknown or duplicate fields in manifests: strict (an error), warn (a warning) or ignore, as kubectl's --validate")
	o.Kube.AddTo(f, "namespace for a pod read with -f that names none, and of --pod completion (default: the context's)")
	addChunkSize(f, &o.ChunkSize)
	output.AddFlags(f, &o.AllowMissingKeys)
	completion.Output(cmd, Kinds()...)
	completion.VictimPolicy(cmd)
	completion.FeatureGates(cmd)
	completion.Validate(cmd)
	completion.Pods(cmd, o.pendingPods)
	return cmd
}

// pendingPods lists the pods --pod may name: unbound and not finished, from
// the --snapshot files given so far or else from the live cluster (only the
// pods no node holds, in the -n namespace if given), sorted.
func (o *Options) pendingPods(ctx context.Context) ([]string, error) {
	var keys []string
	if len(o.Snapshots) > 0 {
		// Cobra's completion parses the flags twice, which appends every
		// --snapshot twice: each path is read once.
		var paths []string
		for _, p := range o.Snapshots {
			if !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
		set, err := manifest.LoadWith(manifest.Options{Validation: manifest.ValidateIgnore}, paths...)
		if err != nil {
			return nil, err
		}
		for _, p := range set.Objects.Pods {
			if p.Spec.NodeName == "" && p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed {
				keys = append(keys, p.Namespace+"/"+p.Name)
			}
		}
	} else {
		client, err := o.Kube.ReadClient("reprieve-completion")
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		pods, err := client.CoreV1().Pods(o.Kube.Namespace()).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName="})
		if err != nil {
			return nil, err
		}
		for _, p := range pods.Items {
			if p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed {
				keys = append(keys, p.Namespace+"/"+p.Name)
			}
		}
	}
	slices.Sort(keys)
	return keys, nil
}

// Complete reads the configuration.
func (o *Options) Complete() error {
	v, err := manifest.ParseFieldValidation(o.FieldValidation)
	if err != nil {
		return clierr.Usagef("%v", err)
	}
	o.load = manifest.Options{Validation: v, Stdin: o.in}
	if o.ConfigFile == "-" && (slices.Contains(o.PodFiles, "-") || slices.Contains(o.Snapshots, "-")) {
		return clierr.Usagef("standard input (-) can be read only once: give it to one of -f, --snapshot and --config")
	}
	cfg, err := clierr.LoadConfigFrom(o.ConfigFile, o.in)
	if err != nil {
		return err
	}
	o.cfg = cfg
	_ = clierr.Unsupported(o.ConfigFile, &o.cfg, o.errOut, false)
	if o.release, err = clierr.ParseKubeVersion(o.KubeVersion); err != nil {
		return err
	}
	if err := o.parseFeatureGates(); err != nil {
		return err
	}
	if o.policy, err = profile.ParsePolicy(o.VictimPolicy); err != nil {
		return clierr.Usagef("--victim-policy: %v", err)
	}
	o.now = time.Now()
	if o.Now != "" {
		t, err := time.Parse(time.RFC3339, o.Now)
		if err != nil {
			return clierr.Usagef("--now: %v", err)
		}
		o.now = t
	}
	return nil
}

// Validate checks the flags.
func (o *Options) Validate() error {
	if len(o.Snapshots) > 0 && o.Kube.Live() {
		return clierr.Usagef("--snapshot and --kubeconfig/--context/--server are exclusive: read a snapshot or a live cluster")
	}
	if (len(o.PodFiles) == 0) == (o.PodKey == "") {
		return clierr.Usagef("exactly one of -f/--filename and --pod is required")
	}
	stdin := 0
	for _, p := range append(slices.Clone(o.PodFiles), o.Snapshots...) {
		if p == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return clierr.Usagef("standard input (-) can be read only once: give it to one of -f and --snapshot")
	}
	if o.Sequence && len(o.PodFiles) == 0 {
		return clierr.Usagef("--sequence needs the pods in -f/--filename")
	}
	if o.PodKey != "" && strings.Count(o.PodKey, "/") != 1 {
		return clierr.Usagef("--pod must be NAMESPACE/NAME, got %q", o.PodKey)
	}
	format, err := output.ParseStrict(o.Output, o.AllowMissingKeys, Kinds()...)
	if err != nil {
		return err
	}
	o.format = format
	return nil
}

// Run loads the snapshot, decides and prints.
func (o *Options) Run(ctx context.Context) error {
	// The pods to evaluate first: a mistake there is reported before the
	// snapshot, which can take seconds to read, is loaded.
	var in inputs
	if o.PodKey == "" {
		var err error
		if in, err = o.loadInputs(); err != nil {
			return err
		}
	}
	// whatif only evaluates: the snapshot's pods need only what decisions
	// read. Until the snapshot is built, almost nothing allocated is
	// garbage: the collector waits, and goes on waiting through the first
	// decision. (Collecting once the snapshot was built made the first
	// evaluation at 5,000 nodes take 20-30 ms instead of 1-2 ms: it ran
	// beside a collection of the whole heap and assisted it.)
	release := o.prepareLoad()
	defer release()
	set, err := o.listOrLoad(ctx, true)
	if err != nil {
		return err
	}
	// What the snapshot holds that whatif does not use is said before
	// the objects of -f join it and its workloads make their pods; then
	// budgets without a status get theirs.
	unused := append(set.SkippedLines(), set.WorkloadLines()...)
	var ms []made
	if in.set != nil {
		if ms, err = o.expand(in, set); err != nil {
			return err
		}
	}
	if err := set.CompleteBudgets(ctx, o.now); err != nil {
		return clierr.NameFlag("--snapshot", err)
	}
	for _, line := range append(set.Warnings, unused...) {
		fmt.Fprintln(o.errOut, "warning:", line)
	}
	if len(set.Objects.Nodes) == 0 {
		fmt.Fprintln(o.errOut, "warning: the snapshot has no nodes: every pod is unschedulable")
	}
	snap, err := set.Build()
	if err != nil {
		return err
	}
	pods, err := o.pods(snap, ms)
	if err != nil {
		return err
	}
	// A workload's pods come one after another, each placed before the
	// next, as its controller creates them: --sequence is implied.
	sequence := o.Sequence || hasWorkload(ms)
	// One evaluator for all the pods: each is evaluated on the snapshot as
	// if it were alone, in its memory, or with --sequence on the snapshot
	// as the ones before it left it.
	var e whatif.Evaluator
	decisions := make([]*whatif.Decision, 0, len(pods))
	for i, pod := range pods {
		if i == 1 {
			// Several pods: their decisions and their garbage add up,
			// so the collection put off runs from here on (a whatif of
			// one pod ends without it).
			release()
		}
		prof := o.profile(pod.Obj())
		d, err := e.Evaluate(snap, pod, whatif.Options{
			Now:         o.now,
			Seed:        o.Seed,
			Parallelism: o.cfg.EffectiveParallelism(),
			Profile:     prof,
			Features:    o.features,
			Policy:      o.policy,
		})
		if err != nil {
			return err
		}
		decisions = append(decisions, d)
		if sequence {
			if err := applyDecision(snap, pod, d, metav1.NewTime(o.now)); err != nil {
				return err
			}
		}
	}
	if err := o.print(decisions); err != nil {
		return err
	}
	if hasWorkload(ms) && (o.format.Kind == output.Table || o.format.Kind == output.Wide) {
		printWorkloads(o.out, ms, decisions, len(set.Objects.Nodes))
	}
	return nil
}

// print writes the decisions: one in full, several as a table or a list.
// A workload may make no pod at all: a table then has no rows to show.
func (o *Options) print(decisions []*whatif.Decision) error {
	switch {
	case len(decisions) == 0 && (o.format.Kind == output.Table || o.format.Kind == output.Wide):
		return nil
	case len(decisions) == 1:
		return Print(o.out, decisions[0], o.format, o.Explain)
	}
	return PrintMany(o.out, decisions, o.format)
}

// profile returns the configuration's profile for the pod's schedulerName
// (default-scheduler when unset). With none of that name kube-scheduler
// would leave the pod alone: a warning says so and the first profile is
// used. Without --config every pod gets the default profile, whatever
// scheduler it names (reprieve's own, say).
func (o *Options) profile(pod *v1.Pod) *profile.Profile {
	name := pod.Spec.SchedulerName
	if name == "" {
		name = v1.DefaultSchedulerName
	}
	if p := o.cfg.Profile(name); p != nil {
		return p
	}
	if o.ConfigFile == "" {
		return &o.cfg.Profiles[0]
	}
	p := &o.cfg.Profiles[0]
	fmt.Fprintf(o.errOut, "warning: the pod's schedulerName %q names no profile of the configuration (%s): no kube-scheduler profile would schedule it; evaluating with profile %q\n",
		name, strings.Join(o.cfg.SchedulerNames(), ", "), p.SchedulerName)
	return p
}

// prepareLoad readies the runtime for the load loadSet makes next: a
// large one collects less often until release is called (collectLess).
func (o *Options) prepareLoad() (release func()) {
	input := int64(-1)
	if len(o.Snapshots) > 0 {
		input = manifest.InputSize(o.Snapshots...)
	}
	return collectLess(os.Getenv, input)
}

// loadSet reads the snapshot files, or lists the live cluster when none
// are given; lean reads the files with manifest.Options.Lean. Budgets
// without a status get the one the disruption controller would compute
// at o.now, with a warning each (in the set's Warnings).
func (o *Options) loadSet(ctx context.Context, lean bool) (*manifest.Set, error) {
	set, err := o.listOrLoad(ctx, lean)
	if err != nil {
		return nil, err
	}
	if err := set.CompleteBudgets(ctx, o.now); err != nil {
		return nil, clierr.NameFlag("--snapshot", err)
	}
	return set, nil
}

// listOrLoad reads the snapshot files, or lists the live cluster.
func (o *Options) listOrLoad(ctx context.Context, lean bool) (*manifest.Set, error) {
	if len(o.Snapshots) > 0 {
		opts := o.load
		opts.Lean = lean
		set, err := manifest.LoadContext(ctx, opts, o.Snapshots...)
		return set, clierr.NameFlag("--snapshot", err)
	}
	client, err := o.Kube.ReadClient("reprieve-whatif")
	if err != nil {
		return nil, err
	}
	if o.KubeVersion == "" {
		if err := o.useServerRelease(ctx, client); err != nil {
			return nil, err
		}
	}
	progress := newProgress(o.errOut)
	objs, warnings, err := kube.ListWith(ctx, client, kube.ListOptions{ChunkSize: o.ChunkSize, Progress: progress.report, Features: o.features})
	progress.done()
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		fmt.Fprintln(o.errOut, "warning:", w)
	}
	set := manifest.NewSet()
	set.Objects = objs
	return set, nil
}

// pods returns the pods to evaluate: --pod's, or those ms make, in order.
func (o *Options) pods(snap *snapshot.Snapshot, ms []made) ([]*snapshot.Pod, error) {
	if o.PodKey != "" {
		p := snap.Pod(o.PodKey)
		if p == nil {
			return nil, clierr.Usagef("--pod %s: no such pod in the snapshot", o.PodKey)
		}
		if p.NodeName() != "" {
			return nil, clierr.Usagef("--pod %s: the pod is already bound to %s", o.PodKey, p.NodeName())
		}
		if p.Finished() {
			return nil, clierr.Usagef("--pod %s: the pod has finished (phase %s)", o.PodKey, p.Phase())
		}
		return []*snapshot.Pod{p}, nil
	}
	var out []*snapshot.Pod
	for _, m := range ms {
		for _, obj := range m.pods {
			if existing := snap.Pod(obj.Namespace + "/" + obj.Name); existing != nil && existing.NodeName() != "" {
				fmt.Fprintf(o.errOut, "warning: %s: a pod %s/%s is already bound to %s in the snapshot; evaluating the file's pod as a new pod\n", m.src, obj.Namespace, obj.Name, existing.NodeName())
			}
			if obj.Status.Phase == "" {
				obj.Status.Phase = v1.PodPending
			}
			p, err := snap.NewPod(obj)
			if err != nil {
				var oe *snapshot.ObjectError
				if errors.As(err, &oe) {
					return nil, &manifest.InputError{Source: m.src, Object: "Pod " + obj.Namespace + "/" + obj.Name, Field: oe.Field, Detail: oe.Detail}
				}
				return nil, err
			}
			out = append(out, p)
		}
	}
	return out, nil
}
