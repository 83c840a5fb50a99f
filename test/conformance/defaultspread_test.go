package conformance

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
	"github.com/reprieve/reprieve/test/conformance/gen"
	"github.com/reprieve/reprieve/test/conformance/upstream"
)

// defaultSpreadConfigs are PodTopologySpread's defaults under test: the
// system's, and defaultingType List with DoNotSchedule constraints, which
// filter pods without constraints of their own and so change preemption.
var defaultSpreadConfigs = []string{
	"{defaultingType: System}",
	"{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule}]}",
	"{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule}, {maxSkew: 2, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway}]}",
	"{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule}, {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule}]}",
	"{defaultingType: List, defaultConstraints: [{maxSkew: 3, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}]}",
}

// defaultSpreadConfig is a configuration whose only change is
// PodTopologySpread's arguments.
func defaultSpreadConfig(args string) []byte {
	return fmt.Appendf(nil, `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: PodTopologySpread
    args: %s
`, args)
}

// TestDifferentialDefaultSpreading compares reprieve with upstream
// kube-scheduler on random scenarios whose Services, ReplicationControllers,
// ReplicaSets and StatefulSets select the pods (gen's Selectors, which
// upstream reads through its informers), under each of
// defaultSpreadConfigs: where a pod that fits is bound and with what
// scores, and, where it does not, the filter statuses, the dry run and the
// nominated node. Two preemptors in three lose their own spread constraints
// (which would replace the defaults). It reports to how many preemptors
// default constraints applied (their default selector is not empty) and how
// many they filtered out of some node (as the first plugin to reject it).
func TestDifferentialDefaultSpreading(t *testing.T) {
	klog.SetLogger(logr.Discard())
	defer klog.ClearLogger()
	var compared, applied, filtered, preempted atomic.Int64
	seeds := make(chan int64)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for seed := range seeds {
				profile := gen.Profiles()[int(seed)%len(gen.Profiles())]
				sc := gen.Generate(seed, profile)
				if seed%3 != 0 {
					sc.Preemptor.Spec.TopologySpreadConstraints = nil
				}
				if defaultsApply(t, sc) {
					applied.Add(1)
				}
				cfg := defaultSpreadConfigs[int(seed/int64(len(gen.Profiles())))%len(defaultSpreadConfigs)]
				name := fmt.Sprintf("defaultspread-%s-%d", profile, seed)
				outcome := compareWithConfig(t, sc, defaultSpreadConfig(cfg), int(seed%17), name)
				compared.Add(1)
				if outcome == "preempted" || outcome == "preempted-limited" {
					preempted.Add(1)
				}
				if spreadFiltered(t, sc, cfg) {
					filtered.Add(1)
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
	t.Logf("%d scenarios (seeds %d..%d) under %d PodTopologySpread defaults agree: default constraints applied to %d preemptors and filtered %d out of some node first, %d nominated a node",
		compared.Load(), *firstSeed, *firstSeed+int64(*scenarios)-1, len(defaultSpreadConfigs), applied.Load(), filtered.Load(), preempted.Load())
}

// defaultsApply reports whether the preemptor of sc gets default
// constraints: it has none of its own and its default selector is not
// empty.
func defaultsApply(t *testing.T, sc *gen.Scenario) bool {
	t.Helper()
	if len(sc.Preemptor.Spec.TopologySpreadConstraints) > 0 {
		return false
	}
	snap, err := snapshot.New(snapshotObjects(sc))
	if err != nil {
		return false
	}
	return !snap.DefaultSelector(sc.Preemptor).Empty()
}

// spreadFiltered reports whether PodTopologySpread rejected a node for the
// preemptor of sc, which has no constraints of its own, under upstream.
func spreadFiltered(t *testing.T, sc *gen.Scenario, cfg string) bool {
	t.Helper()
	if len(sc.Preemptor.Spec.TopologySpreadConstraints) > 0 {
		return false
	}
	env, err := upstream.NewEnvironment(t.Context(), upstreamInput(sc), upstream.EnvOptions{Parallelism: 1, SnapshotOrder: true, Config: defaultSpreadConfig(cfg)})
	if err != nil {
		return false
	}
	defer env.Close()
	res, err := env.Evaluate(t.Context(), 0, 0)
	if err != nil {
		return false
	}
	for _, s := range res.NodeStatuses {
		if s.Plugin == "PodTopologySpread" {
			return true
		}
	}
	return false
}
