package scheduler

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/reprieve/reprieve/internal/adapter/config"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// setupProfiles is setup with the profiles of a configuration document;
// pods keep their schedulerName.
func setupProfiles(t *testing.T, doc string, nodes []*v1.Node, pods ...*v1.Pod) (*Scheduler, *fakeCluster) {
	t.Helper()
	cfg, err := config.Parse([]byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + doc))
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeCluster{pods: map[string]*v1.Pod{}}
	s := New(f, testingclock.NewFakeClock(t0), Options{Seed: 1, Profiles: cfg.Profiles})
	f.s = s
	for _, n := range nodes {
		s.OnNodeAdd(n)
	}
	for _, p := range pods {
		f.pods[podKey(p)] = p
		s.OnPodAdd(p)
	}
	return s, f
}

func named(p *v1.Pod, scheduler string) *v1.Pod {
	p.Spec.SchedulerName = scheduler
	return p
}

func TestProfiles(t *testing.T) {
	const twoProfiles = `profiles:
- schedulerName: spread
- schedulerName: pack
  plugins:
    postFilter: {disabled: [{name: DefaultPreemption}]}
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
`
	// n1 is half used, n2 empty.
	nodes := func() []*v1.Node {
		return []*v1.Node{rt.Node("n1").CPU("4").Memory("8Gi").Obj(), rt.Node("n2").CPU("4").Memory("8Gi").Obj()}
	}
	used := func() *v1.Pod {
		return named(rt.Pod("ns", "used").Priority(1).Req("2", "4Gi").On("n1").Obj(), "spread")
	}
	tests := map[string]struct {
		pods      []*v1.Pod
		wantCalls []string
	}{
		"LeastAllocated profile spreads": {
			pods:      []*v1.Pod{used(), named(rt.Pod("ns", "p").Req("1", "1Gi").Obj(), "spread")},
			wantCalls: []string{"bind p n2", "event p Scheduled: Successfully assigned ns/p to n2"},
		},
		"MostAllocated profile packs": {
			pods:      []*v1.Pod{used(), named(rt.Pod("ns", "p").Req("1", "1Gi").Obj(), "pack")},
			wantCalls: []string{"bind p n1", "event p Scheduled: Successfully assigned ns/p to n1"},
		},
		"a pod of no profile is left alone": {
			pods: []*v1.Pod{used(), named(rt.Pod("ns", "p").Req("1", "1Gi").Obj(), v1.DefaultSchedulerName)},
		},
		"preemption disabled: the pod stays pending, nothing is evicted": {
			pods: []*v1.Pod{
				used(),
				named(rt.Pod("ns", "low").Priority(1).Req("4", "").On("n2").Obj(), "spread"),
				named(rt.Pod("ns", "urgent").Priority(100).Req("3", "").Obj(), "pack"),
			},
			wantCalls: []string{
				"unschedulable urgent",
				"event urgent FailedScheduling: 0/2 nodes are available: 2 Insufficient cpu.",
			},
		},
		"preemption enabled in the other profile": {
			pods: []*v1.Pod{
				used(),
				named(rt.Pod("ns", "low").Priority(1).Req("4", "").On("n2").Obj(), "spread"),
				named(rt.Pod("ns", "urgent").Priority(100).Req("3", "").Obj(), "spread"),
			},
			wantCalls: []string{
				"preempt low DisruptionTarget/PreemptionByScheduler",
				"event low Preempted: Preempted by pod uid-ns-urgent on node n2",
				"unschedulable urgent nominated=n2",
				"event urgent FailedScheduling: 0/2 nodes are available: 2 Insufficient cpu. preemption: found a potential placement for pod on node n2, preempting 1 victims",
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, f := setupProfiles(t, twoProfiles, nodes(), tc.pods...)
			runAll(s)
			if diff := cmp.Diff(tc.wantCalls, f.calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProfileWithoutScorePlugins(t *testing.T) {
	// Without score plugins the first feasible node in the search order
	// is taken, even where scoring would pick another.
	doc := "profiles:\n- plugins:\n    score: {disabled: [{name: '*'}]}\n"
	nodes := []*v1.Node{rt.Node("n1").CPU("4").Obj(), rt.Node("n2").CPU("4").Obj()}
	used := named(rt.Pod("ns", "used").Req("3", "").On("n1").Obj(), v1.DefaultSchedulerName)
	s, f := setupProfiles(t, doc, nodes, used, named(rt.Pod("ns", "p").Req("1", "").Obj(), v1.DefaultSchedulerName))
	runAll(s)
	if diff := cmp.Diff([]string{"bind p n1", "event p Scheduled: Successfully assigned ns/p to n1"}, f.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestProfilePercentageOfNodesToScore(t *testing.T) {
	// 200 empty nodes: the adaptive default finds max(200×(50-1)%, 100) =
	// 100 feasible nodes, 75% finds 150; the next search starts after them.
	for doc, want := range map[string]int{
		"":                               100,
		"percentageOfNodesToScore: 75\n": 150,
		"profiles:\n- percentageOfNodesToScore: 30\n":                                100,
		"percentageOfNodesToScore: 10\nprofiles:\n- percentageOfNodesToScore: 100\n": 0,
	} {
		var nodes []*v1.Node
		for i := range 200 {
			nodes = append(nodes, rt.Node(fmt.Sprintf("n%03d", i)).CPU("4").Obj())
		}
		s, _ := setupProfiles(t, doc, nodes, named(rt.Pod("ns", "p").Req("1", "").Obj(), v1.DefaultSchedulerName))
		runAll(s)
		// 100% examines all 200 nodes: the start wraps around to 0.
		if s.nextStartNodeIndex != want {
			t.Errorf("%q: next start node index %d, want %d", doc, s.nextStartNodeIndex, want)
		}
	}
}

func TestBackoffOptions(t *testing.T) {
	for name, tc := range map[string]struct {
		opts Options
		want []time.Duration // after 1, 2, 3, 4 failed attempts
	}{
		"defaults":   {want: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}},
		"configured": {opts: Options{InitialBackoff: 3 * time.Second, MaxBackoff: 7 * time.Second}, want: []time.Duration{3 * time.Second, 6 * time.Second, 7 * time.Second, 7 * time.Second}},
	} {
		t.Run(name, func(t *testing.T) {
			s := New(&fakeCluster{}, testingclock.NewFakeClock(t0), tc.opts)
			var got []time.Duration
			for n := 1; n <= 4; n++ {
				got = append(got, s.queue.backoffDuration(&queuedPod{UnschedulableCount: n}))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("backoff (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProfileWithoutPreemptionKeepsOrClearsNomination(t *testing.T) {
	// A nominated pod that fits nowhere: DynamicResources' PostFilter, left
	// when only DefaultPreemption is disabled, keeps the nomination; with
	// no PostFilter plugin at all the nomination is cleared.
	nodes := []*v1.Node{rt.Node("n1").CPU("1").Obj()}
	pod := func() *v1.Pod {
		return named(rt.Pod("ns", "p").Priority(10).Req("2", "").Nominated("n1").Obj(), v1.DefaultSchedulerName)
	}
	for doc, want := range map[string][]string{
		"profiles:\n- plugins: {multiPoint: {disabled: [{name: DefaultPreemption}]}}\n": {
			"unschedulable p",
			"event p FailedScheduling: 0/1 nodes are available: 1 Insufficient cpu.",
		},
		"profiles:\n- plugins: {postFilter: {disabled: [{name: '*'}]}}\n": {
			"unschedulable p nominated=",
			"event p FailedScheduling: 0/1 nodes are available: 1 Insufficient cpu.",
		},
	} {
		s, f := setupProfiles(t, doc, nodes, pod())
		s.ScheduleOne(context.Background())
		if diff := cmp.Diff(want, f.calls); diff != "" {
			t.Errorf("%s: calls (-want +got):\n%s", doc, diff)
		}
	}
}
