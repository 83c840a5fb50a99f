package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprieve/reprieve/internal/cli/clitest"
)

func runIn(stdin string, args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	code = Execute(context.Background(), args, Streams{In: strings.NewReader(stdin), Out: &out, Err: &errOut})
	return out.String(), errOut.String(), code
}

func podYAML(name, resources string, extra ...string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n%s  containers:\n  - name: c\n    resources: %s\n", name, strings.Join(extra, ""), resources)
}

type decision struct {
	Fits     bool
	Eligible bool
	Victims  []any
	Summary  string
}

func whatifJSON(t *testing.T, stdout string) decision {
	t.Helper()
	var d decision
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	return d
}

// TestIssue13Whatif runs the examples of issue 13 through whatif: each
// gives the answer the API server and kube-scheduler would, or one line
// naming file, object and field with exit code 2.
func TestIssue13Whatif(t *testing.T) {
	files := clitest.NewFiles(t)
	write, dir := files.Write, files.Dir()
	const cluster = "../../examples/cluster"
	limitsOnly := write("limits.yaml", podYAML("big", `{limits: {cpu: "3"}}`))
	requests := write("requests.yaml", podYAML("big", `{requests: {cpu: "3"}, limits: {cpu: "3"}}`))

	// Defaulting: limits without requests request the limits.
	want, stderr, code := run("whatif", "--snapshot", cluster, "-f", requests, "-o", "json", "--now", now)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, stderr, code := run("whatif", "--snapshot", cluster, "-f", limitsOnly, "-o", "json", "--now", now)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if d := whatifJSON(t, got); d.Fits || !d.Eligible || len(d.Victims) != 2 || got != want {
		t.Errorf("limits-only pod: %+v; want the decision of the pod requesting 3 CPUs (2 victims)", d)
	}

	// The largest representable CPU does not fit; one more core is refused.
	maxCPU := write("max.yaml", podYAML("max", `{requests: {cpu: "9223372036854775"}}`))
	out, stderr, code := run("whatif", "--snapshot", cluster, "-f", maxCPU, "-o", "json")
	if d := whatifJSON(t, out); code != 0 || d.Fits {
		t.Errorf("9223372036854775 CPUs: exit %d, fits %v: %s", code, d.Fits, stderr)
	}

	badNode := write("badnode.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"-4\", memory: 1Gi, pods: \"10\"}}\n")
	typoNode := write("typonode.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatabel: {cpu: \"4\"}}\n")
	pcs := write("pcs.yaml", "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: a}\nvalue: 1\nglobalDefault: true\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: b}\nvalue: 2\nglobalDefault: true\n")
	deploy := write("deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: api}}\n    spec: {containers: [{name: c}]}\n")
	tests := map[string]struct {
		args []string
		err  string
	}{
		"negative cpu":     {[]string{"-f", write("neg.yaml", podYAML("neg", `{requests: {cpu: "-1"}}`))}, `neg.yaml: Pod default/neg: spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0`},
		"negative memory":  {[]string{"-f", write("negmem.yaml", podYAML("negmem", `{requests: {memory: "-5Gi"}}`))}, `negmem.yaml: Pod default/negmem: spec.containers[0].resources.requests[memory]: Invalid value: "-5Gi"`},
		"cpu 1e20":         {[]string{"-f", write("e20.yaml", podYAML("e20", `{requests: {cpu: "1e20"}}`))}, `e20.yaml: Pod default/e20: spec.containers[0].resources.requests[cpu]: Invalid value: "100e18": must be at most 9223372036854775807m`},
		"memory 1e30":      {[]string{"-f", write("e30.yaml", podYAML("e30", `{requests: {memory: 1e30}}`))}, `e30.yaml: Pod default/e30: spec.containers[0].resources.requests[memory]`},
		"one core too far": {[]string{"-f", write("over.yaml", podYAML("over", `{requests: {cpu: "9223372036854776"}}`))}, `over.yaml: Pod default/over: spec.containers[0].resources.requests[cpu]: Invalid value: "9223372036854776"`},
		"invalid name":     {[]string{"-f", write("name.yaml", podYAML("Web_1", `{}`))}, `name.yaml: Pod default/Web_1: metadata.name: Invalid value: "Web_1"`},
		"operator Maybe":   {[]string{"-f", write("tol.yaml", podYAML("tol", `{}`, "  tolerations: [{key: k, operator: Maybe}]\n"))}, `tol.yaml: Pod default/tol: spec.tolerations[0].operator: Unsupported value: "Maybe"`},
		"duplicate containers": {[]string{"-f", write("dup.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: dup}\nspec: {containers: [{name: c}, {name: c}]}\n")},
			`dup.yaml: Pod default/dup: spec.containers[1].name: Duplicate value: "c"`},
		"nodeSelectr":         {[]string{"-f", write("typo.yaml", podYAML("typo", `{}`, "  nodeSelectr: {disk: ssd}\n"))}, `typo.yaml: Pod default/typo: unknown field "spec.nodeSelectr"`},
		"duplicate key":       {[]string{"-f", write("dupkey.yaml", podYAML("dupkey", `{requests: {cpu: "1", cpu: "100"}}`))}, `dupkey.yaml: duplicate field "spec.containers[0].resources.requests.cpu"`},
		"negative capacity":   {[]string{"--snapshot", badNode, "-f", requests}, `badnode.yaml: Node n1: status.allocatable[cpu]: Invalid value: "-4"`},
		"allocatabel":         {[]string{"--snapshot", typoNode, "-f", requests}, `typonode.yaml: Node n1: unknown field "status.allocatabel"`},
		"two globalDefaults":  {[]string{"--snapshot", pcs, "-f", requests}, `pcs.yaml#2: PriorityClass b: globalDefault: Forbidden: PriorityClass a is already marked as default`},
		"selector mismatch":   {[]string{"--snapshot", cluster, "--snapshot", deploy, "-f", requests}, "deploy.yaml: Deployment default/web: spec.template.metadata.labels: Invalid value"},
		"missing -f":          {[]string{"-f", filepath.Join(dir, "nope.yaml")}, "-f: " + filepath.Join(dir, "nope.yaml") + ": cannot read: no such file or directory"},
		"stdin twice":         {[]string{"--snapshot", "-", "-f", "-"}, "standard input (-) can be read only once"},
		"bad --validate":      {[]string{"-f", requests, "--validate", "maybe"}, "--validate must be strict, warn or ignore"},
		"missing --snapshot ": {[]string{"--snapshot", filepath.Join(dir, "gone"), "-f", requests}, "--snapshot: " + filepath.Join(dir, "gone") + ": cannot read"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"whatif"}, tc.args...)
			if !strings.Contains(strings.Join(tc.args, " "), "--snapshot") {
				args = append(args, "--snapshot", cluster)
			}
			_, stderr, code := run(args...)
			if code != 2 || !strings.Contains(stderr, tc.err) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line containing %q", code, stderr, tc.err)
			}
		})
	}
}

func TestWhatifValidateModesAndStdin(t *testing.T) {
	const cluster = "../../examples/cluster"
	typo := podYAML("typo", `{requests: {cpu: "1"}}`, "  nodeSelectr: {disk: ssd}\n")
	for mode, wantWarning := range map[string]bool{"warn": true, "ignore": false} {
		t.Run(mode, func(t *testing.T) {
			stdout, stderr, code := runIn(typo, "whatif", "--snapshot", cluster, "-f", "-", "--validate", mode)
			if code != 0 || !strings.Contains(stdout, "default/typo") {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if got := strings.Contains(stderr, `warning: <stdin>: Pod default/typo: unknown field "spec.nodeSelectr"`); got != wantWarning {
				t.Errorf("warning shown %v, want %v: %q", got, wantWarning, stderr)
			}
		})
	}
	snapshot, err := os.ReadFile(filepath.Join(cluster, "nodes.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runIn(string(snapshot), "whatif", "--snapshot", "-", "-f", "../../examples/pods/fits.yaml", "-o", "json")
	if code != 0 || !whatifJSON(t, stdout).Fits {
		t.Errorf("--snapshot -: exit %d %s", code, stderr)
	}
	// A snapshot without nodes is answered, with a warning.
	stdout, stderr, code = runIn("", "whatif", "--snapshot", "-", "-f", "../../examples/pods/fits.yaml", "-o", "json")
	if code != 0 || whatifJSON(t, stdout).Fits || !strings.Contains(stderr, "warning: the snapshot has no nodes") {
		t.Errorf("empty snapshot: exit %d, stderr %q", code, stderr)
	}
}

const oneNode = `apiVersion: v1
kind: Node
metadata:
  name: node-1
  labels: {kubernetes.io/hostname: node-1}
status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
---
`

func simulation(actions string) string {
	return "apiVersion: reprieve.dev/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec:\n  end: 10m\n  actions:\n" + actions
}

// TestIssue13Simulate runs the examples of issue 13 through simulate.
func TestIssue13Simulate(t *testing.T) {
	// Five pods with a 3-CPU limit and no requests: one fits a 4-CPU node.
	five := oneNode + simulation(`  - at: 1s
    createPods:
      count: 5
      template:
        metadata: {name: big}
        spec: {containers: [{name: c, resources: {limits: {cpu: "3"}}}]}
`)
	stdout, stderr, code := runIn(five, "simulate", "-", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Summary struct{ PodsCreated, PodsScheduled int }
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Summary.PodsCreated != 5 || res.Summary.PodsScheduled != 1 {
		t.Errorf("created %d scheduled %d; want 5 and 1", res.Summary.PodsCreated, res.Summary.PodsScheduled)
	}

	deployment := func(replicas string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: " + replicas +
			"\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c}]}\n---\n"
	}
	job := "apiVersion: batch/v1\nkind: Job\nmetadata: {name: batch}\nspec:\n  parallelism: -2\n  template:\n    spec: {restartPolicy: Never, containers: [{name: c}]}\n---\n"
	cordon := simulation("  - {at: 1s, cordon: node-1}\n")
	tests := map[string]struct {
		scenario string
		args     []string
		err      string
	}{
		"replicas -3":     {oneNode + deployment("-3") + cordon, nil, "<stdin>#2: Deployment default/web: spec.replicas: Invalid value: -3: must be greater than or equal to 0"},
		"parallelism -2":  {oneNode + job + cordon, nil, "<stdin>#2: Job default/batch: spec.parallelism: Invalid value: -2"},
		"replicas 2e9":    {oneNode + deployment("2000000000") + cordon, nil, "<stdin>#2: Deployment default/web: spec.replicas: the scenario creates up to 2000000002 objects over its run, more than the limit of 1000000 (--max-objects); it would need about 10.6 TiB of memory"},
		"createPods 1e11": {oneNode + simulation("  - at: 1s\n    createPods: {count: 100000000000, template: {metadata: {name: p}, spec: {containers: [{name: c}]}}}\n"), nil, "<stdin>#2: Simulation s: spec.actions[0].createPods.count: the scenario creates up to 100000000001 objects"},
		"--max-objects":   {oneNode + deployment("20") + cordon, []string{"--max-objects", "10"}, "more than the limit of 10 (--max-objects)"},
		"cordon nope":     {oneNode + simulation("  - {at: 30s, cordon: nope}\n"), nil, "<stdin>#2: Simulation s: spec.actions[0].cordon: Node nope does not exist at 30s"},
		"delete ghost":    {oneNode + simulation("  - {at: 1m, delete: [{kind: Pod, name: ghost}]}\n"), nil, "spec.actions[0].delete[0]: Pod default/ghost does not exist at 1m0s"},
		"removed before":  {oneNode + simulation("  - {at: 1m, removeNode: node-1}\n  - {at: 2m, uncordon: node-1}\n"), nil, "spec.actions[1].uncordon: Node node-1 does not exist at 2m0s"},
		"scale unknown":   {oneNode + simulation("  - {at: 1m, scale: {kind: Deployment, name: web, replicas: 2}}\n"), nil, "spec.actions[0].scale: Deployment default/web does not exist"},
		"node exists":     {oneNode + simulation("  - at: 1m\n    create: [{apiVersion: v1, kind: Node, metadata: {name: node-1}}]\n"), nil, "spec.actions[0].create: Node node-1 already exists at 1m0s"},
		"at soon":         {oneNode + simulation("  - {at: soon, cordon: node-1}\n"), nil, `<stdin>#2: Simulation s: spec.actions[0].at: time: invalid duration "soon"`},
		"unknown field":   {oneNode + simulation("  - {at: 1s, cordn: node-1}\n"), nil, `<stdin>#2: Simulation s: unknown field "spec.actions[0].cordn"`},
		"template typo":   {oneNode + simulation("  - at: 1s\n    createPods: {count: 1, template: {metadata: {name: p}, spec: {nodeSelectr: {}, containers: [{name: c}]}}}\n"), nil, `unknown field "spec.actions[0].createPods.template.spec.nodeSelectr"`},
		"template quantity": {oneNode + simulation("  - at: 1s\n    createPods: {count: 3, template: {metadata: {name: p}, spec: {containers: [{name: c, resources: {requests: {cpu: \"-1\"}}}]}}}\n"), nil,
			`<stdin>#2 spec.actions[0].createPods.template: Pod default/p-00003: spec.containers[0].resources.requests[cpu]: Invalid value: "-1"`},
		"created invalid": {oneNode + simulation("  - at: 1s\n    create: [{apiVersion: v1, kind: Node, metadata: {name: Node_2}}]\n"), nil, "<stdin>#2 spec.actions[0].create[0]: Node Node_2: metadata.name: Invalid value"},
		"second default": {"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: a}\nvalue: 1\nglobalDefault: true\n---\n" + oneNode +
			simulation("  - at: 1s\n    create: [{apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: b}, value: 2, globalDefault: true}]\n"), nil,
			"spec.actions[0].create[0]: PriorityClass b: globalDefault: Forbidden"},
		"missing file": {"", []string{"nope.yaml"}, "scenario: nope.yaml: cannot read: no such file or directory"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := []string{"simulate", "-"}
			if len(tc.args) > 0 && !strings.HasPrefix(tc.args[0], "-") {
				args = []string{"simulate"}
			}
			_, stderr, code := runIn(tc.scenario, append(args, tc.args...)...)
			if code != 2 || !strings.Contains(stderr, tc.err) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line containing %q", code, stderr, tc.err)
			}
		})
	}
	// Without nodes a scenario runs, with a warning.
	_, stderr, code = runIn(simulation("  - at: 1s\n    createPods: {count: 1, template: {metadata: {name: p}, spec: {containers: [{name: c}]}}}\n"), "simulate", "-")
	if code != 0 || !strings.Contains(stderr, "warning: the scenario has no nodes") {
		t.Errorf("no nodes: exit %d, stderr %q", code, stderr)
	}
}
