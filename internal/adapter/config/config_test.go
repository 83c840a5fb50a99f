package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/engine/score"
)

const header = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

func TestDefault(t *testing.T) {
	c, err := Parse([]byte(header))
	if err != nil {
		t.Fatalf("Parse of an empty configuration: %v", err)
	}
	want := Config{
		Parallelism:       16,
		PodInitialBackoff: time.Second,
		PodMaxBackoff:     10 * time.Second,
		Profiles: []profile.Profile{{
			SchedulerName:               "default-scheduler",
			Preemption:                  true,
			HasPostFilter:               true,
			MinCandidateNodesPercentage: 10,
			MinCandidateNodesAbsolute:   100,
			Score:                       score.DefaultConfig(),
		}},
	}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, Default()); diff != "" {
		t.Errorf("Default (-want +got):\n%s", diff)
	}
}

// withScore returns the default scoring changed by f.
func withScore(f func(*score.Config)) *score.Config {
	c := score.DefaultConfig()
	f(c)
	return c
}

func TestParse(t *testing.T) {
	tests := map[string]struct {
		doc             string
		want            []profile.Profile
		wantParallelism int32
		wantUnsupported []string
	}{
		"preemption args": {
			doc: header + `profiles:
- schedulerName: reprieve
  pluginConfig:
  - name: DefaultPreemption
    args: {minCandidateNodesPercentage: 50, minCandidateNodesAbsolute: 7}
`,
			want: []profile.Profile{{SchedulerName: "reprieve", Preemption: true, HasPostFilter: true, MinCandidateNodesPercentage: 50, MinCandidateNodesAbsolute: 7, Score: score.DefaultConfig()}},
		},
		"only one preemption arg keeps the other default": {
			doc: header + `profiles:
- schedulerName: batch
  pluginConfig:
  - name: DefaultPreemption
    args: {apiVersion: kubescheduler.config.k8s.io/v1, kind: DefaultPreemptionArgs, minCandidateNodesAbsolute: 0}
`,
			want: []profile.Profile{{SchedulerName: "batch", Preemption: true, HasPostFilter: true, MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 0, Score: score.DefaultConfig()}},
		},
		"DefaultPreemption disabled at multiPoint": {
			doc: header + `profiles:
- plugins:
    multiPoint:
      disabled: [{name: DefaultPreemption}]
`,
			want: []profile.Profile{{SchedulerName: "default-scheduler", HasPostFilter: true, MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100, Score: score.DefaultConfig()}},
		},
		"every postFilter plugin disabled": {
			doc: header + `profiles:
- plugins:
    postFilter:
      disabled: [{name: "*"}]
`,
			want: []profile.Profile{{SchedulerName: "default-scheduler", MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100, Score: score.DefaultConfig()}},
		},
		"two profiles, percentages of nodes to score and parallelism": {
			doc: header + `parallelism: 4
percentageOfNodesToScore: 30
profiles:
- schedulerName: a
- schedulerName: b
  percentageOfNodesToScore: 70
`,
			wantParallelism: 4,
			want: []profile.Profile{
				{SchedulerName: "a", PercentageOfNodesToScore: 30, Preemption: true, HasPostFilter: true, MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100, Score: score.DefaultConfig()},
				{SchedulerName: "b", PercentageOfNodesToScore: 70, Preemption: true, HasPostFilter: true, MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100, Score: score.DefaultConfig()},
			},
		},
		"MostAllocated with weights, a score plugin reweighted and one disabled": {
			doc: header + `profiles:
- plugins:
    multiPoint:
      enabled: [{name: NodeResourcesFit, weight: 5}]
    score:
      enabled: [{name: TaintToleration, weight: 7}]
      disabled: [{name: ImageLocality}]
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 3}, {name: memory}, {name: example.com/gpu, weight: 10}]
`,
			want: []profile.Profile{{SchedulerName: "default-scheduler", Preemption: true, HasPostFilter: true, MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100,
				Score: withScore(func(c *score.Config) {
					c.Plugins = []score.Plugin{
						{Name: score.TaintToleration, Weight: 7, Score: true},
						{Name: score.NodeAffinity, Weight: 2, Score: true},
						{Name: score.NodeResourcesFit, Weight: 5, Score: true},
						{Name: score.VolumeBinding, Weight: 1, Score: true},
						{Name: score.PodTopologySpread, Weight: 2, Score: true},
						{Name: score.InterPodAffinity, Weight: 2, Score: true},
						{Name: score.NodeResourcesBalancedAllocation, Weight: 1, Score: true},
						{Name: score.DynamicResources, Weight: 2, Score: true},
					}
					c.Fit = score.Fit{Strategy: score.MostAllocated, Resources: []score.ResourceWeight{{Name: v1.ResourceCPU, Weight: 3}, {Name: v1.ResourceMemory, Weight: 1}, {Name: "example.com/gpu", Weight: 10}}}
				})}},
		},
		"every score plugin disabled: PreScore still runs": {
			doc: header + `profiles:
- plugins:
    score:
      disabled: [{name: "*"}]
`,
			want: []profile.Profile{{SchedulerName: "default-scheduler", Preemption: true, HasPostFilter: true, MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100,
				Score: withScore(func(c *score.Config) {
					c.Plugins = []score.Plugin{
						{Name: score.TaintToleration, Weight: 3},
						{Name: score.NodeAffinity, Weight: 2},
						{Name: score.NodeResourcesFit, Weight: 1},
						{Name: score.VolumeBinding, Weight: 1},
						{Name: score.PodTopologySpread, Weight: 2},
						{Name: score.InterPodAffinity, Weight: 2},
						{Name: score.NodeResourcesBalancedAllocation, Weight: 1},
					}
				})}},
		},
		"RequestedToCapacityRatio and the other scoring arguments": {
			doc: header + `profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
        requestedToCapacityRatio:
          shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]
  - name: InterPodAffinity
    args: {hardPodAffinityWeight: 0, ignorePreferredTermsOfExistingPods: true}
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints: [{maxSkew: 2, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}]
  - name: NodeAffinity
    args:
      addedAffinity:
        preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 5
          preference: {matchExpressions: [{key: disk, operator: In, values: [ssd]}]}
  - name: NodeResourcesBalancedAllocation
    args: {resources: [{name: cpu}]}
`,
			want: []profile.Profile{{SchedulerName: "default-scheduler", Preemption: true, HasPostFilter: true, MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100,
				Score: withScore(func(c *score.Config) {
					c.Fit = score.Fit{Strategy: score.RequestedToCapacityRatio, Resources: []score.ResourceWeight{{Name: v1.ResourceCPU, Weight: 1}, {Name: v1.ResourceMemory, Weight: 1}},
						Shape: []score.ShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 10}}}
					c.HardPodAffinityWeight = 0
					c.IgnorePreferredTermsOfExistingPods = true
					c.SpreadListDefaulting = true
					c.SpreadDefaultConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 2, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.ScheduleAnyway}}
					c.AddedPreferredAffinity = []v1.PreferredSchedulingTerm{{Weight: 5, Preference: v1.NodeSelectorTerm{
						MatchExpressions: []v1.NodeSelectorRequirement{{Key: "disk", Operator: v1.NodeSelectorOpIn, Values: []string{"ssd"}}}}}}
					c.BalancedResources = []score.ResourceWeight{{Name: v1.ResourceCPU, Weight: 1}}
				}),
				Filter: filter.Options{SpreadDefaultConstraints: []v1.TopologySpreadConstraint{{MaxSkew: 2, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.ScheduleAnyway}}}}},
		},
		"unmodelled plugins disabled change nothing": {
			doc: header + `profiles:
- plugins:
    multiPoint:
      disabled: [{name: NodeDeclaredFeatures}]
`,
			want: []profile.Profile{{SchedulerName: "default-scheduler", Preemption: true, HasPostFilter: true, MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100,
				Score: withScore(func(c *score.Config) {
					c.Plugins = []score.Plugin{
						{Name: score.TaintToleration, Weight: 3, Score: true},
						{Name: score.NodeAffinity, Weight: 2, Score: true},
						{Name: score.NodeResourcesFit, Weight: 1, Score: true},
						{Name: score.VolumeBinding, Weight: 1, Score: true},
						{Name: score.PodTopologySpread, Weight: 2, Score: true},
						{Name: score.InterPodAffinity, Weight: 2, Score: true},
						{Name: score.NodeResourcesBalancedAllocation, Weight: 1, Score: true},
						{Name: score.DynamicResources, Weight: 2, Score: true},
						{Name: score.ImageLocality, Weight: 1, Score: true},
					}
				})}},
		},
		"clientConnection and leaderElection are read elsewhere, not refused": {
			doc: header + `clientConnection: {qps: 20, burst: 40}
leaderElection: {leaderElect: true}
`,
			want: []profile.Profile{{SchedulerName: "default-scheduler", Preemption: true, HasPostFilter: true, MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100, Score: score.DefaultConfig()}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Parse([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Profiles); diff != "" {
				t.Errorf("profiles (-want +got):\n%s", diff)
			}
			wantPar := tc.wantParallelism
			if wantPar == 0 {
				wantPar = 16
			}
			if got.Parallelism != wantPar {
				t.Errorf("parallelism %d, want %d", got.Parallelism, wantPar)
			}
			if diff := cmp.Diff(tc.wantUnsupported, got.Unsupported); diff != "" {
				t.Errorf("unsupported (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseUnsupported(t *testing.T) {
	tests := map[string]struct {
		doc  string
		want []string // substrings, one per Unsupported line, in order
	}{
		"extenders": {
			doc:  header + "extenders: [{urlPrefix: 'http://x', filterVerb: filter}]\n",
			want: []string{"extenders: reprieve does not call scheduler extenders"},
		},
		"out-of-tree plugin": {
			doc: header + `profiles:
- plugins:
    multiPoint:
      enabled: [{name: Coscheduling}]
  pluginConfig:
  - name: Coscheduling
    args: {permitWaitingTimeSeconds: 10}
`,
			want: []string{
				`profiles[0].pluginConfig[0]: arguments for "Coscheduling", which is not an in-tree plugin`,
				`profiles[0].plugins.multiPoint.enabled[0]: "Coscheduling" is not an in-tree plugin`,
			},
		},
		"filter plugin disabled": {
			doc: header + `profiles:
- plugins:
    filter:
      disabled: [{name: TaintToleration}]
`,
			want: []string{"profiles[0].plugins.filter: reprieve runs the default filter plugins [NodeName NodeUnschedulable TaintToleration NodeAffinity NodePorts NodeResourcesFit VolumeRestrictions NodeVolumeLimits VolumeBinding VolumeZone PodTopologySpread InterPodAffinity DynamicResources], not [NodeName NodeUnschedulable NodeAffinity NodePorts NodeResourcesFit VolumeRestrictions NodeVolumeLimits VolumeBinding VolumeZone PodTopologySpread InterPodAffinity DynamicResources]"},
		},
		"volume plugin disabled": {
			// reprieve models the volume plugins: it cannot leave one out.
			doc: header + `profiles:
- plugins:
    filter:
      disabled: [{name: VolumeZone}]
`,
			want: []string{"profiles[0].plugins.filter: reprieve runs the default filter plugins [NodeName NodeUnschedulable TaintToleration NodeAffinity NodePorts NodeResourcesFit VolumeRestrictions NodeVolumeLimits VolumeBinding VolumeZone PodTopologySpread InterPodAffinity DynamicResources], not [NodeName NodeUnschedulable TaintToleration NodeAffinity NodePorts NodeResourcesFit VolumeRestrictions NodeVolumeLimits VolumeBinding PodTopologySpread InterPodAffinity DynamicResources]"},
		},
		"non-default in-tree plugin": {
			doc: header + `profiles:
- plugins:
    multiPoint:
      enabled: [{name: DeferredPodScheduling}]
`,
			want: []string{"profiles[0].plugins.preFilter: reprieve runs the default", "profiles[0].plugins.filter:", "profiles[0].plugins.permit:"},
		},
		"score plugin without its PreScore": {
			doc: header + `profiles:
- plugins:
    preScore:
      disabled: [{name: TaintToleration}]
`,
			want: []string{"reprieve does not score with TaintToleration when its PreScore is disabled"},
		},
		"filter arguments, DoNotSchedule default constraints included, are honoured": {
			doc: header + `profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args: {ignoredResources: [example.com/foo]}
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Exists}]}]
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]
`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Parse([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Unsupported) != len(tc.want) {
				t.Fatalf("unsupported:\n%s\nwant %d lines", strings.Join(got.Unsupported, "\n"), len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(got.Unsupported[i], w) {
					t.Errorf("unsupported[%d] = %q, want it to contain %q", i, got.Unsupported[i], w)
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := map[string]struct {
		doc     string
		wantErr string
	}{
		"percentage out of range": {
			doc:     header + "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args: {minCandidateNodesPercentage: 101}\n",
			wantErr: "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]",
		},
		"both zero": {
			doc:     header + "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args: {minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}\n",
			wantErr: "cannot be zero at the same time as minCandidateNodesAbsolute",
		},
		"negative absolute": {
			doc:     header + "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args: {minCandidateNodesAbsolute: -1}\n",
			wantErr: "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)",
		},
		"wrong kind":           {doc: "apiVersion: v1\nkind: ConfigMap\n", wantErr: "want kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration"},
		"unknown field":        {doc: header + "bogus: 1\n", wantErr: `unknown field "bogus"`},
		"duplicate field":      {doc: header + "parallelism: 1\nparallelism: 2\n", wantErr: "malformed KubeSchedulerConfiguration"},
		"field in wrong case":  {doc: header + "Parallelism: 2\n", wantErr: "malformed KubeSchedulerConfiguration"},
		"unknown args field":   {doc: header + "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args: {hardPodAfinityWeight: 3}\n", wantErr: `profiles[0].pluginConfig[0].args: Invalid value`},
		"args of another kind": {doc: header + "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args: {kind: NodeAffinityArgs}\n", wantErr: "were not of type InterPodAffinityArgs"},
		"parallelism":          {doc: header + "parallelism: 0\n", wantErr: "parallelism: Invalid value: 0: should be an integer value greater than zero"},
		"percentageOfNodesToScore": {
			doc:     header + "percentageOfNodesToScore: 101\n",
			wantErr: "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
		},
		"profile percentageOfNodesToScore": {
			doc:     header + "profiles:\n- percentageOfNodesToScore: -1\n",
			wantErr: "profiles[0].percentageOfNodesToScore: Invalid value: -1",
		},
		"two profiles need names": {
			doc:     header + "profiles:\n- schedulerName: a\n- {}\n",
			wantErr: "profiles[1].schedulerName: Required value",
		},
		"duplicate profile names": {
			doc:     header + "profiles:\n- schedulerName: a\n- schedulerName: a\n",
			wantErr: "profiles[1].schedulerName: Duplicate value",
		},
		"queueSort differs between profiles": {
			doc:     header + "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    queueSort:\n      enabled: [{name: PrioritySort}]\n      disabled: [{name: '*'}]\n",
			wantErr: "profiles[1].plugins.queueSort: Invalid value",
		},
		"duplicate pluginConfig": {
			doc:     header + "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n  - name: DefaultPreemption\n",
			wantErr: "profiles[0].pluginConfig[1]: Duplicate value",
		},
		"hardPodAffinityWeight": {
			doc:     header + "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: 101}\n",
			wantErr: "hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]",
		},
		"scoring strategy type": {
			doc:     header + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: Bogus}}\n",
			wantErr: `profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "Bogus"`,
		},
		"resource weight": {
			doc:     header + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 101}]}}\n",
			wantErr: "scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]",
		},
		"shape required": {
			doc:     header + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: RequestedToCapacityRatio}}\n",
			wantErr: "scoringStrategy.requestedToCapacityRatio: Required value",
		},
		"shape unsorted": {
			doc:     header + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: [{utilization: 50, score: 1}, {utilization: 50, score: 2}]}}}\n",
			wantErr: "shape[1].utilization: Invalid value: 50: values must be sorted in increasing order",
		},
		"shape score": {
			doc:     header + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: [{utilization: 50, score: 11}]}}}\n",
			wantErr: "shape[0].score: Invalid value: 11: not in valid range [0, 10]",
		},
		"shape with another strategy": {
			doc:     header + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: LeastAllocated, requestedToCapacityRatio: {shape: [{utilization: 50, score: 1}]}}}\n",
			wantErr: "scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is not RequestedToCapacityRatio",
		},
		"System defaulting with constraints": {
			doc:     header + "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args: {defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]}\n",
			wantErr: `defaultingType: Invalid value: "System": when .defaultConstraints are not empty`,
		},
		"default constraint with a selector": {
			doc:     header + "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args: {defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, labelSelector: {}}]}\n",
			wantErr: "defaultConstraints[0].labelSelector: Forbidden",
		},
		"balanced allocation weight": {
			doc:     header + "profiles:\n- pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n    args: {resources: [{name: cpu, weight: 2}]}\n",
			wantErr: "resources[0].weight: Invalid value: 2: must be 1",
		},
		"added affinity": {
			doc:     header + "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args: {addedAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, preference: {matchExpressions: [{key: a, operator: Bogus}]}}]}}\n",
			wantErr: "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution",
		},
		"removed plugin": {
			doc:     header + "profiles:\n- plugins:\n    filter:\n      enabled: [{name: EBSLimits}]\n",
			wantErr: `profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in version`,
		},
		"plugin at a point it does not extend": {
			doc:     header + "profiles:\n- plugins:\n    score:\n      enabled: [{name: NodePorts}]\n",
			wantErr: `plugin "NodePorts" does not extend the score extension point`,
		},
		"no bind plugin": {
			doc:     header + "profiles:\n- plugins:\n    bind:\n      disabled: [{name: '*'}]\n",
			wantErr: "profiles[0].plugins.bind: Required value: at least one bind plugin is needed",
		},
		"extender weight": {
			doc:     header + "extenders: [{urlPrefix: 'http://x', prioritizeVerb: p}]\n",
			wantErr: "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it",
		},
		"backoff": {
			doc:     header + "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 2\n",
			wantErr: "podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to PodInitialBackoffSeconds",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestParseBackoff(t *testing.T) {
	c, err := Parse([]byte(header + "podInitialBackoffSeconds: 2\npodMaxBackoffSeconds: 30\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.PodInitialBackoff != 2*time.Second || c.PodMaxBackoff != 30*time.Second || len(c.Unsupported) > 0 {
		t.Errorf("backoff %v to %v, unsupported %v; want 2s to 30s", c.PodInitialBackoff, c.PodMaxBackoff, c.Unsupported)
	}
}

func TestProfile(t *testing.T) {
	c, err := Parse([]byte(header + "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins: {postFilter: {disabled: [{name: DefaultPreemption}]}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Profile("b"); p == nil || p.SchedulerName != "b" || p.Preemption {
		t.Errorf("Profile(b) = %+v, want b without preemption", p)
	}
	if p := c.Profile("default-scheduler"); p != nil {
		t.Errorf("Profile(default-scheduler) = %+v, want none", p)
	}
	if diff := cmp.Diff([]string{"a", "b"}, c.SchedulerNames()); diff != "" {
		t.Errorf("SchedulerNames (-want +got):\n%s", diff)
	}
}

func TestParseFilterOptions(t *testing.T) {
	c, err := Parse([]byte(header + `profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args: {ignoredResources: [example.com/foo], ignoredResourceGroups: [vendor.io]}
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: In, values: [batch]}]}]
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Unsupported) > 0 {
		t.Errorf("unsupported: %v", c.Unsupported)
	}
	f := c.Profiles[0].Filter
	if !f.IgnoredResources.Has("example.com/foo") || f.IgnoredResources.Len() != 1 || !f.IgnoredResourceGroups.Has("vendor.io") || f.IgnoredResourceGroups.Len() != 1 {
		t.Errorf("ignored resources %v, groups %v", f.IgnoredResources, f.IgnoredResourceGroups)
	}
	batch := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "b", Labels: map[string]string{"pool": "batch"}}}
	other := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "o"}}
	if f.AddedAffinity == nil || !f.AddedAffinity.Match(batch) || f.AddedAffinity.Match(other) {
		t.Errorf("added affinity %v does not select exactly the batch pool", f.AddedAffinity)
	}
}
