package whatif

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/spf13/pflag"
)

// addChunkSize registers --chunk-size as kubectl has it.
func addChunkSize(f *pflag.FlagSet, v *int64) {
	f.Int64Var(v, "chunk-size", 500, "list a live cluster's nodes and pods in pages of this many objects (0: all in one response), as kubectl's --chunk-size")
}

// progress writes a line to errOut at most once a second while a live
// list runs, from its first second on: a user waiting on a big cluster
// sees it advance, one who waits less sees nothing.
type progress struct {
	errOut io.Writer
	start  time.Time
	mu     sync.Mutex
	last   time.Time
	wrote  bool
}

func newProgress(errOut io.Writer) *progress {
	now := time.Now()
	return &progress{errOut: errOut, start: now, last: now}
}

// report is kube.ListOptions.Progress.
func (p *progress) report(nodes, pods int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if now.Sub(p.last) < time.Second {
		return
	}
	p.last, p.wrote = now, true
	fmt.Fprintf(p.errOut, "reading the cluster: %d nodes, %d pods so far (%.0fs)\n", nodes, pods, now.Sub(p.start).Seconds())
}

// done says how long the list took, if progress was shown.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.wrote {
		fmt.Fprintf(p.errOut, "read the cluster in %.1fs\n", time.Since(p.start).Seconds())
	}
}
