package whatif

import (
	"runtime/debug"
	"testing"
)

// TestCollectLess: GOGC is raised for a large or live load only, is left
// to a user who set GOGC or GOMEMLIMIT, and is given back by release.
func TestCollectLess(t *testing.T) {
	tests := map[string]struct {
		env    map[string]string
		input  int64
		raises bool
	}{
		"large files":    {input: collectLessMinInput, raises: true},
		"live cluster":   {input: -1, raises: true},
		"small files":    {input: collectLessMinInput - 1},
		"GOGC set":       {env: map[string]string{"GOGC": "100"}, input: 1 << 30},
		"GOMEMLIMIT set": {env: map[string]string{"GOMEMLIMIT": "1GiB"}, input: 1 << 30},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before := debug.SetGCPercent(100)
			defer debug.SetGCPercent(before)
			release := collectLess(func(k string) string { return tc.env[k] }, tc.input)
			held := debug.SetGCPercent(-1)
			debug.SetGCPercent(held)
			release()
			release() // as whatif's deferred call
			after := debug.SetGCPercent(100)
			if raised := held == loadGCPercent; raised != tc.raises {
				t.Errorf("GOGC while held = %d, want raised %v", held, tc.raises)
			}
			if after != 100 {
				t.Errorf("GOGC after release = %d, want 100", after)
			}
		})
	}
}
