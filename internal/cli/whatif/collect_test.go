package whatif

import (
	"runtime"
	"runtime/metrics"
	"testing"
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
		{name: "defaults", input: ballastMinInput, raises: true},
		{name: "GOGC set", env: map[string]string{"GOGC": "100"}, input: 1 << 30},
		{name: "GOMEMLIMIT set", env: map[string]string{"GOMEMLIMIT": "1GiB"}, input: 1 << 30},
		{name: "small input", input: ballastMinInput - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := heapGoal()
			if before >= loadBallast {
				t.Fatalf("heap goal %d before the ballast is already above it", before)
			}
			release := deferCollection(func(k string) string { return tt.env[k] }, tt.input)
			held := heapGoal()
			release()
			after := heapGoal()
			release() // as whatif's deferred call: release is still reachable
			if raised := held >= 2*loadBallast; raised != tt.raises {
				t.Errorf("heap goal while held = %d, raised past 2×ballast = %v, want %v", held, raised, tt.raises)
			}
			if after >= loadBallast {
				t.Errorf("heap goal after release = %d, want below the ballast %d", after, loadBallast)
			}
		})
	}
}
