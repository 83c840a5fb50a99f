package conformance

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprieve/reprieve/test/conformance/gen"
)

// upstreamCasesDir holds the scenarios ported from kube-scheduler's own
// tests: one file per upstream test case, named after the test function and
// the case, whose first comment line cites the upstream file, function and
// case and whose second says what the scenario checks.
var upstreamCasesDir = filepath.Join("testdata", "upstream")

// TestUpstreamCases runs every ported upstream test case through the same
// comparison as TestDifferential: reprieve must decide what kube-scheduler
// decides.
func TestUpstreamCases(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(upstreamCasesDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no scenario files in %s", upstreamCasesDir)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			lines := bytes.SplitN(data, []byte("\n"), 3)
			if len(lines) < 3 || !bytes.HasPrefix(lines[0], []byte("# Upstream: ")) || !bytes.HasPrefix(lines[1], []byte("# Checks: ")) {
				t.Errorf("%s: the file must begin with a \"# Upstream: \" line and a \"# Checks: \" line", path)
			}
			sc, err := gen.Parse(data)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			compareScenario(t, sc, name)
		})
	}
}
