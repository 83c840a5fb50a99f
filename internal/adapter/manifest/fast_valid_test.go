package manifest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzValidValue holds validValue to encoding/json: a document is one
// value validValue accepts, with only space after it, exactly when
// json.Valid accepts it (but for nesting deeper than validValue follows).
func FuzzValidValue(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`, `"a\u00e9\n"`, `"\x"`,
		`-0.5e+10`, `01`, `1.`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `[true,false,null]`, `tru`, `"` + "\x01" + `"`,
		`{"k:{\"uid\":\"x\"}":{}}`, " [ 1 , 2 ] ", `"\ud800"`, "\"\xff\"", `{1:2}`, `[}`, `-`, `1e`, `[[[[]]]]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		end := validValue(data, 0)
		got := end >= 0 && onlySpaceAfter(data, end)
		want := json.Valid(data)
		deep := bytes.Count(data, []byte("["))+bytes.Count(data, []byte("{")) > maxValidDepth
		if got != want && !(deep && want) {
			t.Fatalf("validValue(%q) = %d (%v), json.Valid %v", data, end, got, want)
		}
		if end >= 0 && !json.Valid(data[:end]) {
			t.Fatalf("validValue(%q) = %d, but the value is not JSON", data, end)
		}
	})
}

func TestValidValueDepth(t *testing.T) {
	for _, tt := range []struct {
		depth int
		want  bool
	}{{maxValidDepth, true}, {maxValidDepth + 1, false}} {
		doc := []byte(strings.Repeat("[", tt.depth) + strings.Repeat("]", tt.depth))
		if got := validValue(doc, 0) == len(doc); got != tt.want {
			t.Errorf("depth %d: accepted = %v, want %v", tt.depth, got, tt.want)
		}
	}
}
