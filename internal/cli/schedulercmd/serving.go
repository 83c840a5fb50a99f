package schedulercmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	apiserveroptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	netutils "k8s.io/utils/net"

	"github.com/reprieve/reprieve/internal/adapter/files"
	"github.com/reprieve/reprieve/internal/cli/clierr"
)

// DefaultSecurePort is kube-scheduler's secure port.
const DefaultSecurePort = 10259

// shutdownTimeout is how long the secure port drains requests on stop, as
// kube-scheduler's.
const shutdownTimeout = 5 * time.Second

// Flag names of the delegated kubeconfigs, k8s.io/apiserver's.
const (
	flagAuthnKubeconfig = "authentication-kubeconfig"
	flagAuthzKubeconfig = "authorization-kubeconfig"
)

// Serving are the secure port's flags, k8s.io/apiserver's delegating
// options with kube-scheduler's defaults: port 10259, a self-signed
// certificate when none is given; client certificates signed by
// --client-ca-file (else by the client-ca-file of the
// extension-apiserver-authentication ConfigMap in kube-system), bearer
// tokens checked with TokenReviews, request-header authentication as the
// ConfigMap configures it; the paths of --authorization-always-allow-paths
// (/healthz, /readyz, /livez) and the group system:masters allowed,
// anything else (/metrics) authorized with SubjectAccessReviews.
//
// One difference, for users running the scheduler out of a cluster: when
// --authentication-kubeconfig or --authorization-kubeconfig is not given,
// the scheduler's own kubeconfig is used (kube-scheduler uses only the
// in-cluster configuration, and without it refuses every token and every
// request that needs a SubjectAccessReview).
//
// Another, for the health endpoints: each request of the delegated
// authentication client is bounded (see boundRequests), so that the
// look-up of the ConfigMap, made before the port serves, cannot hold the
// health endpoints down behind an API server that never answers.
type Serving struct {
	Secure         *apiserveroptions.SecureServingOptions
	Authentication *apiserveroptions.DelegatingAuthenticationOptions
	Authorization  *apiserveroptions.DelegatingAuthorizationOptions

	// requestTimeout bounds the delegated authentication client's requests
	// that have no deadline and are not watches.
	requestTimeout time.Duration
}

// newServing returns kube-scheduler's secure serving defaults.
func newServing() *Serving {
	o := apiserveroptions.NewSecureServingOptions()
	o.BindPort = DefaultSecurePort
	// No certificate directory: a self-signed certificate is kept in
	// memory, the root filesystem may be read-only.
	o.ServerCert.CertDirectory = ""
	o.ServerCert.PairName = "reprieve-scheduler"
	authn := apiserveroptions.NewDelegatingAuthenticationOptions()
	authn.TolerateInClusterLookupFailure = true
	authn.RemoteKubeConfigFileOptional = true
	authz := apiserveroptions.NewDelegatingAuthorizationOptions()
	authz.RemoteKubeConfigFileOptional = true
	s := &Serving{Secure: o, Authentication: authn, Authorization: authz, requestTimeout: apiAttemptTimeout}
	authn.CustomRoundTripperFn = func(rt http.RoundTripper) http.RoundTripper { return boundRequests{rt, s.requestTimeout} }
	return s
}

// boundRequests bounds by timeout each request that is not a watch and
// has no deadline of its own. k8s.io/apiserver's delegated authentication
// client has none (TokenReviews carry their own): its look-up of the
// ConfigMap kube-system/extension-apiserver-authentication, made before
// the secure port serves, would otherwise wait as long as an API server
// that accepts connections and never answers; a look-up that times out
// fails as kube-scheduler's would (tolerated by default).
type boundRequests struct {
	rt      http.RoundTripper
	timeout time.Duration
}

func (b boundRequests) RoundTrip(req *http.Request) (*http.Response, error) {
	if _, ok := req.Context().Deadline(); ok || req.URL.Query().Get("watch") == "true" {
		return b.rt.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), b.timeout)
	resp, err := b.rt.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = cancelOnClose{resp.Body, cancel}
	return resp, nil
}

// cancelOnClose ends a request's context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	defer c.cancel()
	return c.ReadCloser.Close()
}

// AddFlags adds kube-scheduler's secure serving, authentication and
// authorization flags: --secure-port, --tls-cert-file, --client-ca-file,
// --authentication-kubeconfig, --requestheader-*,
// --authorization-always-allow-paths and the others.
func (s *Serving) AddFlags(fs *pflag.FlagSet) {
	s.Secure.AddFlags(fs)
	s.Authentication.AddFlags(fs)
	s.Authorization.AddFlags(fs)
	fs.Lookup(flagAuthnKubeconfig).Usage = "kubeconfig file pointing at the 'core' kubernetes server with enough rights to create " +
		"tokenreviews.authentication.k8s.io and to read the ConfigMap kube-system/extension-apiserver-authentication. " +
		"Unlike kube-scheduler, the default is the scheduler's own kubeconfig (--kubeconfig, else clientConnection.kubeconfig); " +
		"without one, the in-cluster configuration; without that either, all token requests are anonymous and no client CA is looked up in the cluster."
	fs.Lookup(flagAuthzKubeconfig).Usage = "kubeconfig file pointing at the 'core' kubernetes server with enough rights to create " +
		"subjectaccessreviews.authorization.k8s.io. " +
		"Unlike kube-scheduler, the default is the scheduler's own kubeconfig (--kubeconfig, else clientConnection.kubeconfig); " +
		"without one, the in-cluster configuration; without that either, all requests not skipped by authorization are forbidden."
}

// validate checks the flags as kube-scheduler does, and reads the files
// they name (the client CA bundles, the delegated kubeconfigs) so that an
// unusable one is refused before anything starts: a usage error, or
// clierr.ErrBadFile for a file.
func (s *Serving) validate() error {
	var errs []error
	errs = append(errs, s.Secure.Validate()...)
	errs = append(errs, s.Authentication.Validate()...)
	errs = append(errs, s.Authorization.Validate()...)
	if len(errs) > 0 {
		return clierr.Usagef("serving flags: %s", strings.ReplaceAll(errors.Join(errs...).Error(), "\n", "; "))
	}
	for _, ca := range []struct{ flag, path string }{
		{"--client-ca-file", s.Authentication.ClientCert.ClientCA},
		{"--requestheader-client-ca-file", s.Authentication.RequestHeader.ClientCAFile},
	} {
		if ca.path == "" {
			continue
		}
		if err := files.Check(ca.path, files.MaxSmall); err != nil {
			return fmt.Errorf("%w: %s: %w", clierr.ErrBadFile, ca.flag, err)
		}
		if _, err := dynamiccertificates.NewDynamicCAContentFromFile(ca.flag, ca.path); err != nil {
			return fmt.Errorf("%w: %s: %s", clierr.ErrBadFile, ca.flag, strings.ReplaceAll(err.Error(), "\n", " "))
		}
	}
	for _, kc := range []struct{ flag, path string }{
		{"--" + flagAuthnKubeconfig, s.Authentication.RemoteKubeConfigFile},
		{"--" + flagAuthzKubeconfig, s.Authorization.RemoteKubeConfigFile},
	} {
		if kc.path == "" {
			continue
		}
		if err := files.Check(kc.path, files.MaxSmall); err != nil {
			return fmt.Errorf("%w: %s: %w", clierr.ErrBadFile, kc.flag, err)
		}
		rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: kc.path}
		if _, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig(); err != nil {
			return fmt.Errorf("%w: %s: %s", clierr.ErrBadFile, kc.flag, strings.ReplaceAll(err.Error(), "\n", " "))
		}
	}
	return nil
}

// defaultKubeconfigs makes the scheduler's kubeconfig file (--kubeconfig
// or clientConnection.kubeconfig, "" for none) the delegated kubeconfig of
// authentication and authorization where none is given: the deliberate
// difference from kube-scheduler (see Serving).
func (s *Serving) defaultKubeconfigs(schedulerKubeconfig string) {
	if s.Authentication.RemoteKubeConfigFile == "" {
		s.Authentication.RemoteKubeConfigFile = schedulerKubeconfig
	}
	if s.Authorization.RemoteKubeConfigFile == "" {
		s.Authorization.RemoteKubeConfigFile = schedulerKubeconfig
	}
}

// Enabled reports whether secure serving is on (--secure-port not 0).
func (s *Serving) Enabled() bool { return s.Secure.BindPort > 0 || s.Secure.Listener != nil }

// serveFunc returns kube.Config.Serve for secure serving: it listens on the
// bind address, builds the delegated authenticator and authorizer as
// kube-scheduler does (k8s.io/apiserver's ApplyTo), and the returned
// function serves a handler behind them over TLS until its stop function
// is called. The client CA bundles (files and ConfigMap) are watched and
// reloaded while serving.
func (s *Serving) serveFunc() (func(http.Handler) (func(), error), error) {
	if err := s.Secure.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return nil, fmt.Errorf("creating a self-signed certificate: %w", err)
	}
	var info *server.SecureServingInfo
	if err := s.Secure.ApplyTo(&info); err != nil {
		return nil, fmt.Errorf("secure serving: %w", err)
	}
	var authn server.AuthenticationInfo
	var authz server.AuthorizationInfo
	if err := s.Authentication.ApplyTo(&authn, info, nil); err != nil {
		info.Listener.Close()
		return nil, fmt.Errorf("delegated authentication: %w", err)
	}
	if err := s.Authorization.ApplyTo(&authz); err != nil {
		info.Listener.Close()
		return nil, fmt.Errorf("delegated authorization: %w", err)
	}
	return func(h http.Handler) (func(), error) {
		stopCh := make(chan struct{})
		stopped, _, err := info.Serve(buildHandlerChain(h, authn.Authenticator, authz.Authorizer), shutdownTimeout, stopCh)
		if err != nil {
			close(stopCh)
			return nil, fmt.Errorf("secure serving on %s: %w", info.Listener.Addr(), err)
		}
		return func() {
			close(stopCh)
			<-stopped
		}, nil
	}, nil
}

// buildHandlerChain wraps h in the filters kube-scheduler's secure port
// has: authorization, authentication, request info, no caching, panic
// recovery.
func buildHandlerChain(h http.Handler, authn authenticator.Request, authz authorizer.Authorizer) http.Handler {
	resolver := &apirequest.RequestInfoFactory{}
	h = genericapifilters.WithAuthorization(h, authz, scheme.Codecs)
	h = genericapifilters.WithAuthentication(h, authn, genericapifilters.Unauthorized(scheme.Codecs), nil, nil)
	h = genericapifilters.WithRequestInfo(h, resolver)
	h = genericapifilters.WithCacheControl(h)
	h = genericfilters.WithPanicRecovery(h, resolver)
	return h
}
