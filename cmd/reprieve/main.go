// Command reprieve answers what Kubernetes pod preemption would do.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/reprieve/reprieve/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Execute(ctx, os.Args[1:], cli.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}
