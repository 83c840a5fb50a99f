package conformance

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/test/conformance/gen"
	"github.com/reprieve/reprieve/test/conformance/upstream"
)

// draStats counts what the DRA scenarios exercised, so that a run shows the
// profile reaches the plugin's outcomes and not only trivial ones.
type draStats struct {
	compared, withClaims, extended, fits, nominated atomic.Int64
	// filterReasons and dryRunReasons count DynamicResources reasons in
	// upstream's filter and dry-run statuses (once per scenario).
	mu                           sync.Mutex
	filterReasons, dryRunReasons map[string]int
}

func (st *draStats) record(sc *gen.Scenario, want *upstream.Result) {
	st.compared.Add(1)
	if len(sc.Preemptor.Spec.ResourceClaims) > 0 {
		st.withClaims.Add(1)
	}
	if asksDRAExtendedResource(sc) {
		st.extended.Add(1)
	}
	if want.Fits {
		st.fits.Add(1)
	}
	if want.Chosen != "" {
		st.nominated.Add(1)
	}
	reasons := func(m map[string]upstream.Status) []string {
		var out []string
		for _, s := range m {
			if s.Plugin == "DynamicResources" {
				out = append(out, draReasonKind(strings.Join(s.Reasons, ", ")))
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, r := range reasons(want.NodeStatuses) {
		st.filterReasons[r]++
	}
	for _, r := range reasons(want.DryRunStatuses) {
		st.dryRunReasons[r]++
	}
}

// asksDRAExtendedResource reports whether the preemptor requests an extended
// resource some DeviceClass backs.
func asksDRAExtendedResource(sc *gen.Scenario) bool {
	for _, c := range sc.Preemptor.Spec.Containers {
		for name := range c.Resources.Requests {
			for _, dc := range sc.DeviceClasses {
				if string(name) == "deviceclass.resource.kubernetes.io/"+dc.Name ||
					dc.Spec.ExtendedResourceName != nil && string(name) == *dc.Spec.ExtendedResourceName {
					return true
				}
			}
		}
	}
	return false
}

// draReasonKind strips object names from a reason, for counting.
func draReasonKind(r string) string {
	for _, prefix := range []string{"could not find ResourceClaim", "request ", "pod "} {
		if strings.HasPrefix(r, prefix) {
			return prefix + "…"
		}
	}
	return r
}

// TestDifferentialDRA compares reprieve with upstream kube-scheduler on
// random scenarios of the DRA profile: GPUs published in ResourceSlices,
// DeviceClasses with CEL selectors, claims allocated to and reserved for
// running pods, and a preemptor with claims of its own. Both engines run
// with their default feature gates, under which DynamicResources rejects
// with UnschedulableAndUnresolvable and preemption never frees devices.
func TestDifferentialDRA(t *testing.T) {
	st := &draStats{filterReasons: map[string]int{}, dryRunReasons: map[string]int{}}
	seeds := make(chan int64)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range seeds {
				sc := gen.Generate(seed, gen.DRA)
				name := fmt.Sprintf("%s-%d", gen.DRA, seed)
				want, err := runUpstream(sc, profile.Features{})
				if err != nil {
					t.Errorf("%s: upstream: %v", name, err)
					continue
				}
				got, err := runReprieve(sc, profile.Features{})
				if err != nil {
					t.Errorf("%s: reprieve: %v", name, err)
					continue
				}
				if diffs := compare(want, got, nil); len(diffs) > 0 {
					path := saveFailure(t, sc, name, want, got)
					t.Errorf("%s: reprieve disagrees with kube-scheduler:\n  %s\nreplay: reprieve whatif --snapshot %s --pod %s/%s --explain",
						name, strings.Join(diffs, "\n  "), path, sc.Preemptor.Namespace, sc.Preemptor.Name)
				}
				st.record(sc, want)
			}
		}()
	}
	for i := range *scenarios {
		if t.Failed() && i > 50 {
			break
		}
		seeds <- *firstSeed + int64(i)
	}
	close(seeds)
	wg.Wait()
	t.Logf("profile %s: %d scenarios (seeds %d..%d) compared; %d with a preemptor that has claims, %d that asks for an extended resource backed by DRA, %d fit, %d nominated a node",
		gen.DRA, st.compared.Load(), *firstSeed, *firstSeed+int64(*scenarios)-1, st.withClaims.Load(), st.extended.Load(), st.fits.Load(), st.nominated.Load())
	t.Logf("DynamicResources reasons in filter statuses (scenarios): %v", st.filterReasons)
	t.Logf("DynamicResources reasons in dry-run statuses (scenarios): %v", st.dryRunReasons)
}

// TestDRAPreemptionGateKeepsCandidates checks the DRAPreemption gate (which
// upstream v1.37 does not have) against reprieve without it on the DRA
// profile: releasing victims' devices only adds possibilities, so every
// candidate without the gate is a candidate with it, with the same victims,
// and the gate nominates a node whenever v1.37 does. It counts the
// scenarios where the gate lets a GPU pod preempt that v1.37 could not.
func TestDRAPreemptionGateKeepsCandidates(t *testing.T) {
	gate := profile.Features{DRAPreemption: true}
	var freed, compared int
	for i := range *scenarios {
		seed := *firstSeed + int64(i)
		sc := gen.Generate(seed, gen.DRA)
		off, err := runReprieve(sc, profile.Features{})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		on, err := runReprieve(sc, gate)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		compared++
		onCands := map[string][]string{}
		for _, c := range on.Candidates {
			onCands[c.Node] = c.Victims
		}
		for _, c := range off.Candidates {
			if v, ok := onCands[c.Node]; !ok || !slices.Equal(v, c.Victims) {
				t.Errorf("seed %d: candidate %s with victims %v without the gate, %v (present %t) with it", seed, c.Node, c.Victims, v, ok)
			}
		}
		if off.NominatedNode != "" && on.NominatedNode == "" {
			t.Errorf("seed %d: v1.37 nominates %s, the gate nothing", seed, off.NominatedNode)
		}
		if off.NominatedNode == "" && on.NominatedNode != "" {
			freed++
		}
	}
	t.Logf("%d scenarios: with DRAPreemption, %d GPU pods preempt where v1.37 cannot", compared, freed)
	if compared >= 200 && freed == 0 {
		t.Errorf("the gate never changed a decision; the profile does not exercise it")
	}
}
