// Package completion registers shell completion of flag values on
// reprieve's commands (cobra's RegisterFlagCompletionFunc), so that
// `reprieve completion bash|zsh|fish|powershell` scripts offer them.
package completion

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reprieve/reprieve/internal/cli/output"
	"github.com/reprieve/reprieve/internal/engine/profile"
)

// Gates returns the kube-scheduler feature gates --feature-gates accepts.
func Gates() []string {
	return []string{
		profile.GateCompositePodGroup,
		profile.GateDRAPreemption,
		profile.GateGenericWorkload,
		profile.GateTopologyAwareWorkloadScheduling,
	}
}

// register adds f as the completion of flag on cmd. The error, for a flag
// the command lacks or one registered twice, is dropped: the tests call
// __complete on every flag registered.
func register(cmd *cobra.Command, flag string, f cobra.CompletionFunc) {
	_ = cmd.RegisterFlagCompletionFunc(flag, f)
}

// fixed completes a flag with those of values toComplete begins.
func fixed(values ...string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []string
		for _, v := range values {
			if strings.HasPrefix(v, toComplete) {
				out = append(out, v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// Output completes -o with the given kinds; the templated kinds end in
// "=", and when only they match no space follows. After KIND-file= the
// shell completes file names.
func Output(cmd *cobra.Command, kinds ...string) {
	values := output.Values(kinds...)
	register(cmd, "output", func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if strings.Contains(toComplete, "=") {
			kind, _, _ := strings.Cut(toComplete, "=")
			if strings.HasSuffix(kind, "-file") {
				return nil, cobra.ShellCompDirectiveDefault
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		templatesOnly := true
		for _, v := range values {
			if strings.HasPrefix(v, toComplete) {
				out = append(out, v)
				templatesOnly = templatesOnly && strings.HasSuffix(v, "=")
			}
		}
		directive := cobra.ShellCompDirectiveNoFileComp
		if templatesOnly && len(out) > 0 {
			directive |= cobra.ShellCompDirectiveNoSpace
		}
		return out, directive
	})
}

// VictimPolicy completes --victim-policy with the policies.
func VictimPolicy(cmd *cobra.Command) {
	values := make([]string, 0, len(profile.Policies()))
	for _, p := range profile.Policies() {
		values = append(values, string(p))
	}
	register(cmd, "victim-policy", fixed(values...))
}

// Validate completes --validate with kubectl's values.
func Validate(cmd *cobra.Command) {
	register(cmd, "validate", fixed("strict", "warn", "ignore"))
}

// FeatureGates completes the last of --feature-gates' comma-separated
// pairs: a gate not given yet, =true or =false.
func FeatureGates(cmd *cobra.Command) {
	register(cmd, "feature-gates", func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		done, last := "", toComplete
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			done, last = toComplete[:i+1], toComplete[i+1:]
		}
		given := map[string]bool{}
		for _, pair := range strings.Split(done, ",") {
			name, _, _ := strings.Cut(pair, "=")
			given[strings.TrimSpace(name)] = true
		}
		var out []string
		for _, g := range Gates() {
			if given[g] {
				continue
			}
			for _, v := range []string{"=true", "=false"} {
				if strings.HasPrefix(g+v, last) {
					out = append(out, done+g+v)
				}
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	})
}

// PodLister returns the pending pods a --pod flag may name, as
// "namespace/name"; it is called only when the shell asks.
type PodLister func(ctx context.Context) ([]string, error)

// Pods completes --pod with the pending pods list returns that begin with
// what was typed. A lister that fails offers nothing (the shell's
// completion has no way to show an error).
func Pods(cmd *cobra.Command, list PodLister) {
	register(cmd, "pod", func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		keys, err := list(ctx)
		if err != nil {
			cobra.CompDebugln(fmt.Sprintf("listing pods: %v", err), true)
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		var out []string
		for _, k := range keys {
			if strings.HasPrefix(k, toComplete) {
				out = append(out, k)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
}
