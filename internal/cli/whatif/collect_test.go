package whatif

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// heapGoal returns the collector's heap goal after a collection.
func heapGoal() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func TestDeferCollection(t *testing.T) {
	tests := []struct {
		name   string
		env    map[string]string
		input  int64
		raises bool
	}{
		{name: "defaults", input: headroomMinInput, raises: true},
		{name: "GOGC set", env: map[string]string{"GOGC": "100"}, input: 1 << 30},
		{name: "GOMEMLIMIT set", env: map[string]string{"GOMEMLIMIT": "1GiB"}, input: 1 << 30},
		{name: "small input", input: headroomMinInput - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := heapGoal()
			if before >= loadHeadroom/2 {
				t.Fatalf("heap goal %d before is already above the headroom", before)
			}
			release := deferCollection(func(k string) string { return tt.env[k] }, tt.input)
			held := heapGoal()
			release()
			after := heapGoal()
			release() // as whatif's deferred call
			if raised := held >= loadHeadroom; raised != tt.raises {
				t.Errorf("heap goal while held = %d, raised past the headroom = %v, want %v", held, raised, tt.raises)
			}
			if after >= loadHeadroom/2 {
				t.Errorf("heap goal after release = %d, want below half the headroom %d", after, loadHeadroom/2)
			}
		})
	}
}

// TestDeferCollectionFollowsLiveHeap: after each collection the goal is
// set again for the live heap, twice it plus the headroom, and
// release gives GOGC back.
func TestDeferCollectionFollowsLiveHeap(t *testing.T) {
	release := deferCollection(func(string) string { return "" }, headroomMinInput)
	defer release()
	live := make([]byte, 256<<20) // never written: no memory
	want := uint64(2*len(live) + loadHeadroom)
	goal := heapGoal()
	// The goal is set by a finalizer, run after the collection.
	for i := 0; i < 100 && goal < want; i++ {
		time.Sleep(10 * time.Millisecond)
		goal = heapGoal()
	}
	if goal < want || goal > want+want/4 {
		t.Errorf("heap goal with %d bytes live = %d, want about %d", len(live), goal, want)
	}
	runtime.KeepAlive(live)
	release()
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("GOGC after release = %d, want 100", p)
	}
}
