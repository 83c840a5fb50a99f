// Package hugeheap lets a process that is about to grow its heap by
// hundreds of megabytes have that heap backed by transparent huge pages.
//
// A one-shot `reprieve whatif` on a big snapshot grows its heap to about
// 250 MB and touches every page of it once. With 4 KB pages that is 64,000
// page faults; on a virtual machine each costs microseconds (measured on
// the project's 2-core machine: touching 256 MB of fresh memory took
// 0.65–0.8 s with 4 KB pages and 26 ms with 2 MB pages). The Go runtime
// does not ask for huge pages, and where the kernel gives them only on
// request (transparent_hugepage "madvise", as Ubuntu and others ship it)
// the heap gets none.
//
// Reserve asks for them: it allocates heap memory the load will use next,
// without touching it, advises it MADV_HUGEPAGE, and frees it; the
// runtime keeps the freed memory and hands it out again, lowest address
// first, to the load's objects. Where the kernel gives huge pages to
// every mapping ("always"), or to none ("never"), under strict overcommit
// or a memory limit, on 32-bit systems, and once the process holds more
// than a starting one, it does nothing.
package hugeheap
