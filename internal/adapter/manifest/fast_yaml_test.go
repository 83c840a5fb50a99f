package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// FuzzFastYAML: wherever the fast converter answers, it answers what
// sigs.k8s.io/yaml does (the same JSON tokens, keys in the same order), and
// the strict conversion accepts the document.
func FuzzFastYAML(f *testing.F) {
	seeds := []string{
		"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels:\n    app: web\nspec:\n  containers:\n  - name: c\n    image: img:1\n    ports:\n    - containerPort: 8080\n    args: ['a''b', \"c\"]\n",
		"a: |\n  line one\n   indented\n\n  last\nb: |-\n  x\nc: ~\nd: 10.0.0.1\ne: 100m\nf: 0755\ng: yes\nh: 1e3\ni: 2026-01-01\nj: -5\nk: {}\nl: []\n",
		"- a\n- - b\n- c: d\n  e: f\n-\n  g: h\n",
		"key: value # comment\nother: \"q\\\"uote\"\n",
		"a: &x 1\nb: *x\n",
		"a:\n- 1\n- 2\nb: c:d\n",
		// Cases the fuzzer found: a key with trailing space, a literal
		// block without a final line break.
		"A :", "A :\n", "A: |\n 0", "A: |\n 0\n",
		"b1: 0b1c2d3e\nb2: 0b+1\nb3: 0b\nb4: 0b_1\nb5: 0b-0\nb6: 0b2\nb7: 0b11111111111111111111111111111111111111111111111111111111111111111\nb8: 0B1\n",
		// Flow collections on one line.
		"r: {cpu: 100m, memory: 1Gi}\nl: {app: a1}\ns: [a, 'b''c', \"d\", 10, -3, true, ~, null, {}, [x, [z]]]\nm: {\"k\": {'q': v}}\n",
		"- {a: 1, b: [2, 3]}\n- [ a ,b ]\n- {a: 1, a: 2}\n- {a: 1,}\n- [a: b]\n- {a: b c}\n- {a: yes}\n- {a: 1.5}\n- {a: x:y}\n- {a: }\n- {a:b}\n",
		"a: {b: c}  # comment\nb: {c: d,\n  e: f}\nc: [a #b]\nd: [\"a\"b]\ne: {0x1: a}\nf: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[x]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
		// Keys out of order, which the generic converter writes in order.
		"kind: Pod\nmetadata:\n  name: p\n  labels: {z: \"1\", b: \"2\", a: {y: 1, x: 2}}\napiVersion: v1\n",
		"uid: 6f1e0c2a-0000-4000-8000-000000000001\nboot: 0b1c2d3e\nhex: 0x1F\nbin: 0b101\nu: 1_000\nf: 1.5e3\nd: 2026-01-01T00:00:00Z\nbig: 99999999999999999999\noct: 0755\ne: 6e2\nx: 6e\nv: 1.2.3\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	items := kubectlSnapshot(1, 1)["items"].([]any)
	f.Add(mustYAML(f, items[0]))
	f.Add(mustYAML(f, items[1]))
	f.Fuzz(func(t *testing.T, doc []byte) {
		fast, ok := fastYAMLToJSON(doc)
		if !ok {
			return
		}
		generic, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatalf("fast converter accepts what the generic one refuses (%v): %s", err, fast)
		}
		if _, err := yaml.YAMLToJSONStrict(doc); err != nil {
			t.Fatalf("fast converter accepts what the strict one refuses (%v)", err)
		}
		// The same tokens in the same order: keys too, which a decoder
		// meets in their order (its errors and warnings come so).
		a, err := jsonTokens(fast)
		if err != nil {
			t.Fatalf("fast converter wrote invalid JSON %s: %v", fast, err)
		}
		b, err := jsonTokens(generic)
		if err != nil {
			t.Fatal(err)
		}
		if !cmp.Equal(a, b) {
			t.Fatalf("fast %s\ngeneric %s", fast, generic)
		}
	})
}

// TestFastYAMLFlow: the flow collections the fast converter reads give
// the generic converter's JSON, and those it does not read decline.
func TestFastYAMLFlow(t *testing.T) {
	tests := []struct {
		doc  string
		read bool
	}{
		{"r: {cpu: 100m, memory: 1Gi}\n", true},
		{"s: [a, 'b''c', \"d\", 10, -3, true, ~, null, {}, [x, [z]]]\n", true},
		{"m: {\"k\": {'q': v}, l: []}\n", true},
		{"- {a: 1, b: [2, 3]}\n- [ a ,b ]\n", true},
		{"a: {a: 1, a: 2}\n", false}, // a duplicate key: the generic path names it
		{"a: {a: 1,}\n", false},
		{"a: [a: b]\n", false},
		{"a: {a: b c}\n", false},
		{"a: {a: yes}\n", false},
		{"a: {a: 1.5}\n", false},
		{"a: {a: x:y}\n", false},
		{"a: {a: }\n", false},
		{"a: {a:b}\n", false},
		{"a: {b: c}  # comment\n", false},
		{"a: {b: c,\n  d: e}\n", false},
		{"a: [\"a\"b]\n", false},
		{"a: " + strings.Repeat("[", maxFlowDepth+1) + "x" + strings.Repeat("]", maxFlowDepth+1) + "\n", false},
	}
	for _, tt := range tests {
		fast, ok := fastYAMLToJSON([]byte(tt.doc))
		if ok != tt.read {
			t.Errorf("%q: read %v, want %v", tt.doc, ok, tt.read)
			continue
		}
		if !ok {
			continue
		}
		generic, err := yaml.YAMLToJSON([]byte(tt.doc))
		if err != nil {
			t.Fatalf("%q: %v", tt.doc, err)
		}
		var a, b any
		if err := json.Unmarshal(fast, &a); err != nil {
			t.Fatalf("%q: fast wrote %s: %v", tt.doc, fast, err)
		}
		if err := json.Unmarshal(generic, &b); err != nil {
			t.Fatal(err)
		}
		if !cmp.Equal(a, b) {
			t.Errorf("%q: fast %s, generic %s", tt.doc, fast, generic)
		}
	}
}

// BenchmarkFastYAML converts the pods of a kubectl List, one by one, as a
// streaming worker does (its scratch and block memo).
func BenchmarkFastYAML(b *testing.B) {
	items := kubectlSnapshot(10, 10)["items"].([]any)
	var docs [][]byte
	for _, item := range items {
		docs = append(docs, mustYAML(b, item))
	}
	scratch := yamlScratch{}
	var size int64
	for _, d := range docs {
		size += int64(len(d))
	}
	b.SetBytes(size)
	for b.Loop() {
		for _, d := range docs {
			out, ok := fastYAMLToJSONWith(d, &scratch)
			if !ok {
				b.Fatalf("declined:\n%s", d)
			}
			scratch.recycle(out)
		}
	}
}

// printableByByte is printable a byte at a time: FuzzPrintable holds the
// word-at-a-time one to it.
func printableByByte(doc []byte) bool {
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		switch {
		case c >= 0x20 && c < 0x7f:
		case c == '\t' || c == '\n' || c == '\r':
		case c < 0x20 || c == 0x7f:
			return false
		case c == 0xc2 && i+1 < len(doc) && doc[i+1] >= 0x80 && doc[i+1] <= 0xa0:
			return false
		case c == 0xe2 && i+2 < len(doc) && doc[i+1] == 0x80 && (doc[i+2] == 0xa8 || doc[i+2] == 0xa9):
			return false
		case c == 0xef && i+2 < len(doc) && doc[i+1] == 0xbb && doc[i+2] == 0xbf:
			return false
		case c == 0xef && i+2 < len(doc) && doc[i+1] == 0xbf && (doc[i+2] == 0xbe || doc[i+2] == 0xbf):
			return false
		}
	}
	return true
}

func FuzzPrintable(f *testing.F) {
	for _, s := range []string{"", "abcdefgh", "abcdefghi\x7f", "abcdefg\x1f", "12345678\u0085", "aaaaaaaa\u2028bbbbbbbb", "\ufeffaaaaaaaaaa", "aaaaaaa\u00e9aaaaaaaa", "aaaaaaaa\x00", "~~~~~~~~ \t\n\r", "\xff\xff\xff\xff\xff\xff\xff\xff",
		"abc\ndefg\nhijklmno", "\n\n\n\n\n\n\n\n", "aaa\n\x0baaaa", "aaaaaaa\n\x0b", "\x0a\x0b\x0c\x0d\x0e\x09\x0a\x0a", "a\n\x7fa\naaaa", "\x0a\x8a\x0a\x0a\x0a\x0a\x0a\x0a"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if got, want := printable(doc), printableByByte(doc); got != want {
			t.Fatalf("printable(%q) = %v, byte by byte %v", doc, got, want)
		}
	})
}

// jsonTokens returns the tokens of the JSON value data, numbers as they
// are written.
func jsonTokens(data []byte) ([]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tokens []any
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return tokens, nil
		}
		if err != nil {
			return nil, err
		}
		tokens = append(tokens, tok)
	}
}
