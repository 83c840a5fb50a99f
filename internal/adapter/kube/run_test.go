package kube

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
)

// TestHealthServedWhileWaiting: /healthz and /livez answer from the start,
// while the API server is still waited for; /readyz waits for the caches.
// An error of the wait ends Run with it.
func TestHealthServedWhileWaiting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	waiting := make(chan struct{})
	giveUp := errors.New("API server not reachable after 12 attempts")
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), Config{
			Client:        fake.NewClientset(),
			SchedulerName: "reprieve",
			MetricsAddr:   addr,
			WaitForAPIServer: func(ctx context.Context) error {
				<-waiting
				return giveUp
			},
		})
	}()
	get := func(path string) (int, string) {
		var last error
		for range 100 {
			resp, err := http.Get("http://" + addr + path)
			if err != nil {
				last = err
				time.Sleep(20 * time.Millisecond)
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			return resp.StatusCode, string(b)
		}
		t.Fatalf("GET %s: %v", path, last)
		return 0, ""
	}
	for _, path := range []string{"/healthz", "/livez"} {
		if code, body := get(path); code != http.StatusOK || body != "ok" {
			t.Errorf("GET %s while waiting = %d %q, want 200 ok", path, code, body)
		}
	}
	if code, _ := get("/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("GET /readyz while waiting = %d, want 503", code)
	}
	close(waiting)
	select {
	case err := <-done:
		if !errors.Is(err, giveUp) {
			t.Errorf("Run = %v, want the wait's error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not end with the wait's error")
	}
}
