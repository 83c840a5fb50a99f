package cli

import (
	"fmt"
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
			stdout, stderr, code := run(append([]string{cobra.ShellCompRequestCmd}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			lines := strings.Split(strings.TrimSpace(stdout), "\n")
			last := lines[len(lines)-1]
			if want := fmt.Sprintf(":%d", tc.directive); last != want {
				t.Errorf("directive %s, want %s", last, want)
			}
			if got := lines[:len(lines)-1]; !slices.Equal(got, tc.want) && (len(got) != 0 || len(tc.want) != 0) {
				t.Errorf("completions %q, want %q", got, tc.want)
			}
		})
	}
}
