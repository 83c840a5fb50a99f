package filter

import (
	"runtime"
	"sync"
)

// rangeWorkers is how many goroutines PreFilter uses to count the pods of
// n nodes: one per nodesPerRange nodes, at most GOMAXPROCS, at least one.
func rangeWorkers(n int) int {
	return max(min(runtime.GOMAXPROCS(0), n/nodesPerRange), 1)
}

// nodesPerRange is the fewest nodes worth a goroutine when every pod of
// them is matched against selectors.
const nodesPerRange = 64

// forNodeRanges splits the node indexes [0, n) into workers contiguous
// ranges and calls work(w, lo, hi) for each, on goroutines of their own
// but the first, which runs on the caller's.
func forNodeRanges(n, workers int, work func(w, lo, hi int)) {
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(w, w*n/workers, (w+1)*n/workers)
		}()
	}
	work(0, 0, n/workers)
	wg.Wait()
}
