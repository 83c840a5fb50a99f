package cli

import (
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
