package manifest

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// yamlBlockSeeds are pairs of documents: the second converted after the
// first, remembering blocks, must convert as it does alone.
var yamlBlockSeeds = [][2]string{
	{"metadata:\n  labels:\n    app: web\n  name: a\nspec:\n  containers:\n  - name: c\n    image: i\n  nodeName: n1\n",
		"metadata:\n  labels:\n    app: web\n  name: b\nspec:\n  containers:\n  - name: c\n    image: i\n  nodeName: n2\n"},
	// The same block lines, ending otherwise: a sequence at the key's
	// indentation after a nested mapping.
	{"a:\n  b:\n    c: d\n  e: f\n", "a:\n  b:\n    c: d\n  - x\n"},
	{"a:\n  b:\n  - c\n  - d\n  e: f\n", "a:\n  b:\n  - c\n  - d\n"},
	{"a:\n  b:\n    c: d\n\n  e: f\n", "a:\n  b:\n    c: d\n\n"},
	{"- a:\n    b:\n      c: d\n", "- a:\n    b:\n      c: d\n    e: 1\n"},
	{"a:\n  b: |\n    x\n  c: d\n", "a:\n  b: |\n    x\n  c: e\n"},
	{"a:\n  b:\n    c: yes\n", "a:\n  b:\n    c: yes\n"},
}

// FuzzYAMLBlocks: a document converted after another by a converter that
// remembers blocks converts as it does alone.
func FuzzYAMLBlocks(f *testing.F) {
	for _, s := range yamlBlockSeeds {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	items := kubectlSnapshot(1, 2)["items"].([]any)
	f.Add(mustYAML(f, items[1]), mustYAML(f, items[2]))
	f.Fuzz(func(t *testing.T, first, second []byte) { checkYAMLBlocks(t, first, second) })
}

// TestYAMLBlocks runs the fuzzer's seeds, and checks that the pods of a
// List as kubectl writes them are converted from remembered blocks.
func TestYAMLBlocks(t *testing.T) {
	for _, s := range yamlBlockSeeds {
		checkYAMLBlocks(t, []byte(s[0]), []byte(s[1]))
	}
	items := kubectlSnapshot(1, 3)["items"].([]any)
	a, b := mustYAML(t, items[1]), mustYAML(t, items[2])
	scratch := yamlScratch{blocks: newYAMLBlocks()}
	if _, ok := fastYAMLToJSONWith(a, &scratch); !ok {
		t.Fatalf("the pod does not convert:\n%s", a)
	}
	if len(scratch.blocks.json) < 3 {
		t.Errorf("%d blocks remembered, want the pod's labels, owner references, containers and more", len(scratch.blocks.json))
	}
	checkYAMLBlocks(t, a, b)
}

// checkYAMLBlocks converts second alone and after first with a converter
// that remembers blocks, and fails on any difference.
func checkYAMLBlocks(t *testing.T, first, second []byte) {
	t.Helper()
	alone, okAlone := fastYAMLToJSON(second)
	if okAlone {
		alone = bytes.Clone(alone)
	}
	scratch := yamlScratch{blocks: newYAMLBlocks()}
	_, _ = fastYAMLToJSONWith(first, &scratch)
	after, okAfter := fastYAMLToJSONWith(second, &scratch)
	if okAlone != okAfter || okAlone && !bytes.Equal(alone, after) {
		t.Fatalf("%q after %q: converted %v %s, alone %v %s", second, first, okAfter, after, okAlone, alone)
	}
	if strings.Contains(string(after), "\x00") {
		t.Fatalf("NUL in %s", after)
	}
}

// TestYAMLBlocksPauseAndResume: after a trial of blocks that were never
// alike, blocks are converted without a lookup for a while, then looked up
// again.
func TestYAMLBlocksPauseAndResume(t *testing.T) {
	scratch := yamlScratch{blocks: newYAMLBlocks()}
	convert := func(doc string) {
		t.Helper()
		out, ok := fastYAMLToJSONWith([]byte(doc), &scratch)
		if !ok {
			t.Fatalf("%q does not convert", doc)
		}
		scratch.recycle(out)
	}
	for i := range yamlBlocksTrial {
		convert(fmt.Sprintf("a:\n  b:\n    c: d%d\n", i))
	}
	b := scratch.blocks
	if b.trials.left != yamlBlocksPause {
		t.Fatalf("pause %d after a trial of distinct blocks, want %d", b.trials.left, yamlBlocksPause)
	}
	for range yamlBlocksPause + 10 {
		convert("a:\n  b:\n    c: same\n")
	}
	if b.trials.left != 0 || b.trials.found != 9 {
		t.Errorf("after the pause: pause %d, %d blocks found; want 0, 9", b.trials.left, b.trials.found)
	}
}
