package cli

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestOutputForms runs each -o form of kubectl's vocabulary on whatif,
// simulate and snapshot over the bundled examples and compares the
// output with golden files in testdata/output (refresh with -update).
func TestOutputForms(t *testing.T) {
	const (
		cluster = "../../examples/cluster"
		urgent  = "../../examples/pods/urgent.yaml"
		story   = "../../examples/simulate/story.yaml"
	)
	whatif := []string{"whatif", "--snapshot", cluster, "--now", now, "-f"}
	tests := []struct {
		golden string
		args   []string
	}{
		{"whatif-urgent.wide", append(whatif, urgent, "-o", "wide")},
		{"whatif-urgent.name", append(whatif, urgent, "-o", "name")},
		{"whatif-urgent.yaml", append(whatif, urgent, "-o", "yaml")},
		{"whatif-urgent.jsonpath", append(whatif, urgent, "-o", `jsonpath={.nominatedNode}{" "}{.victims[*].pod}{"\n"}`)},
		{"whatif-urgent.jsonpath-file", append(whatif, urgent, "-o", "jsonpath-file=testdata/output/victims.jsonpath")},
		{"whatif-urgent.go-template", append(whatif, urgent, "-o", `go-template={{.pod}} -> {{.nominatedNode}}{{if exists . "placement"}} placed{{end}}{{"\n"}}`)},
		{"whatif-urgent.go-template-file", append(whatif, urgent, "-o", "go-template-file=testdata/output/victims.gotmpl")},
		{"whatif-fits.name", append(whatif, "../../examples/pods/fits.yaml", "-o", "name")},
		{"whatif-pods.wide", append(whatif, "../../examples/pods", "-o", "wide", "--seed", "1")},
		{"whatif-pods.name", append(whatif, "../../examples/pods", "-o", "name", "--seed", "1")},
		{"whatif-pods.jsonpath", append(whatif, "../../examples/pods", "--seed", "1", "-o", `jsonpath={range [*]}{.pod}{"\t"}{.fits}{"\t"}{.nominatedNode}{"\n"}{end}`)},
		{"simulate-story.wide", []string{"simulate", story, "-o", "wide"}},
		{"simulate-story.name", []string{"simulate", story, "-o", "name"}},
		{"simulate-story.jsonpath", []string{"simulate", story, "-o", `jsonpath={.summary.victims} victims, {.summary.preemptions} preemptions{"\n"}`}},
		{"simulate-story.go-template", []string{"simulate", story, "-o", `go-template={{range .summary.timeToSchedule}}{{.priority}}: {{.scheduled}}{{"\n"}}{{end}}`}},
		{"simulate-compare.jsonpath", []string{"simulate", "../../examples/simulate/policies.yaml", "--compare", "upstream,minimal", "-o", `jsonpath={range [*]}{.policy}={.summary.victims}{"\n"}{end}`}},
		{"snapshot.name", []string{"snapshot", "--snapshot", cluster, "-o", "name"}},
		{"snapshot.jsonpath", []string{"snapshot", "--snapshot", cluster, "-o", `jsonpath={range .items[?(@.kind=="Node")]}{.metadata.name}{"\n"}{end}`}},
		{"snapshot.go-template", []string{"snapshot", "--snapshot", cluster, "-o", `go-template={{range .items}}{{.kind}} {{.metadata.name}}{{"\n"}}{{end}}`}},
	}
	for _, tc := range tests {
		t.Run(tc.golden, func(t *testing.T) {
			stdout, stderr, code := run(tc.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if strings.TrimSpace(stdout) == "" {
				t.Fatal("no output")
			}
			golden(t, filepath.Join("testdata", "output", tc.golden), stdout)
		})
	}
}

// TestOutputAgreesWithJSON checks the generic forms against -o json: YAML
// is the same document, wide starts with the table, name lists the node
// and victims of the JSON decision.
func TestOutputAgreesWithJSON(t *testing.T) {
	cases := []struct {
		args []string
		// widePrefix: -o wide is the table and more (for several pods it
		// is a table with more columns).
		widePrefix bool
	}{
		{[]string{"whatif", "--snapshot", "../../examples/cluster", "--now", now, "-f", "../../examples/pods/urgent.yaml"}, true},
		{[]string{"whatif", "--snapshot", "../../examples/cluster", "--now", now, "-f", "../../examples/pods"}, false},
		{[]string{"simulate", "../../examples/simulate/story.yaml"}, true},
		{[]string{"snapshot", "--snapshot", "../../examples/cluster"}, false},
	}
	for _, tc := range cases {
		args := tc.args
		out := func(format string) string {
			t.Helper()
			stdout, stderr, code := run(append(slices.Clone(args), "-o", format)...)
			if code != 0 {
				t.Fatalf("%v -o %s: exit %d: %s", args, format, code, stderr)
			}
			return stdout
		}
		var fromJSON, fromYAML any
		if err := json.Unmarshal([]byte(out("json")), &fromJSON); err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal([]byte(out("yaml")), &fromYAML); err != nil {
			t.Fatal(err)
		}
		if !equalJSON(fromJSON, fromYAML) {
			t.Errorf("%v: -o yaml is not the -o json document", args)
		}
		if table, wide := "", ""; tc.widePrefix {
			table, wide = out("table"), out("wide")
			if !strings.HasPrefix(wide, table) || len(wide) <= len(table) {
				t.Errorf("%v: -o wide is not the table and more", args)
			}
		}
	}
	// -o name of one decision: its nominated node, then its victims.
	stdout, _, _ := run("whatif", "--snapshot", "../../examples/cluster", "--now", now, "-f", "../../examples/pods/urgent.yaml", "-o", "json")
	var d struct {
		NominatedNode string
		Victims       []struct{ Pod string }
	}
	if err := json.Unmarshal([]byte(stdout), &d); err != nil || d.NominatedNode == "" || len(d.Victims) == 0 {
		t.Fatalf("urgent decision: %v %+v", err, d)
	}
	want := []string{"node/" + d.NominatedNode}
	for _, v := range d.Victims {
		ns, name, _ := strings.Cut(v.Pod, "/")
		want = append(want, "-n "+ns+" pod/"+name)
	}
	names, _, _ := run("whatif", "--snapshot", "../../examples/cluster", "--now", now, "-f", "../../examples/pods/urgent.yaml", "-o", "name")
	if got := strings.Split(strings.TrimSpace(names), "\n"); !slices.Equal(got, want) {
		t.Errorf("-o name = %q, want %q", got, want)
	}
}

func equalJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// TestOutputErrors checks that a bad -o value, a template that does not
// parse or fails on the data, and a missing template file are usage
// errors: exit 2, one line naming --output.
func TestOutputErrors(t *testing.T) {
	whatif := []string{"whatif", "--snapshot", "../../examples/cluster", "--now", now, "-f", "../../examples/pods/urgent.yaml", "-o"}
	tests := map[string]struct {
		args []string
		err  string
	}{
		"bad jsonpath":        {append(whatif, "jsonpath={.victims[}"), "--output jsonpath: bad template"},
		"bad go-template":     {append(whatif, "go-template={{.pod"), "--output go-template: bad template"},
		"empty template":      {append(whatif, "jsonpath="), "--output jsonpath needs a template"},
		"no template":         {append(whatif, "go-template"), "--output go-template needs a template"},
		"missing file":        {append(whatif, "jsonpath-file=testdata/output/nope"), "--output jsonpath-file: stat testdata/output/nope"},
		"value on table":      {append(whatif, "table=x"), "--output table takes no =VALUE"},
		"failing template":    {append(whatif, "go-template={{index .victims 99}}"), "--output go-template: template: output"},
		"missing key strict":  {append(slices.Clone(whatif[:len(whatif)-1]), "--allow-missing-template-keys=false", "-o", "jsonpath={.nope}"), "--output jsonpath: nope is not found"},
		"simulate strict":     {[]string{"simulate", "../../examples/simulate/story.yaml", "--allow-missing-template-keys=false", "-o", "go-template={{.nope}}"}, `map has no entry for key "nope"`},
		"snapshot strict":     {[]string{"snapshot", "--snapshot", "../../examples/cluster", "--allow-missing-template-keys=false", "-o", "jsonpath={.nope}"}, "nope is not found"},
		"simulate bad":        {[]string{"simulate", "../../examples/simulate/story.yaml", "-o", "jsonpath={{"}, "--output jsonpath: bad template"},
		"simulate name cmp":   {[]string{"simulate", "../../examples/simulate/policies.yaml", "--compare", "upstream,minimal", "-o", "name"}, "--compare prints a comparison"},
		"snapshot table":      {[]string{"snapshot", "--snapshot", "../../examples/cluster", "-o", "table"}, "--output must be one of json, yaml, name"},
		"snapshot wide":       {[]string{"snapshot", "--snapshot", "../../examples/cluster", "-o", "wide"}, "--output must be one of json, yaml, name"},
		"snapshot bad gotmpl": {[]string{"snapshot", "--snapshot", "../../examples/cluster", "-o", "go-template={{end}}"}, "--output go-template: bad template"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := run(tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.err) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2, no output and one line containing %q", code, stdout, stderr, tc.err)
			}
		})
	}
}
