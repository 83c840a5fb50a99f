// Package whatif is the `reprieve whatif` command: a dry run of scheduling
// and preemption for one pod over a cluster snapshot.
package whatif

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/cli/clierr"
	"github.com/reprieve/reprieve/internal/cli/kubeflags"
	"github.com/reprieve/reprieve/pkg/config"
	"github.com/reprieve/reprieve/pkg/kube"
	"github.com/reprieve/reprieve/pkg/loader"
	"github.com/reprieve/reprieve/pkg/preemption"
	"github.com/reprieve/reprieve/pkg/snapshot"
	"github.com/reprieve/reprieve/pkg/whatif"
)

// Options are the flags of `reprieve whatif`.
type Options struct {
	Snapshots  []string
	PodFile    string
	PodKey     string
	Output     string
	Explain    bool
	Seed       uint64
	ConfigFile string
	// Now fixes the evaluation time (RFC 3339), for reproducible output.
	Now string
	// FeatureGates are kube-scheduler feature gates, "Name=bool,...".
	FeatureGates string
	// Kube connects to a live cluster when no --snapshot is given.
	Kube kubeflags.Flags

	out, errOut io.Writer
	cfg         config.Config
	now         time.Time
	features    preemption.Features
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
node was rejected.`,
		Example: `  reprieve whatif --snapshot examples/cluster -f examples/pods/urgent.yaml
  kubectl get nodes,pods,pdb,priorityclasses -A -o yaml > cluster.yaml
  reprieve whatif --snapshot cluster.yaml --pod default/web-0 -o json --explain
  reprieve whatif --feature-gates GenericWorkload=true --snapshot examples/gang/cluster.yaml -f examples/gang/evict-the-gang.yaml
  reprieve whatif --kubeconfig ~/.kube/config -f pod.yaml     # a live cluster, read-only
  kubectl reprieve whatif -f pod.yaml                           # as a kubectl plugin`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
	f.StringArrayVar(&o.Snapshots, "snapshot", nil, "cluster snapshot: a YAML/JSON file or a directory of them (repeatable)")
	f.StringVarP(&o.PodFile, "filename", "f", "", "file holding the pod to schedule")
	f.StringVar(&o.PodKey, "pod", "", "pending pod of the snapshot to schedule, as NAMESPACE/NAME")
	f.StringVarP(&o.Output, "output", "o", "table", "output format: table, json or yaml")
	f.BoolVar(&o.Explain, "explain", false, "explain every node: why it was rejected, or its victims and score")
	f.Uint64Var(&o.Seed, "seed", 0, "seed for the random dry-run offset and tie-break")
	f.StringVar(&o.ConfigFile, "config", "", "KubeSchedulerConfiguration file (DefaultPreemption args)")
	f.StringVar(&o.FeatureGates, "feature-gates", "", "kube-scheduler feature gates that change preemption, as key=value pairs: GenericWorkload=true evicts pod groups whole, CompositePodGroup=true adds composite groups, DRAPreemption=true lets victims' resource claims free their devices (beyond v1.37, as planned for 1.38); all off by default, as in v1.37")
	f.StringVar(&o.Now, "now", "", "evaluation time (RFC 3339); pods without a start time count as starting then")
	_ = f.MarkHidden("now")
	o.Kube.AddTo(f)
	return cmd
}

// Complete reads the configuration.
func (o *Options) Complete() error {
	cfg, err := clierr.LoadConfig(o.ConfigFile)
	if err != nil {
		return err
	}
	o.cfg = cfg
	features, err := preemption.ParseFeatureGates(o.FeatureGates)
	if err != nil {
		return clierr.Usagef("--feature-gates: %v", err)
	}
	o.features = features
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
	if len(o.Snapshots) > 0 && (o.Kube.Kubeconfig != "" || o.Kube.Context != "") {
		return clierr.Usagef("--snapshot and --kubeconfig/--context are exclusive: read a snapshot or a live cluster")
	}
	if (o.PodFile == "") == (o.PodKey == "") {
		return clierr.Usagef("exactly one of -f/--filename and --pod is required")
	}
	if o.PodKey != "" && strings.Count(o.PodKey, "/") != 1 {
		return clierr.Usagef("--pod must be NAMESPACE/NAME, got %q", o.PodKey)
	}
	switch o.Output {
	case "table", "json", "yaml":
	default:
		return clierr.Usagef("--output must be table, json or yaml, got %q", o.Output)
	}
	return nil
}

// Run loads the snapshot, decides and prints.
func (o *Options) Run(ctx context.Context) error {
	set, err := o.load(ctx)
	if err != nil {
		return err
	}
	for _, line := range append(set.Skipped, set.WorkloadLines()...) {
		fmt.Fprintln(o.errOut, "warning:", line)
	}
	snap, err := set.Build()
	if err != nil {
		return err
	}
	pod, err := o.pod(snap, set)
	if err != nil {
		return err
	}
	d, err := whatif.Evaluate(snap, pod, whatif.Options{Preemption: preemption.Options{
		MinCandidateNodesPercentage: o.cfg.MinCandidateNodesPercentage,
		MinCandidateNodesAbsolute:   o.cfg.MinCandidateNodesAbsolute,
		Seed:                        o.Seed,
		Now:                         o.now,
		Features:                    o.features,
	}})
	if err != nil {
		return err
	}
	return Print(o.out, d, o.Output, o.Explain)
}

// load reads the snapshot files, or lists the live cluster when none are given.
func (o *Options) load(ctx context.Context) (*loader.Set, error) {
	if len(o.Snapshots) > 0 {
		return loader.Load(o.Snapshots...)
	}
	client, err := o.Kube.Client(false, "reprieve-whatif")
	if err != nil {
		return nil, err
	}
	objs, warnings, err := kube.List(ctx, client)
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		fmt.Fprintln(o.errOut, "warning:", w)
	}
	set := loader.NewSet()
	set.Objects = objs
	return set, nil
}

func (o *Options) pod(snap *snapshot.Snapshot, set *loader.Set) (*snapshot.Pod, error) {
	if o.PodKey != "" {
		p := snap.Pod(o.PodKey)
		if p == nil {
			return nil, clierr.Usagef("--pod %s: no such pod in the snapshot", o.PodKey)
		}
		if p.NodeName() != "" {
			return nil, clierr.Usagef("--pod %s: the pod is already bound to %s", o.PodKey, p.NodeName())
		}
		if p.Finished() {
			return nil, clierr.Usagef("--pod %s: the pod has finished (phase %s)", o.PodKey, p.Obj.Status.Phase)
		}
		return p, nil
	}
	obj, namespaced, err := loader.LoadPod(o.PodFile)
	if err != nil {
		return nil, err
	}
	if !namespaced {
		switch {
		case o.Kube.Namespace != "":
			obj.Namespace = o.Kube.Namespace
		case len(o.Snapshots) == 0:
			obj.Namespace = o.Kube.DefaultNamespace()
		}
	}
	if existing := snap.Pod(obj.Namespace + "/" + obj.Name); existing != nil && existing.NodeName() != "" {
		fmt.Fprintf(o.errOut, "warning: %s: a pod %s/%s is already bound to %s in the snapshot; evaluating the file's pod as a new pod\n", o.PodFile, obj.Namespace, obj.Name, existing.NodeName())
	}
	if obj.Status.Phase == "" {
		obj.Status.Phase = v1.PodPending
	}
	p, err := snap.NewPod(obj)
	if err != nil {
		var oe *snapshot.ObjectError
		if errors.As(err, &oe) {
			return nil, &loader.InputError{Source: o.PodFile, Object: "Pod " + obj.Namespace + "/" + obj.Name, Field: oe.Field, Detail: oe.Detail}
		}
		return nil, err
	}
	return p, nil
}
