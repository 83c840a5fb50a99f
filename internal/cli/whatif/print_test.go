package whatif

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/reprieve/reprieve/internal/whatif"
)

// TestTiedNodesNamed: a tie among many nodes names a few of them and
// counts the rest, instead of a line naming every node.
func TestTiedNodesNamed(t *testing.T) {
	tests := []struct {
		tied int
		want string
	}{
		{2, "WHY       n-000 tied with n-001 on every criterion"},
		{maxTiedNamed + 1, "WHY       n-000 tied with n-001, n-002, n-003, n-004, n-005 on every criterion"},
		{500, "WHY       n-000 tied with n-001, n-002, n-003, n-004, n-005 and 494 other nodes on every criterion"},
	}
	for _, tt := range tests {
		d := &whatif.Decision{Pod: "default/p", NominatedNode: "n-000", DecidedBy: "tie"}
		for i := range tt.tied {
			d.TiedNodes = append(d.TiedNodes, fmt.Sprintf("n-%03d", i))
		}
		var out bytes.Buffer
		if err := printTable(&out, d, false); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), tt.want+";") {
			t.Errorf("%d tied: got\n%s\nwant a line starting %q", tt.tied, out.String(), tt.want)
		}
	}
}
