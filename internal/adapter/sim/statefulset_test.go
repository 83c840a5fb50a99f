package sim

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprieve/reprieve/internal/adapter/manifest"
)

// TestStatefulSetZoneFull runs the bundled StatefulSet example: the
// replica in zone-a is preempted, re-created with its claim, kept out of
// zone-b by its volume's zone and out of zone-a by the urgent pod until
// that pod is deleted.
func TestStatefulSetZoneFull(t *testing.T) {
	res := runFile(t, "../../../examples/statefulset/zone-full.yaml")
	f := func(v float64) *float64 { return &v }
	want := []ReplicaStory{{
		Pod: "shop/db-0", Node: "node-a", Preempted: 60, PreemptedBy: "shop/urgent",
		// The victim's grace period is 20 s; the urgent pod's is 30 s
		// from its deletion at 6m.
		Recreated: f(80), Bound: f(390), BoundNode: "node-a",
		Unschedulable: "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match PersistentVolume's node affinity. " +
			"preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.",
		Volumes: []ClaimVolume{{Claim: "shop/data-db-0", Volume: "pvc-uid-000004",
			Topology: "topology.kubernetes.io/region in (eu), topology.kubernetes.io/zone in (zone-a)"}},
	}}
	if diff := cmp.Diff(want, res.Replicas); diff != "" {
		t.Errorf("replica stories (-want,+got):\n%s", diff)
	}
	// Two claims in all: the re-created replica used its predecessor's.
	if claims := claimsCreated(res); claims != 2 {
		t.Errorf("%d claims created, want 2 (one per replica, kept across preemption)", claims)
	}
	if n := len(res.Pods); n != 4 {
		t.Errorf("%d pod histories, want 4 (db-0 twice, db-1, urgent)", n)
	}
}

// statefulSetScenario is one zone-less node and a StatefulSet of two
// replicas with one claim each, under the given pod management policy and
// provisioning delay (omitted when "").
func statefulSetScenario(policy, delay string) string {
	spec := "  end: 1m\n"
	if delay != "" {
		spec += "  provisioningDelay: " + delay + "\n"
	}
	return nodeYAML("n1", "4") + `---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local, annotations: {storageclass.kubernetes.io/is-default-class: "true"}}
provisioner: local.csi.example.com
volumeBindingMode: WaitForFirstConsumer
---
` + statefulSetYAML(policy, "") + `---
apiVersion: reprieve.dev/v1alpha1
kind: Simulation
metadata: {name: sts}
spec:
` + spec
}

// TestStatefulSetProvisioning: each replica's claim is provisioned on the
// node the scheduler chose after the provisioning delay, and the replica
// is bound then; OrderedReady creates db-1 once db-0 runs, Parallel both
// at once.
func TestStatefulSetProvisioning(t *testing.T) {
	tests := map[string]struct {
		policy, delay string
		wantCreated   map[string]float64
		wantBound     map[string]float64
	}{
		"ordered, default delay": {policy: "OrderedReady",
			wantCreated: map[string]float64{"default/db-0": 0, "default/db-1": 1},
			wantBound:   map[string]float64{"default/db-0": 1, "default/db-1": 2}},
		"ordered, 5s": {policy: "OrderedReady", delay: "5s",
			wantCreated: map[string]float64{"default/db-0": 0, "default/db-1": 5},
			wantBound:   map[string]float64{"default/db-0": 5, "default/db-1": 10}},
		"parallel, no delay": {policy: "Parallel", delay: "0s",
			wantCreated: map[string]float64{"default/db-0": 0, "default/db-1": 0},
			wantBound:   map[string]float64{"default/db-0": 0, "default/db-1": 0}},
		"parallel, 3s": {policy: "Parallel", delay: "3s",
			wantCreated: map[string]float64{"default/db-0": 0, "default/db-1": 0},
			wantBound:   map[string]float64{"default/db-0": 3, "default/db-1": 3}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			res := runYAML(t, statefulSetScenario(tc.policy, tc.delay))
			created, bound := map[string]float64{}, map[string]float64{}
			for _, p := range res.Pods {
				created[p.Pod] = p.Created
				if p.Bound != nil {
					bound[p.Pod] = *p.Bound
				}
				if want := []string{"default/data-" + strings.TrimPrefix(p.Pod, "default/")}; !cmp.Equal(p.Claims, want) {
					t.Errorf("%s claims %v, want %v", p.Pod, p.Claims, want)
				}
			}
			if diff := cmp.Diff(tc.wantCreated, created); diff != "" {
				t.Errorf("created (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantBound, bound); diff != "" {
				t.Errorf("bound (-want,+got):\n%s", diff)
			}
			for _, c := range []string{"data-db-0", "data-db-1"} {
				if find(res.Events, 0, "ProvisioningSucceeded", "persistentvolumeclaim/"+c, "on node n1") < 0 {
					t.Errorf("no ProvisioningSucceeded event for %s", c)
				}
			}
		})
	}
}

// TestStatefulSetBadInput: bad StatefulSets and provisioning delays are
// refused with the field named.
func TestStatefulSetBadInput(t *testing.T) {
	tests := map[string]struct {
		doc       string
		wantField string
	}{
		"negative delay": {doc: statefulSetScenario("OrderedReady", "-1s"), wantField: "spec.provisioningDelay"},
		"bad policy":     {doc: statefulSetScenario("Sometimes", ""), wantField: "spec.podManagementPolicy"},
		"claim without storage": {
			doc:       strings.Replace(statefulSetScenario("Parallel", ""), "resources: {requests: {storage: 1Gi}}", "resources: {}", 1),
			wantField: "spec.volumeClaimTemplates[0].spec.resources.requests.storage"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			set := manifest.NewSet()
			err := set.AddBytes("scenario.yaml", []byte(tc.doc))
			if err == nil {
				_, err = NewScenario(set)
			}
			var ie *manifest.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("got %v, want an *manifest.InputError", err)
			}
			if ie.Field != tc.wantField {
				t.Errorf("field %q, want %q (%v)", ie.Field, tc.wantField, fmt.Sprint(err))
			}
		})
	}
}

// TestStatefulSetStaticVolumes: a no-provisioner class with one local PV,
// on n2. Replica db-0 is bound to n2 at once (the static binding needs no
// provisioner); db-1 finds no volume and stays pending with VolumeBinding's
// reason.
func TestStatefulSetStaticVolumes(t *testing.T) {
	doc := docs(nodeYAML("n1", "4"), nodeYAML("n2", "4")) + `---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: disk-n2}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  local: {path: /mnt/disk}
  nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [n2]}]}]}}
---
` + statefulSetYAML("", "local") + `---
apiVersion: reprieve.dev/v1alpha1
kind: Simulation
metadata: {name: static}
spec: {end: 1m}
`
	res := runYAML(t, doc)
	type got struct {
		Pod, Node string
		Bound     bool
		Why       string
	}
	var pods []got
	for _, p := range res.Pods {
		pods = append(pods, got{p.Pod, p.Node, p.Bound != nil && *p.Bound == 0, p.Unschedulable})
	}
	want := []got{
		{Pod: "default/db-0", Node: "n2", Bound: true},
		{Pod: "default/db-1", Why: "0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind. " +
			"preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."},
	}
	if diff := cmp.Diff(want, pods); diff != "" {
		t.Errorf("pods (-want,+got):\n%s", diff)
	}
	if i := find(res.Events, 0, "ProvisioningSucceeded", "", ""); i >= 0 {
		t.Errorf("a static binding was provisioned: %+v", res.Events[i])
	}
}

// TestStatefulSetScaleAndDelete: scaling down deletes the highest ordinal;
// scaling up again re-creates it, once the old pod is gone, with its old
// claim; deleting the StatefulSet deletes its pods. No claim is created
// twice.
func TestStatefulSetScaleAndDelete(t *testing.T) {
	doc := statefulSetScenario("Parallel", "0s") + `  actions:
  - at: 10s
    scale: {kind: StatefulSet, name: db, replicas: 1}
  - at: 20s
    scale: {kind: StatefulSet, name: db, replicas: 2}
  - at: 55s
    delete: [{kind: StatefulSet, name: db}]
`
	res := runYAML(t, doc)
	type life struct {
		Pod                        string
		Created, Terminating, Gone float64
		Claims                     []string
	}
	or := func(p *float64) float64 {
		if p == nil {
			return -1
		}
		return *p
	}
	var got []life
	for _, p := range res.Pods {
		got = append(got, life{Pod: p.Pod, Created: p.Created, Terminating: or(p.Terminating), Gone: or(p.Gone), Claims: p.Claims})
	}
	// Pods stop 30 s (their default grace period) after deletion.
	want := []life{
		{Pod: "default/db-0", Created: 0, Terminating: 55, Gone: -1, Claims: []string{"default/data-db-0"}},
		{Pod: "default/db-1", Created: 0, Terminating: 10, Gone: 40, Claims: []string{"default/data-db-1"}},
		{Pod: "default/db-1", Created: 40, Terminating: 55, Gone: -1, Claims: []string{"default/data-db-1"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pods (-want,+got):\n%s", diff)
	}
	if claims := claimsCreated(res); claims != 2 {
		t.Errorf("%d claims created, want 2", claims)
	}
}
