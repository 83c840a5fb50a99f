package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reprieve/reprieve/internal/scheduler"
)

// TestPendingPodsByQueue checks scheduler_pending_pods has upstream's four
// series, one per queue, with the queue's count.
func TestPendingPodsByQueue(t *testing.T) {
	reg := prometheus.NewRegistry()
	New(reg, "reprieve", func() scheduler.Counts { return scheduler.Counts{Active: 1, Backoff: 2, Unschedulable: 3, Gated: 4} })
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "scheduler_pending_pods" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "queue" {
					got[l.GetValue()] = m.GetGauge().GetValue()
				}
			}
		}
	}
	want := map[string]float64{"active": 1, "backoff": 2, "unschedulable": 3, "gated": 4}
	if len(got) != len(want) {
		t.Fatalf("series %v, want %v", got, want)
	}
	for q, v := range want {
		if got[q] != v {
			t.Errorf("queue=%q: %v, want %v", q, got[q], v)
		}
	}
}
