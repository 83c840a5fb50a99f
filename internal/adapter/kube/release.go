package kube

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/kubernetes"

	"github.com/reprieve/reprieve/internal/engine/profile"
)

// ServerRelease reads the API server's version (discovery's /version) and
// returns the mirrored kube-scheduler release to decide as: the server's
// own minor release, or the nearest mirrored one with a warning saying so.
// The scheduler of a cluster runs the release of its control plane, which
// the API server's version names.
func ServerRelease(ctx context.Context, client kubernetes.Interface) (profile.Release, string, error) {
	body, err := client.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return 0, "", fmt.Errorf("reading the API server's version: %w", err)
	}
	var info version.Info
	if err := json.Unmarshal(body, &info); err != nil {
		return 0, "", fmt.Errorf("reading the API server's version: %w", err)
	}
	r, warning := profile.NearestRelease(info.GitVersion)
	return r, warning, nil
}
