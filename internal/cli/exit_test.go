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

// TestUnboundedInputs: a device, or a stream without end, given where a
// small file is expected is refused with one line and exit 2, never read
// into memory.
func TestUnboundedInputs(t *testing.T) {
	base := []string{"whatif", "--snapshot", "../../examples/cluster", "-f", "../../examples/pods/urgent.yaml"}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"--config device":      {append(base, "--config", "/dev/zero"), "/dev/zero: not a regular file"},
		"template file device": {append(base, "-o", "go-template-file=/dev/zero"), "/dev/zero: not a regular file"},
		"kubeconfig device":    {[]string{"whatif", "--kubeconfig", "/dev/zero", "--pod", "a/b"}, "/dev/zero: not a regular file"},
		"scheduler kubeconfig": {[]string{"scheduler", "--kubeconfig", "/dev/zero"}, "/dev/zero: not a regular file"},
		"missing kubeconfig":   {[]string{"whatif", "--kubeconfig", "/nonexistent", "--pod", "a/b"}, "no such file or directory"},
		"burst 0":              {[]string{"scheduler", "--kubeconfig", "/nonexistent", "--kube-api-burst", "0"}, "burst"},
	} {
		t.Run(name, func(t *testing.T) {
			_, stderr, code := run(tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line containing %q", code, stderr, tc.want)
			}
		})
	}
}
