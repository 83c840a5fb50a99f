package loader

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
)

// quoted returns the value of a quoted scalar that is the whole of s: a
// double-quoted one without escapes, or a single-quoted one.
func quoted(s []byte) (string, bool) {
	if len(s) < 2 || s[len(s)-1] != s[0] {
		return "", false
	}
	in := s[1 : len(s)-1]
	if s[0] == '"' {
		if bytes.ContainsAny(in, "\"\\") {
			return "", false
		}
		return string(in), true
	}
	v := bytes.ReplaceAll(in, []byte("''"), []byte("'"))
	if bytes.IndexByte(bytes.ReplaceAll(in, []byte("''"), nil), '\'') >= 0 {
		return "", false
	}
	return string(v), true
}

// isDecimalInt: 0, or digits with an optional minus and no leading zero,
// short enough for an int64 — what YAML 1.1 and JSON read alike.
func isDecimalInt(s []byte) bool {
	d := s
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 18 || d[0] == '0' && len(d) > 1 {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isPlainString reports whether a plain scalar can only be a string:
// it starts like no other kind of node, contains no comment or mapping
// indicator, is not one of YAML 1.1's spellings of booleans and nulls,
// and, when it starts like a number, contains what no number or timestamp
// contains.
func isPlainString(s []byte) bool {
	c := s[0]
	switch {
	case c == '.' && len(s) == 1:
		// "." alone, as managed fields name a map itself: not a float
		// (nor .inf or .nan) to go-yaml v2.
		return true
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '/', c == '_':
		if len(s) <= len("false") {
			// Lower-cased as strings.ToLower would (the words are ASCII:
			// no other letter lower-cases to one of theirs).
			var lower [len("false")]byte
			for i, b := range s {
				if b >= 'A' && b <= 'Z' {
					b += 'a' - 'A'
				}
				lower[i] = b
			}
			switch string(lower[:len(s)]) {
			case "y", "yes", "n", "no", "on", "off", "true", "false", "null":
				return false
			}
		}
	case c >= '0' && c <= '9':
		if !notNumeric(s) {
			return false
		}
	default:
		return false
	}
	if s[len(s)-1] == ':' {
		return false
	}
	// No ": " (a mapping) nor " #" (a comment) inside, nor either with a
	// tab for the space (YAML's white space is both).
	for i := 0; i+1 < len(s); i++ {
		if s[i] == ':' && isYAMLWhite(s[i+1]) || isYAMLWhite(s[i]) && s[i+1] == '#' {
			return false
		}
	}
	return true
}

// notNumeric reports whether a plain scalar starting with a digit
// resolves to a string under YAML 1.1 as go-yaml v2 resolves it (the
// resolver sigs.k8s.io/yaml uses): not a timestamp (it never starts with
// four digits and a dash), and neither an integer in any base nor a float,
// underscores removed.
func notNumeric(s []byte) bool {
	if len(s) >= 5 && isDigits(s[:4]) && s[4] == '-' {
		return false
	}
	plain := strings.ReplaceAll(string(s), "_", "")
	if !integerChars(plain) {
		// Neither ParseInt nor ParseUint would read it (and their errors
		// allocate).
		return !yamlFloat(plain) && !yamlBinary(plain)
	}
	if _, err := strconv.ParseInt(plain, 0, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		return false
	}
	if _, err := strconv.ParseUint(plain, 0, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		return false
	}
	return !yamlFloat(plain) && !yamlBinary(plain)
}

// yamlBinary reports whether go-yaml v2 could read plain, which starts
// with a digit, as a binary integer: "0b" then what strconv.ParseInt reads
// in base 2 (a sign and binary digits; those too large too, to be safe).
func yamlBinary(plain string) bool {
	rest, ok := strings.CutPrefix(plain, "0b")
	if !ok {
		return false
	}
	if len(rest) > 0 && (rest[0] == '+' || rest[0] == '-') {
		rest = rest[1:]
	}
	if rest == "" {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] != '0' && rest[i] != '1' {
			return false
		}
	}
	return true
}

// integerChars reports whether s has only characters an integer of any
// base strconv reads can hold (digits, hex digits, base prefixes, signs).
func integerChars(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F',
			c == 'x', c == 'X', c == 'o', c == 'O', c == '+', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

func isDigits(s []byte) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// yamlFloat matches go-yaml v2's float syntax for a scalar starting with a
// digit: digits, an optional fraction, an optional exponent.
func yamlFloat(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

// appendJSONString appends s as a JSON string.
func appendJSONString[S string | []byte](out []byte, s S) []byte {
	const hex = "0123456789abcdef"
	out = append(out, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		out = append(out, s[start:i]...)
		switch c {
		case '"', '\\':
			out = append(out, '\\', c)
		case '\n':
			out = append(out, '\\', 'n')
		case '\t':
			out = append(out, '\\', 't')
		default:
			out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	out = append(out, s[start:]...)
	return append(out, '"')
}

// plainWord reports whether each byte of w is printable ASCII (0x20 to
// 0x7e) or \n. Each test is made on the low seven bits of each byte plus
// a constant below 0x80, so that no carry crosses into the next byte.
func plainWord(w uint64) bool {
	const low7, high = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	atLeast20 := (w&low7 + 0x6060606060606060) & high // 0x20 or more
	del := (w&low7 + 0x0101010101010101) & high       // 0x7f (or 0xff)
	x := w ^ 0x0a0a0a0a0a0a0a0a
	newline := ^((x&low7 + low7) | x) & high // exactly \n
	return w&high == 0 && del == 0 && (^atLeast20&high)&^newline == 0
}

// printable reports whether doc holds only what YAML allows unescaped and
// breaks lines only with \n and \r\n: no C0 or C1 controls but tab and
// line breaks, no DEL, no NEL, LS, PS, byte order mark or non-characters.
func printable(doc []byte) bool {
	for i := 0; i < len(doc); i++ {
		// Eight bytes of printable ASCII or line breaks at a time.
		for i+8 <= len(doc) && plainWord(binary.LittleEndian.Uint64(doc[i:])) {
			i += 8
		}
		if i == len(doc) {
			break
		}
		c := doc[i]
		switch {
		case c >= 0x20 && c < 0x7f:
			// Printable ASCII, most of a document.
		case c == '\t' || c == '\n' || c == '\r':
		case c < 0x20 || c == 0x7f:
			return false
		case c == 0xc2 && i+1 < len(doc) && doc[i+1] >= 0x80 && doc[i+1] <= 0xa0:
			return false // C1 controls, NEL, and no-break space to be safe
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

// isYAMLWhite reports whether c is YAML white space (a space or a tab).
func isYAMLWhite(c byte) bool { return c == ' ' || c == '\t' }
