package loader

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestSchedulingVolumes(t *testing.T) {
	vol := func(name string, src v1.VolumeSource) v1.Volume { return v1.Volume{Name: name, VolumeSource: src} }
	token := vol("kube-api-access-x", v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{}})
	secret := vol("s", v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "s"}})
	config := vol("c", v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}})
	downward := vol("d", v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{}})
	empty := vol("e", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}})
	claim := vol("data", v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}})
	ephemeral := vol("scratch", v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{}})
	csi := vol("inline", v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: "d"}})
	disk := vol("pd", v1.VolumeSource{GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: "pd"}})
	host := vol("h", v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/h"}})
	// Two sources set (the API server refuses it): kept, as read.
	two := vol("two", v1.VolumeSource{Secret: &v1.SecretVolumeSource{}, PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}})
	tests := []struct {
		name string
		in   []v1.Volume
		want []string
	}{
		{"none", nil, nil},
		{"token only", []v1.Volume{token}, nil},
		{"all dropped", []v1.Volume{token, secret, config, downward, empty}, nil},
		{"all kept", []v1.Volume{claim, ephemeral, csi, disk, host}, []string{"data", "scratch", "inline", "pd", "h"}},
		{"mixed", []v1.Volume{token, claim, secret, ephemeral}, []string{"data", "scratch"}},
		{"two sources", []v1.Volume{two}, []string{"two"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]v1.Volume(nil), tt.in...)
			got := schedulingVolumes(in)
			var names []string
			for _, v := range got {
				names = append(names, v.Name)
			}
			if len(names) != len(tt.want) || (got == nil) != (tt.want == nil) {
				t.Fatalf("kept %v, want %v", names, tt.want)
			}
			for i := range names {
				if names[i] != tt.want[i] {
					t.Fatalf("kept %v, want %v", names, tt.want)
				}
			}
			for i := range in {
				if in[i].Name != tt.in[i].Name {
					t.Fatalf("the volumes given were changed: %v", in)
				}
			}
		})
	}
}

func TestMaskNames(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{`[]`, `[]`, true},
		{`[{"name": "kube-api-access-1", "projected": {"sources": [{"configMap": {"name": "kube-root-ca.crt"}}]}}]`,
			"[{\"name\": \x00, \"projected\": {\"sources\": [{\"configMap\": {\"name\": \"kube-root-ca.crt\"}}]}}]", true},
		{`[{"mountPath": "/m", "name": "a"}, {"name": "b", "readOnly": true}]`, "[{\"mountPath\": \"/m\", \"name\": \x00}, {\"name\": \x00, \"readOnly\": true}]", true},
		{`[{"name": null}]`, "", false},
		{`[{"name": "a\u002d"}]`, "", false},
		{`[{"name": 1}]`, "", false},
		{`{"name": "a"}`, "", false},
		{`[{"name": "a"}] x`, "", false},
		{`[{"name": "a"`, "", false},
	}
	for _, tt := range tests {
		got, ok := maskNames(nil, []byte(tt.in))
		if ok != tt.ok || ok && string(got) != tt.want {
			t.Errorf("maskNames(%s) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
