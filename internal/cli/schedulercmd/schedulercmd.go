// Package schedulercmd is the `reprieve scheduler` command: reprieve as a
// secondary scheduler against a real API server.
package schedulercmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/reprieve/reprieve/internal/cli/clierr"
	"github.com/reprieve/reprieve/internal/cli/kubeflags"
	"github.com/reprieve/reprieve/pkg/config"
	"github.com/reprieve/reprieve/pkg/kube"
	"github.com/reprieve/reprieve/pkg/preemption"
)

// defaultSchedulerName is the profile's name without --config or
// --scheduler-name.
const defaultSchedulerName = "reprieve"

// Options are the flags of `reprieve scheduler`.
type Options struct {
	Kube          kubeflags.Flags
	SchedulerName string
	ConfigFile    string
	MetricsAddr   string
	LeaderElect   bool
	LeaseName     string
	LeaseNS       string
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
	Identity      string

	errOut io.Writer
	cfg    config.Config
}

// NewCommand returns the scheduler command.
func NewCommand(errOut io.Writer) *cobra.Command {
	o := &Options{errOut: errOut}
	cmd := &cobra.Command{
		Use:   "scheduler [--kubeconfig FILE]",
		Short: "Run reprieve as a secondary scheduler for pods with spec.schedulerName: reprieve",
		Long: `scheduler watches the cluster and schedules the pods whose spec.schedulerName
matches --scheduler-name, preempting exactly as kube-scheduler v1.37.2 does:
DisruptionTarget condition, graceful delete, Preempted events, nomination.
Without --kubeconfig it uses the in-cluster configuration.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Complete(cmd); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	o.Kube.AddTo(f)
	f.StringVar(&o.SchedulerName, "scheduler-name", "", "schedule pods with this spec.schedulerName (default: the config's profile, else reprieve)")
	f.StringVar(&o.ConfigFile, "config", "", "KubeSchedulerConfiguration file: profiles (by schedulerName), plugins and their args; what reprieve does not implement is an error")
	f.StringVar(&o.MetricsAddr, "metrics-addr", ":10259", "address for /metrics, /healthz and /readyz (empty disables)")
	f.BoolVar(&o.LeaderElect, "leader-elect", true, "run only while holding the lease, so several replicas can run")
	f.StringVar(&o.LeaseName, "leader-elect-resource-name", "reprieve", "name of the Lease")
	f.StringVar(&o.LeaseNS, "leader-elect-resource-namespace", "kube-system", "namespace of the Lease")
	f.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", 15*time.Second, "lease duration")
	f.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second, "renew deadline")
	f.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", 2*time.Second, "retry period")
	f.StringVar(&o.Identity, "identity", "", "leader election identity (default: hostname)")
	return cmd
}

// Complete reads the configuration and fills defaults.
func (o *Options) Complete(cmd *cobra.Command) error {
	cfg, err := clierr.LoadConfig(o.ConfigFile)
	if err != nil {
		return err
	}
	if err := clierr.Unsupported(o.ConfigFile, &cfg, o.errOut, true); err != nil {
		return err
	}
	switch {
	case o.SchedulerName != "" && len(cfg.Profiles) > 1:
		return clierr.Usagef("--scheduler-name: the configuration has %d profiles (%s); name them there", len(cfg.Profiles), strings.Join(cfg.SchedulerNames(), ", "))
	case o.SchedulerName != "":
		cfg.Profiles[0].SchedulerName = o.SchedulerName
	case o.ConfigFile == "":
		// Without a configuration reprieve runs beside kube-scheduler.
		cfg.Profiles[0].SchedulerName = defaultSchedulerName
	}
	o.SchedulerName = cfg.Profiles[0].SchedulerName
	o.cfg = cfg
	if o.Identity == "" {
		host, _ := os.Hostname()
		o.Identity = host + "_" + fmt.Sprint(time.Now().UnixNano())
	}
	if o.LeaseDuration <= o.RenewDeadline || o.RenewDeadline <= o.RetryPeriod {
		return clierr.Usagef("need lease duration > renew deadline > retry period")
	}
	return nil
}

// Run runs the scheduler until ctx is cancelled (SIGTERM) or leadership is lost.
func (o *Options) Run(ctx context.Context) error {
	client, err := o.Kube.Client(true, "reprieve-scheduler")
	if err != nil {
		return err
	}
	cfg := kube.Config{
		Client:         client,
		SchedulerName:  o.SchedulerName,
		MetricsAddr:    o.MetricsAddr,
		Profiles:       o.cfg.Profiles,
		InitialBackoff: o.cfg.PodInitialBackoff,
		MaxBackoff:     o.cfg.PodMaxBackoff,
		Preemption:     preemption.Options{Parallelism: o.cfg.DryRunParallelism()},
	}
	if o.LeaderElect {
		cfg.LeaderElection = &kube.LeaderElection{
			Namespace: o.LeaseNS, Name: o.LeaseName, Identity: o.Identity,
			LeaseDuration: o.LeaseDuration, RenewDeadline: o.RenewDeadline, RetryPeriod: o.RetryPeriod,
			ReleaseOnCancel: true,
		}
	}
	return kube.Run(ctx, cfg)
}
