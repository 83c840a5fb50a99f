package report

import (
	"context"
	"strings"
	"testing"

	"github.com/reprieve/reprieve/internal/adapter/sim"
)

// TestPreemptedReplicas checks that the page of the bundled StatefulSet
// example tells the preempted replica's story, and that a page without
// such a replica has no such section.
func TestPreemptedReplicas(t *testing.T) {
	sc, err := sim.LoadScenario("../../../../examples/statefulset/zone-full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	page := render(t, sc, res)
	for _, want := range []string{
		"<h2>Preempted replicas</h2>",
		`<td class="obj">shop/db-0</td><td>at 0:01:00.001 on node-a by shop/urgent</td>`,
		"<td>re-created at 0:01:20.001, pending 5m10s, bound to node-a at 0:06:30.001</td>",
		"1 node(s) didn&#39;t match PersistentVolume&#39;s node affinity",
		"<div>shop/data-db-0: volume pvc-uid-000004, only on nodes with topology.kubernetes.io/region in (eu), topology.kubernetes.io/zone in (zone-a)</div>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	sc2, res2 := runStory(t)
	if strings.Contains(render(t, sc2, res2), "Preempted replicas") {
		t.Error("the story's page has a Preempted replicas section, but no StatefulSet")
	}
}
