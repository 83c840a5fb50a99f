package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprieve/reprieve/internal/cli/clitest"
)

var update = flag.Bool("update", false, "rewrite golden files")

const now = "2026-11-30T12:00:00Z"

func run(args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	code = Execute(context.Background(), args, Streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
	return out.String(), errOut.String(), code
}

// TestExamples runs whatif on every bundled example pod and compares the
// output with golden files (refresh with -update).
func TestExamples(t *testing.T) {
	pods, err := filepath.Glob("../../examples/pods/*.yaml")
	if err != nil || len(pods) == 0 {
		t.Fatalf("no example pods: %v", err)
	}
	for _, p := range pods {
		name := strings.TrimSuffix(filepath.Base(p), ".yaml")
		for _, format := range []string{"table", "json"} {
			t.Run(name+"/"+format, func(t *testing.T) {
				args := []string{"whatif", "--snapshot", "../../examples/cluster", "-f", p, "--now", now, "-o", format}
				if format == "table" {
					args = append(args, "--explain")
				}
				stdout, stderr, code := run(args...)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				golden(t, filepath.Join("testdata", name+"."+format), stdout)
			})
		}
	}
}

// golden compares got with the golden file at path (refresh with -update).
func golden(t *testing.T, path, got string) {
	t.Helper()
	clitest.Golden(t, path, got, *update)
}

// TestExampleOutcomes checks the outcome each example exists to show, so a
// golden refresh cannot silently change the story.
func TestExampleOutcomes(t *testing.T) {
	tests := map[string]struct {
		fits       bool
		eligible   bool
		node       string
		victims    int
		pdbs       int
		summaryHas string
	}{
		"fits":          {fits: true, summaryHas: "fits on 3 nodes"},
		"urgent":        {eligible: true, node: "node-a", victims: 2},
		"prefer-no-pdb": {eligible: true, node: "node-c", victims: 1},
		"breaks-pdb":    {eligible: true, node: "node-b", victims: 2, pdbs: 1},
		"gpu-job":       {eligible: true, summaryHas: "No preemption victims found for incoming pod"},
		"never":         {summaryHas: "preemptionPolicy=Never"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := run("whatif", "--snapshot", "../../examples/cluster", "-f", "../../examples/pods/"+name+".yaml", "-o", "json")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var d struct {
				Fits             bool
				Eligible         bool
				NominatedNode    string
				Victims          []any
				NumPDBViolations int
				Summary          string
			}
			if err := json.Unmarshal([]byte(stdout), &d); err != nil {
				t.Fatal(err)
			}
			if d.Fits != tc.fits || d.Eligible != tc.eligible || d.NominatedNode != tc.node || len(d.Victims) != tc.victims || d.NumPDBViolations != tc.pdbs || !strings.Contains(d.Summary, tc.summaryHas) {
				t.Errorf("got %+v", d)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	files := clitest.NewFiles(t)
	write, dir := files.Write, files.Dir()
	badQuantity := write("bad.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: lots}}\n")
	podAndNode := write("two.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c}]}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: b}\n")
	badConfig := write("config.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args: {minCandidateNodesPercentage: 200}\n")
	tests := map[string]struct {
		args []string
		code int
		err  string
	}{
		"bad quantity": {[]string{"whatif", "--snapshot", badQuantity, "--pod", "a/b"}, 2, badQuantity + ": Node n1: status.allocatable.cpu: quantities must match"},
		"pod and node": {[]string{"whatif", "--snapshot", "../../examples/cluster", "-f", podAndNode}, 2, podAndNode + ": -f must hold Pods and nothing else"},
		"namespace":    {[]string{"whatif", "--snapshot", "../../examples/cluster", "-f", "../../examples/pods/urgent.yaml", "-n", "jobs"}, 2, `the namespace from the provided object "shop" does not match the namespace "jobs"`},
		"bad config":   {[]string{"whatif", "--snapshot", "../../examples/cluster", "--pod", "a/b", "--config", badConfig}, 2, "not in valid range [0, 100]"},
		"no pod flag":  {[]string{"whatif", "--snapshot", "../../examples/cluster"}, 2, "exactly one of -f/--filename and --pod is required"},
		"unknown pod":  {[]string{"whatif", "--snapshot", "../../examples/cluster", "--pod", "a/b"}, 2, "no such pod in the snapshot"},
		"bound pod":    {[]string{"whatif", "--snapshot", "../../examples/cluster", "--pod", "jobs/batch-1"}, 2, "already bound to node-a"},
		"bad output":   {[]string{"whatif", "--snapshot", "../../examples/cluster", "--pod", "a/b", "-o", "xml"}, 2, "--output must be one of table, wide, json, yaml, name, jsonpath=TEMPLATE"},
		"missing file": {[]string{"whatif", "--snapshot", filepath.Join(dir, "nope.yaml"), "--pod", "a/b"}, 2, "--snapshot: " + filepath.Join(dir, "nope.yaml") + ": cannot read: no such file or directory"},
		"unknown flag": {[]string{"whatif", "--bogus"}, 2, "unknown flag"},
		// -f is read before the snapshot: its mistake is reported first.
		"missing -f first": {[]string{"whatif", "--snapshot", filepath.Join(dir, "nope.yaml"), "-f", filepath.Join(dir, "nopod.yaml")}, 2, "-f: " + filepath.Join(dir, "nopod.yaml") + ": cannot read"},
		"missing config":   {[]string{"whatif", "--snapshot", "../../examples/cluster", "--pod", "a/b", "--config", filepath.Join(dir, "nope.yaml")}, 2, "--config: stat " + filepath.Join(dir, "nope.yaml")},
		"flag value":       {[]string{"whatif", "--output"}, 2, "flag needs an argument"},
		"unknown command":  {[]string{"frobnicate"}, 2, `unknown command "frobnicate" for "reprieve"`},
		"extra argument":   {[]string{"whatif", "extra"}, 2, `unknown command "extra" for "reprieve whatif"`},
		"no scenario":      {[]string{"simulate"}, 2, "requires at least 1 arg(s)"},
		"bad policy":       {[]string{"simulate", "--victim-policy", "kind", "x.yaml"}, 2, "--victim-policy: unknown victim policy"},
		"scheduler gates":  {[]string{"scheduler", "--feature-gates", "Nope=true"}, 2, "--feature-gates"},
		"scheduler policy": {[]string{"scheduler", "--victim-policy", "greedy"}, 2, "--victim-policy"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, stderr, code := run(tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.err) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want exit %d and one line containing %q", code, stderr, tc.code, tc.err)
			}
		})
	}
}

// TestWhatifManyPods evaluates every bundled pod with one load: one row per
// pod, and each decision is what evaluating that pod alone gives.
func TestWhatifManyPods(t *testing.T) {
	args := []string{"whatif", "--snapshot", "../../examples/cluster", "--now", "2026-11-30T12:00:00Z", "--seed", "1"}
	stdout, stderr, code := run(append(args, "-f", "../../examples/pods", "-o", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var all []json.RawMessage
	if err := json.Unmarshal([]byte(stdout), &all); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("../../examples/pods/*.yaml")
	if err != nil || len(files) < 2 || len(all) != len(files) {
		t.Fatalf("%d decisions for %d pod files (%v)", len(all), len(files), err)
	}
	for i, f := range files {
		alone, stderr, code := run(append(args, "-f", f, "-o", "json")...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", f, code, stderr)
		}
		var a, b any
		if err := json.Unmarshal([]byte(alone), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(all[i], &b); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("%s: evaluated with the others differs from alone (-alone +together):\n%s", f, diff)
		}
	}
	table, _, _ := run(append(args, "-f", "../../examples/pods")...)
	if n := strings.Count(strings.TrimSpace(table), "\n"); n != len(files) {
		t.Errorf("table has %d rows, want %d:\n%s", n, len(files), table)
	}
}

// TestSnapshotRoundTrip writes the bundled cluster with `reprieve snapshot`
// (JSON and YAML) and checks whatif decides every bundled pod the same on
// the written file as on the manifests.
func TestSnapshotRoundTrip(t *testing.T) {
	for _, tc := range []struct{ cluster, pods string }{
		{"../../examples/cluster", "../../examples/pods"},
		{"../../examples/dra/cluster.yaml", "../../examples/dra/gpu-job.yaml"},
	} {
		for _, format := range []string{"json", "yaml"} {
			out, stderr, code := run("snapshot", "--snapshot", tc.cluster, "-o", format)
			if code != 0 {
				t.Fatalf("%s %s: exit %d: %s", tc.cluster, format, code, stderr)
			}
			file := filepath.Join(t.TempDir(), "cluster."+format)
			if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"whatif", "-f", tc.pods, "--now", "2026-11-30T12:00:00Z", "-o", "json"}
			want, _, _ := run(append(args, "--snapshot", tc.cluster)...)
			got, stderr, code := run(append(args, "--snapshot", file)...)
			if code != 0 || got != want {
				t.Errorf("%s %s: whatif on the written snapshot (exit %d, %s) differs from the manifests:\n%s", tc.cluster, format, code, stderr, cmp.Diff(want, got))
			}
		}
	}
	if _, stderr, code := run("snapshot", "--snapshot", "../../examples/cluster", "-o", "table"); code != 2 {
		t.Errorf("-o table: exit %d, %s", code, stderr)
	}
}

// TestConfigFromStdin reads --config from standard input: a profile without
// DefaultPreemption, so the urgent example does not preempt.
func TestConfigFromStdin(t *testing.T) {
	cfg := "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n      disabled: [{name: DefaultPreemption}]\n"
	var out, errOut strings.Builder
	code := Execute(context.Background(), []string{"whatif", "--snapshot", "../../examples/cluster", "-f", "../../examples/pods/urgent.yaml", "--config", "-"},
		Streams{In: strings.NewReader(cfg), Out: &out, Err: &errOut})
	if code != 0 || !strings.Contains(out.String(), "does not enable DefaultPreemption") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
	if _, stderr, code := run("whatif", "--snapshot", "-", "-f", "../../examples/pods/urgent.yaml", "--config", "-"); code != 2 || !strings.Contains(stderr, "read only once") {
		t.Errorf("stdin twice: exit %d, %q", code, stderr)
	}
}

// TestWhatifSequence evaluates pods as if they arrived in order: a pod that
// fits is bound and takes the room, a preemptor is nominated and its victims
// are gone, their budget spent, so the next pods see all of it; without
// --sequence each pod is evaluated alone.
func TestWhatifSequence(t *testing.T) {
	write := clitest.NewFiles(t).Write
	low := func(name, start string) string {
		return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: default, labels: {app: low}}
spec:
  nodeName: node-1
  priority: 0
  containers: [{name: c, image: i, resources: {requests: {cpu: "2"}}}]
status: {phase: Running, startTime: %q}
---
`, name, start)
	}
	cluster := write("cluster.yaml", `apiVersion: v1
kind: Node
metadata: {name: node-1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-2}
status: {allocatable: {cpu: "1", memory: 8Gi, pods: "110"}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: low, namespace: default}
spec: {maxUnavailable: 1, selector: {matchLabels: {app: low}}}
status: {disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2}
---
`+low("low-1", "2026-11-01T00:00:00Z")+low("low-2", "2026-11-02T00:00:00Z"))
	pod := func(name, cpu string) string {
		return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: default}
spec:
  priority: 100
  containers: [{name: c, image: i, resources: {requests: {cpu: %q}}}]
---
`, name, cpu)
	}
	// Both low pods are covered by a budget allowing one disruption: the
	// older is evicted first (the newer, processed second, is the one whose
	// eviction would break the budget, so it is reprieved first).
	small := write("small.yaml", pod("small-1", "1")+pod("small-2", "1"))
	big := write("big.yaml", pod("p1", "2")+pod("p2", "2")+pod("p3", "2"))

	type outcome struct {
		Pod              string
		Bound, Nominated string
		Victims          []string
		NumPDBViolations int
	}
	decide := func(t *testing.T, args ...string) []outcome {
		t.Helper()
		stdout, stderr, code := run(append([]string{"whatif", "--snapshot", cluster, "--now", "2026-11-30T12:00:00Z", "-o", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var ds []struct {
			Pod           string `json:"pod"`
			NominatedNode string `json:"nominatedNode"`
			Placement     *struct {
				Node string `json:"node"`
			} `json:"placement"`
			Victims []struct {
				Pod string `json:"pod"`
			} `json:"victims"`
			NumPDBViolations int `json:"numPDBViolations"`
		}
		if err := json.Unmarshal([]byte(stdout), &ds); err != nil {
			t.Fatalf("%v\n%s", err, stdout)
		}
		var out []outcome
		for _, d := range ds {
			o := outcome{Pod: d.Pod, Nominated: d.NominatedNode, NumPDBViolations: d.NumPDBViolations}
			if d.Placement != nil {
				o.Bound = d.Placement.Node
			}
			for _, v := range d.Victims {
				o.Victims = append(o.Victims, v.Pod)
			}
			out = append(out, o)
		}
		return out
	}
	tests := []struct {
		name string
		args []string
		want []outcome
	}{
		{"fits, each alone", []string{"-f", small}, []outcome{
			{Pod: "default/small-1", Bound: "node-2"},
			{Pod: "default/small-2", Bound: "node-2"},
		}},
		{"fits, in sequence: the first takes the room", []string{"-f", small, "--sequence"}, []outcome{
			{Pod: "default/small-1", Bound: "node-2"},
			{Pod: "default/small-2", Nominated: "node-1", Victims: []string{"default/low-1"}},
		}},
		{"preempts, each alone", []string{"-f", big}, []outcome{
			{Pod: "default/p1", Nominated: "node-1", Victims: []string{"default/low-1"}},
			{Pod: "default/p2", Nominated: "node-1", Victims: []string{"default/low-1"}},
			{Pod: "default/p3", Nominated: "node-1", Victims: []string{"default/low-1"}},
		}},
		{"preempts, in sequence: victims gone, budget spent, nominations hold room", []string{"-f", big, "--sequence"}, []outcome{
			{Pod: "default/p1", Nominated: "node-1", Victims: []string{"default/low-1"}},
			{Pod: "default/p2", Nominated: "node-1", Victims: []string{"default/low-2"}, NumPDBViolations: 1},
			{Pod: "default/p3"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, decide(t, tc.args...)); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
		})
	}
	if _, stderr, code := run("whatif", "--snapshot", cluster, "--pod", "default/low-1", "--sequence"); code != 2 || !strings.Contains(stderr, "--sequence needs") {
		t.Errorf("--sequence with --pod: exit %d, %q; want exit 2 and a usage error", code, stderr)
	}
}
