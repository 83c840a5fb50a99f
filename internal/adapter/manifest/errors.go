package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrInput marks every error caused by bad input (as opposed to I/O
// failures); callers map it to exit code 2.
var ErrInput = errors.New("invalid input")

// InputError is a problem in the input, located as precisely as possible.
type InputError struct {
	// Source is "file" or "file#N" for the N-th document (1-based).
	Source string
	// Object is "Kind namespace/name" when known.
	Object string
	// Field is the offending field path when known.
	Field string
	// Detail says what is wrong.
	Detail string
	// Err is the underlying error, if any (such as a *fs.PathError).
	Err error
}

func (e *InputError) Error() string {
	var b strings.Builder
	b.WriteString(e.Source)
	// The object and field come from the input, which may hold line
	// breaks in a name: the message is one line whatever they hold.
	if e.Object != "" {
		b.WriteString(": " + clip(oneLine(e.Object), maxMessagePart))
	}
	if e.Field != "" {
		b.WriteString(": " + clip(oneLine(e.Field), maxMessagePart))
	}
	b.WriteString(": " + clip(oneLine(e.Detail), 4*maxMessagePart))
	return b.String()
}

// maxMessagePart bounds the object and field an error names (a 10 MB name
// is not repeated in the message).
const maxMessagePart = 200

// clip shortens s to about n bytes, keeping its start and end.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	keep := n/2 - 2
	return strings.ToValidUTF8(s[:keep]+" … "+s[len(s)-keep:], "")
}

// Is makes errors.Is(err, ErrInput) true for every InputError.
func (e *InputError) Is(target error) bool { return target == ErrInput }

// Unwrap returns the underlying error.
func (e *InputError) Unwrap() error { return e.Err }

func objectName(kind, ns, name string) string {
	if name == "" {
		name = "(unnamed)"
	}
	if ns != "" {
		return kind + " " + ns + "/" + name
	}
	return kind + " " + name
}

// splitJSONError turns encoding/json's messages into a field path and a
// short detail.
func splitJSONError(err error) (field, detail string) {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Field, fmt.Sprintf("cannot use %s as %s", te.Value, te.Type.String())
	}
	msg := oneLine(err.Error())
	msg = strings.TrimPrefix(msg, "json: ")
	// Quantity errors say nothing about where; that is the best we have.
	return "", msg
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
