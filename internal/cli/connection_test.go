package cli

import (
	"context"
	"strings"
	"testing"
)

// TestConnectionFlags: whatif and snapshot take kubectl's connection flags
// (a --server and --token reach that server, impersonation and a request
// timeout are accepted, --server excludes --snapshot); the scheduler takes
// kube-scheduler's (--kubeconfig, --master), not kubectl's --namespace.
func TestConnectionFlags(t *testing.T) {
	_, stderr, code := run("whatif", "--server", "http://127.0.0.1:9", "--token", "t", "--as", "alice", "--as-group", "ops",
		"--request-timeout", "1s", "-f", "../../examples/pods/urgent.yaml")
	if code != 1 || !strings.Contains(stderr, "127.0.0.1:9") {
		t.Errorf("whatif --server: exit %d, stderr %q; want a connection error naming the server", code, stderr)
	}
	if _, stderr, code := run("whatif", "--server", "http://127.0.0.1:9", "--snapshot", "../../examples/cluster", "-f", "../../examples/pods/urgent.yaml"); code != 2 || !strings.Contains(stderr, "exclusive") {
		t.Errorf("whatif --server --snapshot: exit %d, stderr %q; want a usage error", code, stderr)
	}
	help, _, code := run("scheduler", "--help")
	if code != 0 {
		t.Fatalf("scheduler --help: exit %d", code)
	}
	for _, want := range []string{"--kubeconfig", "--master"} {
		if !strings.Contains(help, want) {
			t.Errorf("scheduler --help lacks %s", want)
		}
	}
	for _, unwanted := range []string{"--namespace", "--token", "--context"} {
		if strings.Contains(help, unwanted) {
			t.Errorf("scheduler --help offers %s, which kube-scheduler does not have", unwanted)
		}
	}
	whatifHelp, _, _ := run("whatif", "--help")
	for _, want := range []string{"--server", "--token", "--as ", "--as-group", "--request-timeout", "--insecure-skip-tls-verify", "--certificate-authority"} {
		if !strings.Contains(whatifHelp, want) {
			t.Errorf("whatif --help lacks kubectl's %s", want)
		}
	}
}

// TestPluginUsage: run as kubectl-reprieve (kubectl's plugin name), help and
// errors speak of "kubectl reprieve"; run as reprieve, of "reprieve".
func TestPluginUsage(t *testing.T) {
	for program, want := range map[string]string{"kubectl-reprieve": "kubectl reprieve whatif --snapshot", "reprieve": "\n  reprieve whatif --snapshot"} {
		var out, errOut strings.Builder
		if code := ExecuteAs(context.Background(), program, []string{"whatif", "--help"}, Streams{In: strings.NewReader(""), Out: &out, Err: &errOut}); code != 0 {
			t.Fatalf("%s whatif --help: exit %d: %s", program, code, errOut.String())
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("%s whatif --help lacks %q:\n%s", program, want, out.String())
		}
	}
}
