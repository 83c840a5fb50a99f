package kube

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/reprieve/reprieve/internal/adapter/config"
)

func TestApplyClientConnection(t *testing.T) {
	base := &rest.Config{Host: "https://example:6443", BearerToken: "t", QPS: 5, Burst: 10}
	got := ApplyClientConnection(base, config.ClientConnection{
		QPS: 200, Burst: 400, ContentType: "application/json", AcceptContentTypes: "application/json",
	})
	type view struct {
		Host, Token, ContentType, Accept string
		QPS                              float32
		Burst                            int
		DisableCompression               bool
	}
	want := view{Host: "https://example:6443", Token: "t", ContentType: "application/json", Accept: "application/json", QPS: 200, Burst: 400, DisableCompression: true}
	if diff := cmp.Diff(want, view{got.Host, got.BearerToken, got.ContentType, got.AcceptContentTypes, got.QPS, got.Burst, got.DisableCompression}); diff != "" {
		t.Errorf("(-want,+got)\n%s", diff)
	}
	if base.QPS != 5 || base.ContentType != "" {
		t.Errorf("base config changed: %+v", base)
	}
}

// request is what a fake API server saw of one request.
type request struct{ Path, UserAgent, Accept, AcceptEncoding string }

func TestNewClientsSendKubeSchedulersHeaders(t *testing.T) {
	var mu sync.Mutex
	var seen []request
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, request{r.URL.Path, strings.SplitN(r.UserAgent(), "/", 2)[0], r.Header.Get("Accept"), r.Header.Get("Accept-Encoding")})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"PodList","apiVersion":"v1","items":[]}`))
	}))
	defer srv.Close()
	cfg := ApplyClientConnection(&rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, config.DefaultConnection().ClientConnection)
	clients, err := NewClients(cfg, "reprieve-scheduler")
	if err != nil {
		t.Fatal(err)
	}
	client, events, lease := clients.Scheduler, clients.Events, clients.LeaderElection
	ctx := context.Background()
	if _, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := events.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := lease.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	// Compression is off: no gzip is asked for. The events client keeps
	// client-go's default user agent.
	want := []request{
		{Path: "/api/v1/pods", UserAgent: "reprieve-scheduler", Accept: "application/vnd.kubernetes.protobuf, */*"},
		{Path: "/api/v1/pods", UserAgent: strings.SplitN(rest.DefaultKubernetesUserAgent(), "/", 2)[0], Accept: "application/vnd.kubernetes.protobuf, */*"},
		{Path: "/api/v1/pods", UserAgent: "reprieve-scheduler", Accept: "application/vnd.kubernetes.protobuf, */*"},
	}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("requests (-want,+got)\n%s", diff)
	}

	for name, c := range map[string]kubernetes.Interface{"scheduler": client, "events": events, "leader election": lease} {
		rl := c.CoreV1().RESTClient().GetRateLimiter()
		if rl == nil || rl.QPS() != 50 {
			t.Errorf("%s client's rate limiter = %v, want QPS 50", name, rl)
		}
	}
	limiters := map[string]any{}
	for name, c := range map[string]kubernetes.Interface{"scheduler": client, "events": events, "leader election": lease} {
		rl := c.CoreV1().RESTClient().GetRateLimiter()
		for other, o := range limiters {
			if o == rl {
				t.Errorf("the %s and %s clients share one rate limiter", name, other)
			}
		}
		limiters[name] = rl
	}
}
