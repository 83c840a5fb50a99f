package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeCommand is a command the README shows: its arguments, and the
// output shown after it when it is written as "$ reprieve ...".
type readmeCommand struct {
	line   int
	args   []string
	output *string
}

// placeholder marks a synopsis line (reprieve whatif --snapshot PATH...),
// which is not a command to run.
var placeholder = regexp.MustCompile(`\.\.\.|\b[A-Z]{3,}\b|\|`)

// readmeCommands returns the reprieve commands in the README's shell blocks
// that run on the bundled examples alone: not the synopses, and not those
// that need a cluster (--kubeconfig, --pod from a cluster, scheduler) or a
// file the reader brings.
func readmeCommands(t *testing.T, text string) []readmeCommand {
	t.Helper()
	var cmds []readmeCommand
	var cur *readmeCommand
	var out strings.Builder
	flush := func() {
		if cur != nil && cur.output != nil {
			s := out.String()
			cur.output = &s
		}
		cur = nil
		out.Reset()
	}
	inFence, inBlock := false, false
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		raw := lines[i]
		trimmed := strings.TrimSpace(raw)
		if strings.HasPrefix(trimmed, "```") {
			flush()
			inFence = !inFence
			inBlock = inFence && (trimmed == "```" || trimmed == "```sh" || trimmed == "```console")
			continue
		}
		if !inBlock {
			continue
		}
		shown := strings.HasPrefix(trimmed, "$ ")
		cmd := strings.TrimPrefix(trimmed, "$ ")
		cmd = strings.TrimPrefix(cmd, "go run ./cmd/")
		if !strings.HasPrefix(cmd, "reprieve ") {
			if cur != nil && cur.output != nil {
				out.WriteString(strings.TrimRight(raw, " ") + "\n")
			}
			continue
		}
		flush()
		start := i + 1
		for strings.HasSuffix(cmd, "\\") && i+1 < len(lines) {
			i++
			cmd = strings.TrimSuffix(cmd, "\\") + " " + strings.TrimSpace(lines[i])
		}
		if c, _, ok := strings.Cut(cmd, "  #"); ok {
			cmd = c
		}
		if placeholder.MatchString(cmd) || strings.Contains(cmd, "--kubeconfig") || strings.Contains(cmd, "reprieve scheduler") {
			continue
		}
		args, err := shellWords(strings.TrimPrefix(cmd, "reprieve "))
		if err != nil {
			t.Fatalf("README.md:%d: %v", start, err)
		}
		cmds = append(cmds, readmeCommand{line: start, args: args})
		cur = &cmds[len(cmds)-1]
		if shown {
			cur.output = new(string)
		}
	}
	flush()
	return cmds
}

// shellWords splits a command line as a POSIX shell would for the quoting
// the README uses: single and double quotes, no expansions.
func shellWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, fmt.Errorf("unbalanced %c quote in %q", c, s)
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// inlineCommand is a command written inline (`reprieve ... examples/...`).
var inlineCommand = regexp.MustCompile("`((?:go run \\./cmd/)?reprieve [^`]*examples/[^`]*)`")

// TestREADMECommands runs every command the README and the examples'
// READMEs show on the bundled examples, as a new user would copy them: each
// must succeed, and a command shown with its output ("$ reprieve ...") must
// print every line shown, in that order (the README may leave lines out).
// Reports are written to a temporary directory instead of the paths shown.
func TestREADMECommands(t *testing.T) {
	docs, err := filepath.Glob("../../examples/*/README.md")
	if err != nil {
		t.Fatal(err)
	}
	docs = append([]string{"../../README.md"}, docs...)
	type located struct {
		doc string
		readmeCommand
	}
	var cmds []located
	for _, doc := range docs {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range readmeCommands(t, string(text)) {
			cmds = append(cmds, located{doc, c})
		}
		// Inline commands, as a block of their own each.
		for _, m := range inlineCommand.FindAllStringSubmatch(string(text), -1) {
			for _, c := range readmeCommands(t, "```sh\n"+m[1]+"\n```\n") {
				cmds = append(cmds, located{doc, c})
			}
		}
	}
	if len(cmds) < 15 {
		t.Fatalf("found %d README commands, want the examples' (at least 15)", len(cmds))
	}
	t.Chdir("../..")
	dir := t.TempDir()
	for _, c := range cmds {
		for i, a := range c.args {
			if i > 0 && c.args[i-1] == "--report" {
				c.args[i] = filepath.Join(dir, filepath.Base(a))
			}
		}
		where := fmt.Sprintf("%s:%d: reprieve %s", strings.TrimPrefix(c.doc, "../../"), c.line, strings.Join(c.args, " "))
		stdout, stderr, code := run(c.args...)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", where, code, stderr)
			continue
		}
		if c.output != nil {
			if missing, ok := shownIn(*c.output, stdout); !ok {
				t.Errorf("%s does not print the line\n  %s\nin order; it prints\n%s", where, missing, stdout)
			}
		}
	}
}

// shownIn reports whether every line of shown but the empty ones and the
// elisions ("...") is a line of out,
// in order; if not, the first line missing.
func shownIn(shown, out string) (string, bool) {
	lines := strings.Split(out, "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	next := 0
	for _, want := range strings.Split(shown, "\n") {
		if want = strings.TrimRight(want, " "); want == "" || strings.TrimSpace(want) == "..." {
			continue
		}
		for next < len(lines) && lines[next] != want {
			next++
		}
		if next == len(lines) {
			return want, false
		}
		next++
	}
	return "", true
}
