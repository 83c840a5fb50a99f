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
	"github.com/reprieve/reprieve/internal/cli/version"
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
	root.AddCommand(whatif.NewSnapshotCommand(s.Out, s.Err))
	root.AddCommand(version.NewCommand(s.Out))
	root.Version = version.Get().String()
	root.SetVersionTemplate("{{.Version}}\n")
	// Misuse of flags and arguments is a usage error (exit code 2),
	// however cobra words it.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return clierr.Usagef("%v", err) })
	root.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	root.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return clierr.Usagef("unknown command %q for %q", args[0], cmd.CommandPath())
		}
		return nil
	}
	for _, c := range root.Commands() {
		if validate := c.Args; validate != nil {
			c.Args = func(cmd *cobra.Command, args []string) error {
				if err := validate(cmd, args); err != nil {
					return clierr.Usagef("%v", err)
				}
				return nil
			}
		}
	}
	return root
}

// Execute runs the command line and returns the process exit code: 0 on
// success, 2 for bad input or usage, 1 for any other failure.
func Execute(ctx context.Context, args []string, s Streams) int {
	return ExecuteAs(ctx, "reprieve", args, s)
}

// ExecuteAs is Execute for the program named program (the base name it was
// run as): run as kubectl-reprieve, as kubectl runs its plugins, usage and
// help say "kubectl reprieve".
func ExecuteAs(ctx context.Context, program string, args []string, s Streams) int {
	// Whatever a command prints, a failed write to standard output (a
	// full disk, a closed pipe) loses the answer: it is the command's
	// failure even where the command did not check.
	out := &stickyWriter{w: s.Out}
	s.Out = out
	root := NewRootCommand(s)
	if strings.HasPrefix(program, "kubectl-") {
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl " + strings.TrimPrefix(program, "kubectl-")}
	}
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil && out.err != nil {
		err = fmt.Errorf("writing the output: %w", out.err)
	}
	if err == nil {
		return 0
	}
	fmt.Fprintln(s.Err, "error:", err)
	if errors.Is(err, clierr.ErrUsage) || clierr.IsInput(err) {
		return 2
	}
	return 1
}

// stickyWriter writes to w and keeps the first error a write returned;
// later writes fail with it without writing.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	if err != nil {
		s.err = err
	}
	return n, err
}
