package schedulercmd

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/klog/v2"
)

// Defaults of the wait for the API server at start: about a minute, as
// long as kube-scheduler's informers keep trying before a liveness probe
// would restart it.
const (
	defaultAPIWaitAttempts = 12
	defaultAPIWaitInterval = 5 * time.Second
)

// serverVersioner is the discovery call the wait makes.
type serverVersioner interface {
	ServerVersion() (*version.Info, error)
}

// waitForAPIServer asks the API server for its version until it answers,
// at most attempts times interval apart, logging every failure, so that a
// scheduler started against an unreachable server says so at once and
// exits after a known time instead of waiting silently for its caches.
func waitForAPIServer(ctx context.Context, d serverVersioner, host string, attempts int, interval time.Duration) error {
	logger := klog.FromContext(ctx)
	var err error
	for i := 1; i <= attempts; i++ {
		var info *version.Info
		if info, err = d.ServerVersion(); err == nil {
			logger.V(1).Info("API server reachable", "host", host, "version", info.GitVersion, "attempt", i)
			return nil
		}
		if i == attempts {
			break
		}
		logger.Error(err, "API server not reachable, retrying", "host", host, "attempt", i, "of", attempts, "retryIn", interval)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
	return fmt.Errorf("API server %s not reachable after %d attempts %s apart: %w", host, attempts, interval, err)
}
