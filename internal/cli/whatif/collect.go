package whatif

import "runtime"

// loadBallast is the size of the ballast deferCollection holds during a
// load. A load keeps nearly all it allocates (150,000 pods decode to about
// 300 MB of live heap and 100 MB of garbage), so collecting while it runs
// only scans, again and again, a heap that is still growing: on a 2-core
// machine a third of the load's time. With the ballast, the collector's
// goal is twice the live heap plus ballast, so a load of that size runs
// without a collection, and a larger one collects as often as the live
// heap doubles, as without the ballast.
const loadBallast = 512 << 20

// ballastMinInput is the size of snapshot files from which a load gets the
// ballast.
const ballastMinInput = 16 << 20

// deferCollection holds, until release is called, a ballast of loadBallast
// bytes the garbage collector counts as live heap and never scans. It is
// never written, so the kernel never backs it with memory: it raises the
// collector's goal, not the process's memory. Peak memory can grow by at
// most loadBallast, and only when the load makes that much garbage.
// A user who sets GOGC or GOMEMLIMIT has chosen how to collect, and gets no
// ballast; nor does a load of fewer than ballastMinInput bytes of files
// (inputBytes), which collects little, and whose process may already have
// freed memory the ballast would then be written into to be zeroed (as
// tests that run whatif again and again do).
func deferCollection(getenv func(string) string, inputBytes int64) (release func()) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" || inputBytes < ballastMinInput {
		return func() {}
	}
	ballast := make([]byte, loadBallast)
	return func() {
		// Dropped here, not when release becomes unreachable: a deferred
		// release lives as long as the command.
		runtime.KeepAlive(ballast)
		ballast = nil
	}
}
