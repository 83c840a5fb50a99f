package whatif

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprieve/reprieve/internal/cli/clierr"
)

// twoZones is a large empty node and a small busy one in another zone:
// resources alone put every new pod on the large one.
const twoZones = `apiVersion: v1
kind: Node
metadata: {name: a, labels: {kubernetes.io/hostname: a, topology.kubernetes.io/zone: za}}
status: {allocatable: {cpu: "16", memory: 32Gi, pods: "32"}}
---
apiVersion: v1
kind: Node
metadata: {name: b, labels: {kubernetes.io/hostname: b, topology.kubernetes.io/zone: zb}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "32"}}
---
apiVersion: v1
kind: Pod
metadata: {name: other, labels: {app: other}}
spec: {nodeName: b, containers: [{name: c, resources: {requests: {cpu: "2", memory: 4Gi}}}]}
`

// tainted adds a node with a taint daemon pods do not tolerate, and a
// default StorageClass binding on first use.
const tainted = `---
apiVersion: v1
kind: Node
metadata: {name: gpu, labels: {kubernetes.io/hostname: gpu, topology.kubernetes.io/zone: zb}}
spec: {taints: [{key: gpu, effect: NoSchedule}]}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "32"}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: standard, annotations: {storageclass.kubernetes.io/is-default-class: "true"}}
provisioner: disk.example.com
volumeBindingMode: WaitForFirstConsumer
`

const webTemplate = `
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: i, resources: {requests: {cpu: 200m, memory: 256Mi}}}]}
`

func barePod(name string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", labels: {app: web}}\nspec: {containers: [{name: c, image: i, resources: {requests: {cpu: 200m, memory: 256Mi}}}]}\n"
}

func boundPod(name string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", labels: {app: web}}\nspec: {nodeName: a, containers: [{name: c, image: i, resources: {requests: {cpu: 200m}}}]}\n"
}

// placed is what a test reads of -o json's decisions.
type placed struct {
	Pod       string `json:"pod"`
	Placement *struct {
		Node string `json:"node"`
	} `json:"placement"`
}

// TestWorkloads runs whatif on workloads: their pods are made as their
// controllers make them and placed one after another, a Deployment's
// spread by its ReplicaSet's selector, a StatefulSet's with their claims,
// a DaemonSet's one per node it targets.
func TestWorkloads(t *testing.T) {
	for name, tc := range map[string]struct {
		cluster, input string
		args           []string
		wantPods       []string // the pods, "*" for a generated suffix
		wantNodes      []string
		wantLine       string // of the table
		wantWarnings   []string
	}{
		"a Deployment's replicas spread by its ReplicaSet": {
			cluster: twoZones, input: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 3" + webTemplate,
			wantPods:  []string{"default/web-*", "default/web-*", "default/web-*"},
			wantNodes: []string{"a", "b", "a"},
			wantLine:  "Deployment default/web: 3 of 3 replicas placed",
		},
		"the same pods bare, in sequence, stack": {
			cluster: twoZones, input: barePod("web-1") + "---\n" + barePod("web-2") + "---\n" + barePod("web-3"), args: []string{"--sequence"},
			wantPods:  []string{"default/web-1", "default/web-2", "default/web-3"},
			wantNodes: []string{"a", "a", "a"},
		},
		"a Service in -f spreads a bare pod": {
			cluster:      twoZones + "---\n" + boundPod("web-0") + "---\n" + boundPod("web-00"),
			input:        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: conf}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {selector: {app: web}, ports: [{port: 80}]}\n---\n" + barePod("web-1"),
			wantPods:     []string{"default/web-1"},
			wantNodes:    []string{"b"},
			wantWarnings: []string{"#1: skipping v1 ConfigMap conf: kind not used by reprieve"},
		},
		"a StatefulSet's replicas with their claims": {
			cluster: twoZones + tainted, input: "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web}\nspec:\n  replicas: 2\n  serviceName: web\n  volumeClaimTemplates: [{metadata: {name: data}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}]" + webTemplate,
			wantPods:  []string{"default/web-0", "default/web-1"},
			wantNodes: []string{"a", "b"},
			wantLine:  "StatefulSet default/web: 2 of 2 replicas placed",
		},
		"a DaemonSet's pod per node it targets": {
			cluster: twoZones + tainted, input: "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: web}\nspec:" + webTemplate,
			wantPods:  []string{"default/web-*", "default/web-*"},
			wantNodes: []string{"a", "b"},
			wantLine:  "DaemonSet default/web: targets 2 of 3 nodes; 2 of 2 pods placed",
		},
		"a Job's parallelism": {
			cluster: twoZones, input: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: crunch}\nspec:\n  parallelism: 2\n  template:\n    spec: {restartPolicy: Never, containers: [{name: c, image: i, resources: {requests: {cpu: 15}}}]}\n",
			wantPods:  []string{"default/crunch-*", "default/crunch-*"},
			wantNodes: []string{"a", ""},
			wantLine:  "Job default/crunch: 1 of 2 pods placed; 1 fits nowhere, even by preemption",
		},
		"a pod named by generateName": {
			cluster: twoZones, input: "apiVersion: v1\nkind: Pod\nmetadata: {generateName: probe-}\nspec: {containers: [{name: c, image: i}]}\n",
			wantPods: []string{"default/probe-*"}, wantNodes: []string{"a"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			snap, input := writeFile(t, dir, "cluster.yaml", tc.cluster), writeFile(t, dir, "input.yaml", tc.input)
			args := append([]string{"--snapshot", snap, "-f", input, "--now", "2026-12-01T00:00:00Z"}, tc.args...)
			stdout, stderr, err := runWhatif(append(args, "-o", "json")...)
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			var ds []placed
			if len(tc.wantPods) == 1 {
				ds = make([]placed, 1)
				err = json.Unmarshal([]byte(stdout), &ds[0])
			} else {
				err = json.Unmarshal([]byte(stdout), &ds)
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, stdout)
			}
			var pods, nodes []string
			for i, d := range ds {
				if i < len(tc.wantPods) && strings.HasSuffix(tc.wantPods[i], "*") && strings.HasPrefix(d.Pod, strings.TrimSuffix(tc.wantPods[i], "*")) {
					d.Pod = tc.wantPods[i]
				}
				pods = append(pods, d.Pod)
				node := ""
				if d.Placement != nil {
					node = d.Placement.Node
				}
				nodes = append(nodes, node)
			}
			if diff := cmp.Diff(tc.wantPods, pods); diff != "" {
				t.Errorf("pods (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNodes, nodes); diff != "" {
				t.Errorf("placements (-want,+got):\n%s", diff)
			}
			var warnings []string
			for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
				if line != "" {
					warnings = append(warnings, strings.TrimPrefix(line, "warning: "+input))
				}
			}
			if diff := cmp.Diff(tc.wantWarnings, warnings); diff != "" {
				t.Errorf("warnings (-want,+got):\n%s", diff)
			}
			table, _, err := runWhatif(args...)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(table), "\n")
			if last := lines[len(lines)-1]; tc.wantLine != "" && last != tc.wantLine {
				t.Errorf("the table ends\n%s\nwant\n%s", last, tc.wantLine)
			}
			if want := len(tc.wantPods) + 1; len(lines) < want {
				t.Errorf("the table has %d lines, want a row per pod:\n%s", len(lines), table)
			}
		})
	}
}

// TestWorkloadRefused: a workload the API server would refuse is one line
// naming the file, the object and the field, and exits 2.
func TestWorkloadRefused(t *testing.T) {
	deployment := func(replicas, selected string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: " + replicas +
			"\n  selector: {matchLabels: {app: " + selected + "}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: i}]}\n"
	}
	for name, tc := range map[string]struct {
		input, wantErr string
	}{
		"a selector that does not match the template's labels": {deployment("1", "api"),
			"input.yaml: Deployment default/web: spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`"},
		"negative replicas": {deployment("-2", "web"),
			"input.yaml: Deployment default/web: spec.replicas: Invalid value: -2: must be greater than or equal to 0"},
		"a StatefulSet's claim template without storage": {"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  volumeClaimTemplates: [{metadata: {name: data}, spec: {accessModes: [ReadWriteOnce]}}]" + webTemplate,
			"input.yaml: StatefulSet default/db: spec.volumeClaimTemplates[0].spec.resources.requests.storage: Required value"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			snap, input := writeFile(t, dir, "cluster.yaml", twoZones), writeFile(t, dir, "input.yaml", tc.input)
			_, _, err := runWhatif("--snapshot", snap, "-f", input)
			if !clierr.IsInput(err) {
				t.Fatalf("error %v, want an input error (exit code 2)", err)
			}
			got := strings.TrimPrefix(err.Error(), dir+string(filepath.Separator))
			if !strings.HasPrefix(got, tc.wantErr) || strings.Contains(got, "\n") {
				t.Errorf("error\n%s\nwant one line starting\n%s", got, tc.wantErr)
			}
		})
	}
}

func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
