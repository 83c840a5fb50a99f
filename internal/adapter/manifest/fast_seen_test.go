package manifest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestObjectIndex holds objectIndex to a map: over sequences of keys in
// order (as an API server lists them), in reverse, shuffled, in order with
// a few out of it, and in order again after a first run (a second file),
// each with repeats, add reports a repeat exactly when the map has the key,
// with the source the map has.
func TestObjectIndex(t *testing.T) {
	// Namespaces one of which begins another: "default" sorts after
	// "default-x" as a key ("default/..." against "default-x/...").
	namespaces := []string{"", "default", "default-x", "kube-system", "a", "a-b", "ab"}
	var keys []objectKey
	for _, kind := range []string{"Pod", "Node"} {
		for i := range 3 * indexBlock {
			ns := namespaces[i%len(namespaces)]
			if kind == "Node" {
				ns = ""
			}
			keys = append(keys, objectKey{kind: kind, namespace: ns, name: fmt.Sprintf("obj-%d", i*7%(3*indexBlock))})
		}
	}
	keys = slices.CompactFunc(sortedKeys(keys), func(a, b objectKey) bool { return a == b })
	rng := rand.New(rand.NewPCG(1, 2))
	orders := map[string]func() []objectKey{
		"in order": func() []objectKey { return slices.Clone(keys) },
		"reversed": func() []objectKey { k := slices.Clone(keys); slices.Reverse(k); return k },
		"shuffled": func() []objectKey {
			k := slices.Clone(keys)
			rng.Shuffle(len(k), func(i, j int) { k[i], k[j] = k[j], k[i] })
			return k
		},
		"in order, a few out of it": func() []objectKey {
			k := slices.Clone(keys)
			for range 20 {
				i, j := rng.IntN(len(k)), rng.IntN(len(k))
				k[i], k[j] = k[j], k[i]
			}
			return k
		},
		"in order twice, halves": func() []objectKey {
			var odd, even []objectKey
			for i, key := range keys {
				if i%2 == 0 {
					even = append(even, key)
				} else {
					odd = append(odd, key)
				}
			}
			return append(even, odd...)
		},
	}
	for name, order := range orders {
		t.Run(name, func(t *testing.T) {
			seq := order()
			// Repeats: some keys again, at random places, some of them
			// right after themselves.
			for range 200 {
				i := rng.IntN(len(seq))
				at := min(i+rng.IntN(3), len(seq))
				seq = slices.Insert(seq, at, seq[i])
			}
			var x objectIndex
			want := map[objectKey]source{}
			for i, key := range seq {
				at := source{path: "f", item: i + 1}
				prev, dup := x.add(key, at)
				wantPrev, wantDup := want[key]
				if dup != wantDup || prev != wantPrev {
					t.Fatalf("add %v (%d): %v, %v; want %v, %v", key, i, prev, dup, wantPrev, wantDup)
				}
				if !wantDup {
					want[key] = at
				}
			}
			if name == "in order" {
				for kind, k := range x.kinds {
					if len(k.others) > 0 {
						t.Errorf("%d %s objects listed in order were taken as out of it", len(k.others), kind)
					}
				}
			}
		})
	}
}

// sortedKeys sorts keys by kind, then as an API server lists a kind.
func sortedKeys(keys []objectKey) []objectKey {
	slices.SortFunc(keys, func(a, b objectKey) int {
		if c := strings.Compare(a.kind, b.kind); c != 0 {
			return c
		}
		return strings.Compare(a.namespace+"/"+a.name, b.namespace+"/"+b.name)
	})
	return keys
}

// FuzzCompareJoined: compareJoined compares as strings.Compare does the
// concatenations.
func FuzzCompareJoined(f *testing.F) {
	f.Add("default", "a", "default-x", "a")
	f.Add("a", "b/c", "a/b", "c")
	f.Add("", "x", "", "")
	f.Fuzz(func(t *testing.T, a1, a2, b1, b2 string) {
		want := strings.Compare(a1+"/"+a2, b1+"/"+b2)
		if got := compareJoined([3]string{a1, "/", a2}, [3]string{b1, "/", b2}); got != want {
			t.Errorf("compareJoined(%q/%q, %q/%q) = %d, want %d", a1, a2, b1, b2, got, want)
		}
	})
}

// TestObjectIndexInOrderAllocations: objects read in order cost no
// allocation but their share of a block's (one every indexBlock objects,
// which AllocsPerRun's average rounds to 0).
func TestObjectIndexInOrderAllocations(t *testing.T) {
	const n = 10 * indexBlock
	names := make([]string, n+1)
	for i := range names {
		names[i] = fmt.Sprintf("pod-%08d", i)
	}
	var x objectIndex
	i := 0
	allocs := testing.AllocsPerRun(n, func() {
		x.add(objectKey{kind: "Pod", namespace: "default", name: names[i]}, source{path: "f", item: i})
		i++
	})
	if allocs != 0 {
		t.Errorf("%v allocations an object read in order, want 0", allocs)
	}
}
