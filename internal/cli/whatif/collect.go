package whatif

import (
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/reprieve/reprieve/internal/runtimestat"
)

// loadHeadroom is the garbage deferCollection lets a load leave, beyond
// its live heap, before the collector runs. A load keeps nearly all it allocates (150,000 pods decode to about 150 MB
// of live heap and as much garbage), so collecting while it runs only
// scans, again and again, a heap that is still growing: on a 2-core
// machine a third of the load's time. With the headroom, the collector's
// goal is twice the live heap plus loadHeadroom, so a load of that size
// runs without a collection, and a larger one collects as often as its
// live heap doubles, as without it.
const loadHeadroom = 512 << 20

// headroomMinInput is the size of snapshot files from which a load gets
// the headroom.
const headroomMinInput = 16 << 20

// maxLoadGCPercent bounds the GOGC deferCollection sets: the collector's
// smallest goal is 4 MiB times GOGC/100, which this one makes
// loadHeadroom.
const maxLoadGCPercent = 100 * loadHeadroom / (4 << 20)

// deferCollection, until release is called, sets the collector's goal to
// twice the live heap plus loadHeadroom, as a ballast of loadHeadroom bytes
// would, and sets it again after each collection. It sets GOGC
// (debug.SetGCPercent) rather than hold a ballast: a ballast never written
// costs no memory only while the runtime need not zero it, which it does,
// as we read it, when the ballast's first pages were the heap's before
// (seen twice in about forty loads here: the process held 512 MiB more).
// Peak memory grows by the garbage the load leaves, at most its live heap
// plus loadHeadroom.
//
// A user who sets GOGC or GOMEMLIMIT has chosen how to collect, and keeps
// it; so does a load of fewer than headroomMinInput bytes of files
// (inputBytes), which collects little.
func deferCollection(getenv func(string) string, inputBytes int64) (release func()) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" || inputBytes < headroomMinInput {
		return func() {}
	}
	t := &collectionTuner{old: debug.SetGCPercent(loadGCPercent(liveHeap()))}
	t.arm()
	return t.release
}

// collectionTuner sets GOGC after each collection, until released.
type collectionTuner struct {
	mu       sync.Mutex
	old      int
	released bool
}

// gcSentinel is an object made unreachable on purpose: its finalizer runs
// after the collection that finds it so.
type gcSentinel struct{ _ [16]byte }

// arm has the next collection call tune.
func (t *collectionTuner) arm() {
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) { t.tune() })
}

// tune sets GOGC for the live heap the last collection found, and arms
// again.
func (t *collectionTuner) tune() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.released {
		return
	}
	debug.SetGCPercent(loadGCPercent(liveHeap()))
	t.arm()
}

// release gives GOGC back its value; it can be called more than once.
func (t *collectionTuner) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.released {
		t.released = true
		debug.SetGCPercent(t.old)
	}
}

// loadGCPercent is the GOGC that makes the goal of a heap of live bytes
// twice live plus loadHeadroom.
func loadGCPercent(live uint64) int {
	if live == 0 {
		return maxLoadGCPercent
	}
	return int(min(100*(live+loadHeadroom)/live, maxLoadGCPercent))
}

// liveHeap returns the heap the last collection found live.
func liveHeap() uint64 { return runtimestat.Bytes("/gc/heap/live:bytes") }
