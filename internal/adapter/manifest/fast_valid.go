package manifest

// validValue returns the index just past the JSON value at data[i] (after
// space) when encoding/json would accept it there, or -1: strings with
// their escapes checked (and bytes of any value but control characters, as
// encoding/json's scanner reads them), numbers as JSON writes them, the
// three literals, and objects and arrays nested at most maxValidDepth deep
// (encoding/json allows more, counted from the document's root: a deeper
// value is refused here, and the caller decodes it as before). What
// follows the value is the caller's to check.
func validValue(data []byte, i int) int { return validAt(data, i, 0) }

// maxValidDepth is how deep validValue follows objects and arrays.
const maxValidDepth = 1000

func validAt(data []byte, i, depth int) int {
	i = skipSpace(data, i)
	if i >= len(data) {
		return -1
	}
	switch c := data[i]; c {
	case '"':
		return validString(data, i)
	case '{', '[':
		if depth == maxValidDepth {
			return -1
		}
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		if i = skipSpace(data, i+1); i < len(data) && data[i] == closing {
			return i + 1
		}
		for {
			if closing == '}' {
				if i >= len(data) || data[i] != '"' {
					return -1
				}
				if i = validString(data, i); i < 0 {
					return -1
				}
				if i = skipSpace(data, i); i >= len(data) || data[i] != ':' {
					return -1
				}
				i++
			}
			if i = validAt(data, i, depth+1); i < 0 {
				return -1
			}
			if i = skipSpace(data, i); i >= len(data) {
				return -1
			}
			switch data[i] {
			case ',':
				i = skipSpace(data, i+1)
			case closing:
				return i + 1
			default:
				return -1
			}
		}
	case 't':
		return literalAt(data, i, "true")
	case 'f':
		return literalAt(data, i, "false")
	case 'n':
		return literalAt(data, i, "null")
	}
	return validNumber(data, i)
}

// literalAt returns the index past lit at data[i], or -1.
func literalAt(data []byte, i int, lit string) int {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// validString returns the index past the string whose opening quote is at
// data[i], or -1 when it is not closed or holds a control character or an
// escape JSON has not.
func validString(data []byte, i int) int {
	for i++; i < len(data); {
		// The bytes that are themselves, eight at a time where none of
		// them needs a look (no quote, backslash or control character).
		for i+8 <= len(data) && plainEight(data[i:i+8]) {
			i += 8
		}
		if i == len(data) {
			break
		}
		c := data[i]
		switch {
		case c == '"':
			return i + 1
		case c == '\\':
			if i+1 >= len(data) {
				return -1
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(data)-i < 6 || !isHex(data[i+2]) || !isHex(data[i+3]) || !isHex(data[i+4]) || !isHex(data[i+5]) {
					return -1
				}
				i += 6
			default:
				return -1
			}
		case c < 0x20:
			return -1
		default:
			i++
		}
	}
	return -1
}

// plainEight reports whether none of the eight bytes of b is a quote, a
// backslash or a control character.
func plainEight(b []byte) bool {
	for _, c := range b[:8] {
		if c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// validNumber returns the index past the number at data[i] (an optional
// minus, an integer part without leading zeros, an optional fraction and
// exponent), or -1.
func validNumber(data []byte, i int) int {
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return -1
	case data[i] == '0':
		i++
	case isDigit(data[i]):
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	default:
		return -1
	}
	if i < len(data) && data[i] == '.' {
		if i++; i >= len(data) || !isDigit(data[i]) {
			return -1
		}
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		if i++; i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) || !isDigit(data[i]) {
			return -1
		}
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	}
	return i
}
