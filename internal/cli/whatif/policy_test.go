package whatif

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/reprieve/reprieve/internal/cli/clierr"
)

// TestPolicyExample runs the bundled policy example under each victim
// policy and compares the output with golden files (refresh with -update).
func TestPolicyExample(t *testing.T) {
	for _, policy := range []string{"upstream", "minimal", "strict-pdb"} {
		for _, format := range []string{"table", "json"} {
			golden := filepath.Join("testdata", "policy."+policy+"."+format)
			t.Run(filepath.Base(golden), func(t *testing.T) {
				runGolden(t, golden, format, "--snapshot", "../../../examples/policy/cluster.yaml", "-f", "../../../examples/policy/pod.yaml",
					"--now", "2026-12-01T00:00:00Z", "--victim-policy", policy)
			})
		}
	}
}

// TestUnknownPolicy checks that an unknown policy is a usage error.
func TestUnknownPolicy(t *testing.T) {
	_, _, err := runWhatif("--snapshot", "../../../examples/policy/cluster.yaml", "-f", "../../../examples/policy/pod.yaml", "--victim-policy", "kindest")
	if !errors.Is(err, clierr.ErrUsage) {
		t.Fatalf("error %v, want a usage error", err)
	}
}
