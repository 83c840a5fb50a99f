package whatif

import (
	"os"
	"path/filepath"
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
			if raised := held >= 2*loadBallast; raised != tt.raises {
				t.Errorf("heap goal while held = %d, raised past 2×ballast = %v, want %v", held, raised, tt.raises)
			}
			if after >= loadBallast {
				t.Errorf("heap goal after release = %d, want below the ballast %d", after, loadBallast)
			}
		})
	}
}

func TestFilesBytes(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, size int) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.yaml", 10)
	write("sub/b.json", 20)
	write("sub/deeper/c.yaml", 5)
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		paths []string
		want  int64
	}{
		{name: "file", paths: []string{a}, want: 10},
		{name: "directory walked", paths: []string{filepath.Join(dir, "sub")}, want: 25},
		{name: "symlink to a file", paths: []string{link}, want: 10},
		{name: "missing and stdin count nothing", paths: []string{filepath.Join(dir, "missing"), "-", a}, want: 10},
		{name: "none", want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := filesBytes(tt.paths); got != tt.want {
				t.Errorf("filesBytes = %d, want %d", got, tt.want)
			}
		})
	}
}
