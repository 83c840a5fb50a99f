package whatif

import (
	"path/filepath"
	"testing"
)

// TestVolumeExplanations runs two pods against a cluster with volumes and
// compares the output with golden files (refresh with -update): the
// rejected nodes name the volume plugin and its reason, and a victim chosen
// for a ReadWriteOncePod claim or an attach slot says so, in the table and
// in JSON.
func TestVolumeExplanations(t *testing.T) {
	for _, pod := range []string{"rwop", "zonal"} {
		for _, format := range []string{"table", "json"} {
			golden := filepath.Join("testdata", "volumes."+pod+"."+format)
			t.Run(filepath.Base(golden), func(t *testing.T) {
				runGolden(t, golden, format, "--snapshot", "testdata/volumes/cluster.yaml", "-f", "testdata/volumes/"+pod+".yaml",
					"--now", "2026-12-01T00:00:00Z")
			})
		}
	}
}
