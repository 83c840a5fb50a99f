package sim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprieve/reprieve/internal/adapter/manifest"
)

// TestLimiter checks the virtual token bucket against client-go's: burst
// calls go at once, then one per 1/QPS, and idle time refills the bucket.
func TestLimiter(t *testing.T) {
	ms := time.Millisecond
	tests := map[string]struct {
		model CostModel
		calls []time.Duration // when each call is wanted
		want  []time.Duration // when it goes
	}{
		"burst then one per interval": {
			model: CostModel{QPS: 10, Burst: 3},
			calls: []time.Duration{0, 0, 0, 0, 0},
			want:  []time.Duration{0, 0, 0, 100 * ms, 200 * ms},
		},
		"idle time refills": {
			model: CostModel{QPS: 10, Burst: 2},
			calls: []time.Duration{0, 0, 0, 1000 * ms, 1000 * ms, 1000 * ms},
			want:  []time.Duration{0, 0, 100 * ms, 1000 * ms, 1000 * ms, 1100 * ms},
		},
		"a call wanted after its token is due goes when wanted": {
			model: CostModel{QPS: 50, Burst: 1},
			calls: []time.Duration{0, 5 * ms, 50 * ms},
			want:  []time.Duration{0, 20 * ms, 50 * ms},
		},
		"a rate too slow for a token to come: the burst, then never": {
			model: CostModel{QPS: 1e-12, Burst: 2},
			calls: []time.Duration{0, 0, 0, time.Hour},
			want:  []time.Duration{0, 0, maxDuration, maxDuration},
		},
		"a burst of slow tokens longer than time.Duration holds": {
			model: CostModel{QPS: 1.0 / (1 << 30), Burst: 20}, // a token every 2^30 s (34 years)
			calls: []time.Duration{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
			want:  []time.Duration{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (1 << 30) * time.Second},
		},
		"negative QPS: no limit": {
			model: CostModel{QPS: -1, Burst: 1},
			calls: []time.Duration{0, 0, 0},
			want:  []time.Duration{0, 0, 0},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			l := newLimiter(tc.model)
			var got []time.Duration
			for _, c := range tc.calls {
				got = append(got, l.take(DefaultStart.Add(c)).Sub(DefaultStart))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("call times (-want,+got):\n%s", diff)
			}
		})
	}
}

// costsScenario is one roomy node, five pods arriving at 1s, and the given
// spec.costs.
func costsScenario(costs string) string {
	doc := `apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "100", memory: 100Gi, pods: "100"}}
---
` + simulationYAML("costs", "1m")
	if costs != "" {
		doc += "  costs: " + costs + "\n"
	}
	return doc + `  actions:
  - at: 1s
    createPods:
      count: 5
      template:
        metadata: {name: p}
        spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
`
}

// TestCosts: each cycle takes spec.costs.cycle and each binding waits for
// its token, so pods arriving together are bound one after another, as a
// live scheduler drains its queue; without spec.costs the defaults apply.
func TestCosts(t *testing.T) {
	tests := map[string]struct {
		costs     string
		wantBound []float64 // seconds, in the pods' order
	}{
		"cycle only": {
			costs:     "{cycle: 10ms, apiQPS: -1}",
			wantBound: []float64{1.01, 1.02, 1.03, 1.04, 1.05},
		},
		"rate limit only": {
			costs:     "{cycle: 0s, apiQPS: 10, apiBurst: 2}",
			wantBound: []float64{1, 1, 1.1, 1.2, 1.3},
		},
		"both": {
			costs:     "{cycle: 30ms, apiQPS: 10, apiBurst: 1}",
			wantBound: []float64{1.03, 1.13, 1.23, 1.33, 1.43},
		},
		"defaults: 500µs a cycle, within kube-scheduler's burst of 100": {
			wantBound: []float64{1.0005, 1.001, 1.0015, 1.002, 1.0025},
		},
		"free": {
			costs:     "{cycle: 0s, apiQPS: -1}",
			wantBound: []float64{1, 1, 1, 1, 1},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			res := runYAMLWith(t, costsScenario(tc.costs), Options{})
			var got []float64
			for _, p := range res.Pods {
				if p.Bound == nil {
					t.Fatalf("%s not bound", p.Pod)
				}
				got = append(got, *p.Bound)
			}
			if diff := cmp.Diff(tc.wantBound, got, cmp.Comparer(func(a, b float64) bool { return fmt.Sprintf("%.6f", a) == fmt.Sprintf("%.6f", b) })); diff != "" {
				t.Errorf("bound at (-want,+got):\n%s", diff)
			}
			if again := runYAMLWith(t, costsScenario(tc.costs), Options{}); !cmp.Equal(res, again) {
				t.Errorf("a second run differs")
			}
		})
	}
	// The summary says which model the times include.
	for costs, want := range map[string]string{
		"":                           "500µs per scheduling cycle, API calls at 50/s with a burst of 100",
		"{cycle: 2ms, apiQPS: -1}":   "2ms per scheduling cycle, API calls not rate-limited",
		"{apiQPS: 7.5, apiBurst: 3}": "500µs per scheduling cycle, API calls at 7.5/s with a burst of 3",
	} {
		if got := runYAMLWith(t, costsScenario(costs), Options{}).Summary.Costs.String(); got != want {
			t.Errorf("spec.costs %q: summary says %q, want %q", costs, got, want)
		}
	}
	// Options.APIQPS and APIBurst (a scheduler configuration's
	// clientConnection) apply when the scenario sets no limit.
	res := runYAMLWith(t, costsScenario("{cycle: 0s}"), Options{APIQPS: 5, APIBurst: 1})
	if got := *res.Pods[4].Bound; fmt.Sprintf("%.3f", got) != "1.800" {
		t.Errorf("with QPS 5, burst 1 from the options the fifth pod is bound at %.3fs, want 1.800s", got)
	}
}

// TestCostsPreemption: a preemption's further calls (two per victim: the
// condition, then the delete) hold the scheduler, so the preemptor's next
// cycle waits for their tokens.
func TestCostsPreemption(t *testing.T) {
	doc := twoNodes + `---
apiVersion: v1
kind: Pod
metadata: {name: low-1}
spec: {nodeName: n1, terminationGracePeriodSeconds: 0, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: low-2}
spec: {nodeName: n1, terminationGracePeriodSeconds: 0, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
---
` + simulationYAML("preempt", "1m") + `  costs: {cycle: 0s, apiQPS: 10, apiBurst: 1}
  actions:
  - at: 1s
    create:
    - {apiVersion: v1, kind: Pod, metadata: {name: urgent}, spec: {priorityClassName: high, containers: [{name: c, resources: {requests: {cpu: "2"}}}]}}
`
	res := runYAMLWith(t, doc, Options{})
	freeRes := runYAMLWith(t, doc, Options{Costs: free()})
	bound := func(r *Result) float64 {
		for _, p := range r.Pods {
			if p.Pod == "default/urgent" && p.Bound != nil {
				return *p.Bound
			}
		}
		t.Fatalf("urgent not bound")
		return 0
	}
	// The preemption cycle's first call goes at 1s; its four further
	// calls at 1.1s to 1.4s; the binding's token is then due at 1.5s.
	if got, want := fmt.Sprintf("%.3f", bound(res)), "1.500"; got != want {
		t.Errorf("urgent bound at %ss, want %ss (free: %.3fs)", got, want, bound(freeRes))
	}
	if res.Summary.PodsPreempted != 2 || freeRes.Summary.PodsPreempted != 2 {
		t.Errorf("pods preempted: %d with costs, %d free; want 2", res.Summary.PodsPreempted, freeRes.Summary.PodsPreempted)
	}
}

// TestCostsInvalid: bad spec.costs values are one-line errors naming the
// field.
func TestCostsInvalid(t *testing.T) {
	for costs, want := range map[string]string{
		"{cycle: -1ms}":    "s.yaml#2: Simulation costs: spec.costs.cycle: must not be negative",
		"{cycle: soon}":    `s.yaml#2: Simulation costs: spec.costs.cycle: time: invalid duration "soon"`,
		"{cycle: 2m}":      "s.yaml#2: Simulation costs: spec.costs.cycle: 2m0s is longer than a minute: a scheduling cycle takes milliseconds",
		"{apiQPS: 0}":      "s.yaml#2: Simulation costs: spec.costs.apiQPS: must be a positive number of calls per second, or negative for no limit",
		"{apiBurst: 0}":    "s.yaml#2: Simulation costs: spec.costs.apiBurst: must be at least 1",
		"{apiQPS: fast}":   "s.yaml#2: Simulation costs: spec.costs.apiQPS: cannot unmarshal string into Go value of type float64",
		"{cycles: 10ms}":   `unknown field "spec.costs.cycles"`,
		"{apiBurst: 1.5}":  "s.yaml#2: Simulation costs: spec.costs.apiBurst: cannot unmarshal number 1.5 into Go value of type int32",
		"{apiBurst: 1e12}": "s.yaml#2: Simulation costs: spec.costs.apiBurst: cannot unmarshal number 1000000000000 into Go value of type int32",
		"{apiQPS: 1e-400}": "s.yaml#2: Simulation costs: spec.costs.apiQPS: must be a positive number",
		"{apiQPS: \"50\"}": "s.yaml#2: Simulation costs: spec.costs.apiQPS: cannot unmarshal string into Go value of type float64",
	} {
		t.Run(costs, func(t *testing.T) {
			_, err := scenarioOf(t, costsScenario(costs), Limits{})
			if !errors.Is(err, manifest.ErrInput) {
				t.Fatalf("error %v, want an input error", err)
			}
			if msg := err.Error(); !strings.Contains(msg, want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q, want one line containing %q", msg, want)
			}
		})
	}
}

// runYAMLWith runs the scenario doc with opts.
func runYAMLWith(t *testing.T, doc string, opts Options) *Result {
	t.Helper()
	set := manifest.NewSet()
	if err := set.AddBytes("scenario.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	sc, err := NewScenario(set)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestProgress: a run reports pods done over pods expected, never going
// back, and finishes with Finished set.
func TestProgress(t *testing.T) {
	set := manifest.NewSet()
	if err := set.AddBytes("scenario.yaml", []byte(costsScenario("{cycle: 1ms}"))); err != nil {
		t.Fatal(err)
	}
	sc, err := NewScenario(set)
	if err != nil {
		t.Fatal(err)
	}
	var got []Progress
	if _, err := Run(context.Background(), sc, Options{Progress: func(p Progress) { got = append(got, p) }}); err != nil {
		t.Fatal(err)
	}
	if len(got) < 2 {
		t.Fatalf("%d progress reports, want at least 2", len(got))
	}
	for i := 1; i < len(got); i++ {
		if got[i].Done < got[i-1].Done || got[i].Virtual < got[i-1].Virtual {
			t.Errorf("progress went back: %+v after %+v", got[i], got[i-1])
		}
	}
	last := got[len(got)-1]
	if want := (Progress{Done: 5, Expected: 5, Virtual: time.Minute, End: time.Minute, Finished: true}); last != want {
		t.Errorf("last progress %+v, want %+v", last, want)
	}
	if first := got[0]; first.Finished || first.Expected != 5 {
		t.Errorf("first progress %+v, want 5 pods expected, not finished", first)
	}
}
