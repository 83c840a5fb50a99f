package manifest

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	resourceapi "k8s.io/api/resource/v1"
)

const draDocs = `apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpu}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: g0
    attributes: {model: {string: a100}}
    capacity: {memory: {value: 40Gi}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests:
    - name: one
      exactly: {deviceClassName: gpu}
    - name: all
      exactly: {deviceClassName: gpu, allocationMode: All}
    - name: either
      firstAvailable:
      - {name: a, deviceClassName: gpu, tolerations: [{key: k}]}
`

// TestDRAKinds checks that the DRA kinds load, cluster-scoped or in
// "default", with the API server's defaults on claims, and reach the
// snapshot.
func TestDRAKinds(t *testing.T) {
	s := NewSet()
	if err := s.AddBytes("dra.yaml", []byte(nodeDoc+"---\n"+draDocs)); err != nil {
		t.Fatal(err)
	}
	o := s.Objects
	if len(o.ResourceSlices) != 1 || len(o.DeviceClasses) != 1 || len(o.ResourceClaims) != 1 {
		t.Fatalf("got %d slices, %d classes, %d claims; want 1 each", len(o.ResourceSlices), len(o.DeviceClasses), len(o.ResourceClaims))
	}
	if ns := o.ResourceSlices[0].Namespace + o.DeviceClasses[0].Namespace; ns != "" {
		t.Errorf("cluster-scoped kinds got namespace %q", ns)
	}
	claim := o.ResourceClaims[0]
	if claim.Namespace != "default" {
		t.Errorf("claim namespace %q, want default", claim.Namespace)
	}
	type req struct {
		Mode  resourceapi.DeviceAllocationMode
		Count int64
	}
	var got []req
	for _, r := range claim.Spec.Devices.Requests {
		if r.Exactly != nil {
			got = append(got, req{r.Exactly.AllocationMode, r.Exactly.Count})
		}
		for _, sub := range r.FirstAvailable {
			got = append(got, req{sub.AllocationMode, sub.Count})
			if op := sub.Tolerations[0].Operator; op != resourceapi.DeviceTolerationOpEqual {
				t.Errorf("toleration operator %q, want Equal", op)
			}
		}
	}
	want := []req{{resourceapi.DeviceAllocationModeExactCount, 1}, {resourceapi.DeviceAllocationModeAll, 0}, {resourceapi.DeviceAllocationModeExactCount, 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaulted requests (-want +got):\n%s", diff)
	}
	snap, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	if snap.ResourceClaim("default", "c") == nil || snap.DeviceClass("gpu") == nil || len(snap.ResourceSlices()) != 1 {
		t.Errorf("the DRA objects did not reach the snapshot")
	}
}

// TestClaimTemplate: a ResourceClaimTemplate is read for the simulator,
// namespaced and with its requests defaulted as a claim's, and is listed as
// a kind whatif does not use.
func TestClaimTemplate(t *testing.T) {
	s := NewSet()
	if err := s.AddBytes("f.yaml", []byte("apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: gpu}\nspec: {spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu}}]}}}\n")); err != nil {
		t.Fatal(err)
	}
	if len(s.ResourceClaimTemplates) != 1 {
		t.Fatalf("%d templates read, want 1", len(s.ResourceClaimTemplates))
	}
	tpl := s.ResourceClaimTemplates[0]
	if r := tpl.Spec.Spec.Devices.Requests[0].Exactly; tpl.Namespace != "default" || r.AllocationMode != resourceapi.DeviceAllocationModeExactCount || r.Count != 1 {
		t.Errorf("template %s/%s request %+v, want default namespace and ExactCount 1", tpl.Namespace, tpl.Name, r)
	}
	if lines := s.WorkloadLines(); len(lines) != 1 || !strings.Contains(lines[0], "ResourceClaimTemplate default/gpu: kind not used by whatif") {
		t.Errorf("workload lines %q", lines)
	}
}

func TestDRAErrors(t *testing.T) {
	tests := map[string]struct {
		data, want string
	}{
		"wrong apiVersion": {
			data: "apiVersion: resource.k8s.io/v1beta1\nkind: DeviceClass\nmetadata: {name: gpu}\n",
			want: `f.yaml: DeviceClass gpu: apiVersion: unsupported "resource.k8s.io/v1beta1" (want "resource.k8s.io/v1")`,
		},
		"duplicate claim": {
			data: "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: default}\n",
			want: "f.yaml#2: ResourceClaim default/c: metadata.name: duplicate object (first defined in f.yaml#1)",
		},
		"CEL selector that does not compile": {
			data: "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\nspec: {selectors: [{cel: {expression: 'device.driver =='}}]}\n",
			want: "f.yaml: DeviceClass gpu: spec.selectors[0].cel.expression: ",
		},
		"request without exactly or firstAvailable": {
			data: "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec: {devices: {requests: [{name: r}]}}\n",
			want: "f.yaml: ResourceClaim default/c: spec.devices.requests[0]: exactly one of exactly and firstAvailable is required",
		},
		"template request without exactly or firstAvailable": {
			data: "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: t, namespace: ml}\nspec: {spec: {devices: {requests: [{name: r}]}}}\n",
			want: "f.yaml: ResourceClaimTemplate ml/t: spec.spec.devices.requests[0]: exactly one of exactly and firstAvailable is required",
		},
		"template selector that does not compile": {
			data: "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: t}\nspec: {spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu, selectors: [{cel: {expression: 'device.'}}]}}]}}}\n",
			want: "f.yaml: ResourceClaimTemplate default/t: spec.spec.devices.requests[0].exactly.selectors[0].cel.expression: ",
		},
		"bad field type": {
			data: "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec: {nodeName: 3}\n",
			want: "f.yaml: ResourceSlice s: spec.nodeName: cannot use number as string",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := NewSet().AddBytes("f.yaml", []byte(tc.data))
			if !errors.Is(err, ErrInput) {
				t.Fatalf("error %v, want an input error", err)
			}
			if got := err.Error(); got != tc.want && !(strings.HasSuffix(tc.want, ": ") && strings.HasPrefix(got, tc.want)) {
				t.Errorf("error\n  %s\nwant\n  %s", err, tc.want)
			}
		})
	}
	if _, _, err := ParsePod("p.yaml", []byte(podDoc+"---\n"+draDocs)); err == nil {
		t.Errorf("ParsePod accepted a file with DRA objects besides the pod")
	}
}
