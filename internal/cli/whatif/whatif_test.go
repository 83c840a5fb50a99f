package whatif

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprieve/reprieve/internal/cli/clierr"
	"github.com/reprieve/reprieve/internal/cli/clitest"
)

var update = flag.Bool("update", false, "rewrite golden files")

func runWhatif(args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	cmd := NewCommand(&out, &errOut)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err = cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// TestGangExamples runs the gang examples with and without the pod-group
// gates and compares the output with golden files (refresh with -update).
func TestGangExamples(t *testing.T) {
	for _, name := range []string{"spare-the-gang", "evict-the-gang"} {
		for _, gates := range []string{"", "GenericWorkload=true"} {
			for _, format := range []string{"table", "json"} {
				suffix := "gates-off"
				if gates != "" {
					suffix = "gates-on"
				}
				golden := filepath.Join("testdata", name+"."+suffix+"."+format)
				t.Run(filepath.Base(golden), func(t *testing.T) {
					runGolden(t, golden, format, "--snapshot", "../../../examples/gang/cluster.yaml", "-f", "../../../examples/gang/"+name+".yaml",
						"--now", "2026-11-30T12:00:00Z", "--feature-gates", gates)
				})
			}
		}
	}
}

// runGolden runs whatif with args and -o format (a table with --explain)
// and compares its output with the golden file (refresh with -update).
func runGolden(t *testing.T, golden, format string, args ...string) {
	t.Helper()
	args = append(args, "-o", format)
	if format == "table" {
		args = append(args, "--explain")
	}
	stdout, stderr, err := runWhatif(args...)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	clitest.Golden(t, golden, stdout, *update)
}

// TestGangExampleOutcomes pins what each example exists to show.
func TestGangExampleOutcomes(t *testing.T) {
	tests := map[string]struct {
		gates, summary string
	}{
		"spare-the-gang":           {"GenericWorkload=true", "preempts 1 pod on gpu-2"},
		"evict-the-gang":           {"GenericWorkload=true", "preempts 4 pods on gpu-2, evicting PodGroup ml/resnet whole (3 nodes)"},
		"evict-the-gang/gates-off": {"", "preempts 2 pods on gpu-2"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			file := strings.TrimSuffix(name, "/gates-off")
			stdout, stderr, err := runWhatif("--snapshot", "../../../examples/gang/cluster.yaml", "-f", "../../../examples/gang/"+file+".yaml", "--feature-gates", tc.gates)
			if err != nil {
				t.Fatalf("%v: %s", err, stderr)
			}
			if !strings.Contains(stdout, "DECISION  "+tc.summary+"\n") {
				t.Errorf("output does not decide %q:\n%s", tc.summary, stdout)
			}
		})
	}
}

func TestFeatureGatesFlag(t *testing.T) {
	tests := map[string]string{
		"Bogus=true":             "--feature-gates: unrecognized feature gate: Bogus",
		"GenericWorkload=maybe":  "--feature-gates: invalid value of GenericWorkload=maybe",
		"CompositePodGroup=true": "--feature-gates: CompositePodGroup is enabled, but depends on features that are disabled: [GenericWorkload]",
	}
	for gates, want := range tests {
		t.Run(gates, func(t *testing.T) {
			_, _, err := runWhatif("--snapshot", "../../../examples/gang/cluster.yaml", "-f", "../../../examples/gang/spare-the-gang.yaml", "--feature-gates", gates)
			if !errors.Is(err, clierr.ErrUsage) || !strings.HasPrefix(err.Error(), "usage error: "+want) {
				t.Errorf("error %v, want a usage error starting %q", err, want)
			}
		})
	}
}
