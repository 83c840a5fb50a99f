package admission

import apivalidation "k8s.io/apimachinery/pkg/api/validation"

// nameIsDNSSubdomain is apivalidation.NameIsDNSSubdomain without its
// regular expression for a name that is plainly valid (most are): its
// messages for any other.
func nameIsDNSSubdomain(name string, prefix bool) []string {
	if !prefix && isDNS1123Subdomain(name) {
		return nil
	}
	return apivalidation.NameIsDNSSubdomain(name, prefix)
}

// isDNS1123Subdomain reports whether s is a DNS subdomain as RFC 1123 and
// validation.IsDNS1123Subdomain define it: at most 253 characters, labels
// separated by dots, each of lower-case letters, digits and dashes that
// starts and ends with a letter or a digit.
func isDNS1123Subdomain(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			c := s[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
			continue
		}
		// s[start:i] is a label.
		if i == start || s[start] == '-' || s[i-1] == '-' {
			return false
		}
		start = i + 1
	}
	return true
}
