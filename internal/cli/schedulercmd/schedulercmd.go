// Package schedulercmd is the `reprieve scheduler` command: reprieve as a
// secondary scheduler against a real API server.
package schedulercmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/reprieve/reprieve/internal/cli/clierr"
	"github.com/reprieve/reprieve/internal/cli/kubeflags"
	"github.com/reprieve/reprieve/pkg/config"
	"github.com/reprieve/reprieve/pkg/kube"
	"github.com/reprieve/reprieve/pkg/metrics"
	"github.com/reprieve/reprieve/pkg/preemption"
	"github.com/reprieve/reprieve/pkg/scheduler"
)

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
	f.StringVar(&o.ConfigFile, "config", "", "KubeSchedulerConfiguration file (scheduler name, DefaultPreemption args)")
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
	o.cfg = config.Default()
	if o.ConfigFile != "" {
		c, err := config.Load(o.ConfigFile)
		if err != nil {
			return fmt.Errorf("%w: %v", clierr.ErrInvalidConfig, err)
		}
		o.cfg = c
	}
	if o.SchedulerName == "" {
		o.SchedulerName = o.cfg.SchedulerName
	}
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
	logger := klog.FromContext(ctx)
	client, err := o.Kube.Client(true, "reprieve-scheduler")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	if err := broadcaster.StartRecordingToSinkWithContext(ctx); err != nil {
		return err
	}
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme.Scheme, o.SchedulerName)

	reg := prometheus.NewRegistry()
	var sched *scheduler.Scheduler
	m := metrics.New(reg, o.SchedulerName, func() int {
		if sched == nil {
			return 0
		}
		return sched.Pending()
	})
	sched = scheduler.New(kube.NewCluster(client, recorder), clock.RealClock{}, scheduler.Options{
		SchedulerName: o.SchedulerName,
		Seed:          uint64(time.Now().UnixNano()),
		Observer:      m,
		Preemption: preemption.Options{
			MinCandidateNodesPercentage: o.cfg.MinCandidateNodesPercentage,
			MinCandidateNodesAbsolute:   o.cfg.MinCandidateNodesAbsolute,
		},
	})

	var ready, leading atomic.Bool
	if o.MetricsAddr != "" {
		srv, err := serve(o.MetricsAddr, reg, &ready)
		if err != nil {
			return err
		}
		defer func() {
			shutdownCtx, c := context.WithTimeout(context.Background(), 5*time.Second)
			defer c()
			_ = srv.Shutdown(shutdownCtx)
		}()
	}

	if _, err := kube.Feed(ctx, client, sched); err != nil {
		return err
	}
	ready.Store(true)
	logger.Info("Caches synced", "schedulerName", o.SchedulerName)

	if !o.LeaderElect {
		sched.Run(ctx)
		return nil
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1ObjectMeta(o.LeaseNS, o.LeaseName),
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: o.Identity},
	}
	lostLease := errors.New("leader election lost")
	var result error
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   o.LeaseDuration,
		RenewDeadline:   o.RenewDeadline,
		RetryPeriod:     o.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            o.SchedulerName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				leading.Store(true)
				logger.Info("Leading: scheduling", "identity", o.Identity)
				sched.Run(ctx)
			},
			OnStoppedLeading: func() {
				if leading.Load() && ctx.Err() == nil {
					result = lostLease
				}
				cancel()
			},
			OnNewLeader: func(id string) {
				if id != o.Identity {
					logger.Info("Standing by", "leader", id)
				}
			},
		},
	})
	return result
}

func serve(addr string, reg *prometheus.Registry, ready *atomic.Bool) (*http.Server, error) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "informer caches not synced", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return srv, nil
}

func metav1ObjectMeta(ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name}
}
