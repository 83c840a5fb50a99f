package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSimulateStory runs the bundled simulation through the command line:
// the summary and event log match golden files, JSON is byte-identical
// across runs, and --report writes an HTML page.
func TestSimulateStory(t *testing.T) {
	const story = "../../examples/simulate/story.yaml"
	for _, format := range []string{"table", "events"} {
		t.Run(format, func(t *testing.T) {
			stdout, stderr, code := run("simulate", story, "-o", format)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			golden(t, filepath.Join("testdata", "story."+format), stdout)
		})
	}
	a, _, _ := run("simulate", story, "-o", "json")
	b, _, _ := run("simulate", story, "-o", "json")
	if a != b || !strings.Contains(a, `"nominationsLost": 1`) {
		t.Errorf("JSON differs between runs or lacks the lost nomination")
	}
	// The re-created batch pods failed alike twice: one event each, a series.
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(a)); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(compact.String(), `"series":{"count":2,"lastObservedAt":"0:02:30.002"}`); n != 2 {
		t.Errorf("JSON has %d FailedScheduling series of 2 ending at 0:02:30.002, want 2", n)
	}
	report := filepath.Join(t.TempDir(), "story.html")
	if _, stderr, code := run("simulate", story, "--report", report); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	html, err := os.ReadFile(report)
	if err != nil || !strings.Contains(string(html), "<svg") || !strings.Contains(string(html), "node-1") {
		t.Errorf("report missing or without a timeline (%v)", err)
	}
}

func TestSimulateErrors(t *testing.T) {
	dir := t.TempDir()
	noSim := filepath.Join(dir, "nosim.yaml")
	if err := os.WriteFile(noSim, []byte("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		args []string
		code int
		err  string
	}{
		"no simulation document": {[]string{"simulate", noSim}, 2, "no Simulation document"},
		"no scenario":            {[]string{"simulate"}, 2, "requires at least 1 arg"},
		"bad output":             {[]string{"simulate", noSim, "-o", "xml"}, 2, "--output must be one of table, wide, events, json, yaml, name, jsonpath=TEMPLATE"},
	} {
		t.Run(name, func(t *testing.T) {
			_, stderr, code := run(tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.err) {
				t.Errorf("exit %d, stderr %q; want exit %d containing %q", code, stderr, tc.code, tc.err)
			}
		})
	}
}

// TestSimulateCompare runs the bundled policies scenario under each victim
// policy: the side-by-side summary matches its golden file, and the JSON
// shows minimal evicting half of what upstream evicts.
func TestSimulateCompare(t *testing.T) {
	const scenario = "../../examples/simulate/policies.yaml"
	stdout, stderr, code := run("simulate", scenario, "--compare", "upstream,minimal,strict-pdb")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	golden(t, filepath.Join("testdata", "policies.compare.table"), stdout)
	js, stderr, code := run("simulate", scenario, "--compare", "upstream,minimal", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{`"policy": "upstream"`, `"victims": 12`, `"policy": "minimal"`, `"victims": 6`} {
		if !strings.Contains(js, want) {
			t.Errorf("JSON lacks %s", want)
		}
	}
	// --report writes one page with the policies side by side.
	page := filepath.Join(t.TempDir(), "policies.html")
	if _, stderr, code := run("simulate", scenario, "--compare", "upstream,minimal", "--report", page); code != 0 {
		t.Fatalf("--report: exit %d: %s", code, stderr)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"runs compared", `<label for="policy-0">upstream</label>`, `<label for="policy-1">minimal</label>`, `data-series="minimal"`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the comparison's report lacks %q", want)
		}
	}
	if _, stderr, code := run("simulate", scenario, "--compare", "upstream,best"); code != 2 || !strings.Contains(stderr, "--compare") {
		t.Errorf("unknown policy: exit %d, stderr %q", code, stderr)
	}
}

// TestSimulateStatefulSet: the summary of the bundled StatefulSet example
// ends with the preempted replica's story (golden file).
func TestSimulateStatefulSet(t *testing.T) {
	stdout, stderr, code := run("simulate", "../../examples/statefulset/zone-full.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	golden(t, filepath.Join("testdata", "statefulset.table"), stdout)
}

// TestSimulateClientConnection: --config's clientConnection rate-limits the
// simulated scheduler's API calls: at QPS 10 with a burst of 1 the story's
// second service pod waits a tenth of a second for its binding's token.
func TestSimulateClientConnection(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	doc := "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nclientConnection: {qps: 10, burst: 1}\n"
	if err := os.WriteFile(cfg, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	limited, stderr, code := run("simulate", "../../examples/simulate/story.yaml", "--config", cfg, "-o", "jsonpath={.summary.timeToSchedule[1].p90Seconds}")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	defaults, _, _ := run("simulate", "../../examples/simulate/story.yaml", "-o", "jsonpath={.summary.timeToSchedule[1].p90Seconds}")
	if limited != "0.1005" || defaults != "0.001" {
		t.Errorf("priority 5000's p90: %q with QPS 10 and burst 1, %q with the defaults; want 0.1005 and 0.001", limited, defaults)
	}
}

// TestSimulateCompareGates runs the bundled DRA scenario with the
// DRAPreemption gate off (v1.37) and on: off, the inference pod waits to the
// end and nothing is preempted for its GPU; on, one training pod is preempted
// and every pod is scheduled. Entries that are neither policies nor gates are
// usage errors.
func TestSimulateCompareGates(t *testing.T) {
	const scenario = "../../examples/simulate/dra-preemption.yaml"
	js, stderr, code := run("simulate", scenario, "--compare", "upstream,DRAPreemption=true,minimal+DRAPreemption=true", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var runs []struct {
		Name         string          `json:"name"`
		Policy       string          `json:"policy"`
		FeatureGates map[string]bool `json:"featureGates"`
		Summary      struct {
			Victims          int `json:"victims"`
			PodsPendingAtEnd int `json:"podsPendingAtEnd"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(js), &runs); err != nil {
		t.Fatalf("%v\n%s", err, js)
	}
	type outcome struct {
		name, policy     string
		gate             bool
		victims, pending int
	}
	var got []outcome
	for _, r := range runs {
		got = append(got, outcome{r.Name, r.Policy, r.FeatureGates["DRAPreemption"], r.Summary.Victims, r.Summary.PodsPendingAtEnd})
	}
	want := []outcome{
		{"upstream", "upstream", false, 0, 1},
		{"DRAPreemption=true", "upstream", true, 1, 0},
		{"minimal+DRAPreemption=true", "minimal", true, 1, 0},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(outcome{})); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"upstream+minimal", "Bogus=true", "DRAPreemption=maybe", "upstream+", "best"} {
		_, stderr, code := run("simulate", scenario, "--compare", bad)
		if code != 2 || !strings.Contains(stderr, "--compare") {
			t.Errorf("--compare %s: exit %d, stderr %q; want a usage error", bad, code, stderr)
		}
		if strings.Contains(stderr, "%!") || strings.Count(stderr, "strict-pdb") > 1 {
			t.Errorf("--compare %s: stderr %q; want one plain message listing the policies at most once", bad, stderr)
		}
	}
}

// writeScenario writes a scenario file into a test's folder.
func writeScenario(t *testing.T, name, doc string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSimulateMemoryBound: a scenario whose objects need more memory than
// the process may use (GOMEMLIMIT, here 64 MiB) exits 2 before it runs, in
// one line naming the file, the Simulation and the field.
func TestSimulateMemoryBound(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(64 << 20))
	path := writeScenario(t, "big.yaml", `apiVersion: reprieve.dev/v1alpha1
kind: Simulation
metadata: {name: big}
spec:
  end: 1s
  actions:
  - at: 0s
    createPods:
      count: 200000
      template:
        metadata: {name: p}
        spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}
`)
	stdout, stderr, code := run("simulate", path, "--no-progress")
	want := "error: " + path + ": Simulation big: spec.actions[0].createPods.count: the scenario creates up to 200000 objects over its run, which need about "
	if code != 2 || stdout != "" || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "more than the 64.0 MiB this process may use (GOMEMLIMIT)") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line starting %q, naming GOMEMLIMIT's 64.0 MiB", code, stdout, stderr, want)
	}
}

// TestSimulateWidePreemptedBy: -o wide names each victim's preemptor in the
// preemptor's namespace: the story's batch workers (jobs) were preempted by
// finance/urgent-report.
func TestSimulateWidePreemptedBy(t *testing.T) {
	stdout, stderr, code := run("simulate", "../../examples/simulate/story.yaml", "-o", "wide")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := strings.Count(stdout, "finance/urgent-report"); n != 2 || strings.Contains(stdout, "jobs/urgent-report") {
		t.Errorf("-o wide names finance/urgent-report %d times (want 2, once per victim), jobs/urgent-report %d times (want 0):\n%s",
			n, strings.Count(stdout, "jobs/urgent-report"), stdout)
	}
}
