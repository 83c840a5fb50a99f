package output

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprieve/reprieve/internal/cli/clierr"
)

// TestParseAndPrint parses -o values and prints one document with them.
func TestParseAndPrint(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "t.tmpl")
	if err := os.WriteFile(file, []byte(`{{range .items}}{{.name}};{{end}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	jp := filepath.Join(dir, "t.jsonpath")
	if err := os.WriteFile(jp, []byte(`{.items[1].name}`), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := map[string]any{"items": []map[string]any{{"name": "a", "n": 1}, {"name": "b", "secret": "aGk="}}}
	tests := []struct {
		value, want string
	}{
		{"json", "{\n  \"items\": [\n    {\n      \"n\": 1,\n      \"name\": \"a\"\n    },\n    {\n      \"name\": \"b\",\n      \"secret\": \"aGk=\"\n    }\n  ]\n}\n"},
		{"yaml", "items:\n- \"n\": 1\n  name: a\n- name: b\n  secret: aGk=\n"},
		{"jsonpath={.items[*].name}", "a b"},
		{"jsonpath={.items[0].n}", "1"},
		{"jsonpath={.missing}", ""},
		{`jsonpath={range .items[?(@.secret)]}{.name}{end}`, "b"},
		{"go-template={{len .items}}", "2"},
		{`go-template={{range .items}}{{if exists . "secret"}}{{base64decode .secret}}{{end}}{{end}}`, "hi"},
		{"go-template-file=" + file, "a;b;"},
		{"jsonpath-file=" + jp, "b"},
	}
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			f, err := Parse(tc.value, Shared(Table)...)
			if err != nil {
				t.Fatal(err)
			}
			if !f.Generic() {
				t.Fatalf("%s is not generic", f.Kind)
			}
			var buf bytes.Buffer
			if err := f.Print(&buf, doc); err != nil {
				t.Fatal(err)
			}
			if buf.String() != tc.want {
				t.Errorf("got %q, want %q", buf.String(), tc.want)
			}
		})
	}
}

// TestParseErrors checks every refusal is a one-line usage error naming
// --output.
func TestParseErrors(t *testing.T) {
	for value, want := range map[string]string{
		"xml":                    `--output must be one of table, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, go-template=TEMPLATE, go-template-file=FILE, got "xml"`,
		"wide":                   "--output must be one of",
		"json=x":                 "--output json takes no =VALUE",
		"jsonpath":               "--output jsonpath needs a template",
		"jsonpath={.a":           "--output jsonpath: bad template",
		"go-template={{if}}":     "--output go-template: bad template",
		"go-template-file=/nope": "--output go-template-file: stat /nope",
	} {
		_, err := Parse(value, Shared(Table)...)
		if !errors.Is(err, clierr.ErrUsage) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want a one-line usage error containing %q", value, err, want)
		}
	}
	f, err := Parse("go-template={{index .items 5}}", Shared()...)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := f.Print(&buf, map[string]any{"items": []int{1}}); !errors.Is(err, clierr.ErrUsage) || buf.Len() != 0 {
		t.Errorf("failing template: %v, wrote %q", err, buf.String())
	}
	if f, err := Parse("table", Table); err != nil || f.Generic() {
		t.Errorf("table: %v, generic %v", err, f.Generic())
	}
}

// TestMissingKeys checks kubectl's --allow-missing-template-keys: a
// missing key prints nothing, or with false fails the template.
func TestMissingKeys(t *testing.T) {
	doc := map[string]any{"a": 1}
	for _, tc := range []struct {
		value   string
		allow   bool
		want    string
		wantErr bool
	}{
		{"jsonpath={.b}", true, "", false},
		{"jsonpath={.b}", false, "", true},
		{"jsonpath={.a}", false, "1", false},
		{"go-template={{.b}}", true, "<no value>", false},
		{"go-template={{.b}}", false, "", true},
		{"go-template={{.a}}", false, "1", false},
	} {
		f, err := ParseStrict(tc.value, tc.allow, Shared()...)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		err = f.Print(&buf, doc)
		if (err != nil) != tc.wantErr || buf.String() != tc.want || err != nil && !errors.Is(err, clierr.ErrUsage) {
			t.Errorf("%s allow=%v: got %q, %v; want %q, error %v", tc.value, tc.allow, buf.String(), err, tc.want, tc.wantErr)
		}
	}
}

// TestValues checks the completion values: templated kinds end in "=".
func TestValues(t *testing.T) {
	if got := strings.Join(Values(Shared(Table, Wide)...), " "); got != "table wide json yaml name jsonpath= jsonpath-file= go-template= go-template-file=" {
		t.Errorf("got %q", got)
	}
}
