package simulate

import (
	"strings"
	"testing"
	"time"

	"github.com/reprieve/reprieve/internal/adapter/sim"
)

// TestProgressLine: the bar follows pods done over pods expected, not
// virtual time, and reaches 100% only when the run has finished.
func TestProgressLine(t *testing.T) {
	tests := map[string]struct {
		p    sim.Progress
		want string
	}{
		"a quarter of the pods, little virtual time": {
			p:    sim.Progress{Done: 5, Expected: 20, Virtual: 90 * time.Second, End: 10 * time.Minute},
			want: "[##########..............................]  25% 5/20 pods done, virtual 1m30s / 10m0s",
		},
		"all pods done before the end": {
			p:    sim.Progress{Done: 20, Expected: 20, Virtual: time.Minute, End: 10 * time.Minute},
			want: "[#######################################.]  99% 20/20 pods done, virtual 1m0s / 10m0s",
		},
		"finished with pods still pending": {
			p:    sim.Progress{Done: 18, Expected: 20, Virtual: 10 * time.Minute, End: 10 * time.Minute, Finished: true},
			want: "[########################################] 100% 18/20 pods done, virtual 10m0s / 10m0s",
		},
		"nothing expected": {
			p:    sim.Progress{End: time.Minute},
			want: "[........................................]   0% 0/0 pods done, virtual 0s / 1m0s",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := progressLine(tc.p); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestDurationsNeverNegative: the summary's durations print as 0s below
// zero and as the longest duration past it, never negative or wrapped.
func TestDurationsNeverNegative(t *testing.T) {
	for in, want := range map[float64]string{-57600: "0s", -0.5: "0s", 1.5: "1.5s", 1e300: "2562047h47m16.854775807s"} {
		if got := secs(in); got != want {
			t.Errorf("secs(%v) = %q, want %q", in, got, want)
		}
	}
	res := &sim.Result{Summary: sim.Summary{VictimRuntimeLostS: -57599980}}
	var b strings.Builder
	if err := printSummary(&b, &sim.Scenario{}, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "runtime lost by victims                        0s\n") {
		t.Errorf("summary:\n%s\nwant runtime lost by victims 0s", b.String())
	}
}
