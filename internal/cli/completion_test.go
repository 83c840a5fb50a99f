package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestCompletion calls cobra's hidden __complete command, as the shell
// scripts of `reprieve completion` do, on every flag whose values are
// completed.
func TestCompletion(t *testing.T) {
	shared := []string{"json", "yaml", "name", "jsonpath=", "jsonpath-file=", "go-template=", "go-template-file="}
	noFile := cobra.ShellCompDirectiveNoFileComp
	noSpace := noFile | cobra.ShellCompDirectiveNoSpace
	tests := []struct {
		args      []string
		want      []string
		directive cobra.ShellCompDirective
	}{
		{[]string{"whatif", "-o", ""}, append([]string{"table", "wide"}, shared...), noFile},
		{[]string{"whatif", "--output", "w"}, []string{"wide"}, noFile},
		{[]string{"whatif", "-o", "go-"}, []string{"go-template=", "go-template-file="}, noSpace},
		{[]string{"whatif", "-o", "jsonpath-file="}, nil, cobra.ShellCompDirectiveDefault},
		{[]string{"simulate", "-o", ""}, append([]string{"table", "wide", "events"}, shared...), noFile},
		{[]string{"snapshot", "-o", ""}, shared, noFile},
		{[]string{"whatif", "--victim-policy", ""}, []string{"upstream", "minimal", "reschedulable", "strict-pdb"}, noFile},
		{[]string{"simulate", "--victim-policy", "m"}, []string{"minimal"}, noFile},
		{[]string{"scheduler", "--victim-policy", "s"}, []string{"strict-pdb"}, noFile},
		{[]string{"whatif", "--validate", ""}, []string{"strict", "warn", "ignore"}, noFile},
		{[]string{"snapshot", "--validate", "w"}, []string{"warn"}, noFile},
		{[]string{"simulate", "--validate", "i"}, []string{"ignore"}, noFile},
		{[]string{"whatif", "--feature-gates", "Gen"}, []string{"GenericWorkload=true", "GenericWorkload=false"}, noSpace},
		{[]string{"whatif", "--feature-gates", "GenericWorkload=true,C"}, []string{"GenericWorkload=true,CompositePodGroup=true", "GenericWorkload=true,CompositePodGroup=false"}, noSpace},
		{[]string{"simulate", "--feature-gates", "DRAPreemption=false,GenericWorkload=true,"}, []string{
			"DRAPreemption=false,GenericWorkload=true,CompositePodGroup=true", "DRAPreemption=false,GenericWorkload=true,CompositePodGroup=false",
			"DRAPreemption=false,GenericWorkload=true,TopologyAwareWorkloadScheduling=true", "DRAPreemption=false,GenericWorkload=true,TopologyAwareWorkloadScheduling=false",
		}, noSpace},
		{[]string{"scheduler", "--feature-gates", "Nope"}, nil, noSpace},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			checkCompletion(t, tc.args, tc.want, tc.directive)
		})
	}
}

// TestCompletePods completes --pod with the snapshot's pending pods: not the
// bound ones, not the finished ones, and only those beginning with what was
// typed; a snapshot that cannot be read offers nothing, with an error
// directive.
func TestCompletePods(t *testing.T) {
	dir := t.TempDir()
	pod := func(ns, name, node, phase string) string {
		return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: %s}
spec:
  nodeName: %q
  containers: [{name: c, image: i}]
status: {phase: %s}
---
`, name, ns, node, phase)
	}
	snapshot := `apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
` + pod("shop", "web-0", "node-a", "Running") + pod("shop", "web-1", "", "Pending") +
		pod("jobs", "batch-0", "", "Pending") + pod("jobs", "done-0", "", "Succeeded") + pod("shop", "cart-0", "", "Pending")
	path := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(path, []byte(snapshot), 0o600); err != nil {
		t.Fatal(err)
	}
	noFile := cobra.ShellCompDirectiveNoFileComp
	tests := []struct {
		name      string
		args      []string
		want      []string
		directive cobra.ShellCompDirective
	}{
		{"all pending", []string{"whatif", "--snapshot", path, "--pod", ""}, []string{"jobs/batch-0", "shop/cart-0", "shop/web-1"}, noFile},
		{"prefix", []string{"whatif", "--snapshot", path, "--pod", "shop/"}, []string{"shop/cart-0", "shop/web-1"}, noFile},
		{"none match", []string{"whatif", "--snapshot", path, "--pod", "kube-system/"}, nil, noFile},
		{"unreadable snapshot", []string{"whatif", "--snapshot", filepath.Join(dir, "missing.yaml"), "--pod", ""}, nil, noFile | cobra.ShellCompDirectiveError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkCompletion(t, tc.args, tc.want, tc.directive)
		})
	}
}

// checkCompletion runs cobra's hidden __complete command with args, as the
// shell scripts of `reprieve completion` do, and checks the completions and
// the directive.
func checkCompletion(t *testing.T, args, want []string, directive cobra.ShellCompDirective) {
	t.Helper()
	stdout, stderr, code := run(append([]string{cobra.ShellCompRequestCmd}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	last := lines[len(lines)-1]
	if w := fmt.Sprintf(":%d", directive); last != w {
		t.Errorf("directive %s, want %s", last, w)
	}
	if got := lines[:len(lines)-1]; !slices.Equal(got, want) && (len(got) != 0 || len(want) != 0) {
		t.Errorf("completions %q, want %q", got, want)
	}
}
