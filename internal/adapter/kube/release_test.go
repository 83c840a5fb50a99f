package kube

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/reprieve/reprieve/internal/engine/profile"
)

// TestServerRelease: the release is the API server's /version, the
// nearest mirrored one with a warning when it runs another, and the
// default with a warning when its version names none.
func TestServerRelease(t *testing.T) {
	tests := map[string]struct {
		gitVersion  string
		want        profile.Release
		wantWarning bool
	}{
		"1.37":      {gitVersion: "v1.37.2", want: profile.Release137},
		"1.36 eks":  {gitVersion: "v1.36.5-eks-1a2b3c", want: profile.Release136},
		"too old":   {gitVersion: "v1.31.0", want: profile.Release136, wantWarning: true},
		"unstamped": {gitVersion: "v0.0.0-master+$Format:%H$", want: profile.DefaultRelease, wantWarning: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/version" {
					http.NotFound(w, r)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"major":"1","gitVersion":"` + tc.gitVersion + `"}`))
			}))
			defer srv.Close()
			client, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			got, warning, err := ServerRelease(context.Background(), client)
			if err != nil || got != tc.want || (warning != "") != tc.wantWarning {
				t.Errorf("ServerRelease = %v, %q, %v; want %v, warning %v", got, warning, err, tc.want, tc.wantWarning)
			}
		})
	}
}
