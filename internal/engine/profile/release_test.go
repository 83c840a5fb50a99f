package profile

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseRelease: --kube-version's forms, the default, and releases not
// mirrored.
func TestParseRelease(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    Release
		wantErr bool
	}{
		"empty: the newest":  {in: "", want: Release138},
		"minor":              {in: "1.37", want: Release137},
		"v and patch":        {in: "v1.38.0", want: Release138},
		"pre-release":        {in: "v1.38.0-beta.0", want: Release138},
		"1.36":               {in: "1.36", want: Release136},
		"not mirrored":       {in: "1.35", wantErr: true},
		"not a version":      {in: "latest", wantErr: true},
		"major 2":            {in: "2.0", wantErr: true},
		"junk after minor":   {in: "1.37x", wantErr: true},
		"server's build tag": {in: "v1.37.2+k3s1", want: Release137},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseRelease(tc.in)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("ParseRelease(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// TestNearestRelease: an API server of a mirrored release gets it; one
// outside the set gets the nearest, with a warning.
func TestNearestRelease(t *testing.T) {
	tests := map[string]struct {
		in          string
		want        Release
		wantWarning bool
	}{
		"1.37":         {in: "v1.37.2", want: Release137},
		"eks 1.36":     {in: "v1.36.9-eks-a1b2c3", want: Release136},
		"older: 1.36":  {in: "v1.33.1", want: Release136, wantWarning: true},
		"newer: 1.38":  {in: "v1.40.0", want: Release138, wantWarning: true},
		"1.38 release": {in: "v1.38.0", want: Release138},
		"unstamped":    {in: "v0.0.0-master+$Format:%H$", want: DefaultRelease, wantWarning: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, warning := NearestRelease(tc.in)
			if got != tc.want || (warning != "") != tc.wantWarning {
				t.Errorf("NearestRelease(%q) = %v, %q; want %v, warning %v", tc.in, got, warning, tc.want, tc.wantWarning)
			}
		})
	}
}

// TestReleaseSemantics: 1.37 is the zero value; 1.36 and 1.38 turn on
// each of theirs.
func TestReleaseSemantics(t *testing.T) {
	if got := Release137.Semantics(); got != (Semantics{}) {
		t.Errorf("1.37 = %+v, want the zero value", got)
	}
	want := Semantics{PDBEmptySelectorMatchesAll: true, SpreadEmptySelectorMatchesAll: true, UnstartedVictimsNewest: true,
		VictimUIDTieBreak: true, NoVictimsRejectsNode: true}
	if diff := cmp.Diff(want, Release138.Semantics()); diff != "" {
		t.Errorf("1.38 (-want,+got):\n%s", diff)
	}
	want136 := Semantics{CSIDriverNotRequired: true, UnstartedVictimsTieAnyWay: true}
	if diff := cmp.Diff(want136, Release136.Semantics()); diff != "" {
		t.Errorf("1.36 (-want,+got):\n%s", diff)
	}
}

// TestParseFeatureGatesFor: the release's semantics are set, and gates a
// release locks on are accepted with a warning (refused when set false),
// while 1.38, which removed them, refuses them.
func TestParseFeatureGatesFor(t *testing.T) {
	f, warnings, err := ParseFeatureGatesFor(Release137, "InPlacePodVerticalScaling=true,GenericWorkload=true")
	if err != nil || len(warnings) != 1 || !f.GenericWorkload || f.Semantics != (Semantics{}) {
		t.Errorf("1.37: %+v, %q, %v", f, warnings, err)
	}
	if _, _, err := ParseFeatureGatesFor(Release137, "DynamicResourceAllocation=false"); err == nil {
		t.Error("1.37 accepted a locked gate set to false")
	}
	if _, _, err := ParseFeatureGatesFor(Release138, "InPlacePodVerticalScaling=true"); err == nil {
		t.Error("1.38 accepted a removed gate")
	}
	f, _, err = ParseFeatureGatesFor(Release138, "")
	if err != nil || f.Semantics != Release138.Semantics() {
		t.Errorf("1.38: %+v, %v", f, err)
	}
}
