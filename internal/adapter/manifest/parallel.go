package manifest

import (
	"runtime"
	"sync"
)

// parallel calls f(i) for i in [0, n) on up to the set's Parallelism
// goroutines, in chunks so that neighbouring documents share a goroutine.
func (s *Set) parallel(n int, f func(i int)) {
	s.parallelEach(n, func() func(int) { return f })
}

// parallelEach is parallel with a function per goroutine: each goroutine
// calls newF once, and the function it returns for each of its i.
func (s *Set) parallelEach(n int, newF func() func(i int)) {
	workers := s.opts.Parallelism
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	const chunk = 64
	if workers == 1 || n <= chunk {
		f := newF()
		for i := range n {
			f(i)
		}
		return
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		next int
	)
	take := func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		lo := next
		next = min(next+chunk, n)
		return lo, next
	}
	for range min(workers, (n+chunk-1)/chunk) {
		wg.Go(func() {
			f := newF()
			for {
				lo, hi := take()
				if lo >= hi {
					return
				}
				for i := lo; i < hi; i++ {
					f(i)
				}
			}
		})
	}
	wg.Wait()
}
