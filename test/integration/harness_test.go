// Package integration runs reprieve's live scheduler against a real
// kube-apiserver v1.37.2 and etcd, both started inside `go test`.
//
// No controllers run: the harness plays the kubelet (bound pods become
// Running; graceful deletions finish when their grace period is over), the
// disruption controller (tests write PodDisruptionBudget status) and, where a
// scenario needs one, the ReplicaSet controller. Clients reach the API
// server through a small TCP proxy at a fixed address, with a static token
// and a fixed serving certificate, so that a test can restart the API server
// on the same etcd without its clients noticing more than a dropped
// connection.
package integration

import (
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/klog/v2"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
)

// verbose makes the API server's and the scheduler's logs visible
// (REPRIEVE_INTEGRATION_VERBOSE=1); otherwise they go to a file.
var verbose = os.Getenv("REPRIEVE_INTEGRATION_VERBOSE") != ""

// klogFile receives klog's output when not verbose; restoreKlog points klog
// back at it after a test ran a command that configures logging itself.
var klogFile *os.File

// restoreKlog undoes what a command's logging configuration did to klog's
// global logger (it writes to stderr), so that later tests stay quiet.
func restoreKlog() {
	if klogFile != nil {
		klog.ClearLogger()
		klog.SetOutput(klogFile)
	}
}

func TestMain(m *testing.M) {
	flag.Parse()
	var logFile string
	if !verbose {
		// The API server and client-go log through klog's global logger;
		// keep that out of the test output but on disk for post-mortems.
		f, err := os.CreateTemp("", "reprieve-integration-klog-*.log")
		if err == nil {
			fs := flag.NewFlagSet("klog", flag.ContinueOnError)
			klog.InitFlags(fs)
			_ = fs.Set("logtostderr", "false")
			_ = fs.Set("alsologtostderr", "false")
			_ = fs.Set("stderrthreshold", "FATAL")
			klog.SetOutput(f)
			klogFile, logFile = f, f.Name()
		}
	}
	code := m.Run()
	if logFile != "" {
		if code == 0 {
			_ = os.Remove(logFile)
		} else {
			fmt.Fprintf(os.Stderr, "integration: the API server's and the scheduler's logs are in %s\n", logFile)
		}
	}
	os.Exit(code)
}

// quietTB passes a test to StartTestServer while dropping the API server's
// per-test log lines (thousands per start) unless verbose.
type quietTB struct{ *testing.T }

func (q quietTB) Log(args ...any) {
	if verbose {
		q.T.Log(args...)
	}
}

func (q quietTB) Logf(format string, args ...any) {
	if verbose {
		q.T.Logf(format, args...)
	}
}

// envOptions configure an API server.
type envOptions struct {
	// rbac runs the API server with --authorization-mode=Node,RBAC (the
	// admin token is in system:masters, so the harness is unaffected).
	rbac bool
	// noPriorityClasses skips the standard priority classes (low, medium,
	// high, top, high-never).
	noPriorityClasses bool
	// noKubelet runs no fake kubelet: bound pods stay Pending and graceful
	// deletions of bound pods never finish.
	noKubelet bool
	// clientCAFile, when set, is the API server's --client-ca-file: it
	// authenticates client certificates of that CA and publishes it in the
	// ConfigMap kube-system/extension-apiserver-authentication.
	clientCAFile string
}

// env is an etcd, an API server in front of it and the proxy clients use.
type env struct {
	t       *testing.T
	opts    envOptions
	dir     string
	etcd    *embed.Etcd
	storage *storagebackend.Config
	proxy   *proxy

	certFile, keyFile, tokenFile string
	caData                       []byte
	adminToken                   string

	mu     sync.Mutex
	server *kubeapiservertesting.TestServer

	// AdminConfig reaches the API server through the proxy as a member of
	// system:masters.
	AdminConfig *rest.Config
	Admin       kubernetes.Interface
	// Kubelet is the fake kubelet, running for the env's lifetime.
	Kubelet *fakeKubelet
}

// newEnv starts etcd, the proxy, the API server and the fake kubelet; all
// stop when t ends.
func newEnv(t *testing.T, opts envOptions) *env {
	t.Helper()
	start := time.Now()
	e := &env{t: t, opts: opts, dir: t.TempDir()}
	e.startEtcd()

	// A serving certificate of our own, valid for 127.0.0.1: every API
	// server this env starts presents it, so clients trust restarts.
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")}, []string{"localhost"})
	if err != nil {
		t.Fatal(err)
	}
	e.caData = certPEM
	e.certFile = filepath.Join(e.dir, "serving.crt")
	e.keyFile = filepath.Join(e.dir, "serving.key")
	e.adminToken = randomToken()
	e.tokenFile = filepath.Join(e.dir, "tokens.csv")
	writeFile(t, e.certFile, certPEM)
	writeFile(t, e.keyFile, keyPEM)
	writeFile(t, e.tokenFile, []byte(e.adminToken+`,integration-admin,integration-admin,"system:masters"`+"\n"))

	e.proxy = newProxy(t)
	e.startAPIServer()
	t.Cleanup(func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.server != nil {
			e.server.TearDownFn()
			e.server = nil
		}
	})

	e.AdminConfig = e.configFor(e.adminToken)
	e.Admin = kubernetes.NewForConfigOrDie(e.AdminConfig)
	if !opts.noPriorityClasses {
		e.createPriorityClasses()
	}
	if !opts.noKubelet {
		e.Kubelet = startFakeKubelet(t, e.Admin)
	}
	t.Logf("env: etcd + kube-apiserver + kubelet ready in %v (rbac=%v)", time.Since(start).Round(time.Millisecond), opts.rbac)
	return e
}

func (e *env) startEtcd() {
	t := e.t
	var etcd *embed.Etcd
	var clientURL *url.URL
	// A free port can be taken by another process between freePort and
	// etcd's listen (tests run in parallel on the machine): try new ones.
	for attempt := 1; ; attempt++ {
		cfg := embed.NewConfig()
		cfg.Name = "integration"
		cfg.Dir = filepath.Join(e.dir, fmt.Sprintf("etcd-%d", attempt))
		clientURL = mustURL(t, fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
		peerURL := mustURL(t, fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*clientURL}, []url.URL{*clientURL}
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*peerURL}, []url.URL{*peerURL}
		cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
		cfg.UnsafeNoFsync = true
		cfg.LogLevel = "panic" // not even the errors etcd logs when it is closed
		var err error
		if etcd, err = embed.StartEtcd(cfg); err == nil {
			break
		}
		if attempt == 3 || !strings.Contains(err.Error(), "address already in use") {
			t.Fatalf("starting etcd: %v", err)
		}
	}
	select {
	case <-etcd.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		etcd.Close()
		t.Fatal("etcd did not become ready")
	}
	t.Cleanup(etcd.Close)
	e.etcd = etcd
	e.storage = storagebackend.NewDefaultConfig("/registry", nil)
	e.storage.Transport.ServerList = []string{clientURL.String()}
}

// startAPIServer starts an API server on e's etcd and points the proxy at it.
func (e *env) startAPIServer() {
	t := e.t
	flags := []string{
		"--disable-admission-plugins=ServiceAccount",
		"--tls-cert-file=" + e.certFile,
		"--tls-private-key-file=" + e.keyFile,
		"--token-auth-file=" + e.tokenFile,
	}
	if e.opts.rbac {
		flags = append(flags, "--authorization-mode=Node,RBAC")
	}
	if e.opts.clientCAFile != "" {
		flags = append(flags, "--client-ca-file="+e.opts.clientCAFile)
	}
	start := time.Now()
	srv, err := kubeapiservertesting.StartTestServer(quietTB{t},
		&kubeapiservertesting.TestServerInstanceOptions{DisableInvariantChecks: true, EnableCertAuth: false}, flags, e.storage)
	if err != nil {
		t.Fatalf("starting kube-apiserver: %v", err)
	}
	host := strings.TrimPrefix(srv.ClientConfig.Host, "https://")
	e.proxy.setBackend(host)
	e.mu.Lock()
	e.server = &srv
	e.mu.Unlock()
	t.Logf("kube-apiserver on %s (proxied at %s) started in %v", host, e.proxy.addr(), time.Since(start).Round(time.Millisecond))
}

// restartAPIServer stops the API server, waits down, and starts a new one
// on the same etcd behind the same proxy address.
func (e *env) restartAPIServer(down time.Duration) {
	e.mu.Lock()
	srv := e.server
	e.server = nil
	e.mu.Unlock()
	start := time.Now()
	e.proxy.setBackend("")
	srv.TearDownFn()
	e.t.Logf("kube-apiserver stopped in %v", time.Since(start).Round(time.Millisecond))
	time.Sleep(down)
	e.startAPIServer()
}

// configFor returns a client configuration for token through the proxy.
func (e *env) configFor(token string) *rest.Config {
	return &rest.Config{
		Host:            "https://" + e.proxy.addr(),
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: e.caData},
		QPS:             1000,
		Burst:           2000,
		Timeout:         30 * time.Second,
	}
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// proxy forwards TCP connections to the current API server; it drops every
// connection when the backend changes, as a restart would.
type proxy struct {
	ln      net.Listener
	mu      sync.Mutex
	backend string
	conns   map[net.Conn]bool
}

func newProxy(t *testing.T) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, conns: map[net.Conn]bool{}}
	go p.serve()
	t.Cleanup(func() {
		_ = ln.Close()
		p.setBackend("")
	})
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

// setBackend points the proxy at addr ("" refuses connections) and closes
// the connections to the previous backend.
func (p *proxy) setBackend(addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.backend = addr
	for c := range p.conns {
		_ = c.Close()
	}
	p.conns = map[net.Conn]bool{}
}

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.handle(c)
	}
}

func (p *proxy) handle(c net.Conn) {
	p.mu.Lock()
	backend := p.backend
	p.mu.Unlock()
	if backend == "" {
		_ = c.Close()
		return
	}
	b, err := net.DialTimeout("tcp", backend, 5*time.Second)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	if p.backend != backend {
		p.mu.Unlock()
		_ = c.Close()
		_ = b.Close()
		return
	}
	p.conns[c], p.conns[b] = true, true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(b, c)
	go pipe(c, b)
	<-done
	_ = c.Close()
	_ = b.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, b)
	p.mu.Unlock()
}
