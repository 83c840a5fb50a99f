package manifest

import (
	"bytes"
	"encoding/binary"
	"math"
)

// quoted returns the value of a quoted scalar that is the whole of s: a
// double-quoted one without escapes, or a single-quoted one; the value of
// a double-quoted one is part of s.
func quoted(s []byte) ([]byte, bool) {
	if len(s) < 2 || s[len(s)-1] != s[0] {
		return nil, false
	}
	in := s[1 : len(s)-1]
	if s[0] == '"' {
		if bytes.ContainsAny(in, "\"\\") {
			return nil, false
		}
		return in, true
	}
	if bytes.IndexByte(bytes.ReplaceAll(in, []byte("''"), nil), '\'') >= 0 {
		return nil, false
	}
	return bytes.ReplaceAll(in, []byte("''"), []byte("'")), true
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

// yamlInt reports whether a plain scalar is an integer the converter
// writes to JSON as it is (isDecimalInt), as the generic converter writes
// it: not "-0", which that writes as 0.
func yamlInt(s []byte) bool { return isDecimalInt(s) && string(s) != "-0" }

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
	plain := s
	if bytes.IndexByte(s, '_') >= 0 {
		plain = bytes.ReplaceAll(s, []byte("_"), nil)
	}
	return !integerSyntax(plain) && !yamlFloat(plain) && !yamlBinary(plain)
}

// integerSyntax reports whether strconv.ParseInt or ParseUint would read
// s, which holds no underscore, in base 0 as a number, in range or not:
// an optional sign, then "0x", "0o" or "0b" and digits of that base, or
// a 0 and octal digits, or decimal digits. It allocates nothing (their
// errors do).
func integerSyntax(s []byte) bool {
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if len(s) == 0 {
		return false
	}
	base := byte(10)
	if s[0] == '0' {
		switch {
		case len(s) >= 3 && s[1]|0x20 == 'b':
			base, s = 2, s[2:]
		case len(s) >= 3 && s[1]|0x20 == 'o':
			base, s = 8, s[2:]
		case len(s) >= 3 && s[1]|0x20 == 'x':
			base, s = 16, s[2:]
		default:
			base, s = 8, s[1:]
		}
	}
	// As strconv reads the digits: one past 64 bits ends the reading,
	// out of range, whatever follows.
	var n uint64
	cutoff := math.MaxUint64/uint64(base) + 1
	for _, c := range s {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c|0x20 && c|0x20 <= 'z':
			d = c | 0x20 - 'a' + 10
		default:
			return false
		}
		if d >= base {
			return false
		}
		if n >= cutoff {
			return true
		}
		n *= uint64(base)
		if n+uint64(d) < n {
			return true
		}
		n += uint64(d)
	}
	return true
}

// yamlBinary reports whether go-yaml v2 could read plain, which starts
// with a digit, as a binary integer: "0b" then what strconv.ParseInt reads
// in base 2 (a sign and binary digits; those too large too, to be safe).
func yamlBinary(plain []byte) bool {
	rest, ok := bytes.CutPrefix(plain, []byte("0b"))
	if !ok {
		return false
	}
	if len(rest) > 0 && (rest[0] == '+' || rest[0] == '-') {
		rest = rest[1:]
	}
	if len(rest) == 0 {
		return false
	}
	for _, c := range rest {
		if c != '0' && c != '1' {
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
func yamlFloat(s []byte) bool {
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
