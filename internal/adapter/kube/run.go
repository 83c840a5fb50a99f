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
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/reprieve/reprieve/internal/adapter/metrics"
	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/scheduler"
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
	// Client makes the scheduler's calls: watches, bindings, status
	// patches, deletes, the lease.
	Client kubernetes.Interface
	// EventClient records events, with its own rate limiter as
	// kube-scheduler's event client (see NewClients); nil uses Client.
	EventClient kubernetes.Interface
	// LeaseClient renews the lease, with its own rate limiter (see
	// NewClients); nil uses Client, whose backlog can then cost the lease.
	LeaseClient   kubernetes.Interface
	SchedulerName string
	// Features are the feature gates that change preemption; Policy
	// chooses its victims (the zero values are upstream's).
	Features profile.Features
	Policy   profile.Policy
	// Parallelism bounds the goroutines of a scheduling cycle; 0 means
	// GOMAXPROCS.
	Parallelism int
	// Profiles, when set, are the scheduler's profiles (see
	// scheduler.Options.Profiles); SchedulerName then names its events and
	// metrics.
	Profiles []profile.Profile
	// InitialBackoff and MaxBackoff are the pod backoff; zero means the
	// defaults.
	InitialBackoff, MaxBackoff time.Duration
	// MetricsAddr serves /metrics, /healthz, /readyz and /livez over plain
	// HTTP, unauthenticated; "" disables.
	MetricsAddr string
	// Serve, when set, serves the same handler otherwise (kube-scheduler's
	// secure serving); the returned func stops it.
	Serve func(h http.Handler) (stop func(), err error)
	// Registry receives the metrics; nil makes a new one.
	Registry *prometheus.Registry
	// LeaderElection, when set, schedules only while holding the lease.
	LeaderElection *LeaderElection
	// Seed seeds the scheduler's random choices; 0 uses the clock.
	Seed uint64
	// WaitForAPIServer, when set, is called once the health endpoints are
	// served and before the informers start: it returns when the API
	// server answers, or the error that ends Run.
	WaitForAPIServer func(ctx context.Context) error
	// ServerFeatures, when set, is called after WaitForAPIServer and its
	// result replaces Features: the features for the API server's release
	// (ServerRelease), when no release was given.
	ServerFeatures func(ctx context.Context) (profile.Features, error)
}

// Run runs a scheduler against the API server until ctx ends (nil) or the
// lease is lost (ErrLeadershipLost). Informers start before the election so
// that a standby replica has a warm cache.
func Run(ctx context.Context, cfg Config) error {
	logger := klog.FromContext(ctx)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	reg := cfg.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	// Health first: the probes answer while the API server is waited for.
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
	if cfg.Serve != nil {
		stop, err := cfg.Serve(handler(reg, &ready))
		if err != nil {
			return err
		}
		defer stop()
	}
	if cfg.WaitForAPIServer != nil {
		if err := cfg.WaitForAPIServer(ctx); err != nil {
			return err
		}
	}
	if cfg.ServerFeatures != nil {
		f, err := cfg.ServerFeatures(ctx)
		if err != nil {
			return err
		}
		cfg.Features = f
	}

	// Events go through upstream's broadcaster adapter with its settings:
	// events.k8s.io/v1 when the server serves it, a queue of 1,000 events
	// dropped when full, series for repeated events.
	eventClient := cfg.EventClient
	if eventClient == nil {
		eventClient = cfg.Client
	}
	broadcaster := events.NewEventBroadcasterAdapterWithContext(ctx, eventClient)
	broadcaster.StartRecordingToSink(ctx.Done())
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(cfg.SchedulerName)

	seed := cfg.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	var pending atomic.Pointer[scheduler.Live]
	m := metrics.NewWithOptions(reg, cfg.SchedulerName, metrics.Options{
		Pending: func() scheduler.Counts {
			if s := pending.Load(); s != nil {
				return s.QueueCounts()
			}
			return scheduler.Counts{}
		},
		Queued: func() []scheduler.QueuedPodState {
			if s := pending.Load(); s != nil {
				return s.QueuedPods()
			}
			return nil
		},
	})
	sched := scheduler.NewLive(NewCluster(cfg.Client, recorder), clock.RealClock{}, scheduler.Options{
		SchedulerName:  cfg.SchedulerName,
		Seed:           seed,
		Observer:       m,
		Features:       cfg.Features,
		Policy:         cfg.Policy,
		Parallelism:    cfg.Parallelism,
		Profiles:       cfg.Profiles,
		InitialBackoff: cfg.InitialBackoff,
		MaxBackoff:     cfg.MaxBackoff,
	})
	pending.Store(sched)

	if _, err := Feed(ctx, cfg.Client, sched, cfg.Features); err != nil {
		return err
	}
	ready.Store(true)
	logger.Info("Caches synced", "schedulerName", cfg.SchedulerName)

	if cfg.LeaderElection == nil {
		sched.Run(ctx)
		return nil
	}
	leaseClient := cfg.LeaseClient
	if leaseClient == nil {
		leaseClient = cfg.Client
	}
	return runElected(ctx, cancel, leaseClient, cfg.LeaderElection, cfg.SchedulerName, sched)
}

// runElected runs sched while it holds the lease of le (through client),
// standing by while another instance does; losing the lease cancels ctx (cancel) and returns
// ErrLeadershipLost.
func runElected(ctx context.Context, cancel context.CancelFunc, client kubernetes.Interface, le *LeaderElection, name string, sched *scheduler.Live) error {
	logger := klog.FromContext(ctx)
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: le.Namespace, Name: le.Name},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: le.Identity},
	}
	var leading atomic.Bool
	var result error
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   le.LeaseDuration,
		RenewDeadline:   le.RenewDeadline,
		RetryPeriod:     le.RetryPeriod,
		ReleaseOnCancel: le.ReleaseOnCancel,
		Name:            name,
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
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	elector.Run(ctx)
	return result
}

func serve(addr string, reg *prometheus.Registry, ready *atomic.Bool) (*http.Server, error) {
	mux := handler(reg, ready)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics address: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return srv, nil
}

// handler serves /metrics from reg, /healthz and /livez, and /readyz once
// ready is set.
func handler(reg *prometheus.Registry, ready *atomic.Bool) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	ok := func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }
	mux.HandleFunc("/healthz", ok)
	mux.HandleFunc("/livez", ok)
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "informer caches not synced", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	return mux
}
