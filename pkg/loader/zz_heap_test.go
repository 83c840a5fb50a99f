package loader

import (
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
)

func TestZZHeap(t *testing.T) {
	path := os.Getenv("ZZ_SNAP")
	if path == "" {
		t.Skip()
	}
	set, err := LoadWith(Options{Lean: true}, path)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("after load: heap %d MB", ms.HeapAlloc>>20)
	snap, err := set.Build()
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("after build: heap %d MB", ms.HeapAlloc>>20)
	f, _ := os.Create("/tmp/zzheap.prof")
	pprof.WriteHeapProfile(f)
	f.Close()
	runtime.KeepAlive(snap)
	runtime.KeepAlive(set)
}
