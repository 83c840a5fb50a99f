package scoring

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	"k8s.io/kubernetes/pkg/scheduler/metrics"

	"github.com/reprieve/reprieve/internal/adapter/config"
)

// upstreamAccepts reports whether kube-scheduler would start with doc:
// strict decoding with defaults, validation, and a framework built for
// every profile (which validates the plugins' arguments again).
func upstreamAccepts(t *testing.T, doc []byte) (bool, string) {
	t.Helper()
	obj, _, err := scheme.Codecs.UniversalDecoder().Decode(doc, nil, nil)
	if err != nil {
		return false, err.Error()
	}
	cfg := obj.(*schedulerapi.KubeSchedulerConfiguration)
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		return false, err.Error()
	}
	w := genWorld(rand.New(rand.NewPCG(1, 2)))
	for i := range cfg.Profiles {
		if _, _, _, _, _, err := upstreamProfileScores(t, w, &cfg.Profiles[i]); err != nil {
			return false, err.Error()
		}
	}
	return true, ""
}

// TestValidationAgrees gives configurations, valid and not, to upstream and
// to reprieve: each must accept exactly what kube-scheduler starts with.
// reprieve accepts out-of-tree plugins, which it then reports as
// unsupported; upstream, without them registered, refuses them.
func TestValidationAgrees(t *testing.T) {
	metrics.Register()
	klog.SetLogger(logr.Discard())
	defer klog.ClearLogger()
	const header = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
	pc := func(name, args string) string {
		return "profiles:\n- pluginConfig:\n  - name: " + name + "\n    args: " + args + "\n"
	}
	plugins := func(body string) string { return "profiles:\n- plugins:\n" + body }
	cases := map[string]string{
		"empty":                       "",
		"two profiles":                "profiles:\n- schedulerName: a\n- schedulerName: b\n",
		"MostAllocated":               pc("NodeResourcesFit", "{scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 3}, {name: example.com/gpu}]}}"),
		"RequestedToCapacityRatio":    pc("NodeResourcesFit", "{scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: [{utilization: 0, score: 10}, {utilization: 100, score: 0}]}}}"),
		"score weights":               plugins("    score:\n      enabled: [{name: ImageLocality, weight: 30}, {name: TaintToleration, weight: 0}]\n"),
		"negative weight":             plugins("    multiPoint:\n      enabled: [{name: NodeAffinity, weight: -3}]\n"),
		"no score plugins":            plugins("    score:\n      disabled: [{name: '*'}]\n"),
		"preemption args":             pc("DefaultPreemption", "{minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 1}"),
		"percentage 100":              "percentageOfNodesToScore: 100\nprofiles:\n- percentageOfNodesToScore: 0\n",
		"List defaulting":             pc("PodTopologySpread", "{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]}"),
		"List without constraints":    pc("PodTopologySpread", "{defaultingType: List}"),
		"added preferred affinity":    pc("NodeAffinity", "{addedAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 3, preference: {matchExpressions: [{key: a, operator: Exists}]}}]}}"),
		"hard weight 0":               pc("InterPodAffinity", "{hardPodAffinityWeight: 0}"),
		"balanced cpu only":           pc("NodeResourcesBalancedAllocation", "{resources: [{name: cpu}]}"),
		"same queueSort":              "profiles:\n- schedulerName: a\n  plugins: {queueSort: {enabled: [{name: PrioritySort}], disabled: [{name: '*'}]}}\n- schedulerName: b\n  plugins: {queueSort: {enabled: [{name: PrioritySort}], disabled: [{name: '*'}]}}\n",
		"args with their kind":        pc("DefaultPreemption", "{apiVersion: kubescheduler.config.k8s.io/v1, kind: DefaultPreemptionArgs, minCandidateNodesAbsolute: 3}"),
		"parallelism 0":               "parallelism: 0\n",
		"parallelism negative":        "parallelism: -1\n",
		"percentage 101":              "percentageOfNodesToScore: 101\n",
		"profile percentage -1":       "profiles:\n- percentageOfNodesToScore: -1\n",
		"duplicate names":             "profiles:\n- schedulerName: a\n- schedulerName: a\n",
		"unnamed second profile":      "profiles:\n- schedulerName: a\n- {}\n",
		"percentage of candidates":    pc("DefaultPreemption", "{minCandidateNodesPercentage: 101}"),
		"absolute candidates":         pc("DefaultPreemption", "{minCandidateNodesAbsolute: -1}"),
		"both budgets zero":           pc("DefaultPreemption", "{minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}"),
		"hard weight 101":             pc("InterPodAffinity", "{hardPodAffinityWeight: 101}"),
		"hard weight -1":              pc("InterPodAffinity", "{hardPodAffinityWeight: -1}"),
		"strategy Bogus":              pc("NodeResourcesFit", "{scoringStrategy: {type: Bogus}}"),
		"strategy without type":       pc("NodeResourcesFit", "{scoringStrategy: {resources: [{name: cpu}]}}"),
		"resource weight 101":         pc("NodeResourcesFit", "{scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, weight: 101}]}}"),
		"resource weight -1":          pc("NodeResourcesFit", "{scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, weight: -1}]}}"),
		"shape missing":               pc("NodeResourcesFit", "{scoringStrategy: {type: RequestedToCapacityRatio}}"),
		"shape empty":                 pc("NodeResourcesFit", "{scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: []}}}"),
		"shape unsorted":              pc("NodeResourcesFit", "{scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: [{utilization: 60, score: 1}, {utilization: 20, score: 2}]}}}"),
		"shape score 11":              pc("NodeResourcesFit", "{scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: [{utilization: 60, score: 11}]}}}"),
		"shape utilization 101":       pc("NodeResourcesFit", "{scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: [{utilization: 101, score: 1}]}}}"),
		"shape with LeastAllocated":   pc("NodeResourcesFit", "{scoringStrategy: {type: LeastAllocated, requestedToCapacityRatio: {shape: [{utilization: 1, score: 1}]}}}"),
		"ignored resource name":       pc("NodeResourcesFit", "{ignoredResources: [a/b/c]}"),
		"ignored resource group":      pc("NodeResourcesFit", "{ignoredResourceGroups: [example.com/x]}"),
		"System with constraints":     pc("PodTopologySpread", "{defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]}"),
		"defaultingType Bogus":        pc("PodTopologySpread", "{defaultingType: Bogus}"),
		"maxSkew 0":                   pc("PodTopologySpread", "{defaultingType: List, defaultConstraints: [{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]}"),
		"no topologyKey":              pc("PodTopologySpread", "{defaultingType: List, defaultConstraints: [{maxSkew: 1, whenUnsatisfiable: ScheduleAnyway}]}"),
		"bad topologyKey":             pc("PodTopologySpread", "{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: 'a b', whenUnsatisfiable: ScheduleAnyway}]}"),
		"no whenUnsatisfiable":        pc("PodTopologySpread", "{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: zone}]}"),
		"whenUnsatisfiable Bogus":     pc("PodTopologySpread", "{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: Bogus}]}"),
		"duplicate constraints":       pc("PodTopologySpread", "{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}, {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]}"),
		"constraint selector":         pc("PodTopologySpread", "{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, labelSelector: {}}]}"),
		"balanced weight 2":           pc("NodeResourcesBalancedAllocation", "{resources: [{name: cpu, weight: 2}]}"),
		"balanced duplicate":          pc("NodeResourcesBalancedAllocation", "{resources: [{name: cpu}, {name: cpu}]}"),
		"added affinity operator":     pc("NodeAffinity", "{addedAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 3, preference: {matchExpressions: [{key: a, operator: Bogus}]}}]}}"),
		"added required affinity":     pc("NodeAffinity", "{addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: In}]}]}}}"),
		"bind timeout":                pc("VolumeBinding", "{bindTimeoutSeconds: -1}"),
		"filter timeout":              pc("DynamicResources", "{filterTimeout: -1s}"),
		"binding timeout":             pc("DynamicResources", "{bindingTimeout: 500ms}"),
		"unknown args field":          pc("InterPodAffinity", "{hardPodAfinityWeight: 3}"),
		"args of another kind":        pc("InterPodAffinity", "{kind: NodeAffinityArgs}"),
		"duplicate pluginConfig":      "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n  - name: DefaultPreemption\n",
		"removed plugin":              plugins("    filter:\n      enabled: [{name: EBSLimits}]\n"),
		"removed plugin args":         "profiles:\n- pluginConfig:\n  - name: GCEPDLimits\n",
		"plugin at the wrong point":   plugins("    score:\n      enabled: [{name: NodePorts}]\n"),
		"plugin twice at a point":     plugins("    score:\n      enabled: [{name: ImageLocality}, {name: ImageLocality}]\n"),
		"plugin twice at multiPoint":  plugins("    multiPoint:\n      enabled: [{name: ImageLocality}, {name: ImageLocality}]\n"),
		"no bind plugin":              plugins("    bind:\n      disabled: [{name: '*'}]\n"),
		"no queueSort plugin":         plugins("    queueSort:\n      disabled: [{name: '*'}]\n"),
		"different queueSort":         "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins: {queueSort: {enabled: [{name: PrioritySort}], disabled: [{name: '*'}]}}\n",
		"initial backoff 0":           "podInitialBackoffSeconds: 0\n",
		"max backoff below initial":   "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 4\n",
		"extender without weight":     "extenders: [{urlPrefix: 'http://x', prioritizeVerb: p}]\n",
		"two binding extenders":       "extenders: [{urlPrefix: 'http://x', bindVerb: b}, {urlPrefix: 'http://y', bindVerb: b}]\n",
		"extender resource":           "extenders: [{urlPrefix: 'http://x', managedResources: [{name: cpu}]}]\n",
		"unknown plugin":              plugins("    multiPoint:\n      enabled: [{name: Coscheduling}]\n"),
		"unknown field":               "bogus: 1\n",
		"unknown field in a profile":  "profiles:\n- schedulerNam: a\n",
		"field in the wrong case":     "Parallelism: 3\n",
		"duplicate field":             "parallelism: 3\nparallelism: 4\n",
		"non-default in-tree plugin":  plugins("    multiPoint:\n      enabled: [{name: PodGroupPodsCount}]\n"),
		"leader election and clients": "leaderElection: {leaderElect: false}\nclientConnection: {qps: 10}\n",
	}
	agreed, refused := 0, 0
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			doc := []byte(header + body)
			up, why := upstreamAccepts(t, doc)
			cfg, err := config.Parse(doc)
			ours := err == nil
			for _, u := range cfg.Unsupported {
				if strings.Contains(u, "not an in-tree plugin") {
					ours = false
				}
			}
			if up != ours {
				t.Errorf("upstream accepts: %v (%s); reprieve accepts: %v (%v)\n%s", up, why, ours, err, doc)
				return
			}
			agreed++
			if !up {
				refused++
			}
		})
	}
	t.Logf("%d of %d configurations accepted or refused alike (%d refused)", agreed, len(cases), refused)
}
