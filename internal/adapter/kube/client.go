package kube

import (
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/reprieve/reprieve/internal/adapter/config"
)

// ApplyClientConnection returns a copy of base with a clientConnection's
// settings, as kube-scheduler's createKubeConfig sets them: content types,
// QPS, burst, and compression off (the scheduler mostly talks to an API
// server close by, where gzip costs more CPU than it saves).
func ApplyClientConnection(base *rest.Config, cc config.ClientConnection) *rest.Config {
	cfg := rest.CopyConfig(base)
	cfg.DisableCompression = true
	cfg.AcceptContentTypes = cc.AcceptContentTypes
	cfg.ContentType = cc.ContentType
	cfg.QPS = cc.QPS
	cfg.Burst = int(cc.Burst)
	return cfg
}

// Clients are the scheduler's API clients, as kube-scheduler makes them
// (createClients and its leader-election client): each has its own rate
// limiter, so that neither events nor a backlog of bindings can delay the
// others — above all the lease renewal, which, queued behind thousands of
// bindings, would miss its deadline and cost the scheduler its lease.
type Clients struct {
	// Scheduler makes the scheduler's calls (watches, bindings,
	// preemptions, status patches); it serves the binding cycle's requests
	// first (WithBindingsFirst).
	Scheduler kubernetes.Interface
	// Events records events.
	Events kubernetes.Interface
	// LeaderElection renews the lease.
	LeaderElection kubernetes.Interface
}

// NewClients returns the scheduler's clients for cfg; the scheduler's has
// userAgent, the leader election's userAgent + "/leader-election" (as
// kube-scheduler's rest.AddUserAgent), the events' client-go's default.
func NewClients(cfg *rest.Config, userAgent string) (Clients, error) {
	withAgent := rest.CopyConfig(WithBindingsFirst(cfg))
	withAgent.UserAgent = userAgent
	c, err := kubernetes.NewForConfig(withAgent)
	if err != nil {
		return Clients{}, fmt.Errorf("scheduler client: %w", err)
	}
	e, err := kubernetes.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return Clients{}, fmt.Errorf("events client: %w", err)
	}
	leCfg := rest.CopyConfig(cfg)
	leCfg.UserAgent = userAgent + "/leader-election"
	le, err := kubernetes.NewForConfig(leCfg)
	if err != nil {
		return Clients{}, fmt.Errorf("leader election client: %w", err)
	}
	return Clients{Scheduler: c, Events: e, LeaderElection: le}, nil
}
