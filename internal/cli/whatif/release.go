package whatif

import (
	"context"
	"fmt"

	"k8s.io/client-go/kubernetes"

	"github.com/reprieve/reprieve/internal/adapter/kube"
	"github.com/reprieve/reprieve/internal/cli/clierr"
	"github.com/reprieve/reprieve/internal/engine/profile"
)

// parseFeatureGates reads --feature-gates for o.release, warning about
// gates accepted but ignored.
func (o *Options) parseFeatureGates() error {
	features, warnings, err := profile.ParseFeatureGatesFor(o.release, o.FeatureGates)
	if err != nil {
		return clierr.Usagef("--feature-gates: %v", err)
	}
	for _, w := range warnings {
		fmt.Fprintln(o.errOut, "warning:", w)
	}
	o.features = features
	return nil
}

// useServerRelease decides as the release of the API server client talks
// to (the nearest mirrored one, with a warning, when it is not mirrored).
func (o *Options) useServerRelease(ctx context.Context, client kubernetes.Interface) error {
	r, warning, err := kube.ServerRelease(ctx, client)
	if err != nil {
		return err
	}
	if warning != "" {
		fmt.Fprintln(o.errOut, "warning:", warning)
	}
	o.release = r
	return o.parseFeatureGates()
}
