package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// quantityMaps are the fields whose values are resource quantities.
var quantityMaps = map[string]bool{"requests": true, "limits": true, "allocatable": true, "capacity": true, "overhead": true, "allocatedResources": true}

// quantityFields are fields that are one quantity.
var quantityFields = map[string]bool{"sizeLimit": true}

// maxQuantityLen bounds the text of a quantity: resource.ParseQuantity
// takes time growing with the square of a negative exponent ("1e-10000000"
// takes seconds), and no real quantity is longer.
const maxQuantityLen = 64

// maxExponent bounds a quantity's decimal exponent, for the same reason.
const maxExponent = 1000

// suspiciousNumbers reports whether raw holds a run of number characters
// that checkQuantities could refuse: longer than maxQuantityLen less a
// suffix's few letters, or an exponent of four digits or more; or a \u
// escape, which may hide such characters in a JSON string. Documents
// without one need no closer look.
func suspiciousNumbers(raw []byte) bool {
	run, expDigits, inExp := 0, 0, false
	for i, c := range raw {
		digit := c >= '0' && c <= '9'
		switch {
		case digit:
			run++
			if inExp {
				if expDigits++; expDigits >= 4 {
					return true
				}
			}
		case (c == 'e' || c == 'E') && run > 0:
			// An exponent: e in a run of number characters, as in 1e3,
			// or -e3, which resource.ParseQuantity also reads.
			run++
			inExp, expDigits = true, 0
		case c == '.' || c == '+' || c == '-':
			run++
		case c == '\\' && i+1 < len(raw) && raw[i+1] == 'u':
			return true
		default:
			run, inExp, expDigits = 0, false, 0
		}
		if run > maxQuantityLen-4 {
			return true
		}
	}
	return false
}

// checkQuantities refuses quantities too long or with too large an
// exponent to parse in bounded time, before they are parsed: the values of
// the fields that are quantities whose own text suspiciousNumbers finds
// suspicious (so that whether a value is refused depends on it alone, not
// on how the document around it is written). It returns the field and
// what is wrong, or "".
func checkQuantities(raw []byte) (field, detail string) {
	if !suspiciousNumbers(raw) {
		return "", ""
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return "", ""
	}
	return walkQuantities(v, "", func(x any) string {
		var s string
		switch q := x.(type) {
		case string:
			s = q
		case json.Number:
			s = string(q)
		default:
			return ""
		}
		if !suspiciousNumbers([]byte(s)) {
			return ""
		}
		if len(s) > maxQuantityLen {
			return fmt.Sprintf("quantity of %d characters is too long (at most %d)", len(s), maxQuantityLen)
		}
		if i := strings.LastIndexAny(s, "eE"); i >= 0 {
			if e, err := strconv.Atoi(s[i+1:]); err == nil && (e > maxExponent || e < -maxExponent) {
				return fmt.Sprintf("quantity %q has an exponent out of range [-%d, %d]", s, maxExponent, maxExponent)
			}
		}
		return ""
	})
}

// findBadQuantity returns the path of the first quantity in raw that does
// not parse, or "". encoding/json does not say where a Quantity failed.
func findBadQuantity(raw []byte) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	path, _ := walkQuantities(v, "", func(q any) string {
		if _, err := resource.ParseQuantity(fmt.Sprint(q)); err != nil {
			return err.Error()
		}
		return ""
	})
	return path
}

// walkQuantities calls check on every quantity of a decoded document —
// the fields of quantityFields and the entries of the maps of quantityMaps
// — in key order, and returns the path of the first one it finds wrong
// and what check said.
func walkQuantities(v any, path string, check func(q any) string) (string, string) {
	join := func(path, k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	sortedKeys := func(m map[string]any) []string {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return keys
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			p := join(path, k)
			if quantityFields[k] {
				if d := check(x[k]); d != "" {
					return p, d
				}
			}
			if m, ok := x[k].(map[string]any); ok && quantityMaps[k] {
				for _, name := range sortedKeys(m) {
					if d := check(m[name]); d != "" {
						return join(p, name), d
					}
				}
				continue
			}
			if f, d := walkQuantities(x[k], p, check); f != "" {
				return f, d
			}
		}
	case []any:
		for i, e := range x {
			if f, d := walkQuantities(e, fmt.Sprintf("%s[%d]", path, i), check); f != "" {
				return f, d
			}
		}
	}
	return "", ""
}
