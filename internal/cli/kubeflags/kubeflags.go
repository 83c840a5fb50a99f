// Package kubeflags holds the connection flags: kubectl's for the commands
// that read a cluster (--kubeconfig, --context, --namespace, --server,
// --token, --as, --request-timeout, ...; client-go's clientcmd overrides, as
// kubectl's own flags are built), kube-scheduler's for the scheduler
// (--kubeconfig, --master); and turns them into a client, honouring the
// KUBECONFIG variable and the current context like kubectl does.
package kubeflags

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/reprieve/reprieve/internal/adapter/config"
	"github.com/reprieve/reprieve/internal/adapter/files"
	"github.com/reprieve/reprieve/internal/cli/clierr"
)

// Flags are the connection flags.
type Flags struct {
	Kubeconfig string
	// Overrides are kubectl's flags over the kubeconfig: the context,
	// namespace, server, credentials, impersonation and request timeout.
	Overrides clientcmd.ConfigOverrides
}

// AddTo registers kubectl's connection flags, namespace describing what
// --namespace does for the command.
func (f *Flags) AddTo(fs *pflag.FlagSet, namespace string) {
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "path to a kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	names := clientcmd.RecommendedConfigOverrideFlags("")
	names.ContextOverrideFlags.Namespace.Description = namespace
	clientcmd.BindOverrideFlags(&f.Overrides, fs, names)
}

// AddSchedulerTo registers kube-scheduler's connection flags: --kubeconfig
// and --master (the API server's address, over the kubeconfig's).
func (f *Flags) AddSchedulerTo(fs *pflag.FlagSet) {
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "path to a kubeconfig file with authorization and master location information (default: in-cluster, else $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&f.Overrides.ClusterInfo.Server, "master", "", "the address of the Kubernetes API server (overrides any value in kubeconfig)")
}

// Context is --context.
func (f *Flags) Context() string { return f.Overrides.CurrentContext }

// Namespace is --namespace.
func (f *Flags) Namespace() string { return f.Overrides.Context.Namespace }

// Live reports whether a flag asks for a live cluster: a kubeconfig, a
// context or a server.
func (f *Flags) Live() bool {
	return f.Kubeconfig != "" || f.Overrides.CurrentContext != "" || f.Overrides.ClusterInfo.Server != ""
}

func (f *Flags) clientConfig() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if f.Kubeconfig != "" {
		rules.ExplicitPath = f.Kubeconfig
	}
	overrides := f.Overrides
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &overrides)
}

// RESTConfig returns the client configuration: from the kubeconfig when one
// is found (or given), else in-cluster when inCluster is allowed.
func (f *Flags) RESTConfig(inCluster bool) (*rest.Config, error) {
	if inCluster && !f.Live() {
		if cfg, err := rest.InClusterConfig(); err == nil {
			return cfg, nil
		}
	}
	if err := f.checkKubeconfigs(); err != nil {
		return nil, err
	}
	cfg, err := f.clientConfig().ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return cfg, nil
}

// checkKubeconfigs refuses, before client-go reads them whole, the
// kubeconfig files that are not regular files of a sane size: --kubeconfig
// (which must exist), else those of $KUBECONFIG that exist.
func (f *Flags) checkKubeconfigs() error {
	if f.Kubeconfig != "" {
		if err := files.Check(f.Kubeconfig, files.MaxSmall); err != nil {
			return fmt.Errorf("%w: --kubeconfig: %w", clierr.ErrBadFile, err)
		}
		return nil
	}
	for _, p := range clientcmd.NewDefaultClientConfigLoadingRules().Precedence {
		if _, err := os.Stat(p); err != nil {
			continue // missing files of $KUBECONFIG are skipped, as by client-go
		}
		if err := files.Check(p, files.MaxSmall); err != nil {
			return fmt.Errorf("%w: %w", clierr.ErrBadFile, err)
		}
	}
	return nil
}

// ReadClient returns a clientset for reading a cluster as kubectl does:
// protobuf where the server speaks it (JSON otherwise), and kubectl's
// client rate limits (QPS 50, burst 300), so that a paged list of a big
// cluster is not throttled.
func (f *Flags) ReadClient(userAgent string) (kubernetes.Interface, error) {
	cfg, err := f.RESTConfig(false)
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = userAgent
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 300
	}
	return kubernetes.NewForConfig(cfg)
}

// DefaultNamespace returns --namespace, else the context's namespace, else "default".
func (f *Flags) DefaultNamespace() string {
	if ns := f.Namespace(); ns != "" {
		return ns
	}
	ns, _, err := f.clientConfig().Namespace()
	if err != nil || ns == "" {
		return "default"
	}
	return ns
}

// APIFlags are kube-scheduler's client flags (--kube-api-qps,
// --kube-api-burst, --kube-api-content-type), with its defaults.
type APIFlags struct {
	QPS         float32
	Burst       int32
	ContentType string
}

// Names of the API flags.
const (
	FlagQPS         = "kube-api-qps"
	FlagBurst       = "kube-api-burst"
	FlagContentType = "kube-api-content-type"
)

// AddTo registers the flags.
func (a *APIFlags) AddTo(fs *pflag.FlagSet) {
	fs.Float32Var(&a.QPS, FlagQPS, config.DefaultQPS, "QPS to use while talking with the API server; ignored when --config is given (set clientConnection.qps), as kube-scheduler does")
	fs.Int32Var(&a.Burst, FlagBurst, config.DefaultBurst, "burst to use while talking with the API server; ignored when --config is given (set clientConnection.burst), as kube-scheduler does")
	fs.StringVar(&a.ContentType, FlagContentType, config.DefaultContentType, "content type of requests sent to the API server; ignored when --config is given (set clientConnection.contentType), as kube-scheduler does")
}

// ApplyTo sets the flags given on the command line in cc, as kube-scheduler
// applies its deprecated client flags when it runs without --config.
func (a *APIFlags) ApplyTo(fs *pflag.FlagSet, cc *config.ClientConnection) {
	SetIfChanged(fs, FlagQPS, &cc.QPS, a.QPS)
	SetIfChanged(fs, FlagBurst, &cc.Burst, a.Burst)
	SetIfChanged(fs, FlagContentType, &cc.ContentType, a.ContentType)
}

// SetIfChanged sets *dst to the flag's value when the flag name was given
// on the command line: a flag overrides the configuration only then.
func SetIfChanged[T any](fs *pflag.FlagSet, name string, dst *T, value T) {
	if fs.Changed(name) {
		*dst = value
	}
}

// Changed lists the API flags given on the command line.
func (a *APIFlags) Changed(fs *pflag.FlagSet) []string {
	var out []string
	for _, n := range []string{FlagQPS, FlagBurst, FlagContentType} {
		if fs.Changed(n) {
			out = append(out, "--"+n)
		}
	}
	return out
}
