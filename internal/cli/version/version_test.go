package version

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestVersion checks the one-line form and the JSON form name the mirrored
// kube-scheduler, and that an unknown format is refused.
func TestVersion(t *testing.T) {
	var out bytes.Buffer
	cmd := NewCommand(&out)
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if line := out.String(); !strings.HasPrefix(line, "reprieve ") || !strings.Contains(line, "kube-scheduler "+KubeScheduler) {
		t.Errorf("version line %q", line)
	}
	out.Reset()
	cmd = NewCommand(&out)
	cmd.SetArgs([]string{"-o", "json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var info Info
	if err := json.Unmarshal(out.Bytes(), &info); err != nil || info.KubeScheduler != KubeScheduler || info.GoVersion == "" {
		t.Errorf("JSON %s: %+v, %v", out.String(), info, err)
	}
	cmd = NewCommand(&out)
	cmd.SetArgs([]string{"-o", "xml"})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	if err := cmd.Execute(); err == nil {
		t.Error("-o xml accepted")
	}
}
