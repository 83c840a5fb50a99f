package schedulercmd

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
)

// flakyServer fails its first failures calls.
type flakyServer struct {
	failures, calls int
}

func (f *flakyServer) ServerVersion(context.Context) (*version.Info, error) {
	f.calls++
	if f.calls <= f.failures {
		return nil, errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
	}
	return &version.Info{GitVersion: "v1.37.2"}, nil
}

func TestWaitForAPIServer(t *testing.T) {
	tests := map[string]struct {
		failures, attempts int
		wantCalls          int
		wantLogged         int
		wantErr            string
	}{
		"answers at once":       {failures: 0, attempts: 3, wantCalls: 1},
		"answers at the third":  {failures: 2, attempts: 3, wantCalls: 3, wantLogged: 2},
		"never answers":         {failures: 10, attempts: 3, wantCalls: 3, wantLogged: 2, wantErr: "API server https://k:6443 not reachable after 3 attempts 1ms apart: dial tcp 127.0.0.1:6443: connect: connection refused"},
		"one attempt, no retry": {failures: 10, attempts: 1, wantCalls: 1, wantErr: "not reachable after 1 attempts"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			ctx := klog.NewContext(context.Background(), textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(&buf))))
			f := &flakyServer{failures: tc.failures}
			err := waitForAPIServer(ctx, f, "https://k:6443", tc.attempts, time.Millisecond)
			if f.calls != tc.wantCalls {
				t.Errorf("calls = %d, want %d", f.calls, tc.wantCalls)
			}
			if got := strings.Count(buf.String(), "API server not reachable, retrying"); got != tc.wantLogged {
				t.Errorf("logged %d retries, want %d:\n%s", got, tc.wantLogged, buf.String())
			}
			if tc.wantLogged > 0 && !strings.Contains(buf.String(), `err="dial tcp 127.0.0.1:6443: connect: connection refused"`) {
				t.Errorf("the error is not logged:\n%s", buf.String())
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("err = %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestWaitForAPIServerCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := waitForAPIServer(ctx, &flakyServer{failures: 5}, "h", 5, time.Hour)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// hungServer accepts the call and answers only when its context ends.
type hungServer struct{ calls int }

func (h *hungServer) ServerVersion(ctx context.Context) (*version.Info, error) {
	h.calls++
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestWaitForHungAPIServer: a cancelled context (SIGTERM) ends a try that
// hangs at once, rather than after the server answers.
func TestWaitForHungAPIServer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	h := &hungServer{}
	go func() { done <- waitForAPIServer(ctx, h, "h", 3, time.Millisecond) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the wait did not end with its context")
	}
}
