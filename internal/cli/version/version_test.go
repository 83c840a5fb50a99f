package version

import (
	"bytes"
	"encoding/json"
	"runtime/debug"
	"slices"
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
	if line := out.String(); !strings.HasPrefix(line, "reprieve ") || !strings.Contains(line, "kube-scheduler v1.38.0-beta.0 (default, v1.37.2, v1.36.3)") {
		t.Errorf("version line %q", line)
	}
	out.Reset()
	cmd = NewCommand(&out)
	cmd.SetArgs([]string{"-o", "json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var info Info
	if err := json.Unmarshal(out.Bytes(), &info); err != nil || info.KubeScheduler != KubeScheduler || !slices.Equal(info.KubeSchedulerReleases, []string{"v1.38.0-beta.0", "v1.37.2", "v1.36.3"}) || info.GoVersion == "" {
		t.Errorf("JSON %s: %+v, %v", out.String(), info, err)
	}
	cmd = NewCommand(&out)
	cmd.SetArgs([]string{"-o", "xml"})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	if err := cmd.Execute(); err == nil {
		t.Error("-o xml accepted")
	}
}

// TestInfoFrom: the version and commit come from the stamp when set, else
// from the toolchain's build information, and a checkout's commit names an
// otherwise unversioned build.
func TestInfoFrom(t *testing.T) {
	vcs := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}}
	tests := map[string]struct {
		bi                   *debug.BuildInfo
		version, commit      string
		wantVersion, wantCom string
		wantModified         bool
	}{
		"no build information":   {wantVersion: "(devel)"},
		"module version":         {bi: &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, wantVersion: "v0.4.0"},
		"checkout":               {bi: vcs, wantVersion: "v0.0.0-0123456789ab", wantCom: "0123456789abcdef0123", wantModified: true},
		"stamped":                {bi: vcs, version: "v1.2.3", commit: "feed", wantVersion: "v1.2.3", wantCom: "feed", wantModified: true},
		"stamped, no build info": {version: "v1.2.3", commit: "feed", wantVersion: "v1.2.3", wantCom: "feed"},
		"commit stamped only":    {commit: "feedfacefeedface", wantVersion: "v0.0.0-feedfacefeed", wantCom: "feedfacefeedface"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := infoFrom(tc.bi, tc.version, tc.commit)
			if got.Version != tc.wantVersion || got.Commit != tc.wantCom || got.Modified != tc.wantModified {
				t.Errorf("got version %q commit %q modified %v; want %q %q %v", got.Version, got.Commit, got.Modified, tc.wantVersion, tc.wantCom, tc.wantModified)
			}
		})
	}
}
