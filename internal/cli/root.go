// Package cli is reprieve's command line: a cobra root command with one
// package per subcommand.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reprieve/reprieve/internal/cli/clierr"
	"github.com/reprieve/reprieve/internal/cli/schedulercmd"
	"github.com/reprieve/reprieve/internal/cli/simulate"
	"github.com/reprieve/reprieve/internal/cli/whatif"
)

// Streams are the standard streams a command uses.
type Streams struct {
	In       io.Reader
	Out, Err io.Writer
}

// NewRootCommand builds the reprieve command tree.
func NewRootCommand(s Streams) *cobra.Command {
	root := &cobra.Command{
		Use:           "reprieve",
		Short:         "Kubernetes pod preemption, decided exactly as kube-scheduler does",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	root.AddCommand(whatif.NewCommand(s.Out, s.Err))
	root.AddCommand(simulate.NewCommand(s.Out, s.Err))
	root.AddCommand(schedulercmd.NewCommand(s.Err))
	return root
}

// Execute runs the command line and returns the process exit code: 0 on
// success, 2 for bad input or usage, 1 for any other failure.
func Execute(ctx context.Context, args []string, s Streams) int {
	root := NewRootCommand(s)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(s.Err, "error:", err)
	if errors.Is(err, clierr.ErrUsage) || clierr.IsInput(err) || isCobraUsage(err) {
		return 2
	}
	return 1
}

func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "flag needs an argument", "invalid argument", "accepts ", "required flag", "requires at least", "arg(s)"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
