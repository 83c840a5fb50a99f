package zzold

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reprieve/reprieve/test/conformance/gen"
	"github.com/reprieve/reprieve/test/conformance/upstream"
	"encoding/json"
)

func TestSameAsOld(t *testing.T) {
	n := 0
	for _, p := range gen.Profiles() {
		for seed := int64(1); seed <= 300; seed++ {
			sc := gen.Generate(seed, p)
			in := Input{Nodes: sc.Nodes, Pods: sc.Pods, PDBs: sc.PDBs, PriorityClasses: sc.PriorityClasses, Namespaces: sc.Namespaces, Preemptor: sc.Preemptor}
			old, err1 := Run(context.Background(), in)
			nw, err2 := upstream.Run(context.Background(), upstream.Input{Nodes: sc.Nodes, Pods: sc.Pods, PDBs: sc.PDBs, PriorityClasses: sc.PriorityClasses, Namespaces: sc.Namespaces, Preemptor: sc.Preemptor})
			if (err1 == nil) != (err2 == nil) {
				t.Fatalf("%s-%d errors %v %v", p, seed, err1, err2)
			}
			a, _ := json.Marshal(old)
			b, _ := json.Marshal(nw)
			if d := cmp.Diff(string(a), string(b)); d != "" {
				t.Errorf("%s-%d differ: %s", p, seed, d)
			}
			n++
		}
	}
	t.Logf("%d scenarios identical", n)
}
