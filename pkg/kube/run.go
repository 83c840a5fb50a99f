package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/reprieve/reprieve/pkg/config"
	"github.com/reprieve/reprieve/pkg/metrics"
	"github.com/reprieve/reprieve/pkg/preemption"
	"github.com/reprieve/reprieve/pkg/scheduler"
)

// ErrLeadershipLost is returned by Run when another replica took the lease.
var ErrLeadershipLost = errors.New("leader election lost")

// LeaderElection configures leader election on a coordination.k8s.io Lease.
type LeaderElection struct {
	Namespace, Name string
	Identity        string
	LeaseDuration   time.Duration
	RenewDeadline   time.Duration
	RetryPeriod     time.Duration
	// ReleaseOnCancel gives the lease up when Run's context ends, so that
	// another replica takes over at once (graceful shutdown).
	ReleaseOnCancel bool
}

// Config configures Run.
type Config struct {
	Client        kubernetes.Interface
	SchedulerName string
	Preemption    preemption.Options
	// Profiles, when set, are the scheduler's profiles (see
	// scheduler.Options.Profiles); SchedulerName then names its events and
	// metrics.
	Profiles []config.Profile
	// InitialBackoff and MaxBackoff are the pod backoff; zero means the
	// defaults.
	InitialBackoff, MaxBackoff time.Duration
	// MetricsAddr serves /metrics, /healthz and /readyz; "" disables.
	MetricsAddr string
	// Registry receives the metrics; nil makes a new one.
	Registry *prometheus.Registry
	// LeaderElection, when set, schedules only while holding the lease.
	LeaderElection *LeaderElection
	// Seed seeds the scheduler's random choices; 0 uses the clock.
	Seed uint64
}

// Run runs a scheduler against the API server until ctx ends (nil) or the
// lease is lost (ErrLeadershipLost). Informers start before the election so
// that a standby replica has a warm cache.
func Run(ctx context.Context, cfg Config) error {
	logger := klog.FromContext(ctx)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: cfg.Client.EventsV1()})
	if err := broadcaster.StartRecordingToSinkWithContext(ctx); err != nil {
		return err
	}
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme.Scheme, cfg.SchedulerName)

	reg := cfg.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	seed := cfg.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	var pending atomic.Pointer[scheduler.Scheduler]
	m := metrics.New(reg, cfg.SchedulerName, func() int {
		if s := pending.Load(); s != nil {
			return s.Pending()
		}
		return 0
	})
	opts := scheduler.Options{
		SchedulerName: cfg.SchedulerName,
		Seed:          seed,
		Observer:      m,
		Preemption:    cfg.Preemption,
		Async:         true,
	}
	opts.Profiles, opts.InitialBackoff, opts.MaxBackoff = cfg.Profiles, cfg.InitialBackoff, cfg.MaxBackoff
	sched := scheduler.New(NewCluster(cfg.Client, recorder), clock.RealClock{}, opts)
	pending.Store(sched)

	var ready atomic.Bool
	if cfg.MetricsAddr != "" {
		srv, err := serve(cfg.MetricsAddr, reg, &ready)
		if err != nil {
			return err
		}
		defer func() {
			shutdownCtx, c := context.WithTimeout(context.Background(), 5*time.Second)
			defer c()
			_ = srv.Shutdown(shutdownCtx)
		}()
	}
	if _, err := Feed(ctx, cfg.Client, sched); err != nil {
		return err
	}
	ready.Store(true)
	logger.Info("Caches synced", "schedulerName", cfg.SchedulerName)

	le := cfg.LeaderElection
	if le == nil {
		sched.Run(ctx)
		return nil
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: le.Namespace, Name: le.Name},
		Client:     cfg.Client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: le.Identity},
	}
	var leading atomic.Bool
	var result error
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   le.LeaseDuration,
		RenewDeadline:   le.RenewDeadline,
		RetryPeriod:     le.RetryPeriod,
		ReleaseOnCancel: le.ReleaseOnCancel,
		Name:            cfg.SchedulerName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				leading.Store(true)
				logger.Info("Leading: scheduling", "identity", le.Identity)
				sched.Run(ctx)
			},
			OnStoppedLeading: func() {
				if leading.Load() && ctx.Err() == nil {
					result = ErrLeadershipLost
				}
				cancel()
			},
			OnNewLeader: func(id string) {
				if id != le.Identity {
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
		return nil, fmt.Errorf("metrics address: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return srv, nil
}
