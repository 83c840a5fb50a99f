package manifest

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"
)

// A structural JSON scanner: it finds where values begin and end without
// decoding them, so that a large List is cut into its items as it is read
// (fast_stream.go), a pod's fields are found for the memo (fast_memo.go)
// and the fast decoder walks an object in one pass (fast_decode.go). It
// checks only what it needs to find boundaries. Whenever the input is not
// what it expects (escapes in a key, malformed nesting), it reports
// failure and its caller declines, for the general path to read the input
// or word the error.

// skipSpace returns the index of the first non-space byte at or after i.
func skipSpace(data []byte, i int) int {
	for i < len(data) {
		if i+8 <= len(data) && binary.LittleEndian.Uint64(data[i:]) == eightSpaces {
			i += 8
			continue
		}
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string whose opening quote is
// at data[i], or -1 when it is not closed.
func skipString(data []byte, i int) int {
	// The next quote, found by bytes.IndexByte, ends the string unless an
	// odd number of backslashes escapes it.
	open := i
	for i++; ; i++ {
		q := bytes.IndexByte(data[i:], '"')
		if q < 0 {
			return -1
		}
		i += q
		escaped := false
		for j := i - 1; j > open && data[j] == '\\'; j-- {
			escaped = !escaped
		}
		if !escaped {
			return i + 1
		}
	}
}

// sameText reports whether data at at starts with text.
func sameText(data []byte, at int, text string) bool {
	return len(data)-at >= len(text) && string(data[at:at+len(text)]) == text
}

// eightSpaces is eight spaces read as a little-endian word.
const eightSpaces = 0x2020202020202020

// containerByte marks the bytes skipValue looks at inside an object or an
// array (a constant table).
var containerByte = [256]bool{'"': true, '{': true, '[': true, '}': true, ']': true}

// skipValue returns the index just past the JSON value that starts at
// data[i] (after space), or -1 when there is none or it is not closed.
func skipValue(data []byte, i int) int {
	i = skipSpace(data, i)
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			for i < len(data) {
				// Indentation eight spaces at a time.
				if i+8 <= len(data) && binary.LittleEndian.Uint64(data[i:]) == eightSpaces {
					i += 8
					continue
				}
				if containerByte[data[i]] {
					break
				}
				i++
			}
			if i == len(data) {
				break
			}
			switch data[i] {
			case '"':
				if i = skipString(data, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	case '}', ']', ',', ':':
		return -1
	}
	// A number or a literal (true, false, null): up to the first byte
	// that can be in neither, which the caller then reads as what
	// follows the value (a quote there is no part of it).
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

// literalByte holds the bytes of JSON numbers and literals.
var literalByte = func() (t [256]bool) {
	for _, c := range "0123456789+-.eEtrufalsn" {
		t[c] = true
	}
	return t
}()

// onlySpaceAfter reports whether a walk of data ended at end (not -1) with
// only space after it.
func onlySpaceAfter(data []byte, end int) bool {
	return end >= 0 && skipSpace(data, end) == len(data)
}

// walkObject walks the object at data[i] (after space) in place: f is
// given each member's key (raw, without quotes) and the offset of its
// value, and returns the offset just past the value, having read it or
// skipped it, or -1 to stop. walkObject returns the offset just past the
// object, or -1 when it is not an object it walks (a key with escapes, a
// missing colon or comma) or f stopped.
func walkObject(data []byte, i int, f func(key []byte, v int) int) int {
	i = skipSpace(data, i)
	if i >= len(data) || data[i] != '{' {
		return -1
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1
	}
	for i < len(data) {
		if data[i] != '"' {
			return -1
		}
		end := skipString(data, i)
		if end < 0 {
			return -1
		}
		key := data[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return -1
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return -1
		}
		vend := f(key, skipSpace(data, i+1))
		if vend < 0 {
			return -1
		}
		i = skipSpace(data, vend)
		if i >= len(data) {
			return -1
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return i + 1
		default:
			return -1
		}
	}
	return -1
}

// walkArray walks the array at data[i] (after space) in place as
// walkObject walks an object: f is given the offset of each element and
// returns the offset just past it, or -1 to stop.
func walkArray(data []byte, i int, f func(e int) int) int {
	i = skipSpace(data, i)
	if i >= len(data) || data[i] != '[' {
		return -1
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return i + 1
	}
	for i < len(data) {
		end := f(i)
		if end < 0 {
			return -1
		}
		i = skipSpace(data, end)
		if i >= len(data) {
			return -1
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case ']':
			return i + 1
		default:
			return -1
		}
	}
	return -1
}

// plainString returns the contents of a JSON string without escapes, or
// false for anything else (the decoder then reads it).
func plainString(value []byte) (string, bool) {
	if len(value) < 2 || value[0] != '"' || value[len(value)-1] != '"' {
		return "", false
	}
	s := value[1 : len(value)-1]
	if bytes.IndexByte(s, '\\') >= 0 || !utf8.Valid(s) {
		return "", false
	}
	return string(s), true
}
