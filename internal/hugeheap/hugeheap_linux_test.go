package hugeheap

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"
)

// TestReserve checks that the heap Reserve advised is not touched by it,
// and that the objects allocated next are backed by huge pages.
func TestReserve(t *testing.T) {
	if !onRequest() || strictOvercommit() {
		t.Skip("the kernel does not give huge pages on request here")
	}
	if held() > maxStartMemory {
		t.Skip("the process is no longer starting (go test -count)")
	}
	const n = 128 << 20
	anon := memory(t, "/proc/self/status", "RssAnon:")
	if !Reserve(n) {
		t.Fatal("Reserve advised nothing")
	}
	// At most the first block was the heap's before, and zeroed.
	if grown := memory(t, "/proc/self/status", "RssAnon:") - anon; grown > 2*block {
		t.Errorf("Reserve touched %d MB of the %d it reserved", grown>>20, n>>20)
	}
	objects := make([][]byte, 0, n/2/1024)
	for range cap(objects) {
		objects = append(objects, bytes.Repeat([]byte{1}, 1024))
	}
	// (The Go runtime asks for huge pages for none of the heap: without
	// the advice there are next to none.)
	if got := memory(t, "/proc/self/smaps_rollup", "AnonHugePages:"); got < n/4 {
		t.Errorf("%d MB of huge pages after allocating %d MB, want at least %d", got>>20, n>>21, n>>22)
	}
	runtime.KeepAlive(objects)
}

// TestReserveUnderMemoryLimit checks that Reserve does nothing under a
// memory limit, which its blocks would count against.
func TestReserveUnderMemoryLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 30))
	if Reserve(64 << 20) {
		t.Error("Reserve advised memory under a memory limit")
	}
}

// memory returns the field of a /proc file that counts kB, in bytes.
func memory(t *testing.T, path, field string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := bytes.CutPrefix(s.Bytes(), []byte(field)); ok {
			kb, err := strconv.Atoi(string(bytes.Fields(rest)[0]))
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("%s: no %s", path, field)
	return 0
}

// TestReserveLate checks that Reserve does nothing in a process holding
// more than a starting one: its blocks would be zeroed.
func TestReserveLate(t *testing.T) {
	garbage := make([]byte, 2*maxStartMemory)
	garbage[0] = 1
	if Reserve(64 << 20) {
		t.Error("Reserve advised memory in a process holding 128 MB")
	}
	runtime.KeepAlive(garbage)
}
