package workload

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand/v2"

	"k8s.io/apimachinery/pkg/types"
)

// Namer draws what the API server draws at random for new objects:
// generated names (metadata.generateName and five characters) and UIDs.
// A draw depends only on the seed, what is named and how many were named
// so before: the names of one workload's pods do not change when other
// objects are added before it.
type Namer struct {
	seed  uint64
	drawn map[string]int
	taken map[string]bool
}

// NewNamer returns a Namer drawing from seed.
func NewNamer(seed uint64) *Namer {
	return &Namer{seed: seed, drawn: map[string]int{}, taken: map[string]bool{}}
}

// maxGeneratedNameLength is how much of a generateName the API server
// keeps (names.MaxGeneratedNameLength): 63 less the random suffix.
const (
	randomLength           = 5
	maxGeneratedNameLength = 63 - randomLength
)

// alphanums are the characters of a generated suffix (utilrand.String's:
// no vowels, no confusable digits).
const alphanums = "bcdfghjklmnpqrstvwxz2456789"

// GenerateName returns a name for an object of namespace with
// metadata.generateName prefix, as the API server's SimpleNameGenerator
// makes it (the prefix cut to 58 characters, five random ones added),
// never one it returned before.
func (n *Namer) GenerateName(namespace, prefix string) string {
	if len(prefix) > maxGeneratedNameLength {
		prefix = prefix[:maxGeneratedNameLength]
	}
	for {
		r := n.rand("name", namespace, prefix)
		b := make([]byte, randomLength)
		for i := range b {
			b[i] = alphanums[r.IntN(len(alphanums))]
		}
		name := prefix + string(b)
		if key := namespace + "/" + name; !n.taken[key] {
			n.taken[key] = true
			return name
		}
	}
}

// UID returns a UID for the object kind namespace/name, as a random
// (version 4) UUID.
func (n *Namer) UID(kind, namespace, name string) types.UID {
	r := n.rand("uid", kind, namespace+"/"+name)
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], r.Uint64())
	binary.LittleEndian.PutUint64(b[8:], r.Uint64())
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:]))
}

// rand returns the source of the next draw for parts.
func (n *Namer) rand(parts ...string) *rand.Rand {
	h := fnv.New64a()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	key := string(h.Sum(nil))
	i := n.drawn[key]
	n.drawn[key] = i + 1
	return rand.New(rand.NewPCG(n.seed, h.Sum64()+uint64(i)))
}
