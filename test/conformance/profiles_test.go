package conformance

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/reprieve/reprieve/internal/adapter/config"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	"github.com/reprieve/reprieve/internal/whatif"
	"github.com/reprieve/reprieve/test/conformance/gen"
	"github.com/reprieve/reprieve/test/conformance/upstream"
)

// TestDifferentialProfiles compares reprieve with upstream kube-scheduler on
// random scenarios of every scenario profile, each under a random
// non-default KubeSchedulerConfiguration (gen.SchedulerConfig) given to both
// alike: DefaultPreemption disabled or with random candidate budgets, which
// the dry run then honours from a random offset (upstream sequential, in
// snapshot order, so that the nodes it reaches are determined),
// NodeAffinity's added required affinity and NodeResourcesFit's ignored
// resources, which change filtering, and random scoring arguments both must
// accept.
func TestDifferentialProfiles(t *testing.T) {
	// Upstream logs every re-configured default plugin.
	klog.SetLogger(logr.Discard())
	defer klog.ClearLogger()
	var compared, disabled, budgeted, limited, preempting atomic.Int64
	seeds := make(chan int64)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for seed := range seeds {
				profile := gen.Profiles()[int(seed)%len(gen.Profiles())]
				sc := gen.Generate(seed, profile)
				doc := gen.SchedulerConfig(seed)
				name := fmt.Sprintf("config-%s-%d", profile, seed)
				outcome := compareWithConfig(t, sc, doc, int(seed%17), name)
				compared.Add(1)
				switch outcome {
				case "disabled":
					disabled.Add(1)
				case "preempted", "preempted-limited":
					preempting.Add(1)
					budgeted.Add(1)
				case "budgeted", "budgeted-limited":
					budgeted.Add(1)
				}
				if strings.HasSuffix(outcome, "-limited") {
					limited.Add(1)
				}
			}
		})
	}
	for i := range *scenarios {
		if t.Failed() && i > 50 {
			break
		}
		seeds <- *firstSeed + int64(i)
	}
	close(seeds)
	wg.Wait()
	t.Logf("%d scenarios (seeds %d..%d) with random configurations agree: %d reached preemption with DefaultPreemption disabled, %d dry-ran with the configuration's candidate budget (%d stopped before visiting every potential node), %d nominated a node",
		compared.Load(), *firstSeed, *firstSeed+int64(*scenarios)-1, disabled.Load(), budgeted.Load(), limited.Load(), preempting.Load())
}

// compareWithConfig runs both engines on sc under the configuration doc,
// the dry run from offset, and reports every disagreement. It returns
// "disabled" when the pod needed preemption that the profile does not
// enable, "preempted" or "budgeted" when a dry run took place (and
// nominated a node, or not) — with "-limited" when the budget stopped it
// before every potential node —, "" otherwise.
func compareWithConfig(t *testing.T, sc *gen.Scenario, doc []byte, offset int, name string) string {
	t.Helper()
	cfg, err := config.Parse(doc)
	if err != nil {
		t.Errorf("%s: reprieve refuses the configuration: %v\n%s", name, err, doc)
		return ""
	}
	if len(cfg.Unsupported) > 0 {
		t.Errorf("%s: reprieve does not support %v\n%s", name, cfg.Unsupported, doc)
		return ""
	}
	prof := &cfg.Profiles[0]

	ctx := context.Background()
	env, err := upstream.NewEnvironment(ctx, upstreamInput(sc), upstream.EnvOptions{Parallelism: 1, SnapshotOrder: true, Config: doc})
	if err != nil {
		t.Errorf("%s: upstream: %v\n%s", name, err, doc)
		return ""
	}
	want, err := env.Evaluate(ctx, int32(offset), 0)
	env.Close()
	if err != nil {
		t.Errorf("%s: upstream: %v", name, err)
		return ""
	}

	snap, err := snapshot.New(snapshotObjects(sc))
	if err != nil {
		t.Errorf("%s: reprieve: %v", name, err)
		return ""
	}
	pod := snap.Pod(sc.Preemptor.Namespace + "/" + sc.Preemptor.Name)
	if pod == nil {
		t.Errorf("%s: preemptor missing from the snapshot", name)
		return ""
	}
	got, err := whatif.Evaluate(snap, pod, whatif.Options{Profile: prof, Offset: &offset, Now: evalTime})
	if err != nil {
		t.Errorf("%s: reprieve: %v", name, err)
		return ""
	}

	var diffs []string
	outcome := ""
	switch {
	case want.PreemptionDisabled:
		outcome = "disabled"
		// Everything up to PostFilter as usual; then no preemption at all.
		diffs = compare(want, got, nil)
		var kept []string
		for _, d := range diffs {
			if !strings.HasPrefix(d, "eligible") && !strings.HasPrefix(d, "ineligible reason") && !strings.HasPrefix(d, "potential nodes") &&
				!strings.HasPrefix(d, "candidates") && !strings.HasPrefix(d, "dry-run statuses") && !strings.HasPrefix(d, "best candidates") {
				kept = append(kept, d)
			}
		}
		diffs = kept
		if got.Eligible || got.IneligibleReason != whatif.ReasonPreemptionDisabled || got.NominatedNode != "" || len(got.Candidates) > 0 || len(got.Victims) > 0 {
			diffs = append(diffs, fmt.Sprintf("upstream does not preempt (no DefaultPreemption); reprieve: eligible %v (%q), nominated %q, %d candidates, %d victims",
				got.Eligible, got.IneligibleReason, got.NominatedNode, len(got.Candidates), len(got.Victims)))
		}
	default:
		if !prof.Preemption && !want.Fits && want.AbortReason == "" {
			diffs = append(diffs, "reprieve's profile has no DefaultPreemption, upstream's has")
		}
		diffs = append(diffs, compare(want, got, nil)...)
		if !want.Fits && want.Eligible {
			outcome = "budgeted"
			if want.Chosen != "" {
				outcome = "preempted"
			}
			if len(want.Candidates)+len(want.DryRunStatuses) < len(want.PotentialNodes) {
				outcome += "-limited"
			}
		}
	}
	if len(diffs) > 0 {
		path := saveFailure(t, sc, name, want, got)
		t.Errorf("%s: reprieve disagrees with kube-scheduler under the configuration\n%s\n  %s\nreplay: reprieve whatif --snapshot %s --pod %s/%s --explain",
			name, doc, strings.Join(diffs, "\n  "), path, sc.Preemptor.Namespace, sc.Preemptor.Name)
	}
	return outcome
}
