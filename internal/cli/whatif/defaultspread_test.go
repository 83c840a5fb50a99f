package whatif

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDefaultSpreadingFromFiles: a snapshot's Service and ReplicaSet give
// PodTopologySpread's system default constraints their selector — the
// pod goes to the node without its peers, where resources alone would send
// it to theirs — and neither is reported as a skipped kind.
func TestDefaultSpreadingFromFiles(t *testing.T) {
	const cluster = `apiVersion: v1
kind: Node
metadata: {name: a, labels: {kubernetes.io/hostname: a, topology.kubernetes.io/zone: za}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "32"}}
---
apiVersion: v1
kind: Node
metadata: {name: b, labels: {kubernetes.io/hostname: b, topology.kubernetes.io/zone: zb}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "32"}}
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, labels: {app: web}}
spec: {nodeName: a, containers: [{name: c, resources: {requests: {cpu: 100m}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-2, labels: {app: web}}
spec: {nodeName: a, containers: [{name: c, resources: {requests: {cpu: 100m}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: batch, labels: {app: batch}}
spec: {nodeName: b, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
`
	const service = `---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}, ports: [{port: 80}]}
`
	const replicaSet = `---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web-7f9, uid: rs-uid}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: i}]}
`
	const pod = `apiVersion: v1
kind: Pod
metadata: {name: web-3, labels: {app: web}%s}
spec: {containers: [{name: c, resources: {requests: {cpu: 500m}}}]}
`
	owned := ", ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-7f9, uid: rs-uid, controller: true}]"
	for name, tc := range map[string]struct {
		objects, owner, wantNode string
	}{
		"no Service, no controller":            {wantNode: "a"},
		"a Service":                            {objects: service, wantNode: "b"},
		"its ReplicaSet":                       {objects: replicaSet, owner: owned, wantNode: "b"},
		"a ReplicaSet it is not controlled by": {objects: replicaSet, wantNode: "a"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(file, data string) string {
				p := filepath.Join(dir, file)
				if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
				return p
			}
			snap := write("cluster.yaml", cluster+tc.objects)
			podFile := write("pod.yaml", strings.Replace(pod, "%s", tc.owner, 1))
			stdout, stderr, err := runWhatif("--snapshot", snap, "-f", podFile, "-o", "jsonpath={.placement.node}", "--now", "2026-12-01T00:00:00Z")
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			if stdout != tc.wantNode {
				t.Errorf("placed on %q, want %q", stdout, tc.wantNode)
			}
			if strings.Contains(stderr, "skipping") {
				t.Errorf("a kind in use reported as skipped:\n%s", stderr)
			}
		})
	}
}
