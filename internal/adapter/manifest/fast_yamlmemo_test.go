package manifest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"
)

// yamlItems returns the items of objs as a YAML List writes them (as
// kubectl does), each with its "- ", as cutYAMLItems cuts them.
func yamlItems(t *testing.T, objs []map[string]any) [][]byte {
	t.Helper()
	data := mustYAML(t, map[string]any{"apiVersion": "v1", "kind": "List", "items": objs})
	_, items, ok := bytes.Cut(data, []byte("items:\n"))
	if !ok {
		t.Fatalf("no items in %q", data)
	}
	if end := bytes.Index(items, []byte("\nkind: List")); end >= 0 {
		items = items[:end+1]
	}
	var out [][]byte
	for at := 0; at < len(items); {
		end := bytes.Index(items[at+1:], []byte("\n- "))
		if end < 0 {
			out = append(out, items[at:])
			break
		}
		out = append(out, items[at:at+1+end+1])
		at += 1 + end + 1
	}
	return out
}

// kubectlPod is a pod of workload w as the API server holds it, with the
// fields of its own (name, UID, resource version, creation time,
// annotations, managed fields, node, token volume, status) told by i.
func kubectlPod(w, i int) map[string]any {
	token := fmt.Sprintf("kube-api-access-%05d", i)
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{
			"name": fmt.Sprintf("app-%d-%d", w, i), "namespace": "default", "generateName": fmt.Sprintf("app-%d-", w),
			"uid": fmt.Sprintf("9e8d7c6b-%04d-4000-8000-%012d", w, i), "resourceVersion": fmt.Sprint(1000 + i),
			"creationTimestamp": fmt.Sprintf("2026-01-01T00:%02d:00Z", i%60),
			"annotations":       map[string]any{"example.com/seq": fmt.Sprint(i)},
			"labels":            map[string]any{"app": fmt.Sprintf("app-%d", w), "pod-template-hash": "5d8f7b9c4"},
			"ownerReferences": []any{map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": fmt.Sprintf("app-%d-5d8f7b9c4", w),
				"uid": fmt.Sprintf("1a2b3c4d-0000-4000-8000-%012d", w), "controller": true, "blockOwnerDeletion": true}},
			"managedFields": []any{map[string]any{"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
				"time": fmt.Sprintf("2026-01-01T00:%02d:00Z", i%60), "fieldsType": "FieldsV1",
				"fieldsV1": map[string]any{"f:metadata": map[string]any{"f:labels": map[string]any{".": map[string]any{}}}}}},
		},
		"spec": map[string]any{
			"nodeName": fmt.Sprintf("node-%03d", i),
			"containers": []any{map[string]any{
				"name": "app", "image": fmt.Sprintf("registry.example.com/app-%d:1.2.3", w),
				"resources":    map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "256Mi"}, "limits": map[string]any{"memory": "512Mi"}},
				"ports":        []any{map[string]any{"containerPort": 8080, "name": "http", "protocol": "TCP"}},
				"volumeMounts": []any{map[string]any{"name": token, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}},
			}},
			"volumes": []any{map[string]any{"name": token, "projected": map[string]any{"sources": []any{
				map[string]any{"serviceAccountToken": map[string]any{"path": "token", "expirationSeconds": 3607}}}}}},
			"tolerations": []any{map[string]any{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}},
		},
		"status": map[string]any{
			"phase": "Running", "hostIP": "10.0.0.1", "podIP": fmt.Sprintf("10.244.%d.%d", i/250, i%250),
			"startTime": fmt.Sprintf("2026-01-01T00:%02d:05Z", i%60), "qosClass": "Burstable",
			"conditions": []any{map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}},
			"containerStatuses": []any{map[string]any{"name": "app", "ready": true, "restartCount": i % 3, "image": "registry.example.com/app:1.2.3",
				"imageID": "", "containerID": fmt.Sprintf("containerd://c0ffee%06dbeef", i), "started": true,
				"state": map[string]any{"running": map[string]any{"startedAt": "2026-01-01T00:00:06Z"}}}},
		},
	}
}

// TestYAMLMemo: the pods of a YAML List that the memo makes from their
// YAML text are the pods converting and preparing them makes, or the memo
// leaves them to that; and it makes most of them.
func TestYAMLMemo(t *testing.T) {
	var objs []map[string]any
	const workloads, replicas = 3, 12
	for i := range replicas {
		for w := range workloads {
			objs = append(objs, kubectlPod(w, i*workloads+w))
		}
	}
	// Values of their own, well and badly written.
	edits := map[int]func(p map[string]any){
		7:  func(p map[string]any) { p["status"] = map[string]any{"phase": "Pending"} },
		8:  func(p map[string]any) { p["status"].(map[string]any)["phase"] = []any{"Running"} },
		10: func(p map[string]any) { p["metadata"].(map[string]any)["name"] = "Not_A_Name" },
		11: func(p map[string]any) { delete(p["metadata"].(map[string]any), "annotations") },
		13: func(p map[string]any) { p["metadata"].(map[string]any)["annotations"] = map[string]any{} },
		14: func(p map[string]any) { p["spec"].(map[string]any)["nodeName"] = 12 },
		16: func(p map[string]any) { p["status"].(map[string]any)["unknownField"] = "x" },
		17: func(p map[string]any) { p["metadata"].(map[string]any)["labels"] = map[string]any{"app": "other"} },
		19: func(p map[string]any) { p["metadata"].(map[string]any)["uid"] = "true" },
		20: func(p map[string]any) { p["metadata"].(map[string]any)["resourceVersion"] = "007" },
		22: func(p map[string]any) { p["spec"].(map[string]any)["volumes"] = []any{} },
		23: func(p map[string]any) {
			p["status"].(map[string]any)["message"] = "line one\nline two"
		},
	}
	for i, edit := range edits {
		edit(objs[i])
	}
	items := yamlItems(t, objs)
	if len(items) != len(objs) {
		t.Fatalf("%d items, want %d", len(items), len(objs))
	}
	hits := 0
	m := newTestMemo(&hits)
	scratch := yamlScratch{}
	fromYAML := 0
	for i, item := range items {
		got, ok := m.prepareYAMLItem(item, &scratch)
		if ok {
			fromYAML++
		} else {
			raw, fast, ok := convertLooseYAMLItem(item, true, &scratch)
			if !ok {
				t.Fatalf("item %d does not convert: %q", i, item)
			}
			got = testPrepare(m, raw)
			if fast {
				m.noteYAMLItem(item)
			}
		}
		if msg := sameAsPrepared(item, got); msg != "" {
			t.Errorf("item %d (from its YAML %v): %s", i, ok, msg)
		}
	}
	if min := len(items) - workloads - len(edits) - 2; fromYAML < min {
		t.Errorf("%d pods made from their YAML text, want %d or more", fromYAML, min)
	}
	if !strings.Contains(string(items[1]), "\n  status:\n") {
		t.Errorf("not kubectl's YAML: %q", items[1])
	}
}

// sameAsPrepared returns how got, a pod the memo made of a loose YAML
// item, differs from the item converted and prepared without it ("" when
// it does not).
func sameAsPrepared(item []byte, got prepared) string {
	var scratch yamlScratch
	raw, _, ok := convertLooseYAMLItem(item, true, &scratch)
	if !ok {
		return "the item does not convert"
	}
	want := prepare(raw, true)
	if got.decoded() != want.decoded() || (got.problems().admitErr == nil) != (want.problems().admitErr == nil) {
		return fmt.Sprintf("decoded %v, admission error %v; want %v, %v", got.decoded(), got.problems().admitErr, want.decoded(), want.problems().admitErr)
	}
	opts := cmp.Options{cmpopts.EquateEmpty(), cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })}
	if diff := cmp.Diff(podOf(want.obj), podOf(got.obj), opts); diff != "" {
		return "the pod differs (-prepared +memo):\n" + diff
	}
	return ""
}

// FuzzYAMLMemo: whatever the second of two loose YAML items, the memo
// makes it from the first's template only as converting and preparing it
// makes it.
func FuzzYAMLMemo(f *testing.F) {
	seed := func(a, b map[string]any) {
		var items [][]byte
		for _, o := range []map[string]any{a, b} {
			data := mustYAML(f, map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{o}})
			_, item, _ := bytes.Cut(data, []byte("items:\n"))
			item, _, _ = bytes.Cut(item, []byte("\nkind: List"))
			items = append(items, append(item, '\n'))
		}
		f.Add(items[0], items[1])
	}
	seed(kubectlPod(0, 1), kubectlPod(0, 2))
	seed(kubectlPod(1, 1), kubectlPod(1, 70))
	p := kubectlPod(0, 3)
	p["status"] = map[string]any{"phase": "Pending", "message": "a\nb"}
	seed(kubectlPod(0, 1), p)
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if len(a) < 3 || len(b) < 3 {
			return
		}
		hits := 0
		m := newTestMemo(&hits)
		var scratch yamlScratch
		raw, fast, ok := convertLooseYAMLItem(a, true, &scratch)
		if !ok || !fast {
			return
		}
		testPrepare(m, raw)
		m.noteYAMLItem(a)
		got, ok := m.prepareYAMLItem(b, &scratch)
		if !ok {
			return
		}
		if msg := sameAsPrepared(b, got); msg != "" {
			t.Fatalf("%q after %q: %s", b, a, msg)
		}
	})
}

// TestYAMLMemoEdits: items that differ from a template's in random edits
// (a byte changed, inserted or removed; a line dropped, doubled or moved
// in or out) are made by the memo only as converting and preparing them
// makes them.
func TestYAMLMemoEdits(t *testing.T) {
	tplPod, other := kubectlPod(0, 1), kubectlPod(0, 2)
	items := yamlItems(t, []map[string]any{tplPod, other})
	rng := rand.New(rand.NewPCG(1, 2))
	made := 0
	for n := range 3000 {
		b := bytes.Clone(items[1])
		for range 1 + rng.IntN(3) {
			b = editYAML(rng, b)
		}
		hits := 0
		m := newTestMemo(&hits)
		scratch := yamlScratch{}
		raw, fast, ok := convertLooseYAMLItem(items[0], true, &scratch)
		if !ok || !fast {
			t.Fatal("the template does not convert fast")
		}
		testPrepare(m, raw)
		m.noteYAMLItem(items[0])
		if m.last == nil || m.last.yaml == nil {
			t.Fatal("no YAML key")
		}
		if len(b) < 3 || b[len(b)-1] != '\n' {
			continue
		}
		got, ok := m.prepareYAMLItem(b, &scratch)
		if !ok {
			continue
		}
		made++
		if msg := sameAsPrepared(b, got); msg != "" {
			t.Fatalf("edit %d, %q: %s", n, b, msg)
		}
	}
	if made < 100 {
		t.Errorf("only %d edited items made from the template", made)
	}
}

// editYAML makes one random edit to a YAML item.
func editYAML(rng *rand.Rand, b []byte) []byte {
	lines := bytes.SplitAfter(b, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	i := 1 + rng.IntN(len(lines)-1)
	switch rng.IntN(7) {
	case 0: // a byte changed
		at := rng.IntN(len(b))
		b[at] = " -:x\"'{}[]#&*|>0\n"[rng.IntN(17)]
		return b
	case 1: // a byte inserted
		at := rng.IntN(len(b))
		return slices.Insert(b, at, " -:x\"'{}[]#0\n"[rng.IntN(13)])
	case 2: // a byte removed
		at := rng.IntN(len(b) - 1)
		return slices.Delete(b, at, at+1)
	case 3: // a line dropped
		lines = slices.Delete(lines, i, i+1)
	case 4: // a line doubled
		lines = slices.Insert(lines, i, lines[i])
	case 5: // a line moved in
		lines[i] = append([]byte("  "), lines[i]...)
	case 6: // a line moved out
		lines[i] = bytes.TrimPrefix(lines[i], []byte("  "))
	}
	return bytes.Join(lines, nil)
}
