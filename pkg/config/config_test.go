package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := map[string]struct {
		doc     string
		want    Config
		wantErr string
	}{
		"no profiles": {
			doc:  "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
			want: Default(),
		},
		"preemption args": {
			doc: `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: reprieve
  pluginConfig:
  - name: DefaultPreemption
    args: {minCandidateNodesPercentage: 50, minCandidateNodesAbsolute: 7}
`,
			want: Config{SchedulerName: "reprieve", MinCandidateNodesPercentage: 50, MinCandidateNodesAbsolute: 7},
		},
		"only one arg set keeps the other default": {
			doc: `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: batch
  pluginConfig:
  - name: DefaultPreemption
    args: {minCandidateNodesAbsolute: 0}
`,
			want: Config{SchedulerName: "batch", MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 0},
		},
		"percentage out of range": {
			doc: `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- pluginConfig:
  - name: DefaultPreemption
    args: {minCandidateNodesPercentage: 101}
`,
			wantErr: "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]",
		},
		"both zero": {
			doc: `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- pluginConfig:
  - name: DefaultPreemption
    args: {minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}
`,
			wantErr: "cannot be zero at the same time as minCandidateNodesAbsolute",
		},
		"negative absolute": {
			doc: `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- pluginConfig:
  - name: DefaultPreemption
    args: {minCandidateNodesAbsolute: -1}
`,
			wantErr: "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)",
		},
		"wrong kind":    {doc: "apiVersion: v1\nkind: ConfigMap\n", wantErr: "want kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration"},
		"unknown field": {doc: "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nbogus: 1\n", wantErr: "malformed KubeSchedulerConfiguration"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Parse([]byte(tc.doc))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
