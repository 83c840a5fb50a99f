package sim

import "testing"

// gpuNode is n1 with one GPU published in a ResourceSlice, its class, and
// claims c1 and c2 for one GPU each.
var gpuNode = "\n" + nodeYAML("n1", "2") + `---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpu}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices: [{name: g0}]
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c1, uid: uc1}
spec:
  devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c2, uid: uc2}
spec:
  devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}
`

// TestSimulatedClaimsAllocated: simulated pods get their claims allocated
// when bound, so the node's only GPU goes to one pod; the other waits until
// the first is deleted and its claim released, then gets the GPU.
func TestSimulatedClaimsAllocated(t *testing.T) {
	res := runYAML(t, gpuNode+`
---
apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  terminationGracePeriodSeconds: 0
  containers: [{name: c, resources: {requests: {cpu: "100m"}}}]
  resourceClaims: [{name: gpu, resourceClaimName: c1}]
---
`+simulationYAML("t", "5m")+`  actions:
  - at: 10s
    create:
    - apiVersion: v1
      kind: Pod
      metadata: {name: b}
      spec:
        containers: [{name: c, resources: {requests: {cpu: "100m"}}}]
        resourceClaims: [{name: gpu, resourceClaimName: c2}]
  - at: 60s
    delete: [{kind: Pod, name: a}]
`)
	bound := boundAt(res)
	if _, ok := bound["default/a"]; !ok {
		t.Fatalf("a never bound: %v", bound)
	}
	if b, ok := bound["default/b"]; !ok || b < 60 {
		t.Errorf("b bound at %v (bound %v), want after a's deletion at 60s", b, ok)
	}
	if i := find(res.Events, 0, "FailedScheduling", "pod/b", "cannot allocate all claims"); i < 0 {
		t.Errorf("no FailedScheduling for b naming the DRA reason")
	}
}
