package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// chart is a rendered chart: what `helm template` prints.
const chart = `apiVersion: v1
kind: ConfigMap
metadata: {name: web-config}
data: {a: b}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: i}]}
---
apiVersion: v1
kind: Pod
metadata: {generateName: probe-, namespace: ops}
spec: {containers: [{name: c, image: i}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: c, image: i}]}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec: {restartPolicy: Never, containers: [{name: c, image: i}]}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec: {minAvailable: 2, selector: {matchLabels: {app: web}}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: x
`

func TestLoadInputs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chart.yaml")
	if err := os.WriteFile(path, []byte(chart), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadInputs(Options{GenerateName: func(ns, prefix string) string { return prefix + "abcde" }}, path)
	if err != nil {
		t.Fatal(err)
	}
	var inputs []string
	for _, obj := range s.Inputs {
		m := obj.(metav1.Object)
		inputs = append(inputs, kindOf(obj)+" "+m.GetNamespace()+"/"+m.GetName())
	}
	want := []string{"Deployment default/web", "Pod ops/probe-abcde", "DaemonSet default/agent", "CronJob default/nightly"}
	if diff := cmp.Diff(want, inputs); diff != "" {
		t.Errorf("inputs (-want,+got):\n%s", diff)
	}
	o := s.Objects
	if len(o.Selectors.Services) != 1 || len(o.Storage.PersistentVolumeClaims) != 1 || len(o.PDBs) != 1 || len(o.Storage.StorageClasses) != 0 {
		t.Errorf("services %d claims %d budgets %d storage classes %d, want 1 1 1 0",
			len(o.Selectors.Services), len(o.Storage.PersistentVolumeClaims), len(o.PDBs), len(o.Storage.StorageClasses))
	}
	wantSkipped := []string{
		path + "#1: skipping v1 ConfigMap web-config: kind not used by reprieve",
		path + "#9: skipping storage.k8s.io/v1 StorageClass fast: kind not used in -f (the cluster goes in --snapshot)",
	}
	if diff := cmp.Diff(wantSkipped, s.Skipped); diff != "" {
		t.Errorf("skipped (-want,+got):\n%s", diff)
	}
	if d := s.DaemonSets[0]; d.Spec.UpdateStrategy.Type != "RollingUpdate" || d.Annotations["deprecated.daemonset.template.generation"] != "1" {
		t.Errorf("DaemonSet not defaulted: %+v", d.Spec.UpdateStrategy)
	}
	if c := s.CronJobs[0]; *c.Spec.JobTemplate.Spec.Parallelism != 1 {
		t.Errorf("CronJob's job template not defaulted")
	}
}

// TestLoadInputsRefused: bad input is one line naming the file, the
// object and the field.
func TestLoadInputsRefused(t *testing.T) {
	const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: REPLICAS
  selector: {matchLabels: {app: SELECTED}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: i}]}
`
	deploy := func(replicas, selected string) string {
		return strings.NewReplacer("REPLICAS", replicas, "SELECTED", selected).Replace(deployment)
	}
	for name, tc := range map[string]struct {
		data, wantErr string
	}{
		"a selector that does not match the template": {deploy("3", "api"),
			"f.yaml: Deployment default/web: spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`"},
		"negative replicas": {deploy("-1", "web"),
			"f.yaml: Deployment default/web: spec.replicas: Invalid value: -1: must be greater than or equal to 0"},
		"a DaemonSet without a selector": {"apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec:\n  template:\n    spec: {containers: [{name: c, image: i}]}\n",
			"f.yaml: DaemonSet default/agent: spec.selector: Required value"},
		"a CronJob without a schedule": {"apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec: {restartPolicy: Never, containers: [{name: c, image: i}]}\n",
			"f.yaml: CronJob default/nightly: spec.schedule: Required value"},
		"a CronJob's job that restarts always": {"apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}\nspec:\n  schedule: '* * * * *'\n  jobTemplate:\n    spec:\n      template:\n        spec: {containers: [{name: c, image: i}]}\n",
			"f.yaml: CronJob default/nightly: spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: \"Always\""},
		"a pod without name or generateName": {"apiVersion: v1\nkind: Pod\nmetadata: {}\nspec: {containers: [{name: c}]}\n",
			"f.yaml: Pod: metadata.name: missing"},
		"a node":              {nodeDoc + "---\n" + deploy("1", "web"), "f.yaml: -f must hold Pods and nothing else of the cluster: Node n1 goes in --snapshot"},
		"nothing to evaluate": {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", "f.yaml: no Pod or workload found"},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.yaml")
			if err := os.WriteFile(path, []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadInputs(Options{GenerateName: func(_, p string) string { return p + "x" }}, path)
			if !errors.Is(err, ErrInput) {
				t.Fatalf("error %v, want an input error", err)
			}
			got := strings.ReplaceAll(err.Error(), filepath.Dir(path)+string(filepath.Separator), "")
			if !strings.HasPrefix(got, tc.wantErr) || strings.Contains(got, "\n") {
				t.Errorf("error\n%s\nwant one line starting\n%s", got, tc.wantErr)
			}
		})
	}
}
