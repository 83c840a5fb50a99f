package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	kubeschedulertesting "k8s.io/kubernetes/cmd/kube-scheduler/app/testing"

	"github.com/reprieve/reprieve/internal/adapter/config"
)

// upstreamScheduler is kube-scheduler v1.37.2 running in-process against
// the env's API server, with one profile for the world's scheduler name.
type upstreamScheduler struct {
	stop func()
}

// startUpstream starts kube-scheduler v1.37.2 with a
// KubeSchedulerConfiguration of one default profile named w.sched, no
// leader election, and cc's QPS, burst and content type; it returns once
// the scheduler's /healthz answers. It stops when t ends (or by stop).
func (w *world) startUpstream(t *testing.T, cc config.ClientConnection) *upstreamScheduler {
	t.Helper()
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: w.AdminConfig.Host, CertificateAuthorityData: w.AdminConfig.CAData}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: w.AdminConfig.BearerToken}
	kc.Contexts["x"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	kc.CurrentContext = "x"
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		t.Fatal(err)
	}
	contentType := cc.ContentType
	if contentType == "" {
		contentType = "application/vnd.kubernetes.protobuf"
	}
	cfgFile := filepath.Join(dir, "config.yaml")
	writeFile(t, cfgFile, []byte(fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: %g
  burst: %d
  contentType: %q
leaderElection:
  leaderElect: false
profiles:
- schedulerName: %q
`, kubeconfig, cc.QPS, cc.Burst, contentType, w.sched)))
	ctx, cancel := context.WithCancel(context.Background())
	start := time.Now()
	srv, err := kubeschedulertesting.StartTestServer(t, ctx, []string{
		"--config=" + cfgFile,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
	})
	if err != nil {
		cancel()
		t.Fatalf("starting kube-scheduler: %v", err)
	}
	t.Logf("kube-scheduler v1.37.2 (profile %s, QPS %g, burst %d) healthy in %v", w.sched, cc.QPS, cc.Burst, time.Since(start).Round(time.Millisecond))
	u := &upstreamScheduler{}
	stopped := false
	u.stop = func() {
		if !stopped {
			stopped = true
			srv.TearDownFn()
			cancel()
		}
	}
	t.Cleanup(u.stop)
	return u
}
