package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprieve/reprieve/internal/cli/clitest"
)

// TestConfigProfiles runs each command with a KubeSchedulerConfiguration:
// DefaultPreemption disabled stops preemption in whatif and simulate, what
// reprieve does not implement is a warning there and an error for the
// scheduler.
func TestConfigProfiles(t *testing.T) {
	files := clitest.NewFiles(t)
	write := func(name, body string) string {
		return files.Write(name, "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"+body)
	}
	noPreemption := write("no-preemption.yaml", "profiles:\n- plugins:\n    multiPoint:\n      disabled: [{name: DefaultPreemption}]\n")
	outOfTree := write("out-of-tree.yaml", "profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: Coscheduling}]\n")
	otherName := write("other-name.yaml", "profiles:\n- schedulerName: batch\n")

	whatif := func(t *testing.T, config string) (decision struct {
		Eligible         bool
		IneligibleReason string
		NominatedNode    string
		Victims          []any
		Summary          string
	}, stderr string) {
		t.Helper()
		args := []string{"whatif", "--snapshot", "../../examples/cluster", "-f", "../../examples/pods/urgent.yaml", "--now", now, "-o", "json"}
		if config != "" {
			args = append(args, "--config", config)
		}
		stdout, stderr, code := run(args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if err := json.Unmarshal([]byte(stdout), &decision); err != nil {
			t.Fatal(err)
		}
		return decision, stderr
	}

	t.Run("whatif preempts with the default profile", func(t *testing.T) {
		d, stderr := whatif(t, "")
		if !d.Eligible || d.NominatedNode == "" || len(d.Victims) == 0 || stderr != "" {
			t.Errorf("got %+v, stderr %q; want a preemption and no warning", d, stderr)
		}
	})
	t.Run("whatif without DefaultPreemption", func(t *testing.T) {
		d, _ := whatif(t, noPreemption)
		if d.Eligible || d.NominatedNode != "" || len(d.Victims) != 0 || !strings.Contains(d.Summary, "does not enable DefaultPreemption") {
			t.Errorf("got %+v; want no preemption, said so", d)
		}
	})
	t.Run("whatif warns about an out-of-tree plugin", func(t *testing.T) {
		d, stderr := whatif(t, outOfTree)
		if !strings.Contains(stderr, `warning: `+outOfTree+`: profiles[0].plugins.multiPoint.enabled[0]: "Coscheduling" is not an in-tree plugin`) || d.NominatedNode == "" {
			t.Errorf("stderr %q, decision %+v; want a warning and the default answer", stderr, d)
		}
	})
	t.Run("whatif warns when no profile takes the pod", func(t *testing.T) {
		_, stderr := whatif(t, otherName)
		if !strings.Contains(stderr, `schedulerName "default-scheduler" names no profile of the configuration (batch)`) {
			t.Errorf("stderr %q; want a warning", stderr)
		}
	})
	t.Run("simulate without DefaultPreemption", func(t *testing.T) {
		var with, without struct {
			Summary struct{ Preemptions, Victims int }
		}
		for _, c := range []struct {
			config string
			into   any
		}{{"", &with}, {noPreemption, &without}} {
			args := []string{"simulate", "../../examples/simulate/story.yaml", "-o", "json"}
			if c.config != "" {
				args = append(args, "--config", c.config)
			}
			stdout, stderr, code := run(args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if err := json.Unmarshal([]byte(stdout), c.into); err != nil {
				t.Fatal(err)
			}
		}
		if with.Summary.Preemptions == 0 || without.Summary.Preemptions != 0 || without.Summary.Victims != 0 {
			t.Errorf("preemptions with the default profile %+v, without DefaultPreemption %+v", with.Summary, without.Summary)
		}
	})
	t.Run("simulate warns when no profile is default-scheduler", func(t *testing.T) {
		_, stderr, code := run("simulate", "../../examples/simulate/story.yaml", "--config", otherName)
		if code != 0 || !strings.Contains(stderr, "no profile is named default-scheduler") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
	t.Run("the scheduler refuses what it does not implement", func(t *testing.T) {
		_, stderr, code := run("scheduler", "--config", outOfTree)
		if code != 2 || !strings.Contains(stderr, `not supported by reprieve: profiles[0].plugins.multiPoint.enabled[0]: "Coscheduling"`) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("exit %d, stderr %q; want exit 2 and one line", code, stderr)
		}
	})
	t.Run("the scheduler cannot rename one of several profiles", func(t *testing.T) {
		two := write("two.yaml", "profiles:\n- schedulerName: a\n- schedulerName: b\n")
		_, stderr, code := run("scheduler", "--config", two, "--scheduler-name", "x")
		if code != 2 || !strings.Contains(stderr, "--scheduler-name: the configuration has 2 profiles (a, b)") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
}

// TestConfigDefaultAnySchedulerName: without --config, whatif evaluates a
// pod of any schedulerName (reprieve's own, say) with the default profile,
// without a warning.
func TestConfigDefaultAnySchedulerName(t *testing.T) {
	pod := filepath.Join(t.TempDir(), "pod.yaml")
	if err := os.WriteFile(pod, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: shop}\nspec:\n  schedulerName: reprieve\n  containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := run("whatif", "--snapshot", "../../examples/cluster", "-f", pod, "--now", now)
	if code != 0 || stderr != "" {
		t.Errorf("exit %d, stderr %q; want exit 0 and no warning", code, stderr)
	}
}
