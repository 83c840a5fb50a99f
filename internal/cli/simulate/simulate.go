// Package simulate is the `reprieve simulate` command: a scenario replayed
// over virtual time with reprieve's scheduler.
package simulate

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/adapter/config"
	"github.com/reprieve/reprieve/internal/adapter/manifest"
	"github.com/reprieve/reprieve/internal/adapter/sim"
	"github.com/reprieve/reprieve/internal/adapter/sim/report"
	"github.com/reprieve/reprieve/internal/cli/clierr"
	"github.com/reprieve/reprieve/internal/cli/completion"
	"github.com/reprieve/reprieve/internal/cli/outfile"
	"github.com/reprieve/reprieve/internal/cli/output"
	"github.com/reprieve/reprieve/internal/engine/profile"
)

// Options are the flags of `reprieve simulate`.
type Options struct {
	Paths      []string
	Output     string
	Report     string
	Seed       uint64
	ConfigFile string
	NoProgress bool
	// FieldValidation is kubectl's --validate for the scenario's manifests.
	FieldValidation string
	// MaxObjects bounds the objects the scenario may create.
	MaxObjects int64
	// FeatureGates are kube-scheduler feature gates, "Name=bool,...".
	FeatureGates string
	// KubeVersion is the kube-scheduler release to mirror ("1.38"); empty
	// is the newest mirrored.
	KubeVersion string
	// VictimPolicy chooses the victims: upstream, minimal or strict-pdb.
	VictimPolicy string
	// Compare lists the runs to compare, one after another with the same
	// seed: each a victim policy, feature gates (Gate=bool, several joined
	// by "+") set over --feature-gates, or both ("minimal+DRAPreemption=true").
	Compare []string
	// AllowMissingKeys is kubectl's --allow-missing-template-keys.
	AllowMissingKeys bool

	features    profile.Features
	release     profile.Release
	policy      profile.Policy
	format      output.Format
	compare     []compareRun
	in          io.Reader
	load        manifest.Options
	out, errOut io.Writer
	seedSet     bool
	cfg         config.Config
}

// NewCommand returns the simulate command.
func NewCommand(out, errOut io.Writer) *cobra.Command {
	o := &Options{out: out, errOut: errOut}
	cmd := &cobra.Command{
		Use:   "simulate SCENARIO... [-o table|wide|events|json|yaml|name|jsonpath=...|go-template=...] [--report FILE.html]  (- reads standard input)",
		Short: "Replay a workload over virtual time and show what preemption costs",
		Long: `simulate runs a scenario — a starting cluster in plain Kubernetes YAML plus a
Simulation document of timed actions — through reprieve's scheduler in virtual
time: the scheduling queue, nomination, victims' graceful termination,
controllers re-creating their pods. The scheduler's own work takes virtual time
(spec.costs: 500us a cycle, API calls under kube-scheduler's client rate limit
of 50 per second with a burst of 100, or --config's clientConnection), so a
queue drains as on a live scheduler. It never sleeps, and the same scenario and
seed give the same output byte for byte.`,
		Example: `  reprieve simulate examples/simulate/story.yaml
  cat story.yaml | reprieve simulate -
  reprieve simulate examples/simulate/story.yaml -o events
  reprieve simulate examples/simulate/story.yaml --report /tmp/story.html
  reprieve simulate examples/simulate/policies.yaml --compare upstream,minimal --report /tmp/policies.html
  reprieve simulate examples/simulate/story.yaml -o jsonpath='{.summary.victims}{"\n"}'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Paths = args
			o.in = cmd.InOrStdin()
			o.seedSet = cmd.Flags().Changed("seed")
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "table", "output format: table, wide (adds every victim: priority, node, when and by whom preempted), events, json, yaml, name (pod/NAME per victim), jsonpath=TEMPLATE, jsonpath-file=FILE, go-template=TEMPLATE or go-template-file=FILE (templates apply to the JSON form; with --compare, to the list of runs)")
	f.StringVar(&o.Report, "report", "", "write a self-contained HTML report with timelines to this file (with --compare: the policies side by side)")
	f.Uint64Var(&o.Seed, "seed", 0, "seed for the scheduler's random choices (overrides the scenario's)")
	f.StringVar(&o.ConfigFile, "config", "", "KubeSchedulerConfiguration file: profiles, plugins and their args (see README)")
	f.StringVar(&o.FeatureGates, "feature-gates", "", "kube-scheduler feature gates that change preemption, as key=value pairs (GenericWorkload, CompositePodGroup); all off by default, as in v1.37")
	clierr.AddKubeVersion(f, &o.KubeVersion, false)
	f.StringVar(&o.VictimPolicy, "victim-policy", string(profile.PolicyUpstream), "how victims are chosen: upstream (exactly kube-scheduler), minimal, reschedulable or strict-pdb (see reprieve whatif --help)")
	f.StringSliceVar(&o.Compare, "compare", nil, "run the scenario once per entry with the same seed and print the runs side by side: an entry is a victim policy (upstream, minimal, reschedulable, strict-pdb), feature gates set over --feature-gates (DRAPreemption=true; several joined by +), or both (minimal+DRAPreemption=true)")
	f.BoolVar(&o.NoProgress, "no-progress", false, "do not draw a progress bar on a terminal")
	f.StringVar(&o.FieldValidation, "validate", "strict", "unknown or duplicate fields in manifests: strict (an error), warn (a warning) or ignore, as kubectl's --validate")
	f.Int64Var(&o.MaxObjects, "max-objects", sim.DefaultMaxObjects, "refuse, before running, a scenario that creates more objects than this over its run; one whose objects need more memory than the process may use (GOMEMLIMIT, else the cgroup's limit, else 3/4 of physical memory) is refused too")
	output.AddFlags(f, &o.AllowMissingKeys)
	completion.Output(cmd, Kinds()...)
	completion.VictimPolicy(cmd)
	completion.FeatureGates(cmd)
	completion.Validate(cmd)
	return cmd
}

// Kinds returns the -o values simulate accepts: kubectl's and events.
func Kinds() []string { return output.Shared(output.Table, output.Wide, kindEvents) }

// kindEvents prints the simulation's events as kubectl get events does.
const kindEvents = "events"

// Validate checks the flags.
func (o *Options) Validate() error {
	format, err := output.ParseStrict(o.Output, o.AllowMissingKeys, Kinds()...)
	if err != nil {
		return err
	}
	o.format = format
	v, err := manifest.ParseFieldValidation(o.FieldValidation)
	if err != nil {
		return clierr.Usagef("%v", err)
	}
	if o.MaxObjects <= 0 {
		return clierr.Usagef("--max-objects must be positive, got %d", o.MaxObjects)
	}
	stdin := 0
	for _, p := range o.Paths {
		if p == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return clierr.Usagef("standard input (-) can be read only once")
	}
	o.load = manifest.Options{Validation: v, Stdin: o.in}
	if o.release, err = clierr.ParseKubeVersion(o.KubeVersion); err != nil {
		return err
	}
	var warnings []string
	if o.features, warnings, err = profile.ParseFeatureGatesFor(o.release, o.FeatureGates); err != nil {
		return clierr.Usagef("--feature-gates: %v", err)
	}
	for _, w := range warnings {
		fmt.Fprintln(o.errOut, "warning:", w)
	}
	if o.policy, err = profile.ParsePolicy(o.VictimPolicy); err != nil {
		return clierr.Usagef("--victim-policy: %v", err)
	}
	for _, name := range o.Compare {
		r, err := o.parseCompareRun(name)
		if err != nil {
			return clierr.Usagef("--compare: %v", err)
		}
		o.compare = append(o.compare, r)
	}
	if len(o.compare) > 0 && (o.format.Kind == kindEvents || o.format.Kind == output.Name) {
		return clierr.Usagef("--compare prints a comparison: it takes -o table, wide, json, yaml or a template")
	}
	if o.ConfigFile == "-" && stdin > 0 {
		return clierr.Usagef("standard input (-) can be read only once: give it to the scenario or to --config")
	}
	cfg, err := clierr.LoadConfigFrom(o.ConfigFile, o.in)
	if err != nil {
		return err
	}
	o.cfg = cfg
	if o.Report != "" {
		// Before the run: a report that cannot be written, or that would
		// overwrite a scenario, is refused before any work.
		if err := outfile.Check("--report", o.Report, append(slices.Clone(o.Paths), o.ConfigFile)...); err != nil {
			return err
		}
	}
	return nil
}

// Run simulates and prints.
func (o *Options) Run(ctx context.Context) error {
	sc, err := sim.LoadScenarioWith(o.load, sim.Limits{MaxObjects: o.MaxObjects}, o.Paths...)
	if err != nil {
		return clierr.NameFlag("scenario", err)
	}
	for _, line := range append(sc.Objects.Warnings, sc.Objects.SkippedLines()...) {
		fmt.Fprintln(o.errOut, "warning:", line)
	}
	if !sc.HasNodes() {
		fmt.Fprintln(o.errOut, "warning: the scenario has no nodes and creates none: every pod stays pending")
	}
	if o.ConfigFile != "" {
		_ = clierr.Unsupported(o.ConfigFile, &o.cfg, o.errOut, false)
		if o.cfg.Profile(v1.DefaultSchedulerName) == nil {
			fmt.Fprintf(o.errOut, "warning: %s: no profile is named %s: pods whose schedulerName is not one of %s stay pending\n", o.ConfigFile, v1.DefaultSchedulerName, strings.Join(o.cfg.SchedulerNames(), ", "))
		}
	}
	opts := sim.Options{Seed: o.Seed, SeedSet: o.seedSet, Profiles: o.cfg.Profiles,
		InitialBackoff: o.cfg.PodInitialBackoff, MaxBackoff: o.cfg.PodMaxBackoff,
		Parallelism: o.cfg.EffectiveParallelism(), Features: o.features, Policy: o.policy}
	if o.ConfigFile != "" && o.ConfigFile != "-" {
		// The client's rate limits bound the scheduler's API calls
		// (spec.costs, unless the scenario sets them).
		if conn, err := config.LoadConnection(o.ConfigFile); err == nil {
			opts.APIQPS, opts.APIBurst = float64(conn.ClientConnection.QPS), int(conn.ClientConnection.Burst)
		}
	}
	if !o.NoProgress && isTerminal(o.errOut) {
		opts.Progress = progressBar(o.errOut)
	}
	if len(o.compare) > 0 {
		return o.runCompare(ctx, sc, opts)
	}
	res, err := sim.Run(ctx, sc, opts)
	if opts.Progress != nil {
		fmt.Fprint(o.errOut, "\r\033[K")
	}
	if err != nil {
		return err
	}
	if o.Report != "" {
		if err := o.writeReport(o.Report, func(w io.Writer) error { return report.Write(w, sc, res) }); err != nil {
			return err
		}
	}
	switch {
	case o.format.Generic():
		return o.format.Print(o.out, res)
	case o.format.Kind == kindEvents:
		return printEvents(o.out, res.Events)
	case o.format.Kind == output.Name:
		return output.PrintNames(o.out, victimNames(res))
	}
	if err := printSummary(o.out, sc, res); err != nil {
		return err
	}
	if o.format.Kind == output.Wide {
		return printVictims(o.out, res)
	}
	return nil
}

// writeReport writes a report to path (replacing a previous one only once
// it is complete) and says where on the error stream.
func (o *Options) writeReport(path string, write func(io.Writer) error) error {
	if err := outfile.Write(path, write); err != nil {
		return fmt.Errorf("--report %s: %w", path, err)
	}
	fmt.Fprintf(o.errOut, "wrote report to %s\n", path)
	return nil
}

// compareRun is one entry of --compare: the victim policy and feature
// gates of a run, named as given.
type compareRun struct {
	name     string
	policy   profile.Policy
	features profile.Features
}

// parseCompareRun parses an entry of --compare: "+"-separated parts, each
// a victim policy, a kube-scheduler release (1.37) or a Gate=bool setting
// applied over --feature-gates. Parts left out are --victim-policy's,
// --kube-version's and --feature-gates'.
func (o *Options) parseCompareRun(entry string) (compareRun, error) {
	r := compareRun{name: entry, policy: o.policy, features: o.features}
	gates := []string{o.FeatureGates}
	release, releases := o.release, 0
	policies := 0
	for part := range strings.SplitSeq(entry, "+") {
		part = strings.TrimSpace(part)
		if strings.Contains(part, "=") {
			gates = append(gates, part)
			continue
		}
		if strings.HasPrefix(part, "1.") || strings.HasPrefix(part, "v1.") {
			rel, err := profile.ParseRelease(part)
			if err != nil {
				return r, fmt.Errorf("%q: %w", entry, err)
			}
			if releases++; releases > 1 {
				return r, fmt.Errorf("%q names two releases", entry)
			}
			release = rel
			continue
		}
		if part == "" {
			return r, fmt.Errorf("%q: an empty part; want a victim policy (%v) or Gate=bool", entry, profile.Policies())
		}
		p, err := profile.ParsePolicy(part)
		if err != nil {
			return r, fmt.Errorf("%q: %w, or Gate=bool", entry, err)
		}
		if policies++; policies > 1 {
			return r, fmt.Errorf("%q names two victim policies", entry)
		}
		r.policy = p
	}
	if len(gates) > 1 || release != o.release {
		f, _, err := profile.ParseFeatureGatesFor(release, strings.Join(gates, ","))
		if err != nil {
			return r, fmt.Errorf("%q: %w", entry, err)
		}
		r.features = f
	}
	return r, nil
}

// PolicyRun is one run of a compared scenario: its entry of --compare,
// victim policy and feature gates.
type PolicyRun struct {
	// Name is the entry of --compare.
	Name   string         `json:"name"`
	Policy profile.Policy `json:"policy"`
	// FeatureGates are the gates that change preemption, as upstream
	// names them, with reprieve's own DRAPreemption.
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
	Summary      sim.Summary     `json:"summary"`
	// ReplacementsPendingAtEnd counts the pods controllers re-created for
	// victims that were still pending (not bound, not deleted) at the end.
	ReplacementsPendingAtEnd int `json:"replacementsPendingAtEnd"`
}

// runCompare runs the scenario under each policy of --compare, reloading
// it for each run, and prints the runs side by side.
func (o *Options) runCompare(ctx context.Context, first *sim.Scenario, opts sim.Options) error {
	var runs []PolicyRun
	var reported []report.Run
	for i, c := range o.compare {
		sc := first
		if i > 0 {
			var err error
			if sc, err = sim.LoadScenarioWith(o.load, sim.Limits{MaxObjects: o.MaxObjects}, o.Paths...); err != nil {
				return clierr.NameFlag("scenario", err)
			}
		}
		opts.Policy, opts.Features = c.policy, c.features
		res, err := sim.Run(ctx, sc, opts)
		if opts.Progress != nil {
			fmt.Fprint(o.errOut, "\r\033[K")
		}
		if err != nil {
			return fmt.Errorf("run %s: %w", c.name, err)
		}
		run := PolicyRun{Name: c.name, Policy: c.policy, FeatureGates: gates(c.features), Summary: res.Summary}
		for _, h := range res.Pods {
			if h.Replacement && h.Bound == nil && h.Gone == nil {
				run.ReplacementsPendingAtEnd++
			}
		}
		runs = append(runs, run)
		if o.Report != "" {
			reported = append(reported, report.Run{Policy: c.name, Result: res})
		}
	}
	if o.Report != "" {
		if err := o.writeReport(o.Report, func(w io.Writer) error { return report.WriteCompare(w, first, reported) }); err != nil {
			return err
		}
	}
	if o.format.Generic() {
		return o.format.Print(o.out, runs)
	}
	return printComparison(o.out, first, runs)
}

// printComparison prints one column per policy.
func printComparison(w io.Writer, sc *sim.Scenario, runs []PolicyRun) error {
	s0 := runs[0].Summary
	fmt.Fprintf(w, "SCENARIO  %s (seed %d, %s of virtual time), one run per entry of --compare\n", s0.Scenario, s0.Seed, s0.Duration)
	if sc.Description != "" {
		fmt.Fprintf(w, "          %s\n", sc.Description)
	}
	fmt.Fprintf(w, "COSTS     %s (spec.costs)\n", s0.Costs)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := "\t"
	for _, r := range runs {
		header += r.Name + "\t"
	}
	fmt.Fprintln(tw, header)
	row := func(name string, value func(r PolicyRun) string) {
		line := name + "\t"
		for _, r := range runs {
			line += value(r) + "\t"
		}
		fmt.Fprintln(tw, line)
	}
	count := func(f func(s sim.Summary) int) func(PolicyRun) string {
		return func(r PolicyRun) string { return fmt.Sprint(f(r.Summary)) }
	}
	row("victims (evictions)", count(func(s sim.Summary) int { return s.Victims }))
	row("preemptions", count(func(s sim.Summary) int { return s.Preemptions }))
	row("PDB violations", count(func(s sim.Summary) int { return s.PDBViolations }))
	row("runtime lost by victims", func(r PolicyRun) string {
		return sim.Seconds(r.Summary.VictimRuntimeLostS).Round(time.Second).String()
	})
	row("re-created victims pending at the end", func(r PolicyRun) string { return fmt.Sprint(r.ReplacementsPendingAtEnd) })
	row("preemption cascades", count(func(s sim.Summary) int { return s.PreemptionCascades }))
	row("pods pending at the end", count(func(s sim.Summary) int { return s.PodsPendingAtEnd }))
	row("pods scheduled", count(func(s sim.Summary) int { return s.PodsScheduled }))
	if n := len(s0.TimeToSchedule); n > 0 {
		top := s0.TimeToSchedule[n-1].Priority
		for _, r := range runs {
			for _, p := range r.Summary.TimeToSchedule {
				top = max(top, p.Priority)
			}
		}
		wait := func(f func(p sim.PriorityWaits) float64) func(PolicyRun) string {
			return func(r PolicyRun) string {
				for _, p := range r.Summary.TimeToSchedule {
					if p.Priority == top {
						return secs(f(p))
					}
				}
				return "-"
			}
		}
		row(fmt.Sprintf("time to schedule, priority %d, p50", top), wait(func(p sim.PriorityWaits) float64 { return p.P50 }))
		row(fmt.Sprintf("time to schedule, priority %d, p99", top), wait(func(p sim.PriorityWaits) float64 { return p.P99 }))
	}
	return tw.Flush()
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressBar draws how many of the scenario's pods are done (bound, or
// deleted while pending), redrawn at most ten times a second of wall time.
func progressBar(w io.Writer) func(sim.Progress) {
	var last time.Time
	return func(p sim.Progress) {
		if now := time.Now(); p.Finished || now.Sub(last) >= 100*time.Millisecond {
			last = now
			fmt.Fprint(w, "\r"+progressLine(p))
		}
	}
}

// progressLine is one state of the progress bar.
func progressLine(p sim.Progress) string {
	const width = 40
	frac := p.Fraction()
	n := int(frac * width)
	return fmt.Sprintf("[%s%s] %3.0f%% %d/%d pods done, virtual %s / %s", strings.Repeat("#", n), strings.Repeat(".", width-n), math.Floor(frac*100),
		p.Done, p.Expected, p.Virtual.Truncate(time.Second), p.End)
}

// printEvents writes -o events: each event when first seen, and how many
// times it was seen and when last (a series of like events is one row).
func printEvents(w io.Writer, events []sim.Event) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tNAMESPACE\tTYPE\tREASON\tOBJECT\tCOUNT\tLAST SEEN\tMESSAGE")
	for _, e := range events {
		ns := e.Namespace
		if ns == "" {
			ns = "-"
		}
		count, last := 1, e.At
		if e.Series != nil {
			count, last = e.Series.Count, e.Series.LastObservedAt
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", e.At, ns, e.Type, e.Reason, e.Object, count, last, e.Message)
	}
	return tw.Flush()
}

func printSummary(w io.Writer, sc *sim.Scenario, res *sim.Result) error {
	s := res.Summary
	fmt.Fprintf(w, "SCENARIO  %s (seed %d, %s of virtual time)\n", s.Scenario, s.Seed, s.Duration)
	if sc.Description != "" {
		fmt.Fprintf(w, "          %s\n", sc.Description)
	}
	fmt.Fprintf(w, "COSTS     %s (spec.costs)\n", s.Costs)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	rows := [][2]string{
		{"pods (at the start and created)", fmt.Sprint(s.PodsCreated)},
		{"pods scheduled", fmt.Sprint(s.PodsScheduled)},
		{"pods pending at the end", fmt.Sprint(s.PodsPendingAtEnd)},
		{"peak pending pods", fmt.Sprint(s.PeakPending)},
		{"scheduling attempts", fmt.Sprint(s.SchedulingAttempts)},
		{"preemption attempts", fmt.Sprint(s.PreemptionAttempts)},
		{"preemptions (a node nominated)", fmt.Sprint(s.Preemptions)},
		{"pods preempted", fmt.Sprint(s.PodsPreempted)},
		{"victims chosen (over all preemptions)", fmt.Sprint(s.Victims)},
		{"PDB violations", fmt.Sprint(s.PDBViolations)},
		{"group disruptions", fmt.Sprint(s.GroupDisruptions)},
		{"nominations lost to another pod", fmt.Sprint(s.NominationsLost)},
		{"preemption cascades (replacements preempting)", fmt.Sprint(s.PreemptionCascades)},
		{"runtime lost by victims", sim.Seconds(s.VictimRuntimeLostS).Round(time.Second).String()},
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\n", r[0], r[1])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(s.TimeToSchedule) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "PRIORITY\tSCHEDULED\tP50\tP90\tP99  (time to schedule)")
		for _, p := range s.TimeToSchedule {
			fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\n", p.Priority, p.Scheduled, secs(p.P50), secs(p.P90), secs(p.P99))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	printReplicaStories(w, res.Replicas)
	return nil
}

// victimNames are -o name's lines: "-n NAMESPACE pod/NAME" for every pod
// preempted, in the order of the result's pods — kubectl's arguments for
// one object a line, as whatif -o name prints victims.
func victimNames(res *sim.Result) []string {
	var out []string
	for _, h := range res.Pods {
		if h.Preempted == nil {
			continue
		}
		ns, name, _ := strings.Cut(h.Pod, "/")
		out = append(out, "-n "+ns+" pod/"+name)
	}
	return out
}

// printVictims writes -o wide's table of every pod preempted.
func printVictims(w io.Writer, res *sim.Result) error {
	var victims []sim.PodHistory
	for _, h := range res.Pods {
		if h.Preempted != nil {
			victims = append(victims, h)
		}
	}
	if len(victims) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VICTIM\tPRIORITY\tNODE\tPREEMPTED AT\tPREEMPTED BY\tREPLACEMENT")
	for _, h := range victims {
		by, node := "-", "-"
		if h.PreemptedBy != "" {
			by = h.PreemptedBy
		}
		if h.Node != "" {
			node = h.Node
		}
		replacement := "no"
		if h.Replacement {
			replacement = "yes"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", h.Pod, h.Priority, node, secs(*h.Preempted), by, replacement)
	}
	return tw.Flush()
}

// secs prints seconds as a duration, to the millisecond: never negative
// (sim.Seconds).
func secs(s float64) string {
	return sim.Seconds(s).Round(time.Millisecond).String()
}

// gates lists the gates of f that are on (nil when none is).
func gates(f profile.Features) map[string]bool {
	m := f.Gates()
	m[profile.GateDRAPreemption] = f.DRAPreemption
	maps.DeleteFunc(m, func(_ string, on bool) bool { return !on })
	if len(m) == 0 {
		return nil
	}
	return m
}
