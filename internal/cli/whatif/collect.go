package whatif

import (
	"runtime/debug"
	"sync"
)

// loadGCPercent is the GOGC a large load runs with. A load keeps nearly
// all it allocates (150,000 pods decode to about 150 MB of live heap and
// about as much garbage), so collecting at the default pace only scans,
// again and again, a heap that is still growing. At 400 the collector
// runs each time the live heap has grown fivefold, and the peak stays
// about what the load allocates.
const loadGCPercent = 400

// collectLessMinInput is the size of snapshot files from which a load
// collects less often.
const collectLessMinInput = 16 << 20

// collectLess sets GOGC to loadGCPercent (the one runtime setting whatif
// makes) until release is called, for a load of inputBytes of files, or of
// a live cluster (inputBytes < 0, whose size is known only once listed). A
// user who set GOGC or GOMEMLIMIT has chosen how to collect, and keeps it;
// so does a load of small files. release can be called more than once.
func collectLess(getenv func(string) string, inputBytes int64) (release func()) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" || (inputBytes >= 0 && inputBytes < collectLessMinInput) {
		return func() {}
	}
	old := debug.SetGCPercent(loadGCPercent)
	return sync.OnceFunc(func() { debug.SetGCPercent(old) })
}
