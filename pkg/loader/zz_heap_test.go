package loader

import (
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
)

func TestZZHeap(t *testing.T) {
	f := os.Getenv("ZZ_FILE")
	if f == "" {
		t.Skip()
	}
	runtime.MemProfileRate = 4096
	s, err := LoadWith(Options{Lean: true}, f)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	out, _ := os.Create("/tmp/heap.prof")
	pprof.Lookup("heap").WriteTo(out, 0)
	out.Close()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("live %d MB total alloc %d MB", ms.HeapAlloc>>20, ms.TotalAlloc>>20)
	runtime.KeepAlive(snap)
	runtime.KeepAlive(s)
}
