package snapshot_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// TestLabelSets checks that pods share a label set exactly when their
// namespaces and labels are equal, that ids of sets no pod has are reused,
// and that a removed or replaced pod no longer has a set.
func TestLabelSets(t *testing.T) {
	snap := snapshot.Empty()
	add := func(ns, name string, labels map[string]string) *snapshot.Pod {
		t.Helper()
		b := rt.Pod(ns, name)
		for k, v := range labels {
			b.Label(k, v)
		}
		p, err := snap.AddPod(b.Obj())
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	web := map[string]string{"app": "web", "tier": "front"}
	a := add("default", "a", web)
	b := add("default", "b", map[string]string{"tier": "front", "app": "web"})
	c := add("other", "c", web)
	d := add("default", "d", map[string]string{"app": "web"})
	e := add("default", "e", map[string]string{"app": "web\x00tier"})
	ids := map[string]int{"a": a.LabelSetID(), "b": b.LabelSetID(), "c": c.LabelSetID(), "d": d.LabelSetID(), "e": e.LabelSetID()}
	if ids["a"] != ids["b"] {
		t.Errorf("equal labels, different sets: %v", ids)
	}
	seen := map[int]string{}
	for _, name := range []string{"a", "c", "d", "e"} {
		if other, dup := seen[ids[name]]; dup {
			t.Errorf("pods %s and %s share set %d: %v", name, other, ids[name], ids)
		}
		seen[ids[name]] = name
	}
	for name, id := range ids {
		set := snap.LabelSets()[id]
		p := snap.Pod(map[string]string{"a": "default/a", "b": "default/b", "c": "other/c", "d": "default/d", "e": "default/e"}[name])
		if set == nil || set.Namespace != p.Namespace() || !cmp.Equal(map[string]string(set.Labels), p.Obj().Labels) {
			t.Errorf("set of %s: %+v, pod %s %v", name, set, p.Namespace(), p.Obj().Labels)
		}
	}

	// d's set is freed with d, and its id goes to the next new set.
	snap.RemovePod("default/d")
	if got := d.LabelSetID(); got != -1 {
		t.Errorf("removed pod has set %d", got)
	}
	if snap.LabelSets()[ids["d"]] != nil {
		t.Errorf("set of the removed pod is still listed")
	}
	f := add("default", "f", map[string]string{"app": "db"})
	if f.LabelSetID() != ids["d"] {
		t.Errorf("new set got id %d, want the freed %d", f.LabelSetID(), ids["d"])
	}
	// a's set stays while b has it.
	snap.RemovePod("default/a")
	if got := b.LabelSetID(); got != ids["b"] || snap.LabelSets()[got] == nil {
		t.Errorf("b's set %d gone with a", got)
	}
	// An update to new labels moves the pod to another set.
	upd := rt.Pod("default", "b").Label("app", "db").Obj()
	nb, err := snap.UpdatePod(upd)
	if err != nil {
		t.Fatal(err)
	}
	if nb.LabelSetID() != f.LabelSetID() || b.LabelSetID() != -1 {
		t.Errorf("updated pod in set %d (want %d), old object in %d (want -1)", nb.LabelSetID(), f.LabelSetID(), b.LabelSetID())
	}
	// A pod made with NewPod has none.
	if p, err := snap.NewPod(rt.Pod("default", "new").Label("app", "db").Obj()); err != nil || p.LabelSetID() != -1 {
		t.Errorf("NewPod: set %d, err %v", p.LabelSetID(), err)
	}
}

// TestAntiAffinityTermIDs checks that equal anti-affinity terms of
// different pods share an id and that removed pods give theirs up.
func TestAntiAffinityTermIDs(t *testing.T) {
	snap := snapshot.Empty()
	add := func(name, topologyKey string, sel map[string]string) *snapshot.Pod {
		t.Helper()
		p, err := snap.AddPod(rt.Pod("default", name).PodAntiAffinity(topologyKey, sel).Obj())
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	id := func(p *snapshot.Pod) int { return p.RequiredAntiAffinity()[0].ID() }
	a := add("a", v1.LabelHostname, map[string]string{"app": "x"})
	b := add("b", v1.LabelHostname, map[string]string{"app": "x"})
	c := add("c", v1.LabelTopologyZone, map[string]string{"app": "x"})
	d := add("d", v1.LabelHostname, map[string]string{"app": "y"})
	if id(a) != id(b) || id(a) < 0 {
		t.Errorf("equal terms: ids %d and %d", id(a), id(b))
	}
	if id(c) == id(a) || id(d) == id(a) || id(c) == id(d) {
		t.Errorf("different terms share ids: a %d, c %d, d %d", id(a), id(c), id(d))
	}
	if got := snap.AntiAffinityTerms()[id(d)]; got == nil || got.TopologyKey != v1.LabelHostname {
		t.Errorf("term %d: %+v", id(d), got)
	}
	dID := id(d)
	snap.RemovePod("default/d")
	if id(d) != -1 || snap.AntiAffinityTerms()[dID] != nil {
		t.Errorf("removed pod's term: id %d, listed %v", id(d), snap.AntiAffinityTerms()[dID])
	}
	e := add("e", v1.LabelHostname, map[string]string{"app": "z"})
	if id(e) != dID {
		t.Errorf("new term got id %d, want the freed %d", id(e), dID)
	}
	if p, err := snap.NewPod(rt.Pod("default", "new").PodAntiAffinity(v1.LabelHostname, map[string]string{"app": "x"}).Obj()); err != nil || id(p) != -1 {
		t.Errorf("NewPod: term id %d, err %v", id(p), err)
	}
}

// TestDomains checks the topology domains of a key and that they follow
// node changes.
func TestDomains(t *testing.T) {
	snap, err := snapshot.New(snapshot.Objects{Nodes: []*v1.Node{
		rt.Node("n1").Zone("z1").Obj(), rt.Node("n2").Zone("z2").Obj(), rt.Node("n3").Zone("z1").Obj(), rt.Node("n4").Obj(),
	}})
	if err != nil {
		t.Fatal(err)
	}
	zoneOf := func() map[string]string {
		d := snap.Domains(v1.LabelTopologyZone)
		out := map[string]string{}
		for _, n := range snap.Nodes {
			if id := d.Of(n); id >= 0 {
				out[n.Name] = d.Values[id]
			} else {
				out[n.Name] = "-"
			}
		}
		return out
	}
	if diff := cmp.Diff(map[string]string{"n1": "z1", "n2": "z2", "n3": "z1", "n4": "-"}, zoneOf()); diff != "" {
		t.Errorf("domains (-want,+got):\n%s", diff)
	}
	if err := snap.UpdateNode(rt.Node("n4").Zone("z3").Obj()); err != nil {
		t.Fatal(err)
	}
	snap.RemoveNode("n2")
	if diff := cmp.Diff(map[string]string{"n1": "z1", "n3": "z1", "n4": "z3"}, zoneOf()); diff != "" {
		t.Errorf("domains after node changes (-want,+got):\n%s", diff)
	}
}
