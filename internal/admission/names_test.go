package admission

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzIsDNS1123Subdomain holds the hand-written check to apimachinery's
// regular expression.
func FuzzIsDNS1123Subdomain(f *testing.F) {
	for _, s := range []string{"", "a", "a.b", "a-b.c-d", "-a", "a-", "a..b", ".a", "a.", "A", "a_b", "0.0", "a.-b", "a-.b",
		strings.Repeat("a", 253), strings.Repeat("a", 254), strings.Repeat("a.", 126) + "a", "ä"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := len(validation.IsDNS1123Subdomain(s)) == 0
		if got := isDNS1123Subdomain(s); got != want {
			t.Errorf("isDNS1123Subdomain(%q) = %v, validation says %v", s, got, want)
		}
		if got := len(nameIsDNSSubdomain(s, false)) == 0; got != want {
			t.Errorf("nameIsDNSSubdomain(%q) valid = %v, want %v", s, got, want)
		}
	})
}
