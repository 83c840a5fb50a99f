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

// NewClients returns the scheduler's client, with userAgent, and a second
// client for events, as kube-scheduler's createClients does: each has its
// own rate limiter, so that events never delay bindings or preemptions; the
// scheduler's serves the binding cycle's requests first (WithBindingsFirst).
func NewClients(cfg *rest.Config, userAgent string) (client, events kubernetes.Interface, err error) {
	withAgent := rest.CopyConfig(WithBindingsFirst(cfg))
	withAgent.UserAgent = userAgent
	c, err := kubernetes.NewForConfig(withAgent)
	if err != nil {
		return nil, nil, fmt.Errorf("scheduler client: %w", err)
	}
	e, err := kubernetes.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return nil, nil, fmt.Errorf("events client: %w", err)
	}
	return c, e, nil
}
