package sim

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// neverFits is a scenario ending at end whose one pod asks for more CPU
// than its one node has: it is retried until the end.
func neverFits(end string) string {
	return docs(nodeYAML("n1", "1"), `apiVersion: v1
kind: Pod
metadata: {name: huge}
spec: {containers: [{name: c, resources: {requests: {cpu: "8"}}}]}
`, simulationYAML("never", end))
}

// TestFailedSchedulingSeries: a pod that never fits is retried every five
// minutes until the end, and its FailedScheduling events, alike, are one
// event with a series (how many, and when last), as client-go's event
// recorder keeps them: a run of 1000h holds one event for the pod as a run
// of 10h does, whatever the number of retries.
func TestFailedSchedulingSeries(t *testing.T) {
	type series struct {
		Count          int    `json:"count"`
		LastObservedAt string `json:"lastObservedAt"`
	}
	type event struct {
		At     string  `json:"at"`
		Reason string  `json:"reason"`
		Object string  `json:"object"`
		Series *series `json:"series"`
	}
	for _, end := range []time.Duration{10 * time.Hour, 1000 * time.Hour} {
		res := runYAML(t, neverFits(end.String()))
		raw, err := json.Marshal(res.Events)
		if err != nil {
			t.Fatal(err)
		}
		var events []event
		if err := json.Unmarshal(raw, &events); err != nil {
			t.Fatal(err)
		}
		var failed []event
		for _, e := range events {
			if e.Reason == "FailedScheduling" && e.Object == "pod/huge" {
				failed = append(failed, e)
			}
		}
		if len(failed) != 1 {
			t.Errorf("end %s: %d FailedScheduling events for the pod, want 1 with a series", end, len(failed))
			continue
		}
		attempts := res.Summary.SchedulingAttempts
		if min := int(end / (6 * time.Minute)); attempts < min {
			t.Errorf("end %s: %d attempts, want at least %d (one per five minutes and a half)", end, attempts, min)
		}
		e := failed[0]
		if e.Series == nil || e.Series.Count != attempts {
			t.Errorf("end %s: series %+v, want a count of %d (every attempt)", end, e.Series, attempts)
			continue
		}
		last, err := parseOffset(e.Series.LastObservedAt)
		if err != nil || last <= end-6*time.Minute || last > end {
			t.Errorf("end %s: last observed at %q, want within the last six minutes of the run", end, e.Series.LastObservedAt)
		}
	}
}

// parseOffset reads FormatOffset's h:mm:ss.sss.
func parseOffset(s string) (time.Duration, error) {
	var h, m, sec, ms int64
	if _, err := fmt.Sscanf(s, "%d:%d:%d.%d", &h, &m, &sec, &ms); err != nil {
		return 0, err
	}
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec)*time.Second + time.Duration(ms)*time.Millisecond, nil
}

// TestPreemptedByNamespace: a victim's preemptor is named in its own
// namespace, not the victim's: the story's batch workers (jobs) were
// preempted by finance/urgent-report, and a StatefulSet replica's story
// names the preemptor of another namespace.
func TestPreemptedByNamespace(t *testing.T) {
	res := runFile(t, "../../../examples/simulate/story.yaml")
	victims := 0
	for _, p := range res.Pods {
		if p.Preempted == nil {
			continue
		}
		victims++
		if p.PreemptedBy != "finance/urgent-report" {
			t.Errorf("%s preempted by %q, want finance/urgent-report", p.Pod, p.PreemptedBy)
		}
	}
	if victims != 2 {
		t.Errorf("%d victims, want the 2 batch workers", victims)
	}

	res = runYAML(t, docs(nodeYAML("n1", "2"), `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local, annotations: {storageclass.kubernetes.io/is-default-class: "true"}}
provisioner: local.csi.example.com
volumeBindingMode: WaitForFirstConsumer
`, `apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
`, statefulSetYAML("", ""), simulationYAML("ns", "5m")+`  actions:
  - at: 10s
    create:
    - apiVersion: v1
      kind: Pod
      metadata: {name: urgent, namespace: ops}
      spec:
        priorityClassName: high
        containers: [{name: c, resources: {requests: {cpu: "1"}}}]
`))
	if len(res.Replicas) != 1 || res.Replicas[0].PreemptedBy != "ops/urgent" {
		t.Errorf("replica stories %+v, want one preempted by ops/urgent", res.Replicas)
	}
}
