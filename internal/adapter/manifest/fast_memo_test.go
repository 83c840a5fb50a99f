package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPodMemo reads Lists of many pods of a few shapes, one pod of which
// has its fields that the memo decodes per pod (name, UID, resource
// version, creation time, annotations, managed fields, node name, status)
// written otherwise — well or badly. Lean, streamed and read whole, with
// the memo, the objects, warnings and errors must be those of the file
// read whole without it, under each --validate mode, and the memo must
// have prepared pods from templates.
func TestPodMemo(t *testing.T) {
	const at = 13 // web-001-1: its shape's template is web-000-1, or web-001-0's
	pod := func(objs []map[string]any) map[string]any { return objs[at] }
	set := func(obj map[string]any, path string, v any) {
		keys := strings.Split(path, ".")
		for _, k := range keys[:len(keys)-1] {
			next, ok := obj[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				obj[k] = next
			}
			obj = next
		}
		obj[keys[len(keys)-1]] = v
	}
	// deepCopy copies obj's maps (the pods of manyObjects share theirs).
	var deepCopy func(v any) any
	deepCopy = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			c := map[string]any{}
			for k, e := range x {
				c[k] = deepCopy(e)
			}
			return c
		case []any:
			c := make([]any, len(x))
			for i, e := range x {
				c[i] = deepCopy(e)
			}
			return c
		}
		return v
	}
	status := func(s map[string]any) func(map[string]any) { return func(o map[string]any) { o["status"] = s } }
	managed := func(op string) any {
		return []any{map[string]any{"manager": "m", "operation": op, "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:metadata": map[string]any{}}}}
	}
	// token gives a pod a service account token volume of its own,
	// mounted in its container, as the API server does.
	token := func(o map[string]any) {
		name := o["metadata"].(map[string]any)["name"].(string)
		set(o, "spec.volumes", []any{map[string]any{"name": "kube-api-access-" + name, "projected": map[string]any{
			"sources": []any{map[string]any{"serviceAccountToken": map[string]any{"expirationSeconds": 3607, "path": "token"}}}}}})
		c := o["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
		c["volumeMounts"] = []any{map[string]any{"name": "kube-api-access-" + name, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}}
	}
	// kubelet gives a pod the status its kubelet writes while it runs:
	// its own addresses, container ID and times (by its name), and its
	// container's resources, the spec's.
	// podNumber is a number of the pod's own, and when the time of its own.
	podNumber := func(o map[string]any) (n int, when string) {
		for _, c := range o["metadata"].(map[string]any)["name"].(string) {
			n = n*7 + int(c)
		}
		return n, fmt.Sprintf("2026-01-01T00:%02d:%02dZ", n/60%60, n%60)
	}
	kubelet := func(o map[string]any) {
		name := o["metadata"].(map[string]any)["name"].(string)
		n, when := podNumber(o)
		ip := fmt.Sprintf("10.1.%d.%d", n/256%256, n%256)
		conds := []any{}
		for _, c := range []string{"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"} {
			conds = append(conds, map[string]any{"type": c, "status": "True", "lastProbeTime": nil, "lastTransitionTime": when, "observedGeneration": 1})
		}
		o["status"] = map[string]any{"phase": "Running", "qosClass": "Burstable", "startTime": when, "hostIP": "10.0.0.1", "podIP": ip,
			"podIPs": []any{map[string]any{"ip": ip}}, "conditions": conds, "observedGeneration": 1,
			"containerStatuses": []any{map[string]any{"name": "c", "ready": true, "restartCount": 0, "started": true, "image": "img:1", "imageID": "img@sha256:1",
				"containerID":        "containerd://" + name,
				"allocatedResources": map[string]any{"cpu": "100m", "memory": "256Mi"},
				"resources":          map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "256Mi"}},
				"state":              map[string]any{"running": map[string]any{"startedAt": when}},
				"volumeMounts":       []any{map[string]any{"name": "kube-api-access-" + name, "mountPath": "/m", "readOnly": true}}}}}
	}
	// kubeletManaged gives a pod managed fields as a kubelet's and a
	// controller's entries are: each with its time, the kubelet's naming
	// the pod's IP in a list key (by its name).
	kubeletManaged := func(o map[string]any) {
		n, when := podNumber(o)
		set(o, "metadata.managedFields", []any{
			map[string]any{"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "time": "2026-01-01T00:00:00Z",
				"fieldsV1": map[string]any{"f:metadata": map[string]any{"f:ownerReferences": map[string]any{".": map[string]any{}, `k:{"uid":"u1"}`: map[string]any{}}}}},
			map[string]any{"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "subresource": "status", "time": when,
				"fieldsV1": map[string]any{"f:status": map[string]any{"f:podIPs": map[string]any{".": map[string]any{},
					fmt.Sprintf(`k:{"ip":"10.1.%d.%d"}`, n/256%256, n%256): map[string]any{".": map[string]any{}, "f:ip": map[string]any{}}}}}}})
	}
	// managedAnd is kubeletManaged, then change, given the kubelet's entry.
	managedAnd := func(change func(entry map[string]any)) func(map[string]any) {
		return func(o map[string]any) {
			kubeletManaged(o)
			change(o["metadata"].(map[string]any)["managedFields"].([]any)[1].(map[string]any))
		}
	}
	podIPs := func(entry map[string]any) map[string]any {
		return entry["fieldsV1"].(map[string]any)["f:status"].(map[string]any)["f:podIPs"].(map[string]any)
	}
	// kubeletAnd is kubelet, then change.
	kubeletAnd := func(change func(st map[string]any)) func(map[string]any) {
		return func(o map[string]any) { kubelet(o); change(o["status"].(map[string]any)) }
	}
	containerStatus := func(st map[string]any) map[string]any { return st["containerStatuses"].([]any)[0].(map[string]any) }
	tests := map[string]struct {
		// every changes every pod first.
		every  func(obj map[string]any)
		mutate func(obj map[string]any)
		// edit rewrites the List's JSON (for what a map cannot hold), and
		// editYAML its YAML.
		edit, editYAML func(data []byte) []byte
		// declined says the streaming reader declines the List.
		declined bool
	}{
		"as written":        {},
		"bad name":          {mutate: func(o map[string]any) { set(o, "metadata.name", "Bad_Name") }},
		"name null":         {mutate: func(o map[string]any) { set(o, "metadata.name", nil) }},
		"name a number":     {mutate: func(o map[string]any) { set(o, "metadata.name", 17) }},
		"uid a number":      {mutate: func(o map[string]any) { set(o, "metadata.uid", 17) }},
		"uid and version":   {mutate: func(o map[string]any) { set(o, "metadata.uid", "u-1"); set(o, "metadata.resourceVersion", "42") }},
		"bad creation time": {mutate: func(o map[string]any) { set(o, "metadata.creationTimestamp", "yesterday") }},
		"creation time":     {mutate: func(o map[string]any) { set(o, "metadata.creationTimestamp", "2026-01-01T00:00:00Z") }},
		"annotations":       {mutate: func(o map[string]any) { set(o, "metadata.annotations", map[string]any{"a": "b"}) }},
		"annotations too large": {mutate: func(o map[string]any) {
			set(o, "metadata.annotations", map[string]any{"a": strings.Repeat("x", 300<<10)})
		}},
		"bad annotation key": {mutate: func(o map[string]any) { set(o, "metadata.annotations", map[string]any{"-a-": "b"}) }},
		"managed fields": {mutate: func(o map[string]any) {
			set(o, "metadata.managedFields", []any{map[string]any{"manager": "m", "operation": "Update"}})
		}},
		"unknown managed field": {mutate: func(o map[string]any) { set(o, "metadata.managedFields", []any{map[string]any{"managr": "m"}}) }},
		"node name":             {mutate: func(o map[string]any) { set(o, "spec.nodeName", "node-017") }},
		"no node name":          {mutate: func(o map[string]any) { delete(o["spec"].(map[string]any), "nodeName") }},
		"bad node name":         {mutate: func(o map[string]any) { set(o, "spec.nodeName", "Bad_Node") }},
		"no status":             {mutate: func(o map[string]any) { delete(o, "status") }},
		"status null":           {mutate: status(nil)},
		"empty status":          {mutate: status(map[string]any{})},
		"unknown status field":  {mutate: status(map[string]any{"phase": "Running", "phaze": "x"})},
		"bad phase type":        {mutate: status(map[string]any{"phase": 3})},
		"conditions": {mutate: status(map[string]any{"phase": "Running", "podIP": "10.0.0.1", "conditions": []any{
			map[string]any{"type": "Ready", "status": "True"}, map[string]any{"type": "DisruptionTarget", "status": "True"}}})},
		"bad allocated quantity": {mutate: status(map[string]any{"containerStatuses": []any{map[string]any{"name": "c", "image": "i", "imageID": "", "ready": true, "restartCount": 0,
			"allocatedResources": map[string]any{"cpu": "4x"}}}})},
		"huge exponent": {mutate: status(map[string]any{"containerStatuses": []any{map[string]any{"name": "c", "image": "i", "imageID": "", "ready": true, "restartCount": 0,
			"allocatedResources": map[string]any{"cpu": "1e-10000000"}}}})},
		"allocated too much": {mutate: status(map[string]any{"containerStatuses": []any{map[string]any{"name": "c", "image": "i", "imageID": "", "ready": true, "restartCount": 0,
			"allocatedResources": map[string]any{"cpu": "9223372036854775807"}}}})},
		"managed fields everywhere": {every: func(o map[string]any) { set(o, "metadata.managedFields", managed("Update")) }},
		"bad managed fields in one": {every: func(o map[string]any) { set(o, "metadata.managedFields", managed("Update")) },
			mutate: func(o map[string]any) { set(o, "metadata.managedFields", managed("Dance")) }},
		"field set differs in one": {every: func(o map[string]any) { set(o, "metadata.managedFields", managed("Update")) },
			mutate: func(o map[string]any) {
				set(o, "metadata.managedFields", []any{map[string]any{"manager": "m", "operation": "Update", "fieldsV1": map[string]any{"f:spec": []any{1.5, "x"}}}})
			}},
		"field set longer in one": {every: func(o map[string]any) { set(o, "metadata.managedFields", managed("Update")) },
			edit: func(data []byte) []byte {
				return inAtPod(data, `"f:metadata": {}`, `"f:metadata": {}, "f:spec": {"k:{\"a\":1}": {}}`)
			}},
		"field set not JSON in one": {every: func(o map[string]any) { set(o, "metadata.managedFields", managed("Update")) },
			edit: func(data []byte) []byte { return inAtPod(data, `"f:metadata": {}`, `"f:metadata": {"a" 1}`) }},
		"field set with a bad escape in one": {every: func(o map[string]any) { set(o, "metadata.managedFields", managed("Update")) },
			edit: func(data []byte) []byte { return inAtPod(data, `"f:metadata": {}`, `"f:metadata": {"\q": {}}`) }},
		"field set as long, with a bad escape, in one": {every: func(o map[string]any) { set(o, "metadata.managedFields", managed("Update")) },
			edit: func(data []byte) []byte { return inAtPod(data, `"f:metadata": {}`, `"f:metada\q": {}`) }},
		"field set with a control character in one": {every: func(o map[string]any) { set(o, "metadata.managedFields", managed("Update")) },
			edit: func(data []byte) []byte { return inAtPod(data, `"f:metadata": {}`, "\"f:metadata\": {\"\x01\": {}}") }},
		"field set with a bad number in one": {every: func(o map[string]any) { set(o, "metadata.managedFields", managed("Update")) },
			edit: func(data []byte) []byte { return inAtPod(data, `"f:metadata": {}`, `"f:metadata": [01]`) }},
		"managed time in one": {every: func(o map[string]any) { set(o, "metadata.managedFields", managed("Update")) },
			mutate: func(o map[string]any) {
				set(o, "metadata.managedFields", []any{map[string]any{"manager": "m", "operation": "Update", "time": "2026-02-30T00:00:00Z"}})
			}},
		// checkQuantities reads a value of a key sizeLimit anywhere as a
		// quantity, and refuses one too long to parse.
		"long number as an annotation sizeLimit in one": {every: func(o map[string]any) { set(o, "metadata.annotations", map[string]any{"a": "b"}) },
			mutate: func(o map[string]any) {
				set(o, "metadata.annotations", map[string]any{"sizeLimit": strings.Repeat("1", 70)})
			}},
		"long number under sizeLimit in a field set in one": {every: func(o map[string]any) { set(o, "metadata.managedFields", managed("Update")) },
			edit: func(data []byte) []byte {
				return inAtPod(data, `"f:metadata": {}`, `"f:metadata": {}, "sizeLimit": "`+strings.Repeat("1", 70)+`"`)
			}},
		// Deeper than the fast path checks JSON for certain.
		"field set nested deep in one": {every: func(o map[string]any) { set(o, "metadata.managedFields", managed("Update")) },
			edit: func(data []byte) []byte {
				return inAtPod(data, `"f:metadata": {}`, `"f:metadata": `+strings.Repeat("[", 3000)+strings.Repeat("]", 3000))
			}, declined: true},
		"annotations everywhere": {every: func(o map[string]any) { set(o, "metadata.annotations", map[string]any{"a": "b"}) }},
		"bad annotation key in one": {every: func(o map[string]any) { set(o, "metadata.annotations", map[string]any{"a": "b"}) },
			mutate: func(o map[string]any) { set(o, "metadata.annotations", map[string]any{"-a-": "b"}) }},
		"token volumes": {every: token},
		"claim volumes alike but for their names": {every: func(o map[string]any) {
			name := o["metadata"].(map[string]any)["name"].(string)
			set(o, "spec.volumes", []any{map[string]any{"name": "v-" + name, "persistentVolumeClaim": map[string]any{"claimName": "shared"}},
				map[string]any{"name": "t-" + name, "projected": map[string]any{"sources": []any{}}}})
		}},
		"bad volume in one": {every: token, mutate: func(o map[string]any) {
			set(o, "spec.volumes", []any{map[string]any{"name": "v", "projected": map[string]any{"sourcez": []any{}}}})
		}},
		"bad volume name in one": {every: token, mutate: func(o map[string]any) { set(o, "spec.volumes", []any{map[string]any{"name": 7}}) }},
		"bad escape in a mount name in one": {every: token, edit: func(data []byte) []byte {
			return inAtPodStatus(data, `"name": "kube-api-access-web-001-1"`, `"name": "kube-api-access-web\q001-1"`)
		}},
		"escaped mount name in one": {every: token, edit: func(data []byte) []byte {
			return inAtPodStatus(data, `"name": "kube-api-access-web-001-1"`, `"name": "kube-api-access-web\u002d001-1"`)
		}},
		"bad mount in one": {every: token, mutate: func(o map[string]any) {
			o["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["volumeMounts"] = []any{map[string]any{"name": "v", "mountPth": "/a"}}
		}},
		"mounts twice in one": {every: token, edit: func(data []byte) []byte {
			return inAtPodStatus(data, `"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"`, `"mountPath": "/m"}], "volumeMounts": [{"name": "x", "mountPath": "/y"`)
		}},
		"volumes twice in one": {every: token, edit: func(data []byte) []byte {
			return bytes.Replace(data, []byte(`"nodeName": "node-001"`), []byte(`"nodeName": "node-001", "volumes": []`), 1)
		}},
		"kubelet statuses":                           {every: kubelet},
		"kubelet status without a start time in one": {every: kubelet, mutate: kubeletAnd(func(st map[string]any) { st["startTime"] = nil })},
		"kubelet status with a bad condition time in one": {every: kubelet, mutate: kubeletAnd(func(st map[string]any) {
			st["conditions"].([]any)[2].(map[string]any)["lastTransitionTime"] = "2026-02-30T00:00:00Z"
		})},
		"kubelet status with a bad start time in one":        {every: kubelet, mutate: kubeletAnd(func(st map[string]any) { st["startTime"] = "2026-01-01" })},
		"kubelet status with a number for an address in one": {every: kubelet, mutate: kubeletAnd(func(st map[string]any) { st["podIP"] = 7 })},
		"kubelet status with an object for a time in one": {every: kubelet, mutate: kubeletAnd(func(st map[string]any) {
			containerStatus(st)["state"] = map[string]any{"running": map[string]any{"startedAt": map[string]any{}}}
		})},
		"kubelet status with no container ID in one": {every: kubelet, mutate: kubeletAnd(func(st map[string]any) { containerStatus(st)["containerID"] = nil })},
		"kubelet status with a resize in one": {every: kubelet, mutate: kubeletAnd(func(st map[string]any) {
			containerStatus(st)["allocatedResources"] = map[string]any{"cpu": "200m", "memory": "256Mi"}
		})},
		"kubelet status with an infeasible resize in one": {every: kubelet, mutate: kubeletAnd(func(st map[string]any) {
			st["conditions"] = append(st["conditions"].([]any), map[string]any{"type": "PodResizePending", "status": "True", "reason": "Infeasible"})
		})},
		"kubelet status allocating too much in one": {every: kubelet, mutate: kubeletAnd(func(st map[string]any) {
			containerStatus(st)["allocatedResources"] = map[string]any{"cpu": "9223372036854775807", "memory": "256Mi"}
		})},
		"kubelet status with negative resources in one": {every: kubelet, mutate: kubeletAnd(func(st map[string]any) {
			containerStatus(st)["resources"] = map[string]any{"requests": map[string]any{"cpu": "-100m", "memory": "256Mi"}}
		})},
		"kubelet managed fields":                           {every: kubeletManaged},
		"kubelet managed fields with a bad time in one":    {every: kubeletManaged, mutate: managedAnd(func(e map[string]any) { e["time"] = "2026-02-30T00:00:00Z" })},
		"kubelet managed fields with no time in one":       {every: kubeletManaged, mutate: managedAnd(func(e map[string]any) { e["time"] = nil })},
		"kubelet managed fields with a number time in one": {every: kubeletManaged, mutate: managedAnd(func(e map[string]any) { e["time"] = 5 })},
		"kubelet managed fields with a bad quoted time in one": {every: kubeletManaged, editYAML: func(data []byte) []byte {
			return inAtPodYAML(data, `time: "2026-01-01T00:`, `time: "2026-02-30T00:`)
		}},
		"kubelet managed fields with a bad escape in a key in one": {every: kubeletManaged, edit: func(data []byte) []byte {
			return inAtPod(data, `k:{\"ip\":\"10.1.`, `k:{\"ip\":\"\q`)
		}},
		"kubelet managed fields with a bad JSON time in one": {every: kubeletManaged, edit: func(data []byte) []byte {
			return inAtPod(data, `"time": "2026-01-01T00:`, `"time": "2026-02-30T00:`)
		}},
		"kubelet managed fields with a bad operation in one": {every: kubeletManaged, mutate: managedAnd(func(e map[string]any) { e["operation"] = "Dance" })},
		"kubelet managed fields with a spaced key in one": {every: kubeletManaged, mutate: managedAnd(func(e map[string]any) {
			podIPs(e)[`k:{"ip": "10.9.9.9"}`] = map[string]any{}
		})},
		"kubelet managed fields with another key in one": {every: kubeletManaged, mutate: managedAnd(func(e map[string]any) {
			podIPs(e)[`k:{"ip":"10.9.9.9"}`] = map[string]any{}
		})},
		"kubelet status with a restart in one":           {every: kubelet, mutate: kubeletAnd(func(st map[string]any) { containerStatus(st)["restartCount"] = 3 })},
		"kubelet status with a bad restart count in one": {every: kubelet, mutate: kubeletAnd(func(st map[string]any) { containerStatus(st)["restartCount"] = 1 << 40 })},
		"kubelet status with an unknown field in one":    {every: kubelet, mutate: kubeletAnd(func(st map[string]any) { containerStatus(st)["stat"] = map[string]any{} })},
		"kubelet status with an escaped address in one": {every: kubelet, edit: func(data []byte) []byte {
			return inAtPodStatus(data, `"ip": "10.1.`, `"ip": "\u0031\u0030.1.`)
		}},
		"kubelet status with a bad escape in an address in one": {every: kubelet, edit: func(data []byte) []byte {
			return inAtPodStatus(data, `"ip": "10.1.`, `"ip": "\q.1.`)
		}},
		"labels": {mutate: func(o map[string]any) { set(o, "metadata.labels", map[string]any{"app": "other"}) }},
		"escaped name": {edit: func(data []byte) []byte {
			return bytes.Replace(data, []byte(`"name": "web-001-1"`), []byte(`"name": "web\u002d001-1"`), 1)
		}},
		"node name twice": {edit: func(data []byte) []byte {
			return bytes.Replace(data, []byte(`"nodeName": "node-001"`), []byte(`"nodeName": "node-001", "nodeName": "node-002"`), 1)
		}},
		"name twice": {edit: func(data []byte) []byte {
			return bytes.Replace(data, []byte(`"name": "web-001-1"`), []byte(`"name": "web-001-1", "name": "web-001-9"`), 1)
		}},
		"status twice": {edit: func(data []byte) []byte {
			return bytes.Replace(data, []byte(`"nodeName": "node-001"`), []byte(`"nodeName": "node-001"}, "status": {}, "spec": {"nodeName": "node-001"`), 1)
		}},
		"metadata twice": {edit: func(data []byte) []byte {
			return bytes.Replace(data, []byte(`"name": "web-001-1"`), []byte(`"name": "web-001-1"}, "metadata": {"name": "web-001-1"`), 1)
		}},
		"unknown field in a later pod": {edit: func(data []byte) []byte {
			return bytes.Replace(data, []byte(`"nodeName": "node-001"`), []byte(`"nodeName": "node-001", "nodeNam": "x"`), 1)
		}},
	}
	dir := t.TempDir()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			objs := manyObjects(20)
			if tc.every != nil {
				for i, o := range objs {
					if o["kind"] == "Pod" {
						objs[i] = deepCopy(o).(map[string]any)
						tc.every(objs[i])
					}
				}
			}
			p := deepCopy(pod(objs)).(map[string]any)
			if p["metadata"].(map[string]any)["name"] != "web-001-1" {
				t.Fatalf("item %d is %v", at, p["metadata"])
			}
			if tc.mutate != nil {
				tc.mutate(p)
			}
			objs[at] = p
			list := map[string]any{"apiVersion": "v1", "kind": "List", "items": objs}
			files := map[string][]byte{"json": mustJSON(t, list, true), "yaml": mustYAML(t, list)}
			if tc.edit != nil {
				edited := tc.edit(files["json"])
				if bytes.Equal(edited, files["json"]) {
					t.Fatal("the edit changed nothing")
				}
				files = map[string][]byte{"json": edited}
			}
			if tc.editYAML != nil {
				edited := tc.editYAML(files["yaml"])
				if bytes.Equal(edited, files["yaml"]) {
					t.Fatal("the edit changed nothing")
				}
				files = map[string][]byte{"yaml": edited}
			}
			for format, data := range files {
				path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+"."+format)
				if err := os.WriteFile(path, data, 0o644); err != nil {
					t.Fatal(err)
				}
				for _, v := range []FieldValidation{ValidateStrict, ValidateWarn, ValidateIgnore} {
					streamed, hits := compareLoads(t, name+", "+format, path, v, true)
					// A List that is not JSON is read whole, for the
					// general path to word the error.
					want := !tc.declined && (format == "yaml" || json.Valid(data))
					if streamed != 1 && want {
						t.Errorf("%s, %s: not streamed", format, v)
					}
					// 100 pods of one shape, read at least twice (streamed,
					// whole) by three workers at most, less this one and
					// the error's.
					if want && hits < 2*(100-3-2) && !t.Failed() {
						t.Errorf("%s, %s: the memo prepared %d pods, want more", format, v, hits)
					}
				}
			}
		})
	}
}

// inAtPod replaces in TestPodMemo's List the last old before the name of
// the pod the test changes (web-001-1, whose managed fields come before
// its name), where the memo reads it.
func inAtPod(data []byte, old, new string) []byte {
	at := bytes.Index(data, []byte(`"name": "web-001-1"`))
	i := bytes.LastIndex(data[:max(at, 0)], []byte(old))
	if at < 0 || i < 0 {
		return data
	}
	return append(append(append([]byte{}, data[:i]...), new...), data[i+len(old):]...)
}

// inAtPodYAML replaces in TestPodMemo's List, as YAML, the last old
// before the name of the pod the test changes.
func inAtPodYAML(data []byte, old, new string) []byte {
	at := bytes.Index(data, []byte("name: web-001-1\n"))
	i := bytes.LastIndex(data[:max(at, 0)], []byte(old))
	if at < 0 || i < 0 {
		return data
	}
	return append(append(append([]byte{}, data[:i]...), new...), data[i+len(old):]...)
}

// inAtPodStatus replaces in TestPodMemo's List the first old after the
// name of the pod the test changes: in its status.
func inAtPodStatus(data []byte, old, new string) []byte {
	at := bytes.Index(data, []byte(`"name": "web-001-1"`))
	i := bytes.Index(data[max(at, 0):], []byte(old))
	if at < 0 || i < 0 {
		return data
	}
	i += at
	return append(append(append([]byte{}, data[:i]...), new...), data[i+len(old):]...)
}

// addKeySeeds adds pairs of documents, alike or nearly, to f.
func addKeySeeds(f *testing.F) {
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"ns","uid":"u%s"},` +
		`"spec":{"nodeName":"%s","containers":[{"name":"c","image":"i"%s}]},"status":{"phase":"%s"}}`
	seed := func(a, b []string) {
		f.Add(fmt.Sprintf(pod, a[0], a[1], a[2], a[3], a[4]), fmt.Sprintf(pod, b[0], b[1], b[2], b[3], b[4]))
	}
	seed([]string{"a", "1", "n1", "", "Running"}, []string{"b", "2", "n2", "", "Pending"})
	seed([]string{"a", "1", "n1", "", "Running"}, []string{"a", "1", "n1", `,"volumeMounts":[]`, "Running"})
	seed([]string{"a", "1", "n1", `,"x":1`, "Running"}, []string{"a", "1", "n1", `,"y":1`, "Running"})
	seed([]string{"ab", "1", "n", "", "R"}, []string{"a", "b1", "n", "", "R"})
	f.Add(`{"metadata":{"name":"a"},"kind":"Pod"}`, `{"metadata":{"name":"a"},"kind":"Pod"} `)
	f.Add(`{"kind":"Pod","metadata":{"name":"a","uid":"b"}}`, `{"kind":"Pod","metadata":{"name":"ab","uid":""}}`)
	f.Add(`{"metadata":{"name": "x","uid":"y"}}`, `{"metadata":{"name":"x" ,"uid":"y"}}`)
	f.Add("{\"metadata\":{\"name\": \"x\",\"uid\":\"y\"}}", "{\"metadata\":{\"name\":\"x\"\x00,\"uid\":\"y\"}}")
}

// FuzzMatches holds matches, which reads a document along a template's
// key, to cut and makeKey: the same answer, and the same spans.
func FuzzMatches(f *testing.F) {
	addKeySeeds(f)
	f.Add(`{"kind":"Pod","metadata":{"name":"a"},"status":{}}`, `{"kind":"Pod","metadata":{"name":"a"},"status":{}`)
	f.Add(`{"kind":"Pod","metadata":{"name":"a"},"status":{}}`, `{"kind":"Pod","metadata":{"name":"a"},"status":{"a":"}"}}`)
	f.Add(`{"kind":"Pod","metadata":{"name":"a"},"status":{}}`, `{"kind":"Pod","metadata":{"name":"a"},"status":{}}}`)
	f.Add(`{"kind":"Pod","metadata":{"name":"a"},"status":1}`, `{"kind":"Pod","metadata":{"name":"a"},"status":1 2}`)
	f.Add(`{"kind":"Pod","metadata":{"name":"a"}}`, `{"kind":"Pod","metadata":{"name":}}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		var m podMemo
		// The memo makes templates only of documents that decode: JSON.
		if !json.Valid([]byte(a)) || !m.cut([]byte(a)) {
			return
		}
		tpl := &podTemplate{key: string(m.makeKey([]byte(a)))}
		for _, sp := range m.spans {
			tpl.fields = append(tpl.fields, sp.field)
		}
		want := m.cut([]byte(b)) && string(m.makeKey([]byte(b))) == tpl.key
		wantSpans := slices.Clone(m.spans)
		got := m.matches([]byte(b), tpl)
		if got != want || got && !slices.Equal(m.spans, wantSpans) {
			t.Fatalf("matches(%q, template of %q) = %v, spans %v; want %v, spans %v", b, a, got, m.spans, want, wantSpans)
		}
	})
}

// TestMemoPredictsTheNextShape: whether a workload's pods come one after
// the other or the workloads' pods in turn, a pod is found by the template
// that came after the last one the time before, or by the last one, not by
// its key in the map.
func TestMemoPredictsTheNextShape(t *testing.T) {
	doc := func(w, i int) []byte {
		return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"w%d-%d","namespace":"default","labels":{"app":"w%d"}},`+
			`"spec":{"nodeName":"n%d","containers":[{"name":"c","image":"image-%d"}]}}`, w, i, w, i, w)
	}
	const workloads, replicas = 3, 10
	for _, tc := range []struct {
		name string
		pods func(yield func(w, i int))
		// predicted is how many pods predict finds: all but the first
		// of each shape, and in turns but the first of the second turn.
		predicted int
	}{
		{"one workload after the other", func(yield func(w, i int)) {
			for w := range workloads {
				for i := range replicas {
					yield(w, i)
				}
			}
		}, workloads*replicas - workloads},
		{"in turns", func(yield func(w, i int)) {
			for i := range replicas {
				for w := range workloads {
					yield(w, i)
				}
			}
		}, workloads*replicas - workloads - 1},
	} {
		hits, predicted := 0, 0
		m := newTestMemo(&hits)
		tc.pods(func(w, i int) {
			raw := doc(w, i)
			p := prepared{}
			if tpl := m.predict(raw); tpl != nil {
				predicted++
				var ok bool
				if p, ok = m.fromTemplate(tpl, raw); !ok {
					t.Fatalf("%s: w%d-%d: not made from its template", tc.name, w, i)
				}
			} else {
				p = testPrepare(m, raw)
			}
			if got := podOf(p.obj); got.Name != fmt.Sprintf("w%d-%d", w, i) || got.Spec.Containers[0].Image != fmt.Sprintf("image-%d", w) {
				t.Fatalf("%s: w%d-%d prepared as %s with image %s", tc.name, w, i, got.Name, got.Spec.Containers[0].Image)
			}
		})
		if predicted != tc.predicted {
			t.Errorf("%s: %d pods predicted, want %d", tc.name, predicted, tc.predicted)
		}
	}
}

// TestMemoPausesAndResumes: after a trial of pods that share nothing, the
// memo prepares pods without looking them up for a while, then looks them
// up again and finds the shapes that came since.
func TestMemoPausesAndResumes(t *testing.T) {
	doc := func(i int, image string) []byte {
		return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p-%d","namespace":"default"},`+
			`"spec":{"nodeName":"n%d","containers":[{"name":"c","image":%q}]}}`, i, i%9, image)
	}
	hits := 0
	m := newTestMemo(&hits)
	i := 0
	for ; i < memoTrial; i++ {
		testPrepare(m, doc(i, fmt.Sprint("distinct-", i)))
	}
	if hits != 0 || m.trials.left != memoPause {
		t.Fatalf("after %d distinct pods: %d hits, pause %d; want 0, %d", i, hits, m.trials.left, memoPause)
	}
	const after = 600
	for range memoPause + after {
		p := testPrepare(m, doc(i, "shared"))
		if got := podOf(p.obj); got.Name != fmt.Sprint("p-", i) || got.Spec.Containers[0].Image != "shared" {
			t.Fatalf("pod %d prepared as %s, image %s", i, got.Name, got.Spec.Containers[0].Image)
		}
		i++
	}
	if hits != after-1 {
		t.Errorf("%d pods made from a template after the pause, want %d", hits, after-1)
	}
}

// TestMemoPodAllocations: a pod made from its template allocates only
// what it keeps of its own: its name, UID, resource version and node
// name, and its start time. A room for its containers' volume mounts,
// which it has none of, was a sixth object (2.8 MB for 150,000 pods).
func TestMemoPodAllocations(t *testing.T) {
	var docs [][]byte
	for i := range 1100 {
		docs = append(docs, fmt.Appendf(nil, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"w-%05d","namespace":"default","uid":"u-%05d","resourceVersion":"%d","labels":{"app":"w"}},`+
			`"spec":{"nodeName":"n%d","containers":[{"name":"c","image":"image"}]},"status":{"phase":"Running","startTime":"2026-01-01T00:00:%02dZ"}}`, i, i, i, i, i%60))
	}
	hits := 0
	m := newTestMemo(&hits)
	testPrepare(m, docs[0])
	testPrepare(m, docs[1])
	i := 2
	allocs := testing.AllocsPerRun(1000, func() {
		if p := testPrepare(m, docs[i]); !p.decoded() {
			t.Fatalf("pod %d: not prepared", i)
		}
		i++
	})
	if hits < 1000 {
		t.Fatalf("%d pods made from the template, want 1000 or more", hits)
	}
	if allocs > 5 {
		t.Errorf("a pod made from its template allocates %v objects, want 5 at most", allocs)
	}
}

// newTestMemo returns the pod memo of a lean worker of its own, counting
// its hits in hits.
func newTestMemo(hits *int) *podMemo {
	w := &fastWorker{lean: true, duplicates: true, scratch: yamlScratch{}}
	w.memo = newPodMemo(w, hits)
	return w.memo
}

// testPrepare prepares raw through the memo m, or as the general path
// does where it declines.
func testPrepare(m *podMemo, raw []byte) prepared {
	if p, ok := m.prepare(raw); ok {
		return p
	}
	return prepare(raw, true)
}
