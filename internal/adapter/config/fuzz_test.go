package config

import (
	"testing"
)

// FuzzParse feeds arbitrary documents to Parse: it must never panic, and a
// configuration it accepts has at least one profile, each with its scoring.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"",
		header,
		header + "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins: {postFilter: {disabled: [{name: DefaultPreemption}]}}\n",
		header + "profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: NodeResourcesFit, weight: 5}]\n    score:\n      disabled: [{name: '*'}]\n",
		header + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: [{utilization: 0, score: 10}]}}}\n",
		header + "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args: {defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]}\n",
		header + "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args: {addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: In, values: [b]}]}]}}}\n",
		header + "extenders: [{urlPrefix: x, prioritizeVerb: p, weight: 1, managedResources: [{name: example.com/x}]}]\n",
		header + "parallelism: 0\npercentageOfNodesToScore: 200\npodInitialBackoffSeconds: -1\n",
		header + "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args: null\n  - name: Foo\n    args: [1, 2]\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			return
		}
		if len(c.Profiles) == 0 {
			t.Fatalf("accepted a configuration without profiles:\n%s", data)
		}
		for _, p := range c.Profiles {
			if p.Score == nil || p.SchedulerName == "" {
				t.Fatalf("accepted profile %+v incomplete:\n%s", p, data)
			}
		}
	})
}
