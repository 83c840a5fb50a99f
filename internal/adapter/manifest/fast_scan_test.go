package manifest

import (
	"encoding/json"
	"testing"
)

func TestSkipValue(t *testing.T) {
	tests := map[string]struct {
		data string
		want int // index past the value, -1 for none
	}{
		"string":                 {data: `"abc" x`, want: 5},
		"escaped quote":          {data: `"a\"b" x`, want: 6},
		"escaped backslash":      {data: `"a\\" x`, want: 5},
		"backslash then quote":   {data: `"a\\\"" x`, want: 7},
		"object with brackets":   {data: `{"a": "}]", "b": [1, {"c": "{"}]} tail`, want: 33},
		"nested":                 {data: ` [[[]], {}]`, want: 11},
		"number":                 {data: `-1.5e3,`, want: 6},
		"literal at end":         {data: `true`, want: 4},
		"unclosed object":        {data: `{"a": 1`, want: -1},
		"unclosed string":        {data: `"abc`, want: -1},
		"unclosed string inside": {data: `{"a": "b}`, want: -1},
		"delimiter":              {data: `, 1`, want: -1},
		"empty":                  {data: `  `, want: -1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := skipValue([]byte(tc.data), 0); got != tc.want {
				t.Errorf("skipValue(%q) = %d, want %d", tc.data, got, tc.want)
			}
		})
	}
}

// skipValueByByte is skipValue as it was written first, a byte at a
// time: FuzzSkipValue holds the faster one to it.
func skipValueByByte(data []byte, i int) int {
	i = skipSpace(data, i)
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		for i++; i < len(data); i++ {
			switch data[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return -1
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				for i++; i < len(data) && data[i] != '"'; i++ {
					if data[i] == '\\' {
						i++
					}
				}
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	case '}', ']', ',', ':':
		return -1
	}
	if !literalByte[data[i]] {
		return -1
	}
	for ; i < len(data); i++ {
		if !literalByte[data[i]] {
			return i
		}
	}
	return i
}

func FuzzSkipValue(f *testing.F) {
	for _, s := range []string{`"a"`, `"a\"b"`, `"a\\"`, `"a\\\"b" x`, `{"a": [1, {"b": "}"}]}`, `[1, 2`, "{\n        \"a\": [\n                1,  \"x\"\n        ]\n}", `{"a\\": "\\\\"}`, `"\`, `["\\\\\"]"]`, ` 12, 3`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := skipValue(data, 0), skipValueByByte(data, 0); got != want {
			t.Fatalf("skipValue(%q) = %d, byte by byte %d", data, got, want)
		}
	})
}

// BenchmarkSkipValue skips a List of pods and nodes as kubectl writes
// them, indented: skipValue, and the byte-by-byte walk it replaced.
func BenchmarkSkipValue(b *testing.B) {
	data, err := json.MarshalIndent(kubectlSnapshot(20, 10), "", "    ")
	if err != nil {
		b.Fatal(err)
	}
	for _, skip := range []struct {
		name string
		f    func([]byte, int) int
	}{{"skipValue", skipValue}, {"byte-by-byte", skipValueByByte}} {
		b.Run(skip.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if skip.f(data, 0) != len(data) {
					b.Fatal("not skipped whole")
				}
			}
		})
	}
}
