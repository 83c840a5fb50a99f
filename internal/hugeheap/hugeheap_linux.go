package hugeheap

import (
	"bytes"
	"math/bits"
	"os"
	"runtime"
	"runtime/debug"

	"golang.org/x/sys/unix"
)

// block is the size of each allocation Reserve makes. The runtime zeroes
// an allocation whole when its first pages were the heap's before (then
// they are touched, with small pages, before the advice), so the
// reservation is made of blocks and at most the first is. Each
// allocation also costs about 20 µs of the runtime's bookkeeping: 512 MB
// takes 2–3 ms in blocks of 16 MB, 8 ms in blocks of 4 MB.
const block = 16 << 20

// Reserve makes about n bytes of the heap the process grows into next
// eligible for transparent huge pages, when the kernel gives them only to
// memory that asks. It runs a garbage collection, to free what it
// allocated: call it before a big load, while the heap is small. It
// reports whether it advised any memory.
func Reserve(n int) bool {
	// Not on a 32-bit system, whose address space hundreds of megabytes
	// reserved would crowd.
	if bits.UintSize < 64 || !onRequest() || strictOvercommit() {
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

// advise allocates n bytes in blocks and advises them MADV_HUGEPAGE; they
// are garbage once it returns.
func advise(n int) bool {
	advised := false
	blocks := make([][]byte, 0, n/block)
	for range n / block {
		blocks = append(blocks, make([]byte, block))
	}
	for _, b := range blocks {
		if unix.Madvise(b, unix.MADV_HUGEPAGE) == nil {
			advised = true
		}
	}
	return advised
}

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
