package schedulercmd

import (
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/authorization/path"
	"k8s.io/apiserver/pkg/authorization/union"
	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/server"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	apiserveroptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	netutils "k8s.io/utils/net"
)

// DefaultSecurePort is kube-scheduler's secure port.
const DefaultSecurePort = 10259

// Delegated authentication and authorization settings, kube-scheduler's
// defaults (k8s.io/apiserver's delegating options).
const (
	tokenReviewCacheTTL = 10 * time.Second
	tokenReviewTimeout  = 10 * time.Second
	authzAllowCacheTTL  = 10 * time.Second
	authzDenyCacheTTL   = 10 * time.Second
	shutdownTimeout     = 5 * time.Second
)

// alwaysAllowPaths are served to anyone, anonymous requests included, as
// kube-scheduler's; everything else (/metrics) needs a SubjectAccessReview.
var alwaysAllowPaths = []string{"/healthz", "/readyz", "/livez"}

// alwaysAllowGroups skip the SubjectAccessReview, as kube-scheduler's.
var alwaysAllowGroups = []string{"system:masters"}

// Serving are the secure serving flags, k8s.io/apiserver's, with
// kube-scheduler's defaults: port 10259, a self-signed certificate when
// none is given, and the API server deciding who may read /metrics.
type Serving struct {
	Secure *apiserveroptions.SecureServingOptions
}

// newServing returns kube-scheduler's secure serving defaults.
func newServing() *Serving {
	o := apiserveroptions.NewSecureServingOptions()
	o.BindPort = DefaultSecurePort
	// No certificate directory: a self-signed certificate is kept in
	// memory, the root filesystem may be read-only.
	o.ServerCert.CertDirectory = ""
	o.ServerCert.PairName = "reprieve-scheduler"
	return &Serving{Secure: o}
}

// AddFlags adds --bind-address, --secure-port, --tls-cert-file and the
// other serving flags.
func (s *Serving) AddFlags(fs *pflag.FlagSet) {
	s.Secure.AddFlags(fs)
}

// validate checks the flags.
func (s *Serving) validate() error {
	if errs := s.Secure.Validate(); len(errs) > 0 {
		return fmt.Errorf("%v", errs[0])
	}
	return nil
}

// Enabled reports whether secure serving is on (--secure-port not 0).
func (s *Serving) Enabled() bool { return s.Secure.BindPort > 0 }

// serveFunc returns kube.Config.Serve for secure serving: TLS on the bind
// address, bearer tokens checked with TokenReviews and requests authorized
// with SubjectAccessReviews through client, as kube-scheduler delegates
// both to its API server.
func (s *Serving) serveFunc(client kubernetes.Interface) (func(http.Handler) (func(), error), error) {
	if err := s.Secure.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return nil, fmt.Errorf("creating a self-signed certificate: %w", err)
	}
	var info *server.SecureServingInfo
	if err := s.Secure.ApplyTo(&info); err != nil {
		return nil, fmt.Errorf("secure serving: %w", err)
	}
	authn, authz, err := delegated(client)
	if err != nil {
		return nil, err
	}
	return func(h http.Handler) (func(), error) {
		stopCh := make(chan struct{})
		stopped, _, err := info.Serve(buildHandlerChain(h, authn, authz), shutdownTimeout, stopCh)
		if err != nil {
			return nil, fmt.Errorf("secure serving on %s: %w", info.Listener.Addr(), err)
		}
		return func() {
			close(stopCh)
			<-stopped
		}, nil
	}, nil
}

// delegated returns the authenticator and authorizer of the secure port:
// anonymous requests allowed to authenticate (the paths always allowed
// need no token), bearer tokens checked by TokenReview; system:masters and
// alwaysAllowPaths allowed, anything else by SubjectAccessReview.
func delegated(client kubernetes.Interface) (authenticator.Request, authorizer.Authorizer, error) {
	authn, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:                &apiserver.AnonymousAuthConfig{Enabled: true},
		TokenAccessReviewClient:  client.AuthenticationV1(),
		TokenAccessReviewTimeout: tokenReviewTimeout,
		WebhookRetryBackoff:      apiserveroptions.DefaultAuthWebhookRetryBackoff(),
		CacheTTL:                 tokenReviewCacheTTL,
	}.New()
	if err != nil {
		return nil, nil, fmt.Errorf("delegated authentication: %w", err)
	}
	paths, err := path.NewAuthorizer(alwaysAllowPaths)
	if err != nil {
		return nil, nil, fmt.Errorf("delegated authorization: %w", err)
	}
	sar, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: client.AuthorizationV1(),
		AllowCacheTTL:             authzAllowCacheTTL,
		DenyCacheTTL:              authzDenyCacheTTL,
		WebhookRetryBackoff:       apiserveroptions.DefaultAuthWebhookRetryBackoff(),
	}.New()
	if err != nil {
		return nil, nil, fmt.Errorf("delegated authorization: %w", err)
	}
	authz, err := union.New(
		union.NamedAuthorizer{AuthorizerName: "kubernetes.io/always-allow-groups", Authorizer: authorizerfactory.NewPrivilegedGroups(alwaysAllowGroups...)},
		union.NamedAuthorizer{AuthorizerName: "kubernetes.io/always-allow-paths", Authorizer: paths},
		union.NamedAuthorizer{AuthorizerName: "kubernetes.io/webhook", Authorizer: sar},
	)
	if err != nil {
		return nil, nil, fmt.Errorf("delegated authorization: %w", err)
	}
	return authn, authz, nil
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
