package loader

import (
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
)

func TestZZHeap(t *testing.T) {
	path := os.Getenv("ZZ_FILE")
	if path == "" {
		t.Skip()
	}
	s, err := LoadWith(Options{Lean: true}, path)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	f, _ := os.Create("/tmp/small/heap.prof")
	pprof.WriteHeapProfile(f)
	f.Close()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("heap in use %d MB", ms.HeapInuse>>20)
	runtime.KeepAlive(s)
	runtime.KeepAlive(snap)
}
