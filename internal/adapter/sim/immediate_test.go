package sim

import "testing"

// immediateScenario has zones a and b (one node each), a class of mode
// Immediate (the default) whose provisioner may only use zone b, a class of
// static volumes only, an Available static volume of that class in zone a,
// and at 5s pods using claims of each kind.
func immediateScenario(claims string) string {
	return `
apiVersion: v1
kind: Node
metadata: {name: na, labels: {kubernetes.io/hostname: na, topology.kubernetes.io/zone: a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: nb, labels: {kubernetes.io/hostname: nb, topology.kubernetes.io/zone: b}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: disk.example.com
allowedTopologies: [{matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [b]}]}]
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: static}
provisioner: kubernetes.io/no-provisioner
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-a}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: static
  csi: {driver: disk.example.com, volumeHandle: pv-a}
  nodeAffinity:
    required:
      nodeSelectorTerms: [{matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [a]}]}]
` + claims + `
---
` + simulationYAML("immediate", "2m") + `  provisioningDelay: 10s
  actions:
  - at: 5s
    create:
    - apiVersion: v1
      kind: Pod
      metadata: {name: app}
      spec:
        containers: [{name: c, resources: {requests: {cpu: "1"}}}]
        volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
`
}

func claimDoc(class, size string) string {
	return `
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default}
spec:
  storageClassName: ` + class + `
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: ` + size + `}}
`
}

// TestImmediateBinding: the simulated PV controller binds claims that do
// not wait for a consumer: to a matching static volume at once (the pod then
// lands in that volume's zone), to a volume provisioned after the delay in
// the class's allowed topology (the pod waits for it, then lands there), or
// to the volume it names (prebound), or
// not at all when nothing matches and the class cannot provision (the pod
// stays pending, as upstream's PreFilter leaves it).
func TestImmediateBinding(t *testing.T) {
	tests := map[string]struct {
		claim       string
		wantNode    string
		wantBoundAt float64 // seconds; ignored when wantNode is ""
		wantEvent   string  // a FailedScheduling message part, when pending
	}{
		"static volume bound at once":           {claim: claimDoc("static", "5Gi"), wantNode: "na", wantBoundAt: 5},
		"provisioned in the allowed topology":   {claim: claimDoc("fast", "5Gi"), wantNode: "nb", wantBoundAt: 10},
		"prebound to a volume":                  {claim: claimDoc("static", "5Gi") + "  volumeName: pv-a\n", wantNode: "na", wantBoundAt: 5},
		"prebound to a volume of another class": {claim: claimDoc("fast", "5Gi") + "  volumeName: pv-a\n", wantEvent: "unbound immediate PersistentVolumeClaims"},
		"nothing matches, nothing provisions":   {claim: claimDoc("static", "50Gi"), wantEvent: "unbound immediate PersistentVolumeClaims"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			res := runYAML(t, immediateScenario(tc.claim))
			var node string
			var at float64
			for _, p := range res.Pods {
				if p.Pod == "default/app" && p.Bound != nil {
					node, at = p.Node, *p.Bound
				}
			}
			if node != tc.wantNode {
				t.Fatalf("app bound to %q, want %q", node, tc.wantNode)
			}
			if node != "" && (at < tc.wantBoundAt || at > tc.wantBoundAt+1) {
				t.Errorf("app bound at %vs, want %vs", at, tc.wantBoundAt)
			}
			if tc.wantEvent != "" && find(res.Events, 0, "FailedScheduling", "pod/app", tc.wantEvent) < 0 {
				t.Errorf("no FailedScheduling for app saying %q", tc.wantEvent)
			}
		})
	}
}
