package profile

import (
	"strings"
	"testing"
)

// TestParseFeatureGates: kube-scheduler's --feature-gates syntax, errors and
// dependencies.
func TestParseFeatureGates(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    Features
		wantErr string
	}{
		"empty: the defaults":         {in: "", want: Features{}},
		"GenericWorkload":             {in: "GenericWorkload=true", want: Features{GenericWorkload: true}},
		"all three":                   {in: "GenericWorkload=true,CompositePodGroup=true,TopologyAwareWorkloadScheduling=true", want: Features{GenericWorkload: true, CompositePodGroup: true}},
		"explicitly off":              {in: "GenericWorkload=false", want: Features{}},
		"spaces":                      {in: " GenericWorkload = true ", want: Features{GenericWorkload: true}},
		"unknown name":                {in: "GenericWorkloads=true", wantErr: "unrecognized feature gate: GenericWorkloads"},
		"bad value":                   {in: "GenericWorkload=yes", wantErr: "invalid value of GenericWorkload=yes"},
		"no value":                    {in: "GenericWorkload", wantErr: "missing bool value for GenericWorkload"},
		"CompositePodGroup alone":     {in: "CompositePodGroup=true", wantErr: "CompositePodGroup is enabled, but depends on features that are disabled: [GenericWorkload]"},
		"CompositePodGroup with GW":   {in: "GenericWorkload=true,CompositePodGroup=true", want: Features{GenericWorkload: true, CompositePodGroup: true}},
		"TopologyAware without GW":    {in: "TopologyAwareWorkloadScheduling=true", wantErr: "TopologyAwareWorkloadScheduling is enabled, but depends on features that are disabled: [GenericWorkload]"},
		"later value wins as in kube": {in: "GenericWorkload=true,GenericWorkload=false", want: Features{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseFeatureGates(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
