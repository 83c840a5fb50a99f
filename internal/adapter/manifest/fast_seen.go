package manifest

import (
	"slices"
	"strings"
)

// objectIndex finds an object defined twice: it remembers where each
// object was read, by kind, namespace and name.
//
// An API server lists the objects of a kind in the order of their keys
// (namespace, "/", name), and `kubectl get -o json|yaml` writes them so:
// objects of a kind read in increasing order cannot repeat one another,
// and are only appended to a list of blocks (about 64 bytes an object,
// where a map took 150, and no hashing). An object read out of that order
// is looked up in the list by binary search, and remembered in a map.
type objectIndex struct {
	kinds map[string]*kindIndex
}

// kindIndex is where the objects of one kind were read.
type kindIndex struct {
	// inOrder are the objects read in increasing order of their keys,
	// in blocks of indexBlock (a block is never copied to grow).
	inOrder [][]indexEntry
	// others are those read out of that order.
	others map[objectKey]source
}

// indexEntry is an object read in order, and where.
type indexEntry struct {
	namespace, name string
	at              source
}

// indexBlock is how many objects a block of kindIndex.inOrder holds.
const indexBlock = 1024

// add remembers that key was read at at, and returns where it was read
// before, if it was.
func (x *objectIndex) add(key objectKey, at source) (prev source, dup bool) {
	if x.kinds == nil {
		x.kinds = map[string]*kindIndex{}
	}
	k := x.kinds[key.kind]
	if k == nil {
		k = &kindIndex{}
		x.kinds[key.kind] = k
	}
	return k.add(key.namespace, key.name, at)
}

// add is objectIndex.add for an object of k's kind.
func (k *kindIndex) add(namespace, name string, at source) (prev source, dup bool) {
	// A key after the last one read in order is after every one read
	// out of order too (each was before one read in order then).
	if n := len(k.inOrder); n == 0 || k.lastEntry().compare(namespace, name) < 0 {
		if n == 0 || len(k.inOrder[n-1]) == indexBlock {
			k.inOrder = append(k.inOrder, make([]indexEntry, 0, indexBlock))
			n++
		}
		k.inOrder[n-1] = append(k.inOrder[n-1], indexEntry{namespace: namespace, name: name, at: at})
		return source{}, false
	}
	if prev, dup := k.find(namespace, name); dup {
		return prev, true
	}
	key := objectKey{namespace: namespace, name: name}
	if prev, dup := k.others[key]; dup {
		return prev, true
	}
	if k.others == nil {
		k.others = map[objectKey]source{}
	}
	k.others[key] = at
	return source{}, false
}

// lastEntry is the object read in order last; there is one.
func (k *kindIndex) lastEntry() *indexEntry {
	b := k.inOrder[len(k.inOrder)-1]
	return &b[len(b)-1]
}

// find looks the object up among those read in order.
func (k *kindIndex) find(namespace, name string) (source, bool) {
	// The first block whose last object is not before the key.
	i, _ := slices.BinarySearchFunc(k.inOrder, 0, func(b []indexEntry, _ int) int {
		return b[len(b)-1].compare(namespace, name)
	})
	if i == len(k.inOrder) {
		return source{}, false
	}
	b := k.inOrder[i]
	j, found := slices.BinarySearchFunc(b, 0, func(e indexEntry, _ int) int { return e.compare(namespace, name) })
	if !found {
		return source{}, false
	}
	return b[j].at, true
}

// compare compares e's key with namespace and name's, as an API server
// orders them: namespace + "/" + name, byte by byte.
func (e *indexEntry) compare(namespace, name string) int {
	if e.namespace == namespace {
		return strings.Compare(e.name, name)
	}
	return compareJoined([3]string{e.namespace, "/", e.name}, [3]string{namespace, "/", name})
}

// compareJoined compares the concatenations of a's and b's pieces, byte by
// byte, without making them.
func compareJoined(a, b [3]string) int {
	i, j := 0, 0
	for {
		for i < len(a) && a[i] == "" {
			i++
		}
		for j < len(b) && b[j] == "" {
			j++
		}
		switch {
		case i == len(a) && j == len(b):
			return 0
		case i == len(a):
			return -1
		case j == len(b):
			return 1
		}
		n := min(len(a[i]), len(b[j]))
		if c := strings.Compare(a[i][:n], b[j][:n]); c != 0 {
			return c
		}
		a[i], b[j] = a[i][n:], b[j][n:]
	}
}
