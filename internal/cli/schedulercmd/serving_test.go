package schedulercmd

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	logsapi "k8s.io/component-base/logs/api/v1"
)

// servingFlags is what the completed options say about the secure port's
// authentication and authorization.
type servingFlags struct {
	AuthnKubeconfig, AuthzKubeconfig string
	ClientCA, RequestHeaderCA        string
	SkipLookup, TolerateFailure      bool
	AlwaysAllowPaths                 []string
	AlwaysAllowGroups                []string
}

func TestServingFlags(t *testing.T) {
	dir := t.TempDir()
	kc := kubeconfig(t, dir, "sched")
	authnKC := kubeconfig(t, dir, "authn")
	authzKC := kubeconfig(t, dir, "authz")
	fileKC := kubeconfig(t, dir, "from-file")
	ca := newCA(t, "test-ca")
	caFile := writePEM(t, dir, "ca.crt", ca.cert.Raw)
	cfgFile := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgFile, []byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nclientConnection: {kubeconfig: "+fileKC+"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	upstream := servingFlags{
		TolerateFailure:   true,
		AlwaysAllowPaths:  []string{"/healthz", "/readyz", "/livez"},
		AlwaysAllowGroups: []string{"system:masters"},
	}
	with := func(f func(*servingFlags)) servingFlags {
		s := upstream
		f(&s)
		return s
	}
	tests := map[string]struct {
		args []string
		want servingFlags
	}{
		"kube-scheduler's defaults, in-cluster": {
			want: upstream,
		},
		"the scheduler's --kubeconfig delegates": {
			args: []string{"--kubeconfig", kc},
			want: with(func(s *servingFlags) { s.AuthnKubeconfig, s.AuthzKubeconfig = kc, kc }),
		},
		"clientConnection.kubeconfig delegates": {
			args: []string{"--config", cfgFile},
			want: with(func(s *servingFlags) { s.AuthnKubeconfig, s.AuthzKubeconfig = fileKC, fileKC }),
		},
		"explicit delegated kubeconfigs": {
			args: []string{"--kubeconfig", kc, "--authentication-kubeconfig", authnKC, "--authorization-kubeconfig", authzKC},
			want: with(func(s *servingFlags) { s.AuthnKubeconfig, s.AuthzKubeconfig = authnKC, authzKC }),
		},
		"client CAs, no lookup": {
			args: []string{"--client-ca-file", caFile, "--requestheader-client-ca-file", caFile, "--authentication-skip-lookup", "--authentication-tolerate-lookup-failure=false"},
			want: with(func(s *servingFlags) {
				s.ClientCA, s.RequestHeaderCA, s.SkipLookup, s.TolerateFailure = caFile, caFile, true, false
			}),
		},
		"always-allow paths replaced": {
			args: []string{"--authorization-always-allow-paths=/healthz,/metrics"},
			want: with(func(s *servingFlags) { s.AlwaysAllowPaths = []string{"/healthz", "/metrics"} }),
		},
		"no always-allow path": {
			args: []string{"--authorization-always-allow-paths="},
			want: with(func(s *servingFlags) { s.AlwaysAllowPaths = []string{} }),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := &Options{errOut: &bytes.Buffer{}, Logging: logsapi.NewLoggingConfiguration()}
			cmd := newCommand(o)
			if err := cmd.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			if err := o.Complete(cmd.Flags()); err != nil {
				t.Fatal(err)
			}
			authn, authz := o.Serving.Authentication, o.Serving.Authorization
			got := servingFlags{
				AuthnKubeconfig: authn.RemoteKubeConfigFile, AuthzKubeconfig: authz.RemoteKubeConfigFile,
				ClientCA: authn.ClientCert.ClientCA, RequestHeaderCA: authn.RequestHeader.ClientCAFile,
				SkipLookup: authn.SkipInClusterLookup, TolerateFailure: authn.TolerateInClusterLookupFailure,
				AlwaysAllowPaths: authz.AlwaysAllowPaths, AlwaysAllowGroups: authz.AlwaysAllowGroups,
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("serving options (-want,+got)\n%s", diff)
			}
			if !authn.RemoteKubeConfigFileOptional || !authz.RemoteKubeConfigFileOptional {
				t.Errorf("delegated kubeconfigs required, want optional as kube-scheduler's")
			}
		})
	}
}

// TestSecurePortClientCertificates serves the secure port with
// --client-ca-file and no API server: the client certificate's
// organizations are its groups, so system:masters reads /metrics while
// another user is refused (no SubjectAccessReview can allow it);
// anonymous requests reach only the always-allowed paths; a certificate of
// another authority is not authenticated.
func TestSecurePortClientCertificates(t *testing.T) {
	// Out of a cluster and without kubeconfigs: no delegation at all.
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	dir := t.TempDir()
	ca, other := newCA(t, "client-ca"), newCA(t, "other-ca")
	caFile := writePEM(t, dir, "ca.crt", ca.cert.Raw)
	admin := ca.client(t, "admin", "system:masters")
	alice := ca.client(t, "alice", "viewers")
	stranger := other.client(t, "admin", "system:masters")

	tests := map[string]struct {
		args []string
		// want maps a path and a client certificate's name ("" anonymous)
		// to the status code.
		want map[string]int
	}{
		"kube-scheduler's always-allowed paths": {
			args: []string{"--client-ca-file", caFile},
			want: map[string]int{
				"/healthz ": 200, "/metrics ": 403,
				"/metrics admin": 200, "/metrics alice": 403, "/healthz alice": 200,
				"/metrics stranger": 401,
			},
		},
		"/metrics always allowed": {
			args: []string{"--client-ca-file", caFile, "--authorization-always-allow-paths=/healthz,/metrics"},
			want: map[string]int{"/healthz ": 200, "/metrics ": 200, "/metrics alice": 200, "/readyz ": 403},
		},
	}
	certs := map[string]*tls.Certificate{"": nil, "admin": admin, "alice": alice, "stranger": stranger}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := &Options{errOut: &bytes.Buffer{}, Logging: logsapi.NewLoggingConfiguration()}
			cmd := newCommand(o)
			if err := cmd.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			if err := o.Complete(cmd.Flags()); err != nil {
				t.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			o.Serving.Secure.Listener = ln
			serve, err := o.Serving.serveFunc()
			if err != nil {
				t.Fatal(err)
			}
			mux := http.NewServeMux()
			for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
				mux.HandleFunc(p, func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok "+p) })
			}
			stop, err := serve(mux)
			if err != nil {
				t.Fatal(err)
			}
			defer stop()
			got := map[string]int{}
			for key := range tc.want {
				path, who, _ := strings.Cut(key, " ")
				got[key] = get(t, "https://"+ln.Addr().String()+path, certs[who])
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status codes by path and client (-want,+got)\n%s", diff)
			}
		})
	}
}

// get returns the status code of a GET of url presenting cert (nil: none)
// even when the server names other authorities (Go's client would then
// send none).
func get(t *testing.T, url string, cert *tls.Certificate) int {
	t.Helper()
	tlsConfig := &tls.Config{InsecureSkipVerify: true} // the self-signed serving certificate
	if cert != nil {
		tlsConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig}}
	defer client.CloseIdleConnections()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// testCA is a certificate authority minted for a test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// newCA returns a self-signed CA named name.
func newCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key}
}

// client returns a client certificate for user in groups (CN and O, as
// the API server reads them), signed by ca.
func (ca *testCA) client(t *testing.T, user string, groups ...string) *tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: user, Organization: groups},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// writePEM writes a DER certificate as PEM to dir/name and returns the path.
func writePEM(t *testing.T, dir, name string, der []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConfigMapLookupBounded points the delegated authentication at an API
// server that accepts requests and never answers: the look-up of the
// extension-apiserver-authentication ConfigMap gives up after the request
// timeout (tolerated, as kube-scheduler's default), and the health
// endpoints are served.
func TestConfigMapLookupBounded(t *testing.T) {
	hung := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer hung.Close()
	kc := filepath.Join(t.TempDir(), "hung.kubeconfig")
	doc := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"" + hung.URL + "\"}\n" +
		"users:\n- name: u\n  user: {token: t}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n"
	if err := os.WriteFile(kc, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	o := &Options{errOut: &bytes.Buffer{}, Logging: logsapi.NewLoggingConfiguration()}
	cmd := newCommand(o)
	if err := cmd.ParseFlags([]string{"--kubeconfig", kc}); err != nil {
		t.Fatal(err)
	}
	if err := o.Complete(cmd.Flags()); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.Serving.Secure.Listener = ln
	o.Serving.requestTimeout = 200 * time.Millisecond
	start := time.Now()
	serve, err := o.Serving.serveFunc()
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("building the delegated authentication took %v, want about the request timeout", took)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	stop, err := serve(mux)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if code := get(t, "https://"+ln.Addr().String()+"/healthz", nil); code != http.StatusOK {
		t.Errorf("GET /healthz: %d, want 200", code)
	}
}
