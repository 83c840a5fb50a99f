package manifest

import (
	"context"
	"runtime"
	"sync"
)

// parallel calls f(i) for i in [0, n) on up to the set's Parallelism
// goroutines, in chunks so that neighbouring documents share a goroutine.
// Once ctx is done, no chunk is begun: the caller reads ctx's error.
func (s *Set) parallel(ctx context.Context, n int, f func(i int)) {
	s.parallelEach(ctx, n, func() func(int) { return f })
}

// parallelEach is parallel with a function per goroutine: each goroutine
// calls newF once, and the function it returns for each of its i.
func (s *Set) parallelEach(ctx context.Context, n int, newF func() func(i int)) {
	const chunk = 64
	workers := s.workers()
	if workers == 1 || n <= chunk {
		f := newF()
		for i := range n {
			if i%chunk == 0 && ctx.Err() != nil {
				return
			}
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
		if ctx.Err() != nil {
			next = n
		}
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

// workers is how many goroutines prepare the set's documents.
func (s *Set) workers() int {
	if s.opts.Parallelism > 0 {
		return s.opts.Parallelism
	}
	return runtime.GOMAXPROCS(0)
}

// worker converts and prepares documents on one goroutine: through the
// fast path's worker when the set has one, which declines what it does not
// do exactly as the general path does, else (and then) with the general
// path's functions.
type worker struct {
	fast             *fastWorker // nil on the general path
	lean, duplicates bool
}

// newWorker returns a worker for one goroutine of the set.
func (s *Set) newWorker() *worker {
	w := &worker{lean: s.opts.Lean, duplicates: s.opts.Validation != ValidateIgnore}
	if s.fast != nil {
		w.fast = s.fast.worker(w.lean, w.duplicates)
	}
	return w
}

// toJSON converts a YAML document to JSON, with its first duplicate key;
// an empty document has no data (convertYAML).
func (w *worker) toJSON(doc []byte) (data []byte, duplicate string, _ *InputError) {
	if w.fast != nil {
		if data, ok := w.fast.toJSON(doc); ok {
			if isBlank(data) {
				w.fast.release(data)
				return nil, "", nil
			}
			return data, "", nil
		}
	}
	return convertYAML(doc, w.duplicates)
}

// prepare prepares a document (prepare).
func (w *worker) prepare(raw []byte) prepared {
	if w.fast != nil {
		if p, ok := w.fast.prepare(raw); ok {
			return p
		}
	}
	return prepare(raw, w.lean)
}

// release hands back the JSON toJSON made, once nothing needs it: the
// fast path converts the next document into its room.
func (w *worker) release(data []byte) {
	if w.fast != nil {
		w.fast.release(data)
	}
}
