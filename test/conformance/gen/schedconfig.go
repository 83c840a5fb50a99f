package gen

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// scorePlugins are the default profile's score plugins that reprieve
// computes.
var scorePlugins = []string{
	"TaintToleration", "NodeAffinity", "NodeResourcesFit", "PodTopologySpread",
	"InterPodAffinity", "NodeResourcesBalancedAllocation", "ImageLocality",
}

// SchedulerConfig returns a random KubeSchedulerConfiguration document with
// one non-default profile named default-scheduler, valid for kube-scheduler
// and within what reprieve implements: score plugins reweighted (through
// multiPoint or score) or disabled (some, or all with "*"), DefaultPreemption
// disabled (through multiPoint or postFilter) or given random arguments,
// NodeResourcesFit's scoring strategy (LeastAllocated, MostAllocated or
// RequestedToCapacityRatio with a random shape) over random resources and
// weights, BalancedAllocation's resources, InterPodAffinity's
// hardPodAffinityWeight and ignorePreferredTermsOfExistingPods,
// PodTopologySpread's List defaulting with ScheduleAnyway and DoNotSchedule
// constraints,
// NodeAffinity's added required and preferred terms, and NodeResourcesFit's
// ignored resources. The same seed gives the same
// document.
func SchedulerConfig(seed int64) []byte {
	r := rand.New(rand.NewPCG(uint64(seed), 0x5c4ed))
	var b strings.Builder
	b.WriteString("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
	if r.IntN(3) == 0 {
		fmt.Fprintf(&b, "percentageOfNodesToScore: %d\n", r.IntN(101))
	}
	b.WriteString("profiles:\n- schedulerName: default-scheduler\n")

	// Plugins.
	var multiEnabled, multiDisabled, scoreEnabled, scoreDisabled, postFilterDisabled []string
	weight := func() string {
		switch r.IntN(8) {
		case 0:
			return "" // unset: 1
		case 1:
			return ", weight: 0" // 0: 1
		default:
			return fmt.Sprintf(", weight: %d", 1+r.IntN(20))
		}
	}
	perm := r.Perm(len(scorePlugins))
	for _, i := range perm[:r.IntN(4)] {
		multiEnabled = append(multiEnabled, fmt.Sprintf("{name: %s%s}", scorePlugins[i], weight()))
	}
	for _, i := range r.Perm(len(scorePlugins))[:r.IntN(3)] {
		scoreEnabled = append(scoreEnabled, fmt.Sprintf("{name: %s%s}", scorePlugins[i], weight()))
	}
	switch r.IntN(12) {
	case 0:
		scoreDisabled = []string{`{name: "*"}`}
		// With "*", only the plugins the score point enables run there.
	case 1, 2, 3:
		for _, i := range r.Perm(len(scorePlugins))[:1+r.IntN(3)] {
			name := scorePlugins[i]
			if !slices.ContainsFunc(scoreEnabled, func(s string) bool { return strings.HasPrefix(s, "{name: "+name+",") || s == "{name: "+name+"}" }) {
				scoreDisabled = append(scoreDisabled, fmt.Sprintf("{name: %s}", name))
			}
		}
	}
	switch r.IntN(8) {
	case 0:
		multiDisabled = append(multiDisabled, "{name: DefaultPreemption}")
	case 1:
		postFilterDisabled = append(postFilterDisabled, "{name: DefaultPreemption}")
	case 2:
		// Every postFilter plugin: DynamicResources' too.
		postFilterDisabled = append(postFilterDisabled, `{name: "*"}`)
	}
	if r.IntN(6) == 0 {
		// A plugin reprieve does not model, which changes nothing for it.
		multiDisabled = append(multiDisabled, "{name: NodeDeclaredFeatures}")
	}
	set := func(name string, enabled, disabled []string) string {
		if len(enabled) == 0 && len(disabled) == 0 {
			return ""
		}
		s := "    " + name + ":\n"
		if len(enabled) > 0 {
			s += "      enabled: [" + strings.Join(enabled, ", ") + "]\n"
		}
		if len(disabled) > 0 {
			s += "      disabled: [" + strings.Join(disabled, ", ") + "]\n"
		}
		return s
	}
	plugins := set("multiPoint", multiEnabled, multiDisabled) + set("score", scoreEnabled, scoreDisabled) + set("postFilter", nil, postFilterDisabled)
	if plugins != "" {
		b.WriteString("  plugins:\n" + plugins)
	}

	// Plugin arguments.
	var configs []string
	if r.IntN(2) == 0 {
		// Mostly small budgets, so that the dry run stops early.
		pct := []int{0, 0, 1, 5, 10, 30, 50, 100}[r.IntN(8)]
		abs := r.IntN(4)
		if r.IntN(4) == 0 {
			abs = r.IntN(200)
		}
		if pct == 0 && abs == 0 {
			abs = 1
		}
		configs = append(configs, fmt.Sprintf("  - name: DefaultPreemption\n    args: {minCandidateNodesPercentage: %d, minCandidateNodesAbsolute: %d}\n", pct, abs))
	}
	resources := func(weighted bool) string {
		names := []string{"cpu", "memory", "ephemeral-storage", "example.com/gpu"}
		var out []string
		for _, i := range r.Perm(len(names))[:1+r.IntN(len(names))] {
			w := ""
			if weighted {
				w = weight()
				if w == ", weight: 0" {
					w = ""
				}
			}
			out = append(out, fmt.Sprintf("{name: %s%s}", names[i], w))
		}
		return "[" + strings.Join(out, ", ") + "]"
	}
	if r.IntN(4) != 0 {
		s := "  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
		switch r.IntN(3) {
		case 0:
			s += "        type: LeastAllocated\n"
		case 1:
			s += "        type: MostAllocated\n"
		default:
			s += "        type: RequestedToCapacityRatio\n        requestedToCapacityRatio:\n          shape: ["
			var points []string
			u := 0
			for range 1 + r.IntN(4) {
				if u > 100 {
					break
				}
				points = append(points, fmt.Sprintf("{utilization: %d, score: %d}", u, r.IntN(11)))
				u += 1 + r.IntN(60)
			}
			s += strings.Join(points, ", ") + "]\n"
		}
		if r.IntN(4) != 0 {
			s += "        resources: " + resources(true) + "\n"
		}
		switch r.IntN(6) {
		case 0:
			s += "      ignoredResources: [example.com/gpu]\n"
		case 1:
			s += "      ignoredResourceGroups: [example.com]\n"
		}
		configs = append(configs, s)
	}
	if r.IntN(3) == 0 {
		configs = append(configs, "  - name: NodeResourcesBalancedAllocation\n    args: {resources: "+resources(false)+"}\n")
	}
	if r.IntN(3) == 0 {
		configs = append(configs, fmt.Sprintf("  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: %d, ignorePreferredTermsOfExistingPods: %v}\n",
			[]int{0, 1, 5, 100}[r.IntN(4)], r.IntN(2) == 0))
	}
	if r.IntN(3) == 0 {
		s := "  - name: PodTopologySpread\n    args:\n      defaultingType: List\n      defaultConstraints:"
		keys := []string{"kubernetes.io/hostname", "topology.kubernetes.io/zone"}
		n := r.IntN(3)
		if n == 0 {
			s += " []\n"
		} else {
			s += "\n"
		}
		for _, i := range r.Perm(2)[:n] {
			// DoNotSchedule defaults filter (and so change preemption's
			// dry run) the pods without constraints of their own.
			when := []string{"ScheduleAnyway", "DoNotSchedule"}[r.IntN(2)]
			s += fmt.Sprintf("      - {maxSkew: %d, topologyKey: %s, whenUnsatisfiable: %s}\n", 1+r.IntN(4), keys[i], when)
		}
		configs = append(configs, s)
	}
	if r.IntN(3) == 0 {
		s := "  - name: NodeAffinity\n    args:\n      addedAffinity:\n"
		if r.IntN(2) == 0 {
			// Nodes outside some pools or zones are off limits.
			req := []string{
				"{key: pool, operator: In, values: [general, compute]}",
				"{key: pool, operator: NotIn, values: [gpu]}",
				"{key: topology.kubernetes.io/zone, operator: Exists}",
				"{key: topology.kubernetes.io/zone, operator: In, values: [zone-a]}",
				"{key: disk, operator: NotIn, values: [hdd]}",
			}[r.IntN(5)]
			s += "        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms: [{matchExpressions: [" + req + "]}]\n"
		}
		if r.IntN(2) == 0 {
			key := []string{"topology.kubernetes.io/zone", "kubernetes.io/hostname", "disk"}[r.IntN(3)]
			s += fmt.Sprintf("        preferredDuringSchedulingIgnoredDuringExecution:\n        - {weight: %d, preference: {matchExpressions: [{key: %s, operator: Exists}]}}\n", 1+r.IntN(100), key)
		}
		configs = append(configs, s)
	}
	if len(configs) > 0 {
		b.WriteString("  pluginConfig:\n" + strings.Join(configs, ""))
	}
	return []byte(b.String())
}
