package manifest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
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

// FuzzMaskYAMLNames: of two YAML sequences maskYAMLNames masks alike, when
// the first converts and decodes strictly as volumes (or mounts), so does
// the second, to the same but for their names — so a template's pods
// whose volumes or mounts are alike as YAML decode alike.
func FuzzMaskYAMLNames(f *testing.F) {
	volumes := "- name: kube-api-access-1\n  projected:\n    sources:\n    - configMap:\n        name: kube-root-ca.crt\n"
	mounts := "- mountPath: /m\n  name: a\n  readOnly: true\n- name: b\n  mountPath: /n\n"
	for _, pair := range [][2]string{
		{volumes, strings.ReplaceAll(volumes, "access-1", "access-2")},
		{volumes, strings.ReplaceAll(volumes, "access-1", `"access-2"`)},
		{volumes, strings.ReplaceAll(volumes, "kube-root-ca.crt", "other")},
		{volumes, strings.ReplaceAll(volumes, "access-1", "7")},
		{volumes, strings.ReplaceAll(volumes, "access-1", "null")},
		{volumes, strings.ReplaceAll(volumes, "access-1", "a # c")},
		{mounts, strings.ReplaceAll(mounts, "name: a", "name: z")},
		{mounts, strings.ReplaceAll(mounts, "name: a", "name: 'z'")},
		{"  - name: a\n    emptyDir: {}\n", "  - name: b\n    emptyDir: {}\n"},
		{"- {name: a, emptyDir: {}}\n", "- {name: b, emptyDir: {}}\n"},
	} {
		f.Add([]byte(pair[0]), []byte(pair[1]))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		ma, okA := maskYAMLNames(nil, fieldVolumes, a)
		mb, okB := maskYAMLNames(nil, fieldVolumes, b)
		if !okA || !okB || string(ma) != string(mb) {
			return
		}
		ja, err := yaml.YAMLToJSON(a)
		if err != nil {
			return
		}
		jb, err := yaml.YAMLToJSON(b)
		if err != nil {
			t.Fatalf("%q masks as %q, but does not convert: %v", b, a, err)
		}
		checkAlikeButNames[v1.Volume](t, ja, jb, func(v *v1.Volume) { v.Name = "" })
		checkAlikeButNames[v1.VolumeMount](t, ja, jb, func(m *v1.VolumeMount) { m.Name = "" })
	})
}

// checkAlikeButNames fails unless, when ja decodes strictly as a []T, jb
// does too, to the same once unname clears each element's name.
func checkAlikeButNames[T any](t *testing.T, ja, jb []byte, unname func(*T)) {
	t.Helper()
	var a, b []T
	if strict, err := DecodeStrict(ja, &a); err != nil || len(strict) > 0 {
		return
	}
	if strict, err := DecodeStrict(jb, &b); err != nil || len(strict) > 0 {
		t.Fatalf("%s decodes as %T, but %s does not: %v, %v", ja, a, jb, err, strict)
	}
	for _, l := range [][]T{a, b} {
		for i := range l {
			unname(&l[i])
		}
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("%s and %s decode otherwise but for their names:\n%s", ja, jb, diff)
	}
}

func TestMaskYAMLNames(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"- name: v1\n  projected:\n    sources:\n    - configMap:\n        name: kube-root-ca.crt\n",
			"\x08- name: \x00\n  projected:\n    sources:\n    - configMap:\n        name: kube-root-ca.crt\n", true},
		{"- mountPath: /m\n  name: \"a\"\n- name: b\n", "\x08- mountPath: /m\n  name: \x00\n- name: \x00\n", true},
		{"  - name: a\n    emptyDir: {}\n", "\x08  - name: \x00\n    emptyDir: {}\n", true},
		{"- {name: a}\n", "\x08- {name: a}\n", true},
		{"- name: null\n", "", false},
		{"- name: 7\n", "", false},
		{"- name: a # c\n", "", false},
		{"name: a\n", "", false},
		{"- name: a", "", false},
	}
	for _, tt := range tests {
		got, ok := maskYAMLNames(nil, fieldVolumes, []byte(tt.in))
		if ok != tt.ok || ok && string(got) != tt.want {
			t.Errorf("maskYAMLNames(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
