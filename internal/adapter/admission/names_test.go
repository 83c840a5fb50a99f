package admission

import (
	"strings"
	"testing"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/utils/ptr"

	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzIsDNS1123Subdomain holds the hand-written check to apimachinery's
// regular expression.
func FuzzIsDNS1123Subdomain(f *testing.F) {
	for _, s := range []string{"", "a", "a.b", "a-b.c-d", "-a", "a-", "a..b", ".a", "a.", "A", "a_b", "0.0", "a.-b", "a-.b",
		strings.Repeat("a", 253), strings.Repeat("a", 254), strings.Repeat("a.", 126) + "a", "ä"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := len(validation.IsDNS1123Subdomain(s)) == 0
		if got := isDNS1123Subdomain(s); got != want {
			t.Errorf("isDNS1123Subdomain(%q) = %v, validation says %v", s, got, want)
		}
		if got := len(nameIsDNSSubdomain(s, false)) == 0; got != want {
			t.Errorf("nameIsDNSSubdomain(%q) valid = %v, want %v", s, got, want)
		}
	})
}

// FuzzObjectMetaValid: metadata objectMetaValid accepts is metadata
// ValidateObjectMeta accepts.
func FuzzObjectMetaValid(f *testing.F) {
	f.Add("p-1", "default", "app", "web", "example.com/team", "a", "ex.com/Note", "x", false)
	f.Add("p", "", "a/b/c", "", "", "", "Example.com/n", "", true)
	f.Add("p", "ns", "-a", "b-", "example.com/", "v", "k", strings.Repeat("v", 300), false)
	f.Add("a.b", "ns.x", "A_b.c", "V.v_v-1", "x/y", "", "K", "", false)
	f.Add("p-1", "default", "app", "web", "x", "app-5d8f7b9c4-", "k", "v", false)
	f.Add("p-1", "default", "app", "web", "x", "a.-", "k", "v", false)
	f.Fuzz(func(t *testing.T, name, ns, lk, lv, lk2, lv2, ak, av string, cluster bool) {
		meta := &metav1.ObjectMeta{Name: name, GenerateName: lv2, Namespace: ns, Labels: map[string]string{lk: lv, lk2: lv2}, Annotations: map[string]string{ak: av}}
		if !objectMetaValid(meta, !cluster) {
			return
		}
		if errs := apivalidation.ValidateObjectMeta(meta, !cluster, nameIsDNSSubdomain, metadata); len(errs) > 0 {
			t.Fatalf("objectMetaValid accepts %+v, ValidateObjectMeta says %v", meta, errs)
		}
	})
}

// TestObjectMetaValidAccepts: the fast check does accept what it is for.
func TestObjectMetaValidAccepts(t *testing.T) {
	meta := &metav1.ObjectMeta{Name: "web-7d9f-abcde", GenerateName: "web-7d9f-", Namespace: "shop", Labels: map[string]string{"app": "web", "pod-template-hash": "7d9f", "app.kubernetes.io/name": "Web_1.0"},
		Annotations:     map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z", "Example.COM/Owner": "x"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9f", UID: "u1", Controller: ptr.To(true)}}}
	if !objectMetaValid(meta, true) {
		t.Fatal("a kubectl pod's metadata is not plainly valid")
	}
	if errs := apivalidation.ValidateObjectMeta(meta, true, nameIsDNSSubdomain, metadata); len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, bad := range []func(m *metav1.ObjectMeta){
		func(m *metav1.ObjectMeta) { m.Namespace = "" },
		func(m *metav1.ObjectMeta) { m.Namespace = "a.b" },
		func(m *metav1.ObjectMeta) { m.Labels["Bad.Prefix/x"] = "y" },
		func(m *metav1.ObjectMeta) { m.Labels["x"] = "-y" },
		func(m *metav1.ObjectMeta) { m.Annotations["a/b/c"] = "" },
		func(m *metav1.ObjectMeta) { m.Annotations["big"] = strings.Repeat("x", 256<<10) },
		func(m *metav1.ObjectMeta) { m.OwnerReferences = append(m.OwnerReferences, m.OwnerReferences[0]) }, // two controllers
		func(m *metav1.ObjectMeta) { m.Name = "Web" },
		func(m *metav1.ObjectMeta) { m.GenerateName = "-" },
		func(m *metav1.ObjectMeta) { m.GenerateName = "ab_c-" },
	} {
		m := meta.DeepCopy()
		bad(m)
		if objectMetaValid(m, true) {
			t.Errorf("objectMetaValid accepts %+v", m)
		}
		if len(validateObjectMeta(m, true)) == 0 {
			t.Errorf("validateObjectMeta accepts %+v", m)
		}
	}
}

// FuzzManagedFieldsValid: managedFieldsValid accepts exactly the managed
// fields ValidateManagedFields accepts.
func FuzzManagedFieldsValid(f *testing.F) {
	f.Add("kube-controller-manager", "Update", "FieldsV1", "", "kubelet", "Apply", "", "status")
	f.Add("", "", "", "", "m", "Delete", "FieldsV2", strings.Repeat("s", 257))
	f.Add(strings.Repeat("m", 129), "Update", "", "", "a\x00b", "Update", "", "")
	f.Add("\xff", "Apply", "FieldsV1", strings.Repeat("s", 256), "é\u200b", "update", "fieldsv1", "")
	f.Fuzz(func(t *testing.T, m1, op1, ft1, sub1, m2, op2, ft2, sub2 string) {
		entries := []metav1.ManagedFieldsEntry{
			{Manager: m1, Operation: metav1.ManagedFieldsOperationType(op1), FieldsType: ft1, Subresource: sub1},
			{Manager: m2, Operation: metav1.ManagedFieldsOperationType(op2), FieldsType: ft2, Subresource: sub2},
		}
		for n := range len(entries) + 1 {
			want := len(metavalidation.ValidateManagedFields(entries[:n], metadata, metavalidation.CoveredByDeclarative)) == 0
			if got := managedFieldsValid(entries[:n]); got != want {
				t.Fatalf("managedFieldsValid(%+v) = %v, ValidateManagedFields %v", entries[:n], got, want)
			}
		}
	})
}
