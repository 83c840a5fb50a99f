package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// failingWriter fails every write, as a full disk does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestLostOutputFails: an answer that cannot be written is a failure,
// whatever the outcome and the format.
func TestLostOutputFails(t *testing.T) {
	for _, args := range [][]string{
		{"whatif", "--snapshot", "../../examples/cluster", "-f", "../../examples/pods/fits.yaml"},
		{"whatif", "--snapshot", "../../examples/cluster", "-f", "../../examples/pods/never.yaml", "-o", "json"},
		{"whatif", "--snapshot", "../../examples/cluster", "-f", "../../examples/pods/urgent.yaml", "--explain"},
		{"version"},
	} {
		var errOut bytes.Buffer
		code := Execute(context.Background(), args, Streams{In: strings.NewReader(""), Out: failingWriter{}, Err: &errOut})
		if code != 1 || !strings.Contains(errOut.String(), "no space left on device") {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 naming the write error", args, code, errOut.String())
		}
	}
}

// TestRepeatedFilename: -f is repeatable, as kubectl's: every file's pods
// are evaluated, in the order given; a pod given twice is refused.
func TestRepeatedFilename(t *testing.T) {
	stdout, stderr, code := run("whatif", "--snapshot", "../../examples/cluster", "--now", now,
		"-f", "../../examples/pods/urgent.yaml", "-f", "../../examples/pods/fits.yaml", "-o", "name")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	one, _, _ := run("whatif", "--snapshot", "../../examples/cluster", "--now", now, "-f", "../../examples/pods/urgent.yaml", "-o", "name")
	two, _, _ := run("whatif", "--snapshot", "../../examples/cluster", "--now", now, "-f", "../../examples/pods/fits.yaml", "-o", "name")
	if stdout != one+two {
		t.Errorf("-f a -f b printed %q, want a's %q then b's %q", stdout, one, two)
	}
	_, stderr, code = run("whatif", "--snapshot", "../../examples/cluster", "-f", "../../examples/pods/urgent.yaml", "-f", "../../examples/pods/urgent.yaml")
	if code != 2 || !strings.Contains(stderr, "duplicate object") {
		t.Errorf("the same pod twice: exit %d, %q; want exit 2 naming the duplicate", code, stderr)
	}
}
