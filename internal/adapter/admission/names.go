package admission

import (
	"strings"
	"unicode"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

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

// validateObjectMeta is apivalidation.ValidateObjectMeta with
// nameIsDNSSubdomain at metadata, asked only when objectMetaValid cannot
// tell the metadata is valid.
func validateObjectMeta(meta *metav1.ObjectMeta, requiresNamespace bool) field.ErrorList {
	if objectMetaValid(meta, requiresNamespace) {
		return nil
	}
	return apivalidation.ValidateObjectMeta(meta, requiresNamespace, nameIsDNSSubdomain, metadata)
}

// objectMetaValid reports, without regular expressions, that
// apivalidation.ValidateObjectMeta(meta, requiresNamespace,
// nameIsDNSSubdomain, path) finds nothing wrong. It answers false for
// anything it does not check for certain (finalizers, managed fields
// managedFieldsValid refuses, a key outside ASCII), for the caller to ask
// ValidateObjectMeta, which words the errors.
func objectMetaValid(meta *metav1.ObjectMeta, requiresNamespace bool) bool {
	if len(meta.Finalizers) > 0 || !managedFieldsValid(meta.ManagedFields) || meta.Generation < 0 || !isDNS1123Subdomain(meta.Name) {
		return false
	}
	if g := meta.GenerateName; g != "" {
		// As apivalidation's maskTrailingDash: a trailing dash and the
		// character before it become an "a".
		if len(g) > 1 && g[len(g)-1] == '-' {
			g = g[:len(g)-2] + "a"
		}
		if !isDNS1123Subdomain(g) {
			return false
		}
	}
	if requiresNamespace != (meta.Namespace != "") || requiresNamespace && !isDNS1123Label(meta.Namespace) {
		return false
	}
	for k, v := range meta.Labels {
		if !isLabelKey(k, false) || !isLabelValue(v) {
			return false
		}
	}
	if !annotationsValid(meta.Annotations) {
		return false
	}
	return len(meta.OwnerReferences) == 0 || len(apivalidation.ValidateOwnerReferences(meta.OwnerReferences, nil)) == 0
}

// annotationsValid reports, without regular expressions, that
// apivalidation.ValidateAnnotations finds nothing wrong: every key a label
// key once lower-cased, and the whole within the size limit.
func annotationsValid(annotations map[string]string) bool {
	size := 0
	for k, v := range annotations {
		if !isLabelKey(k, true) {
			return false
		}
		size += len(k) + len(v)
	}
	return size <= apivalidation.TotalAnnotationSizeLimitB
}

// isDNS1123Label reports whether s is a DNS label as RFC 1123 and
// validation.IsDNS1123Label define it: at most 63 lower-case letters,
// digits and dashes, starting and ending with a letter or a digit.
func isDNS1123Label(s string) bool {
	return len(s) <= 63 && strings.IndexByte(s, '.') < 0 && isDNS1123Subdomain(s)
}

// isLabelKey reports whether s is a label key as validation.IsQualifiedName
// defines it: a name part, perhaps after a DNS subdomain prefix and "/";
// with fold, as the key lower-cased (ASCII only) is.
func isLabelKey(s string, fold bool) bool {
	name := s
	if i := strings.IndexByte(s, '/'); i >= 0 {
		prefix := s[:i]
		name = s[i+1:]
		if fold {
			for j := range len(prefix) {
				if c := prefix[j]; c >= 'A' && c <= 'Z' {
					prefix = strings.ToLower(prefix)
					break
				}
			}
		}
		if strings.IndexByte(name, '/') >= 0 || !isDNS1123Subdomain(prefix) {
			return false
		}
	}
	return len(name) > 0 && len(name) <= 63 && labelWord(name)
}

// isLabelValue reports whether s is a label value as
// validation.IsValidLabelValue defines it: empty, or a name part.
func isLabelValue(s string) bool {
	return s == "" || len(s) <= 63 && labelWord(s)
}

// labelWord reports whether s matches ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9].
func labelWord(s string) bool {
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	if !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !alnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// managedFieldsValid reports, without making a path (ValidateManagedFields
// makes several for each entry, error or not), that
// metavalidation.ValidateManagedFields finds nothing wrong with entries:
// each entry's operation is Apply or Update, its fields type FieldsV1 if
// set, its manager short and printable, its subresource short.
func managedFieldsValid(entries []metav1.ManagedFieldsEntry) bool {
	for i := range entries {
		e := &entries[i]
		switch {
		case e.Operation != metav1.ManagedFieldsOperationApply && e.Operation != metav1.ManagedFieldsOperationUpdate,
			e.FieldsType != "" && e.FieldsType != "FieldsV1",
			len(e.Manager) > metavalidation.FieldManagerMaxLength,
			len(e.Subresource) > metavalidation.MaxSubresourceNameLength:
			return false
		}
		for _, r := range e.Manager {
			if !unicode.IsPrint(r) {
				return false
			}
		}
	}
	return true
}
