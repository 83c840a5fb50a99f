// Package output is the -o/--output vocabulary shared by reprieve's
// commands, kubectl's: table, wide, json, yaml, name, jsonpath=TEMPLATE,
// jsonpath-file=FILE, go-template=TEMPLATE and go-template-file=FILE.
//
// Templates are applied to the JSON form of what a command prints (the
// same document -o json writes), decoded into maps and slices, as
// kubectl's printers do: JSONPath with k8s.io/client-go/util/jsonpath,
// missing keys allowed (kubectl's --allow-missing-template-keys default),
// Go templates with text/template and kubectl's two extra functions,
// exists and base64decode.
package output

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/template"

	"github.com/spf13/pflag"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/yaml"

	"github.com/reprieve/reprieve/internal/adapter/files"
	"github.com/reprieve/reprieve/internal/cli/clierr"
)

// The kinds of output.
const (
	Table          = "table"
	Wide           = "wide"
	JSON           = "json"
	YAML           = "yaml"
	Name           = "name"
	JSONPath       = "jsonpath"
	JSONPathFile   = "jsonpath-file"
	GoTemplate     = "go-template"
	GoTemplateFile = "go-template-file"
)

// Format is a parsed -o value.
type Format struct {
	// Kind is one of the constants above, or a command's own kind (events).
	Kind string
	jp   *jsonpath.JSONPath
	tmpl *template.Template
	raw  string
}

// Values returns the -o values a command accepting kinds offers for
// completion: templated kinds end in "=".
func Values(kinds ...string) []string {
	out := make([]string, 0, len(kinds))
	for _, k := range kinds {
		if isTemplated(k) {
			k += "="
		}
		out = append(out, k)
	}
	return out
}

// Shared returns the kinds every command accepts, after the given ones
// (table and wide, say): json, yaml, name and the templates.
func Shared(first ...string) []string {
	return append(first, JSON, YAML, Name, JSONPath, JSONPathFile, GoTemplate, GoTemplateFile)
}

// isTemplated reports whether kind takes =TEMPLATE or =FILE.
func isTemplated(kind string) bool {
	switch kind {
	case JSONPath, JSONPathFile, GoTemplate, GoTemplateFile:
		return true
	}
	return false
}

// AddFlags adds kubectl's --allow-missing-template-keys to f, bound to
// allow (true by default, as in kubectl).
func AddFlags(f *pflag.FlagSet, allow *bool) {
	f.BoolVar(allow, "allow-missing-template-keys", true, "if true, ignore any errors in templates when a field or map key is missing in the template (jsonpath and go-template output formats only)")
}

// Parse parses the value of --output for a command accepting the given
// kinds, with missing keys in templates allowed (kubectl's default). A
// kind it does not accept, a missing or unreadable template file and a
// template that does not parse are usage errors naming the flag, on one
// line.
func Parse(value string, kinds ...string) (Format, error) {
	return ParseStrict(value, true, kinds...)
}

// ParseStrict is Parse with kubectl's --allow-missing-template-keys:
// when allowMissing is false, a template naming a missing key fails.
func ParseStrict(value string, allowMissing bool, kinds ...string) (Format, error) {
	kind, arg, hasArg := strings.Cut(value, "=")
	accepted := false
	for _, k := range kinds {
		if k == kind {
			accepted = true
		}
	}
	if !accepted {
		return Format{}, clierr.Usagef("--output must be one of %s, got %q", describe(kinds), value)
	}
	if !isTemplated(kind) {
		if hasArg {
			return Format{}, clierr.Usagef("--output %s takes no =VALUE, got %q", kind, value)
		}
		return Format{Kind: kind}, nil
	}
	if arg == "" {
		return Format{}, clierr.Usagef("--output %s needs a template: -o %s=...", kind, kind)
	}
	f := Format{Kind: kind, raw: arg}
	if kind == JSONPathFile || kind == GoTemplateFile {
		b, err := files.Read(arg, files.MaxSmall)
		if err != nil {
			return Format{}, clierr.Usagef("--output %s: %v", kind, err)
		}
		f.raw = string(b)
	}
	switch kind {
	case JSONPath, JSONPathFile:
		f.jp = jsonpath.New("output")
		f.jp.AllowMissingKeys(allowMissing)
		if err := f.jp.Parse(f.raw); err != nil {
			return Format{}, clierr.Usagef("--output %s: bad template %q: %s", kind, oneLine(f.raw), oneLine(err.Error()))
		}
	default:
		t, err := template.New("output").Funcs(template.FuncMap{"exists": exists, "base64decode": base64decode}).Parse(f.raw)
		if err != nil {
			return Format{}, clierr.Usagef("--output %s: bad template: %s", kind, oneLine(err.Error()))
		}
		if !allowMissing {
			t = t.Option("missingkey=error")
		}
		f.tmpl = t
	}
	return f, nil
}

// Generic reports whether the format prints the JSON form of the data
// (json, yaml and the templates), which Print writes.
func (f Format) Generic() bool {
	switch f.Kind {
	case JSON, YAML:
		return true
	}
	return isTemplated(f.Kind)
}

// Print writes v, a value with a JSON form, in a generic format: indented
// JSON, YAML, or a template applied to the JSON form. A template that
// fails on the data is a usage error naming the flag.
func (f Format) Print(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	switch f.Kind {
	case JSON:
		// Two writes rather than a copy of b with its line break: b is
		// about a megabyte for a decision at 5,000 nodes.
		if _, err = w.Write(b); err == nil {
			_, err = io.WriteString(w, "\n")
		}
		return err
	case YAML:
		y, err := yaml.JSONToYAML(b)
		if err != nil {
			return err
		}
		_, err = w.Write(y)
		return err
	}
	var data any
	if err := json.Unmarshal(b, &data); err != nil {
		return err
	}
	// Execute into a buffer: nothing is written for a template that fails.
	var buf bytes.Buffer
	if f.jp != nil {
		err = f.jp.Execute(&buf, data)
	} else if f.tmpl != nil {
		err = f.tmpl.Execute(&buf, data)
	} else {
		return fmt.Errorf("output: %s is not a generic format", f.Kind)
	}
	if err != nil {
		return clierr.Usagef("--output %s: %s", f.Kind, oneLine(err.Error()))
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// PrintNames writes kubectl's -o name lines, KIND/NAME, one per line.
func PrintNames(w io.Writer, names []string) error {
	for _, n := range names {
		if _, err := fmt.Fprintln(w, n); err != nil {
			return err
		}
	}
	return nil
}

// describe lists kinds for people: jsonpath=TEMPLATE, jsonpath-file=FILE.
func describe(kinds []string) string {
	out := make([]string, 0, len(kinds))
	for _, k := range kinds {
		switch {
		case k == JSONPathFile || k == GoTemplateFile:
			k += "=FILE"
		case isTemplated(k):
			k += "=TEMPLATE"
		}
		out = append(out, k)
	}
	return strings.Join(out, ", ")
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// exists is kubectl's template function: whether the path of keys and
// indices leads to a value in item.
func exists(item any, indices ...any) bool {
	v := reflect.ValueOf(item)
	for _, i := range indices {
		for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return false
			}
			v = v.Elem()
		}
		iv := reflect.ValueOf(i)
		switch v.Kind() {
		case reflect.Map:
			if !iv.IsValid() || !iv.Type().AssignableTo(v.Type().Key()) {
				return false
			}
			v = v.MapIndex(iv)
			if !v.IsValid() {
				return false
			}
		case reflect.Slice, reflect.Array, reflect.String:
			if !iv.CanInt() || iv.Int() < 0 || int(iv.Int()) >= v.Len() {
				return false
			}
			v = v.Index(int(iv.Int()))
		default:
			return false
		}
	}
	return true
}

// base64decode is kubectl's template function.
func base64decode(s string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", fmt.Errorf("base64decode: %w", err)
	}
	return string(b), nil
}
