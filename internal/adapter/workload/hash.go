package workload

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/dump"
)

// podTemplateHash is a Deployment's pod-template-hash, as upstream's
// controller.ComputeHash computes it: FNV-1a over the template printed
// for hashing, then the collision count, encoded without vowels.
func podTemplateHash(t *v1.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	_, _ = fmt.Fprintf(h, "%v", dump.ForHash(*t))
	if collisionCount != nil {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, uint32(*collisionCount))
		_, _ = h.Write(b)
	}
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// revisionHash is the hash of the ControllerRevision a StatefulSet or a
// DaemonSet controller records for obj (history.HashControllerRevision):
// FNV-1 over the patch that replaces the object's pod template.
func revisionHash(obj any) (string, error) {
	patch, err := templatePatch(obj)
	if err != nil {
		return "", err
	}
	h := fnv.New32()
	_, _ = h.Write(patch)
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32())), nil
}

// templatePatch is the revision's data: {"spec":{"template":{...,
// "$patch":"replace"}}}, from obj as JSON.
func templatePatch(obj any) ([]byte, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var raw struct {
		Spec struct {
			Template map[string]any `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	t := raw.Spec.Template
	if t == nil {
		t = map[string]any{}
	}
	t["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": t}})
}

// revisionName is a ControllerRevision's name: the owner's, cut to 223
// characters, and the hash.
func revisionName(owner, hash string) string {
	if len(owner) > 223 {
		owner = owner[:223]
	}
	return owner + "-" + hash
}
