package schedulercmd

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/client-go/rest"

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

// apiAttemptTimeout bounds one try of the API server: a server that
// accepts connections and never answers is a failed try too.
const apiAttemptTimeout = 10 * time.Second

// serverVersioner is the discovery call the wait makes; it returns when
// ctx ends.
type serverVersioner interface {
	ServerVersion(ctx context.Context) (*version.Info, error)
}

// restVersioner asks an API server's /version through a REST client.
type restVersioner struct{ client rest.Interface }

func (v restVersioner) ServerVersion(ctx context.Context) (*version.Info, error) {
	var info version.Info
	body, err := v.client.Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(body, &info); err != nil {
		return nil, fmt.Errorf("reading /version: %w", err)
	}
	return &info, nil
}

// waitForAPIServer asks the API server for its version until it answers,
// at most attempts times interval apart, each try bounded by
// apiAttemptTimeout and logged when it fails, so that a scheduler started
// against an unreachable or hung server says so at once and exits after a
// known time instead of waiting silently for its caches. It returns at
// once when ctx ends (SIGTERM).
func waitForAPIServer(ctx context.Context, d serverVersioner, host string, attempts int, interval time.Duration) error {
	logger := klog.FromContext(ctx)
	var err error
	for i := 1; i <= attempts; i++ {
		var info *version.Info
		attemptCtx, cancel := context.WithTimeout(ctx, apiAttemptTimeout)
		info, err = d.ServerVersion(attemptCtx)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err == nil {
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
