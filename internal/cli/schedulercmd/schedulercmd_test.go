package schedulercmd

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	logsapi "k8s.io/component-base/logs/api/v1"

	"github.com/reprieve/reprieve/internal/adapter/config"
	"github.com/reprieve/reprieve/internal/cli/clierr"
)

// kubeconfig writes a kubeconfig for server and returns its path.
func kubeconfig(t *testing.T, dir, server string) string {
	t.Helper()
	path := filepath.Join(dir, server+".kubeconfig")
	doc := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://` + server + `:6443"}
users:
- name: u
  user: {token: secret}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// client is what the scheduler's rest.Config says about the connection.
type client struct {
	Host, ContentType, Accept string
	QPS                       float32
	Burst                     int
	DisableCompression        bool
}

func TestClientAndLeaderElection(t *testing.T) {
	dir := t.TempDir()
	flagsKC := kubeconfig(t, dir, "from-flag")
	fileKC := kubeconfig(t, dir, "from-file")
	writeConfig := func(body string) string {
		p := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+".yaml")
		if err := os.WriteFile(p, []byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"+body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	defaultLE := config.DefaultConnection().LeaderElection
	fullFile := `clientConnection:
  kubeconfig: ` + fileKC + `
  qps: 300
  burst: 600
  contentType: application/json
  acceptContentTypes: application/json
leaderElection:
  leaseDuration: 30s
  renewDeadline: 20s
  retryPeriod: 4s
  resourceName: from-file
  resourceNamespace: file-ns
`
	fileLE := config.LeaderElection{LeaderElect: true, LeaseDuration: 30 * time.Second, RenewDeadline: 20 * time.Second, RetryPeriod: 4 * time.Second, ResourceLock: "leases", ResourceName: "from-file", ResourceNamespace: "file-ns"}

	tests := map[string]struct {
		args        []string
		config      string // body of a --config file, "" for none
		wantClient  client
		wantLE      config.LeaderElection
		wantWarning string
	}{
		"kube-scheduler's defaults": {
			args:       []string{"--kubeconfig", flagsKC},
			wantClient: client{Host: "https://from-flag:6443", ContentType: "application/vnd.kubernetes.protobuf", QPS: 50, Burst: 100, DisableCompression: true},
			wantLE:     defaultLE,
		},
		"client flags without --config": {
			args:       []string{"--kubeconfig", flagsKC, "--kube-api-qps=200", "--kube-api-burst=400", "--kube-api-content-type=application/json"},
			wantClient: client{Host: "https://from-flag:6443", ContentType: "application/json", QPS: 200, Burst: 400, DisableCompression: true},
			wantLE:     defaultLE,
		},
		"leader-election flags without --config": {
			args:       []string{"--kubeconfig", flagsKC, "--leader-elect-lease-duration=8s", "--leader-elect-renew-deadline=6s", "--leader-elect-retry-period=1s", "--leader-elect-resource-name=n", "--leader-elect-resource-namespace=ns"},
			wantClient: client{Host: "https://from-flag:6443", ContentType: "application/vnd.kubernetes.protobuf", QPS: 50, Burst: 100, DisableCompression: true},
			wantLE:     config.LeaderElection{LeaderElect: true, LeaseDuration: 8 * time.Second, RenewDeadline: 6 * time.Second, RetryPeriod: time.Second, ResourceLock: "leases", ResourceName: "n", ResourceNamespace: "ns"},
		},
		"--config's clientConnection and leaderElection": {
			config:     fullFile,
			wantClient: client{Host: "https://from-file:6443", ContentType: "application/json", Accept: "application/json", QPS: 300, Burst: 600, DisableCompression: true},
			wantLE:     fileLE,
		},
		"--config with only qps keeps the other defaults": {
			args:       []string{"--kubeconfig", flagsKC},
			config:     "clientConnection: {qps: 200, burst: 400}\n",
			wantClient: client{Host: "https://from-flag:6443", ContentType: "application/vnd.kubernetes.protobuf", QPS: 200, Burst: 400, DisableCompression: true},
			wantLE:     defaultLE,
		},
		"with --config the client flags are ignored, as by kube-scheduler": {
			args:        []string{"--kube-api-qps=1", "--kube-api-burst=2"},
			config:      fullFile,
			wantClient:  client{Host: "https://from-file:6443", ContentType: "application/json", Accept: "application/json", QPS: 300, Burst: 600, DisableCompression: true},
			wantLE:      fileLE,
			wantWarning: "warning: --kube-api-qps, --kube-api-burst ignored because --config is given",
		},
		"with --config the leader-election flags override it": {
			args:       []string{"--leader-elect-resource-name=flag", "--leader-elect-retry-period=1s"},
			config:     fullFile,
			wantClient: client{Host: "https://from-file:6443", ContentType: "application/json", Accept: "application/json", QPS: 300, Burst: 600, DisableCompression: true},
			wantLE: func() config.LeaderElection {
				le := fileLE
				le.ResourceName, le.RetryPeriod = "flag", time.Second
				return le
			}(),
		},
		"--kubeconfig takes precedence over clientConnection.kubeconfig": {
			args:       []string{"--kubeconfig", flagsKC},
			config:     fullFile,
			wantClient: client{Host: "https://from-flag:6443", ContentType: "application/json", Accept: "application/json", QPS: 300, Burst: 600, DisableCompression: true},
			wantLE:     fileLE,
		},
		"leader election off in the file, on by flag": {
			args:       []string{"--kubeconfig", flagsKC, "--leader-elect=true"},
			config:     "leaderElection: {leaderElect: false}\n",
			wantClient: client{Host: "https://from-flag:6443", ContentType: "application/vnd.kubernetes.protobuf", QPS: 50, Burst: 100, DisableCompression: true},
			wantLE:     defaultLE,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var errOut bytes.Buffer
			o := &Options{errOut: &errOut}
			cmd := newCommand(o)
			args := tc.args
			if tc.config != "" {
				args = append(args, "--config", writeConfig(tc.config))
			}
			if err := cmd.ParseFlags(args); err != nil {
				t.Fatal(err)
			}
			if err := o.Complete(cmd.Flags()); err != nil {
				t.Fatal(err)
			}
			rc, err := o.RESTConfig()
			if err != nil {
				t.Fatal(err)
			}
			got := client{rc.Host, rc.ContentType, rc.AcceptContentTypes, rc.QPS, rc.Burst, rc.DisableCompression}
			if diff := cmp.Diff(tc.wantClient, got); diff != "" {
				t.Errorf("rest.Config (-want,+got)\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantLE, o.Connection().LeaderElection); diff != "" {
				t.Errorf("leader election (-want,+got)\n%s", diff)
			}
			if w := errOut.String(); tc.wantWarning == "" && w != "" || !strings.Contains(w, tc.wantWarning) {
				t.Errorf("stderr = %q, want %q", w, tc.wantWarning)
			}
		})
	}
}

func TestInvalidSettings(t *testing.T) {
	dir := t.TempDir()
	kc := kubeconfig(t, dir, "k")
	cfgFile := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(cfgFile, []byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nclientConnection: {burst: -1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		args    []string
		wantIs  error
		wantMsg string
	}{
		"negative burst in the file": {
			args: []string{"--config", cfgFile}, wantIs: clierr.ErrInvalidConfig,
			wantMsg: cfgFile + " (with the flags applied): clientConnection.burst: Invalid value: -1: must be non-negative",
		},
		"endpoints lock by flag": {
			args: []string{"--leader-elect-resource-lock=endpoints"}, wantIs: clierr.ErrUsage,
			wantMsg: `leaderElection.resourceLock: Invalid value: "endpoints"`,
		},
		"renew deadline not below the lease": {
			args: []string{"--leader-elect-renew-deadline=20s"}, wantIs: clierr.ErrUsage,
			wantMsg: `leaderElection.leaseDuration: Invalid value: "15s": must be greater than renewDeadline`,
		},
		"negative burst by flag": {
			args: []string{"--kube-api-burst=-5"}, wantIs: clierr.ErrUsage,
			wantMsg: "clientConnection.burst: Invalid value: -5",
		},
		"unknown logging format": {
			args: []string{"--logging-format=xml"}, wantIs: clierr.ErrUsage,
			wantMsg: `logging flags: format: Invalid value: "xml": Unsupported log format`,
		},
		"vmodule with json": {
			args: []string{"--logging-format=json", "--vmodule=kube=4"}, wantIs: clierr.ErrUsage,
			wantMsg: "logging flags: vmodule: Forbidden: Only supported for text log format",
		},
		"missing client CA": {
			args: []string{"--client-ca-file", filepath.Join(dir, "missing.crt")}, wantIs: clierr.ErrBadFile,
			wantMsg: "--client-ca-file: stat " + filepath.Join(dir, "missing.crt") + ": no such file or directory",
		},
		"client CA not PEM": {
			args: []string{"--client-ca-file", notPEM}, wantIs: clierr.ErrBadFile,
			wantMsg: "--client-ca-file: ",
		},
		"request-header CA a folder": {
			args: []string{"--requestheader-client-ca-file", dir}, wantIs: clierr.ErrBadFile,
			wantMsg: "--requestheader-client-ca-file: " + dir + ": not a regular file",
		},
		"authentication kubeconfig not a kubeconfig": {
			args: []string{"--authentication-kubeconfig", notPEM}, wantIs: clierr.ErrBadFile,
			wantMsg: "--authentication-kubeconfig: ",
		},
		"authorization kubeconfig missing": {
			args: []string{"--authorization-kubeconfig", filepath.Join(dir, "missing")}, wantIs: clierr.ErrBadFile,
			wantMsg: "--authorization-kubeconfig: stat ",
		},
		"blank request-header group": {
			args: []string{"--requestheader-group-headers= "}, wantIs: clierr.ErrUsage,
			wantMsg: `serving flags: empty value in "requestheader-group-headers"`,
		},
		"no attempt to reach the API server": {
			args: []string{"--api-wait-attempts=0"}, wantIs: clierr.ErrUsage,
			wantMsg: "--api-wait-attempts: 0, want at least 1",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := &Options{errOut: &bytes.Buffer{}, Logging: logsapi.NewLoggingConfiguration()}
			cmd := newCommand(o)
			if err := cmd.ParseFlags(append([]string{"--kubeconfig", kc}, tc.args...)); err != nil {
				t.Fatal(err)
			}
			err := o.Complete(cmd.Flags())
			if !errors.Is(err, tc.wantIs) {
				t.Fatalf("err = %v, want %v", err, tc.wantIs)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %q, want one line containing %q", err, tc.wantMsg)
			}
		})
	}
}

// TestLoggingFlags checks kube-scheduler's logging flags are parsed into
// component-base's configuration.
func TestLoggingFlags(t *testing.T) {
	kc := kubeconfig(t, t.TempDir(), "k")
	tests := map[string]struct {
		args       []string
		format     string
		verbosity  uint32
		vmoduleLen int
	}{
		"defaults":       {format: "text"},
		"json":           {args: []string{"--logging-format=json", "-v=4"}, format: "json", verbosity: 4},
		"text, vmodule":  {args: []string{"--v=2", "--vmodule=run=5,queue=3"}, format: "text", verbosity: 2, vmoduleLen: 2},
		"shorthand only": {args: []string{"-v", "3"}, format: "text", verbosity: 3},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := &Options{errOut: &bytes.Buffer{}, Logging: logsapi.NewLoggingConfiguration()}
			cmd := newCommand(o)
			if err := cmd.ParseFlags(append([]string{"--kubeconfig", kc}, tc.args...)); err != nil {
				t.Fatal(err)
			}
			if err := o.Complete(cmd.Flags()); err != nil {
				t.Fatal(err)
			}
			if o.Logging.Format != tc.format || uint32(o.Logging.Verbosity) != tc.verbosity || len(o.Logging.VModule) != tc.vmoduleLen {
				t.Errorf("format %q, v %d, vmodule %v; want %q, %d, %d entries", o.Logging.Format, o.Logging.Verbosity, o.Logging.VModule, tc.format, tc.verbosity, tc.vmoduleLen)
			}
		})
	}
}
