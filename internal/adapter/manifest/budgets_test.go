package manifest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// budgetCluster is a budget without a status over four Ready pods, one
// of them not Ready, and one more pod that is not selected.
var budgetCluster = nodeDoc + `---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec: {minAvailable: 3, selector: {matchLabels: {app: web}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: given}
spec: {minAvailable: 3, selector: {matchLabels: {app: web}}}
status: {disruptionsAllowed: 7}
` + budgetPods

var budgetPods = func() string {
	var b strings.Builder
	for i, ready := range []string{"True", "True", "True", "True", "False"} {
		b.WriteString("---\napiVersion: v1\nkind: Pod\nmetadata: {name: web-" + string(rune('0'+i)) + ", labels: {app: web}}\n" +
			"spec: {nodeName: n1, containers: [{name: c, image: i}]}\n" +
			"status: {phase: Running, conditions: [{type: Ready, status: \"" + ready + "\"}]}\n")
	}
	return b.String()
}()

// TestCompleteBudgets: a budget without a status gets the controller's,
// from the pods' Ready conditions, whether the set is lean (which drops
// them, and reads its input again) or not, and whatever the input was read
// from; a budget with a status keeps it.
func TestCompleteBudgets(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(path, []byte(budgetCluster), 0o644); err != nil {
		t.Fatal(err)
	}
	load := map[string]func(s *Set) error{
		"path":  func(s *Set) error { return s.AddPath(path) },
		"dir":   func(s *Set) error { return s.AddPath(dir) },
		"bytes": func(s *Set) error { return s.AddBytes("cluster.yaml", []byte(budgetCluster)) },
		"stdin": func(s *Set) error { return s.AddPath("-") },
	}
	for name, add := range load {
		for _, lean := range []bool{false, true} {
			t.Run(name+map[bool]string{false: "", true: "/lean"}[lean], func(t *testing.T) {
				s := NewSetWith(Options{Lean: lean, Stdin: strings.NewReader(budgetCluster)})
				if err := add(s); err != nil {
					t.Fatal(err)
				}
				if err := s.CompleteBudgets(context.Background(), time.Time{}); err != nil {
					t.Fatal(err)
				}
				got := map[string]int32{}
				for _, pdb := range s.Objects.PDBs {
					got[pdb.Name] = pdb.Status.DisruptionsAllowed
				}
				if got["web"] != 1 || got["given"] != 7 {
					t.Errorf("disruptions allowed %v, want web 1 (4 Ready of 5, 3 desired) and given 7 (its own)", got)
				}
				if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "default/web has no status") {
					t.Errorf("warnings %q, want one for default/web", s.Warnings)
				}
				if s.inputs != nil {
					t.Error("the set still holds its inputs")
				}
			})
		}
	}
}
