package filter

import "sync"

// rangeWorkers is how many goroutines forNodeRanges should use for n
// nodes when a goroutine is worth perRange nodes: at most limit, at least
// one.
func rangeWorkers(limit, n, perRange int) int {
	return max(min(limit, n/perRange), 1)
}

// podsMatchingPerRange is the fewest nodes worth a goroutine when every pod
// of them is matched against selectors (PreFilter's counting).
const podsMatchingPerRange = 64

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
