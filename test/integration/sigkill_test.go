package integration

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/reprieve/reprieve/internal/adapter/kube"
)

// TestLeaderSIGKILLUnderLoad runs the leader as users do — the reprieve
// binary in a process of its own, with its default client settings and
// leader election from flags — and kills it with SIGKILL halfway through the
// preemption phase of the fault load, a standby running. The standby must
// take the lease and bind every preemptor with no pod deleted or bound
// twice and no victim beyond the three per preemptor needed.
func TestLeaderSIGKILLUnderLoad(t *testing.T) {
	bin := buildReprieve(t)
	e := newEnv(t, envOptions{})
	w := e.world(t)
	const leaseDuration, renewDeadline, retryPeriod = 4 * time.Second, 3 * time.Second, 500 * time.Millisecond
	l := newFaultLoad(t, w, 1)

	// The leader's calls go through a proxy that records them, as the
	// in-process schedulers' taps do.
	leaderTap := newTap()
	kubeconfig := kubeconfigFile(t, clientcmdapi.Cluster{Server: tapProxy(t, w.AdminConfig, leaderTap)}, clientcmdapi.AuthInfo{})
	var logs lockedBuffer
	leader := exec.Command(bin, "scheduler", "--kubeconfig", kubeconfig, "--scheduler-name", w.sched,
		"--secure-port=0", "--leader-elect",
		"--leader-elect-resource-namespace", w.ns, "--leader-elect-resource-name", "reprieve",
		"--leader-elect-lease-duration", leaseDuration.String(), "--leader-elect-renew-deadline", renewDeadline.String(),
		"--leader-elect-retry-period", retryPeriod.String())
	leader.Stdout, leader.Stderr = &logs, &logs
	if err := leader.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- leader.Wait() }()
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = leader.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("the leader's output:\n%s", logs.String())
		}
	})
	w.waitFor("the reprieve process to lead", waitTimeout, func() (bool, error) {
		select {
		case err := <-exited:
			killed = true
			return false, fmt.Errorf("reprieve scheduler exited: %v\n%s", err, logs.String())
		default:
		}
		h := w.leaseHolder()
		return h != "" && h != "replica-b", nil
	})
	t.Logf("the reprieve process leads as %s", w.leaseHolder())

	b := w.startScheduler(schedOpts{clientConnection: defaultClient(), noWait: true, le: &kube.LeaderElection{
		Namespace: w.ns, Name: "reprieve", Identity: "replica-b",
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod}})
	l.createPreemptors(t)
	l.waitHalf(t)
	killAt := time.Now()
	if err := leader.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed = true
	if err := <-exited; err == nil {
		t.Errorf("the killed leader exited cleanly")
	}
	w.waitFor("replica-b to take the lease", leaseDuration+renewDeadline+5*time.Second, func() (bool, error) {
		return w.leaseHolder() == "replica-b", nil
	})
	t.Logf("replica-b leads %v after SIGKILL", time.Since(killAt).Round(time.Millisecond))
	l.check(t, l.preemptors, faultNodes*faultVictims, faultNodes*faultVictims, leaderTap, b.tap)
	for _, c := range b.tap.All() {
		if c.At.Before(killAt) && !slices.Contains([]string{"GET", "LIST", "WATCH"}, c.Method) && !isLeaseCall(c) && !isEventCall(c) {
			t.Errorf("standby wrote before the leader died: %v", c)
		}
	}
	if n := len(leaderTap.Calls("POST", "/binding")); n == 0 {
		t.Errorf("the reprieve process bound nothing before it was killed: the test did not test")
	}
	if b.exited() {
		t.Errorf("replica-b stopped: %v", b.err)
	}
}

// buildReprieve builds the reprieve binary (cmd/reprieve of the main
// module, through this module's replace) into a temporary directory.
func buildReprieve(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "reprieve")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/reprieve/reprieve/cmd/reprieve").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// tapProxy serves plain HTTP on a local port and forwards every request to
// the API server of cfg with cfg's credentials, recording it in tp. It
// returns the proxy's URL.
func tapProxy(t *testing.T, cfg *rest.Config, tp *tap) string {
	t.Helper()
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport:     &tapRT{tap: tp, base: rt},
		FlushInterval: -1, // watches stream
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	return srv.URL
}

// lockedBuffer is a bytes.Buffer safe for a process's two output streams.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
