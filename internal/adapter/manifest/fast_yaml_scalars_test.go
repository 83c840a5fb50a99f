package manifest

import (
	"bytes"
	"errors"
	"strconv"
	"testing"
)

// FuzzIntegerSyntax holds integerSyntax to strconv: it reads a number
// exactly where ParseInt or ParseUint, base 0, reads one or finds it out
// of range.
func FuzzIntegerSyntax(f *testing.F) {
	for _, s := range []string{"0", "00", "08", "0x1f", "0X", "0x", "0o17", "0b101", "0b2", "-12", "+0x10", "-", "+", "",
		"9e8d7c6b-0001", "99999999999999999999", "-0b1", "0xG", "1a", "5d8f7b9c4"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		if bytes.IndexByte(s, '_') >= 0 {
			return
		}
		numeric := func(err error) bool { return err == nil || errors.Is(err, strconv.ErrRange) }
		_, errInt := strconv.ParseInt(string(s), 0, 64)
		_, errUint := strconv.ParseUint(string(s), 0, 64)
		if want := numeric(errInt) || numeric(errUint); integerSyntax(s) != want {
			t.Fatalf("integerSyntax(%q) = %v, strconv: %v, %v", s, !want, errInt, errUint)
		}
	})
}
