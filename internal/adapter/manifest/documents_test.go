package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestManyDocumentsErrors: a stream of many documents, prepared in
// parallel, reports the error the documents read one by one would, with
// the same name and numbering, whatever the parallelism; and loads the
// same objects when there is none.
func TestManyDocumentsErrors(t *testing.T) {
	pod := func(i int) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p-%d\n  labels: {app: a}\nspec:\n  nodeName: n1\n  containers:\n  - name: c\n    image: i\n    resources:\n      requests: {cpu: 100m}\n", i)
	}
	stream := func(n int, change map[int]string) string {
		var b strings.Builder
		b.WriteString("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"100\", pods: \"500\"}}\n")
		for i := 2; i <= n; i++ {
			b.WriteString("---\n")
			if c, ok := change[i]; ok {
				b.WriteString(c)
				continue
			}
			b.WriteString(pod(i))
		}
		return b.String()
	}
	tests := map[string]struct {
		data string
		want string // "" loads
	}{
		"valid":       {stream(300, nil), ""},
		"empty docs":  {stream(300, map[int]string{5: "", 200: "# nothing\n"}), ""},
		"no name":     {stream(300, map[int]string{70: strings.Replace(pod(70), "name: p-70", "namespace: default", 1)}), "f.yaml#70: Pod: metadata.name: missing"},
		"bad request": {stream(300, map[int]string{250: strings.Replace(pod(250), "100m", "lots", 1), 260: strings.Replace(pod(260), "name: p-260", "namespace: default", 1)}), "f.yaml#250: Pod default/p-250: spec.containers[0].resources.requests.cpu: quantities must match"},
		"duplicate":   {stream(300, map[int]string{280: pod(3)}), "f.yaml#280: Pod default/p-3: metadata.name: duplicate object (first defined in f.yaml#3)"},
		// Every document is converted before any is added: a document
		// that is not YAML is the error, even after another mistake.
		"malformed late": {stream(300, map[int]string{70: strings.Replace(pod(70), "name: p-70", "namespace: default", 1), 290: "a: [\n"}), "f.yaml#290: malformed YAML/JSON"},
		"bad separator":  {stream(300, map[int]string{150: pod(150) + "--- oops\n"}), "f.yaml#150: malformed YAML: invalid Yaml document separator: oops"},
		"crlf":           {strings.ReplaceAll(stream(300, map[int]string{120: strings.Replace(pod(120), "name: p-120", "namespace: default", 1)}), "\n", "\r\n"), "f.yaml#120: Pod: metadata.name: missing"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var first []int
			for _, workers := range []int{1, 2, 5} {
				for _, lean := range []bool{false, true} {
					s := NewSetWith(Options{Parallelism: workers, Lean: lean})
					err := s.AddBytes("f.yaml", []byte(tc.data))
					switch {
					case tc.want == "" && err != nil:
						t.Fatalf("workers %d, lean %v: %v", workers, lean, err)
					case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
						t.Fatalf("workers %d, lean %v: error %v, want %q", workers, lean, err, tc.want)
					}
					if tc.want != "" {
						continue
					}
					var names []int
					pods, _ := setPods(s)
					for _, p := range pods {
						var i int
						fmt.Sscanf(p.Name, "p-%d", &i)
						names = append(names, i)
					}
					if first == nil {
						first = names
					} else if !slices.Equal(names, first) {
						t.Fatalf("workers %d, lean %v: pods %v, want %v", workers, lean, names, first)
					}
					if len(names) != 299-strings.Count(name, "empty")*2 {
						t.Fatalf("%d pods", len(names))
					}
				}
			}
		})
	}
}

// TestManyFiles: a directory of many small files, read in parallel, loads
// its objects in the files' order and reports the first file's error.
func TestManyFiles(t *testing.T) {
	write := func(t *testing.T, bad map[int]string) string {
		dir := t.TempDir()
		for i := range 200 {
			doc := fmt.Sprintf("apiVersion: v1\nkind: Node\nmetadata: {name: n-%03d}\n", i)
			if b, ok := bad[i]; ok {
				doc = b
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f-%03d.yaml", i)), []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	for _, workers := range []int{1, 3} {
		dir := write(t, nil)
		s, err := LoadWith(Options{Parallelism: workers}, dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Objects.Nodes) != 200 {
			t.Fatalf("%d nodes", len(s.Objects.Nodes))
		}
		for i, n := range s.Objects.Nodes {
			if want := fmt.Sprintf("n-%03d", i); n.Name != want {
				t.Fatalf("node %d is %s, want %s", i, n.Name, want)
			}
			if got, want := s.Origin(n), filepath.Join(dir, fmt.Sprintf("f-%03d.yaml", i)); got != want {
				t.Fatalf("node %s from %s, want %s", n.Name, got, want)
			}
		}
		dir = write(t, map[int]string{150: "a: [\n", 170: "apiVersion: v1\nkind: Node\nmetadata: {}\n", 20: "apiVersion: v1\nkind: Node\nmetadata: {name: n-010}\n"})
		_, err = LoadWith(Options{Parallelism: workers}, dir)
		if want := filepath.Join(dir, "f-020.yaml") + ": Node n-010: metadata.name: duplicate object (first defined in " + filepath.Join(dir, "f-010.yaml") + ")"; err == nil || err.Error() != want {
			t.Fatalf("error %v, want %s", err, want)
		}
	}
}
