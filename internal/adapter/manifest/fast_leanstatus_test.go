package manifest

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// leanStatusSeeds are pod statuses as kubelets write them, and written
// badly, for leanPodStatus.
var leanStatusSeeds = []string{
	`{"conditions": [{"lastProbeTime": null, "lastTransitionTime": "2026-01-01T00:00:00Z", "status": "True", "type": "Ready"}],
	  "hostIP": "10.0.0.1", "phase": "Running", "podIP": "10.244.0.7", "qosClass": "Burstable", "startTime": "2026-01-01T00:00:00Z"}`,
	`{"conditions": [
	    {"lastProbeTime": null, "lastTransitionTime": "2026-01-01T00:00:01Z", "status": "True", "type": "PodReadyToStartContainers"},
	    {"lastProbeTime": null, "lastTransitionTime": "2026-01-01T00:00:00Z", "status": "True", "type": "Initialized"},
	    {"lastProbeTime": null, "lastTransitionTime": "2026-01-01T00:00:02Z", "status": "True", "type": "Ready"},
	    {"lastProbeTime": null, "lastTransitionTime": "2026-01-01T00:00:02Z", "status": "True", "type": "ContainersReady"},
	    {"lastProbeTime": null, "lastTransitionTime": "2026-01-01T00:00:00Z", "status": "True", "type": "PodScheduled"}],
	  "containerStatuses": [{"containerID": "containerd://0123abcd", "image": "registry.example.com/app:1.2.3",
	    "imageID": "registry.example.com/app@sha256:0123", "lastState": {}, "name": "app", "ready": true, "restartCount": 0,
	    "started": true, "state": {"running": {"startedAt": "2026-01-01T00:00:01Z"}},
	    "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": "kube-api-access-x7k2p", "readOnly": true, "recursiveReadOnly": "Disabled"}]}],
	  "hostIP": "10.0.0.1", "hostIPs": [{"ip": "10.0.0.1"}], "phase": "Running", "podIP": "10.244.0.7", "podIPs": [{"ip": "10.244.0.7"}],
	  "qosClass": "Burstable", "startTime": "2026-01-01T00:00:00Z", "observedGeneration": 1}`,
	`{"conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler", "message": "m", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
	  "phase": "Running", "nominatedNodeName": "n1"}`,
	`{"conditions": [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}], "phase": "Running",
	  "containerStatuses": [{"name": "c", "ready": false, "restartCount": 2, "allocatedResources": {"cpu": "100m"},
	    "resources": {"requests": {"cpu": "100m"}, "limits": {"memory": "1Gi"}},
	    "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled", "startedAt": "2026-01-01T00:00:00Z", "finishedAt": "2026-01-01T00:01:00Z", "containerID": "x"}},
	    "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off"}}, "user": {"linux": {"uid": 0, "gid": 0, "supplementalGroups": [0, 10]}}}]}`,
	`{"initContainerStatuses": [{"name": "init", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}], "containerStatuses": [], "phase": "Pending"}`,
	`{"phase": "Failed", "reason": "Evicted", "message": "The node was low on resource: memory.", "startTime": null}`,
	`{"conditions": [{"type": "Ready", "status": "True", "message": "mentions DisruptionTarget"}]}`,
	`{"conditions": null, "containerStatuses": null, "podIPs": null, "hostIPs": [null]}`,
	`{"conditions": [null, {"type": "DisruptionTarget"}]}`,
	`{"containerStatuses": [null]}`,
	`{"resize": "Infeasible", "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "gpu-claim"}]}`,
	`{"phase": "Running", "phase": "Pending"}`,
	`{"hostIP": "a", "hostIP": "b"}`,
	`{"containerStatuses": [{"name": "c", "name": "d"}]}`,
	`{"containerStatuses": [{"state": {"running": {"startedAt": "x"}}}]}`,
	`{"containerStatuses": [{"state": {"running": {"startedAt": "2026-01-01T00:00:00Z", "startedAt": "2026-01-01T00:00:00Z"}}}]}`,
	`{"containerStatuses": [{"state": {"runnin": {}}}]}`,
	`{"containerStatuses": [{"lastState": {"terminated": {"exitCode": 99999999999}}}]}`,
	`{"containerStatuses": [{"lastState": {"terminated": {"exitCode": 1.0}}}]}`,
	`{"containerStatuses": [{"restartCount": -1}]}`,
	`{"containerStatuses": [{"ready": null, "started": null, "image": null}]}`,
	`{"containerStatuses": [{"started": false}]}`,
	`{"podIPs": [{"ip": "10.0.0.1", "ip": "10.0.0.2"}]}`,
	`{"podIPs": [{"ipp": "10.0.0.1"}]}`,
	`{"podIPs": {"ip": "10.0.0.1"}}`,
	`{"hostIP": 10}`,
	`{"hostIP": "10.0.0.1\u0000"}`,
	"{\"message\": \"line\nbreak\"}",
	`{"message": "caf\u00e9"}`,
	"{\"message\": \"caf\xc3\xa9\"}",
	"{\"message\": \"bad \xff byte\"}",
	`{"qosClass": "Guaranteed"} `,
	`{"qosClass": "Guaranteed"} x`,
	`{"qosClass": "Guaranteed"`,
	`{"startTime": "2026-01-01T00:00:00Z", "startTime": null}`,
	`{"observedGeneration": 9223372036854775807}`,
	`{"observedGeneration": 922337203685477580}`,
	`{"conditions": [{"type": "DisruptionTarget", "observedGeneration": "1"}]}`,
	`{"conditions": [{"type": "DisruptionTarget", "lastTransitionTime": "2026-13-01T00:00:00Z"}]}`,
	`{"conditions": [{"type": "Ready", "lastTransitionTime": "2026-13-01T00:00:00Z"}]}`,
	`{"conditions": [{"type": "Ready", "typ": "x"}]}`,
	`{"Phase": "Running"}`,
	`nul`,
	`null`,
	`{}`,
	`[]`,
}

// FuzzLeanPodStatus: whatever the status, what leanPodStatus accepts
// DecodeStrict decodes without error or strict error, and leanStatus
// leaves both alike.
func FuzzLeanPodStatus(f *testing.F) {
	for _, s := range append(leanStatusSeeds, fastDecodeSeeds...) {
		f.Add([]byte(s))
	}
	for _, obj := range objectSeeds(f) {
		var o struct {
			Status json.RawMessage `json:"status"`
		}
		if json.Unmarshal(obj, &o) == nil && len(o.Status) > 0 {
			f.Add([]byte(o.Status))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkLeanStatus(t, data) })
}

// TestLeanPodStatus runs the fuzzer's seeds, and checks leanPodStatus
// reads the statuses kubelets write.
func TestLeanPodStatus(t *testing.T) {
	// Each of the first 11 seeds is read, twice (the second time from
	// the times remembered).
	seedsAccepted(t, "leanPodStatus", leanStatusSeeds, checkLeanStatus, 2*11)
}

// seedsAccepted runs check on each of seeds, and fails unless what (the
// reader checked) accepted them at least want times in all.
func seedsAccepted(t *testing.T, what string, seeds []string, check func(*testing.T, []byte) int, want int) {
	t.Helper()
	accepted := 0
	for _, s := range seeds {
		accepted += check(t, []byte(s))
	}
	if accepted < want {
		t.Errorf("%s accepted %d of the seeds, want at least %d", what, accepted, want)
	}
}

// checkLeanStatus decodes data with leanPodStatus and with DecodeStrict,
// twice with one decoder, fails on any difference once each is leaned,
// and returns how many times leanPodStatus accepted it.
func checkLeanStatus(t *testing.T, data []byte) int {
	t.Helper()
	opts := cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })
	var d fastDecoder
	accepted := 0
	for range 2 {
		// The conditions' room holds what an earlier pod left.
		room := []v1.PodCondition{{Type: "Stale", Reason: "left"}, {Type: v1.DisruptionTarget}}
		fast := v1.PodStatus{Conditions: room[:0]}
		if !d.leanPodStatus(data, &fast) {
			break
		}
		accepted++
		var slow v1.PodStatus
		strict, err := DecodeStrict(data, &slow)
		if err != nil || len(strict) > 0 {
			t.Fatalf("%q read by leanPodStatus, but DecodeStrict: %v, %v", data, err, strict)
		}
		leanStatus(&fast)
		leanStatus(&slow)
		if diff := cmp.Diff(slow, fast, opts); diff != "" {
			t.Fatalf("%q read otherwise (-DecodeStrict +leanPodStatus):\n%s", data, diff)
		}
	}
	return accepted
}

// FuzzTimeOf holds timeOf to metav1.Time's own UnmarshalJSON: whatever it
// reads, it reads as the time does, and it reads every plain string and
// null the time accepts.
func FuzzTimeOf(f *testing.F) {
	for _, s := range []string{`"2026-01-01T00:00:00Z"`, `"2026-01-01T00:00:00+02:00"`, `"2024-02-29T23:59:59Z"`, `"2025-02-29T00:00:00Z"`,
		`"0000-01-01T00:00:00Z"`, `"2026-04-31T00:00:00Z"`, `"2026-01-01T24:00:00Z"`, `"2026-01-01T00:00:60Z"`, `"2026-00-01T00:00:00Z"`, `null`, `"2026-13-01T00:00:00Z"`,
		`"2026-01-01T00:00:00.123456789Z"`, `"2026-01-01 00:00:00Z"`, `"2026-01-01T00:00:00\u005a"`, `""`, `"x"`, `1`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		var d fastDecoder
		for range 2 { // the second from the cache
			got, ok := d.timeOf(text)
			var want metav1.Time
			err := want.UnmarshalJSON(text)
			_, plain := plainJSONString(text)
			if ok != (err == nil && (plain || string(text) == "null")) {
				t.Fatalf("timeOf(%q) ok = %v, UnmarshalJSON: %v", text, ok, err)
			}
			if ok && got != want {
				t.Fatalf("timeOf(%q) = %v, UnmarshalJSON %v", text, got, want)
			}
		}
	})
}

// FuzzTimeAt: where timeAt reads a time, plainTextAt reads a plain string
// to the same end, and timeOf reads it as the same time.
func FuzzTimeAt(f *testing.F) {
	for _, s := range []string{`"2026-01-01T00:00:00Z",`, `"2024-02-29T23:59:59Z"`, `"2025-02-29T00:00:00Z"`, `"2026-01-01T00:00:00+02:00"`,
		` "2026-01-01T00:00:00Z"`, `"2026-01-01T00:00:00Z`, `"2026-01-01T00:00:0xZ"`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, end, ok := timeAt(data, 0)
		if !ok {
			return
		}
		_, plainEnd := plainTextAt(data, 0)
		var d fastDecoder
		want, wantOK := d.timeOf(data[:max(plainEnd, 0)])
		if plainEnd != end || !wantOK || !want.Equal(&metav1.Time{Time: got}) {
			t.Fatalf("timeAt(%q) = %v to %d; plainTextAt ends at %d, timeOf reads %v (%v)", data, got, end, plainEnd, want, wantOK)
		}
	})
}
