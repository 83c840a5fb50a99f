// Package schedulercmd is the `reprieve scheduler` command: reprieve as a
// secondary scheduler against a real API server.
package schedulercmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"

	// The json format of --logging-format, as kube-scheduler registers it.
	_ "k8s.io/component-base/logs/json/register"

	"github.com/reprieve/reprieve/internal/adapter/config"
	"github.com/reprieve/reprieve/internal/adapter/kube"
	"github.com/reprieve/reprieve/internal/cli/clierr"
	"github.com/reprieve/reprieve/internal/cli/completion"
	"github.com/reprieve/reprieve/internal/cli/kubeflags"
	"github.com/reprieve/reprieve/internal/engine/profile"
)

// userAgent is the scheduler client's user agent (the events client keeps
// client-go's, as kube-scheduler's does).
const userAgent = "reprieve-scheduler"

// Leader-election flag names, as kube-scheduler's.
const (
	flagLeaderElect       = "leader-elect"
	flagLeaseDuration     = "leader-elect-lease-duration"
	flagRenewDeadline     = "leader-elect-renew-deadline"
	flagRetryPeriod       = "leader-elect-retry-period"
	flagResourceLock      = "leader-elect-resource-lock"
	flagResourceName      = "leader-elect-resource-name"
	flagResourceNamespace = "leader-elect-resource-namespace"
)

// defaultSchedulerName is the profile's name without --config or
// --scheduler-name.
const defaultSchedulerName = "reprieve"

// Options are the flags of `reprieve scheduler`.
type Options struct {
	Kube          kubeflags.Flags
	API           kubeflags.APIFlags
	SchedulerName string
	ConfigFile    string
	MetricsAddr   string
	// LeaderElection holds the leader-election flags; only those given on
	// the command line override the configuration, as in kube-scheduler.
	LeaderElection config.LeaderElection
	Identity       string
	// FeatureGates are kube-scheduler feature gates, "Name=bool,...".
	FeatureGates string
	// KubeVersion is the kube-scheduler release to mirror ("1.38"); empty
	// is the API server's.
	KubeVersion string
	// VictimPolicy chooses the victims: upstream, minimal or strict-pdb.
	VictimPolicy string
	// Logging is component-base's logging configuration (-v, --vmodule,
	// --logging-format), as kube-scheduler's.
	Logging *logsapi.LoggingConfiguration
	// APIWait bounds the wait for the API server before the scheduler
	// starts: attempts every APIWaitInterval, each failure logged.
	APIWaitAttempts int
	APIWaitInterval time.Duration
	// Serving is the secure port (kube-scheduler's 10259).
	Serving *Serving

	errOut   io.Writer
	cfg      config.Config
	conn     config.Connection
	features profile.Features
	release  profile.Release
	policy   profile.Policy
}

// NewCommand returns the scheduler command.
func NewCommand(errOut io.Writer) *cobra.Command {
	return newCommand(&Options{errOut: errOut, Logging: logsapi.NewLoggingConfiguration()})
}

// newCommand returns the command filling o.
func newCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "scheduler [--kubeconfig FILE]",
		Short: "Run reprieve as a secondary scheduler for pods with spec.schedulerName: reprieve",
		Long: `scheduler watches the cluster and schedules the pods whose spec.schedulerName
matches --scheduler-name, preempting exactly as kube-scheduler v1.37.2 does:
DisruptionTarget condition, graceful delete, Preempted events, nomination.

The client is configured as kube-scheduler's: QPS 50, burst 100, protobuf,
from --config's clientConnection, else from --kube-api-qps, --kube-api-burst
and --kube-api-content-type (ignored with --config, as kube-scheduler does).
Leader election comes from --config's leaderElection, each --leader-elect-*
flag given overriding it. --kubeconfig, when given, takes precedence over
clientConnection.kubeconfig; without either, the in-cluster configuration
is used.

The secure port (--secure-port, 10259) authenticates and authorizes as
kube-scheduler's: client certificates signed by --client-ca-file, else by
the client-ca-file of the ConfigMap
kube-system/extension-apiserver-authentication; bearer tokens by
TokenReview; every request by SubjectAccessReview except the
--authorization-always-allow-paths and the group system:masters. Unlike
kube-scheduler's, --authentication-kubeconfig and
--authorization-kubeconfig default to the scheduler's own kubeconfig.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Complete(cmd.Flags()); err != nil {
				return err
			}
			if err := logsapi.ValidateAndApply(o.Logging, nil); err != nil {
				return clierr.Usagef("logging flags: %v", err)
			}
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	o.Kube.AddSchedulerTo(f)
	o.API.AddTo(f)
	f.StringVar(&o.FeatureGates, "feature-gates", "", "kube-scheduler feature gates that change preemption, as key=value pairs (GenericWorkload, CompositePodGroup, DRAPreemption: victims' resource claims free their devices, beyond v1.37); all off by default, as in v1.37")
	clierr.AddKubeVersion(f, &o.KubeVersion, true)
	f.StringVar(&o.VictimPolicy, "victim-policy", string(profile.PolicyUpstream), "how victims are chosen: upstream (exactly kube-scheduler), minimal, reschedulable or strict-pdb (see reprieve whatif --help)")
	f.StringVar(&o.SchedulerName, "scheduler-name", "", "schedule pods with this spec.schedulerName (default: the config's profile, else reprieve)")
	f.StringVar(&o.ConfigFile, "config", "", "KubeSchedulerConfiguration file: profiles (by schedulerName), plugins and their args, clientConnection, leaderElection; what reprieve does not implement is an error")
	f.StringVar(&o.MetricsAddr, "metrics-addr", "", "also serve /metrics, /healthz, /readyz and /livez over plain, unauthenticated HTTP on this address (off by default; the secure port serves them)")
	le := &o.LeaderElection
	f.BoolVar(&le.LeaderElect, flagLeaderElect, true, "run only while holding the lease, so several replicas can run")
	f.DurationVar(&le.LeaseDuration, flagLeaseDuration, config.DefaultLeaseDuration, "lease duration")
	f.DurationVar(&le.RenewDeadline, flagRenewDeadline, config.DefaultRenewDeadline, "renew deadline")
	f.DurationVar(&le.RetryPeriod, flagRetryPeriod, config.DefaultRetryPeriod, "retry period")
	f.StringVar(&le.ResourceLock, flagResourceLock, config.DefaultResourceLock, `kind of lock; only "leases"`)
	f.StringVar(&le.ResourceName, flagResourceName, config.DefaultResourceName, "name of the Lease")
	f.StringVar(&le.ResourceNamespace, flagResourceNamespace, config.DefaultResourceNamespace, "namespace of the Lease")
	f.StringVar(&o.Identity, "identity", "", "leader election identity (default: hostname and a unique suffix)")
	f.IntVar(&o.APIWaitAttempts, "api-wait-attempts", defaultAPIWaitAttempts, "how many times to try the API server before giving up at start, each failure logged")
	f.DurationVar(&o.APIWaitInterval, "api-wait-interval", defaultAPIWaitInterval, "pause between two tries of the API server at start")
	if o.Logging == nil {
		o.Logging = logsapi.NewLoggingConfiguration()
	}
	logsapi.AddFlags(o.Logging, f)
	if o.Serving == nil {
		o.Serving = newServing()
	}
	o.Serving.AddFlags(f)
	completion.VictimPolicy(cmd)
	completion.FeatureGates(cmd)
	return cmd
}

// Complete reads the configuration, applies the flags given in fs over it
// as kube-scheduler does, and validates the result.
func (o *Options) Complete(fs *pflag.FlagSet) error {
	var err error
	if o.Logging != nil {
		if errs := logsapi.Validate(o.Logging, nil, nil); len(errs) > 0 {
			return clierr.Usagef("logging flags: %v", flatten(errs.ToAggregate()))
		}
	}
	if err := o.Serving.validate(); err != nil {
		return err
	}
	if o.APIWaitAttempts < 1 {
		return clierr.Usagef("--api-wait-attempts: %d, want at least 1", o.APIWaitAttempts)
	}
	if o.release, err = clierr.ParseKubeVersion(o.KubeVersion); err != nil {
		return err
	}
	if o.features, _, err = profile.ParseFeatureGatesFor(o.release, o.FeatureGates); err != nil {
		return clierr.Usagef("--feature-gates: %v", err)
	}
	if o.policy, err = profile.ParsePolicy(o.VictimPolicy); err != nil {
		return clierr.Usagef("--victim-policy: %v", err)
	}
	cfg, err := clierr.LoadConfig(o.ConfigFile)
	if err != nil {
		return err
	}
	if err := clierr.Unsupported(o.ConfigFile, &cfg, o.errOut, true); err != nil {
		return err
	}
	if o.ConfigFile == "" {
		o.conn = config.DefaultConnection()
		o.API.ApplyTo(fs, &o.conn.ClientConnection)
	} else {
		if o.conn, err = config.LoadConnection(o.ConfigFile); err != nil {
			return fmt.Errorf("%w: %v", clierr.ErrInvalidConfig, err)
		}
		if ignored := o.API.Changed(fs); len(ignored) > 0 {
			fmt.Fprintf(o.errOut, "warning: %s ignored because --config is given (as kube-scheduler does); set clientConnection in %s\n", strings.Join(ignored, ", "), o.ConfigFile)
		}
	}
	if o.Kube.Kubeconfig != "" {
		o.conn.ClientConnection.Kubeconfig = o.Kube.Kubeconfig
	}
	o.Serving.defaultKubeconfigs(o.conn.ClientConnection.Kubeconfig)
	o.applyLeaderElection(fs)
	if err := o.conn.Validate(); err != nil {
		if o.ConfigFile != "" {
			return fmt.Errorf("%w: %s (with the flags applied): %v", clierr.ErrInvalidConfig, o.ConfigFile, flatten(err))
		}
		return clierr.Usagef("leader election or client flags: %v", flatten(err))
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
	return nil
}

// flatten keeps a validation error on one line.
func flatten(err error) string {
	return strings.ReplaceAll(strings.Trim(err.Error(), "[]"), "\n", " ")
}

// applyLeaderElection overrides the configuration with the leader-election
// flags given on the command line, as kube-scheduler's ApplyLeaderElectionTo.
func (o *Options) applyLeaderElection(fs *pflag.FlagSet) {
	le, flag := &o.conn.LeaderElection, &o.LeaderElection
	kubeflags.SetIfChanged(fs, flagLeaderElect, &le.LeaderElect, flag.LeaderElect)
	kubeflags.SetIfChanged(fs, flagLeaseDuration, &le.LeaseDuration, flag.LeaseDuration)
	kubeflags.SetIfChanged(fs, flagRenewDeadline, &le.RenewDeadline, flag.RenewDeadline)
	kubeflags.SetIfChanged(fs, flagRetryPeriod, &le.RetryPeriod, flag.RetryPeriod)
	kubeflags.SetIfChanged(fs, flagResourceLock, &le.ResourceLock, flag.ResourceLock)
	kubeflags.SetIfChanged(fs, flagResourceName, &le.ResourceName, flag.ResourceName)
	kubeflags.SetIfChanged(fs, flagResourceNamespace, &le.ResourceNamespace, flag.ResourceNamespace)
}

// Connection returns the completed client and leader-election settings.
func (o *Options) Connection() config.Connection { return o.conn }

// RESTConfig returns the client configuration the scheduler runs with: the
// kubeconfig (or in-cluster configuration) with the clientConnection
// settings applied.
func (o *Options) RESTConfig() (*rest.Config, error) {
	kf := o.Kube
	kf.Kubeconfig = o.conn.ClientConnection.Kubeconfig
	base, err := kf.RESTConfig(true)
	if err != nil {
		return nil, err
	}
	return kube.ApplyClientConnection(base, o.conn.ClientConnection), nil
}

// errNotCompleted guards Run against a missing Complete.
var errNotCompleted = errors.New("scheduler options not completed")

// Run runs the scheduler until ctx is cancelled (SIGTERM) or leadership is lost.
func (o *Options) Run(ctx context.Context) error {
	if o.conn.ClientConnection.ContentType == "" {
		return errNotCompleted
	}
	rc, err := o.RESTConfig()
	if err != nil {
		return err
	}
	clients, err := kube.NewClients(rc, userAgent)
	if err != nil {
		return err
	}
	client := clients.Scheduler
	cfg := kube.Config{
		Client:         client,
		EventClient:    clients.Events,
		LeaseClient:    clients.LeaderElection,
		SchedulerName:  o.SchedulerName,
		MetricsAddr:    o.MetricsAddr,
		Profiles:       o.cfg.Profiles,
		InitialBackoff: o.cfg.PodInitialBackoff,
		MaxBackoff:     o.cfg.PodMaxBackoff,
		Parallelism:    o.cfg.EffectiveParallelism(),
		Policy:         o.policy,
		Features:       o.features,
		// After the health endpoints are served, so that probes answer
		// during the documented wait.
		WaitForAPIServer: func(ctx context.Context) error {
			return waitForAPIServer(ctx, restVersioner{client.Discovery().RESTClient()}, rc.Host, o.APIWaitAttempts, o.APIWaitInterval)
		},
	}
	if o.KubeVersion == "" {
		cfg.ServerFeatures = func(ctx context.Context) (profile.Features, error) {
			r, warning, err := kube.ServerRelease(ctx, client)
			if err != nil {
				return profile.Features{}, err
			}
			if warning != "" {
				klog.FromContext(ctx).Info("Warning: "+warning, "release", r.String())
			}
			klog.FromContext(ctx).V(1).Info("Deciding as the API server's kube-scheduler release", "release", r.String())
			f, _, err := profile.ParseFeatureGatesFor(r, o.FeatureGates)
			return f, err
		}
	}
	if o.Serving.Enabled() {
		if cfg.Serve, err = o.Serving.serveFunc(); err != nil {
			return err
		}
	}
	if le := o.conn.LeaderElection; le.LeaderElect {
		cfg.LeaderElection = &kube.LeaderElection{
			Namespace: le.ResourceNamespace, Name: le.ResourceName, Identity: o.Identity,
			LeaseDuration: le.LeaseDuration, RenewDeadline: le.RenewDeadline, RetryPeriod: le.RetryPeriod,
			ReleaseOnCancel: true,
		}
	}
	return kube.Run(ctx, cfg)
}
