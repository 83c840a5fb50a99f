package sim

import (
	"container/heap"
	"time"
)

type timer struct {
	at  time.Time
	seq int
	fn  func()
}

type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)   { *h = append(*h, x.(*timer)) }
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}

// after runs fn once d has passed, unless that is after the run's end: then
// never (d may be maxDuration).
func (w *world) after(d time.Duration, fn func()) {
	if d > w.end.Sub(w.now()) {
		return
	}
	w.timerSeq++
	heap.Push(&w.timers, &timer{at: w.now().Add(d), seq: w.timerSeq, fn: fn})
}

// advance moves the clock to t, running the timers due on the way, each at
// its own time; it never moves the clock back.
func (w *world) advance(t time.Time) {
	for len(w.timers) > 0 && !w.timers[0].at.After(t) && !w.stopped() {
		if at := w.timers[0].at; at.After(w.now()) {
			w.clock.SetTime(at)
		}
		tm := heap.Pop(&w.timers).(*timer)
		tm.fn()
		w.reconcile()
	}
	if t.After(w.now()) {
		w.clock.SetTime(t)
	}
}

// runDue runs every timer due now; timers may add more.
func (w *world) runDue() {
	for len(w.timers) > 0 && !w.timers[0].at.After(w.now()) && !w.stopped() {
		t := heap.Pop(&w.timers).(*timer)
		t.fn()
		w.reconcile()
	}
}
