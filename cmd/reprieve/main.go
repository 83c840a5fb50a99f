// Command reprieve answers what Kubernetes pod preemption would do.
package main

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/reprieve/reprieve/internal/cli"
)

func main() {
	// The first SIGINT or SIGTERM cancels the context: a simulation stops
	// within a second and the command exits non-zero. A second one kills
	// the process at once, as the default handlers do.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := cli.ExecuteAs(ctx, filepath.Base(os.Args[0]), os.Args[1:], cli.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}
