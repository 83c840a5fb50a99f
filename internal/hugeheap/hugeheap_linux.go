package hugeheap

import (
	"bytes"
	"math"
	"math/bits"
	"os"
	"runtime"
	"runtime/debug"

	"golang.org/x/sys/unix"

	"github.com/reprieve/reprieve/internal/runtimestat"
)

// block is the size of most allocations Reserve makes. Each allocation
// costs about 20 µs of the runtime's bookkeeping: allocating 512 MB took
// 2–3 ms in blocks of 16 MB, 8 ms in blocks of 4 MB (Reserve in all,
// with its collection, takes 5–6 ms in a starting whatif).
const block = 16 << 20

// firstBlock is the size of Reserve's first allocation; the next ones
// double up to block. The runtime zeroes an allocation whole when its
// first pages were the heap's before (pages the collections of a starting
// process freed at the end of the heap), and so touches it with small
// pages before the advice. In a process made to leave such pages, a
// first block of 16 MB cost 4,200 page faults, one of 256 KB 230–1,100.
// (`reprieve whatif` starts without: 190 either way.)
const firstBlock = 256 << 10

// maxStartMemory is the most memory the runtime may hold for Reserve to
// go ahead. A process holding more is no longer starting: its blocks
// would land on pages it freed, which the runtime zeroes, touching them
// with small pages (BenchmarkWhatifInProcess, which runs whatif again and
// again in one process, took 1.58 s an iteration so, 0.67–0.75 s without).
const maxStartMemory = 64 << 20

// Reserve makes about n bytes of the heap the process grows into next
// eligible for transparent huge pages, when the kernel gives them only to
// memory that asks. It runs a garbage collection, to free what it
// allocated: call it before a big load, while the process is starting
// (it does nothing once the runtime holds more than 64 MB). It does
// nothing under a memory limit (GOMEMLIMIT, debug.SetMemoryLimit): the
// blocks would count against it. It reports whether it advised any
// memory.
func Reserve(n int) bool {
	// Not on a 32-bit system, whose address space hundreds of megabytes
	// reserved would crowd.
	if bits.UintSize < 64 || held() > maxStartMemory || memoryLimited() || !onRequest() || strictOvercommit() {
		return false
	}
	// No collection while the blocks are allocated: they would start
	// several, one for each time the heap doubles.
	gcPercent := debug.SetGCPercent(-1)
	advised := advise(n)
	debug.SetGCPercent(gcPercent)
	runtime.GC()
	return advised
}

// advise allocates about n bytes in blocks and advises them
// MADV_HUGEPAGE; they are garbage once it returns.
func advise(n int) bool {
	advised := false
	var blocks [][]byte
	for size, total := firstBlock, 0; total < n; size = min(2*size, block) {
		blocks = append(blocks, make([]byte, size))
		total += size
	}
	for _, b := range blocks {
		if unix.Madvise(b, unix.MADV_HUGEPAGE) == nil {
			advised = true
		}
	}
	return advised
}

// held returns the memory the runtime has mapped.
func held() uint64 { return runtimestat.Bytes("/memory/classes/total:bytes") }

// memoryLimited reports whether the runtime has a memory limit.
func memoryLimited() bool { return debug.SetMemoryLimit(-1) != math.MaxInt64 }

// onRequest reports whether the kernel gives transparent huge pages only
// to memory advised MADV_HUGEPAGE.
func onRequest() bool {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil && bytes.Contains(mode, []byte("[madvise]"))
}

// strictOvercommit reports whether the kernel counts every mapping
// against a commit limit (vm.overcommit_memory 2): there, reserving memory
// the load may never use could make the runtime fail to grow the heap.
func strictOvercommit() bool {
	mode, err := os.ReadFile("/proc/sys/vm/overcommit_memory")
	return err == nil && bytes.HasPrefix(mode, []byte("2"))
}
