package snapshot_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

func TestResolvePriority(t *testing.T) {
	classes := []*schedulingv1.PriorityClass{
		rt.PriorityClass("gold", 1000, false, false),
		rt.PriorityClass("patient", 500, false, true),
		rt.PriorityClass("default-b", 20, true, false),
		rt.PriorityClass("default-a", 10, true, true),
	}
	snap, err := snapshot.New(snapshot.Objects{PriorityClasses: classes})
	if err != nil {
		t.Fatal(err)
	}
	never, lower := v1.PreemptNever, v1.PreemptLowerPriority
	tests := map[string]struct {
		pod        *v1.Pod
		wantPrio   int32
		wantPolicy v1.PreemptionPolicy
		wantErr    bool
	}{
		"explicit priority wins": {pod: rt.Pod("a", "p").Priority(7).PriorityClass("gold").Obj(), wantPrio: 7, wantPolicy: lower},
		"class value and policy": {pod: rt.Pod("a", "p").PriorityClass("patient").Obj(), wantPrio: 500, wantPolicy: never},
		"lowest global default":  {pod: rt.Pod("a", "p").Obj(), wantPrio: 10, wantPolicy: never},
		"explicit policy wins": {pod: func() *v1.Pod {
			p := rt.Pod("a", "p").PriorityClass("patient").Obj()
			p.Spec.PreemptionPolicy = &lower
			return p
		}(), wantPrio: 500, wantPolicy: lower},
		"built-in system class":           {pod: rt.Pod("a", "p").PriorityClass("system-node-critical").Obj(), wantPrio: 2000001000, wantPolicy: lower},
		"unknown class":                   {pod: rt.Pod("a", "p").PriorityClass("bronze").Obj(), wantErr: true},
		"unknown class with set priority": {pod: rt.Pod("a", "p").PriorityClass("bronze").Priority(3).Obj(), wantPrio: 3, wantPolicy: lower},
	}
	_ = never
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			prio, policy, err := snap.ResolvePriority(tc.pod)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if !tc.wantErr && (prio != tc.wantPrio || policy != tc.wantPolicy) {
				t.Errorf("got %d %s, want %d %s", prio, policy, tc.wantPrio, tc.wantPolicy)
			}
		})
	}
}

func TestNodeOrderInterleavesZones(t *testing.T) {
	var nodes []*v1.Node
	for i, z := range []string{"a", "a", "b", "a", "c", "b"} {
		nodes = append(nodes, rt.Node(fmt.Sprintf("n%d", i)).Zone(z).Obj())
	}
	snap, err := snapshot.New(snapshot.Objects{Nodes: nodes})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, n := range snap.Nodes {
		got = append(got, n.Name)
		if n.Index != i {
			t.Errorf("%s has index %d, want %d", n.Name, n.Index, i)
		}
	}
	// zone a: n0 n1 n3, b: n2 n5, c: n4
	if diff := cmp.Diff([]string{"n0", "n2", "n4", "n1", "n5", "n3"}, got); diff != "" {
		t.Errorf("node order (-want +got):\n%s", diff)
	}
}

// TestAddNodesAsAddNode: AddNodes lays nodes out as AddNode one by one
// does, skips (and reports) a node that exists, and keeps the pods of a
// node that arrived before it.
func TestAddNodesAsAddNode(t *testing.T) {
	var nodes []*v1.Node
	for i, z := range []string{"a", "a", "b", "a", "c", "b"} {
		nodes = append(nodes, rt.Node(fmt.Sprintf("n%d", i)).Zone(z).Obj())
	}
	pod := rt.Pod("ns", "early").Req("1", "1Gi").On("n3").Obj()
	one, all := snapshot.Empty(), snapshot.Empty()
	for _, s := range []*snapshot.Snapshot{one, all} {
		if _, err := s.AddPod(pod); err != nil {
			t.Fatal(err)
		}
		if err := s.AddNode(nodes[0]); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range nodes[1:] {
		if err := one.AddNode(n); err != nil {
			t.Fatal(err)
		}
	}
	if err := all.AddNodes(nodes); err == nil {
		t.Errorf("AddNodes with n0 there already: no error")
	}
	if diff := cmp.Diff(summarize(one), summarize(all)); diff != "" {
		t.Errorf("AddNodes differs from AddNode one by one (-AddNode +AddNodes):\n%s", diff)
	}
}

// summary is what an evaluation reads from a snapshot, in comparable form.
type summary struct {
	Nodes     []string
	Pods      map[string][]string // node -> sorted pod keys
	Requested map[string]int64
	Ports     map[string]int
	Nominated map[string][]string
}

func summarize(s *snapshot.Snapshot) summary {
	sum := summary{Pods: map[string][]string{}, Requested: map[string]int64{}, Ports: map[string]int{}, Nominated: map[string][]string{}}
	for _, n := range s.Nodes {
		sum.Nodes = append(sum.Nodes, n.Name)
		var keys []string
		for _, p := range n.Pods {
			keys = append(keys, p.Key)
		}
		slices.Sort(keys)
		sum.Pods[n.Name] = keys
		sum.Requested[n.Name] = n.Requested.MilliCPU
		sum.Ports[n.Name] = len(n.UsedPorts)
		var nom []string
		for _, p := range s.NominatedPods(n.Name) {
			nom = append(nom, p.Key)
		}
		slices.Sort(nom)
		sum.Nominated[n.Name] = nom
	}
	slices.Sort(sum.Nodes)
	return sum
}

// TestIncrementalMatchesRebuild applies random adds, updates and removals
// and checks the snapshot always equals one built from scratch.
func TestIncrementalMatchesRebuild(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	live := snapshot.Empty()
	nodes := map[string]*v1.Node{}
	pods := map[string]*v1.Pod{}
	var order []string
	for step := range 2000 {
		switch op := r.IntN(10); {
		case op < 2 || len(nodes) == 0:
			name := fmt.Sprintf("n%d", r.IntN(8))
			nb := rt.Node(name).CPU("8").Zone(fmt.Sprintf("z%d", r.IntN(3)))
			switch r.IntN(4) {
			case 0:
				nb.Unschedulable()
			case 1:
				nb.Taint("dedicated", "x", v1.TaintEffectNoSchedule)
			}
			n := nb.Obj()
			if _, ok := nodes[name]; ok {
				if err := live.UpdateNode(n); err != nil {
					t.Fatal(err)
				}
			} else if err := live.AddNode(n); err != nil {
				t.Fatal(err)
			}
			nodes[name] = n
		case op < 7:
			num := r.IntN(40)
			name := fmt.Sprintf("p%d", num)
			b := rt.Pod("ns", name).Priority(int32(r.IntN(5))).Req(fmt.Sprintf("%dm", 100*r.IntN(5)), "")
			if r.IntN(3) == 0 {
				// Ports are a set per node, as upstream's: keep them unique
				// so that a rebuild agrees.
				b.HostPort(int32(8000+num), "", "")
			}
			if r.IntN(4) == 0 {
				b.PodAntiAffinity(v1.LabelHostname, map[string]string{"app": "x"})
			}
			var names []string
			for n := range nodes {
				names = append(names, n)
			}
			slices.Sort(names)
			switch x := r.IntN(3); x {
			case 0:
				b.On(names[r.IntN(len(names))])
			case 1:
				b.Nominated(names[r.IntN(len(names))])
			}
			p := b.Obj()
			if _, ok := pods[name]; ok {
				if _, err := live.UpdatePod(p); err != nil {
					t.Fatal(err)
				}
			} else {
				if _, err := live.AddPod(p); err != nil {
					t.Fatal(err)
				}
				order = append(order, name)
			}
			pods[name] = p
		default:
			if len(order) == 0 {
				continue
			}
			i := r.IntN(len(order))
			name := order[i]
			order = slices.Delete(order, i, i+1)
			live.RemovePod("ns/" + name)
			delete(pods, name)
		}
		// Drop pods whose node no longer exists from the comparison: a
		// rebuild would refuse them. (Nodes are never removed here.)
		var objs snapshot.Objects
		var nodeNames []string
		for n := range nodes {
			nodeNames = append(nodeNames, n)
		}
		slices.Sort(nodeNames)
		for _, n := range nodeNames {
			objs.Nodes = append(objs.Nodes, nodes[n])
		}
		for _, name := range order {
			objs.Pods = append(objs.Pods, pods[name])
		}
		rebuilt, err := snapshot.New(objs)
		if err != nil {
			t.Fatal(err)
		}
		checkSums(t, step, live)
		want, got := summarize(rebuilt), summarize(live)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("step %d: incremental snapshot differs from rebuild (-rebuild +incremental):\n%s", step, diff)
		}
	}
}

// TestPodsBeforeTheirNode checks a bound pod that arrives before its node
// (informer events are not ordered across kinds) is placed when the node
// comes, and that pods of a removed node come back with it.
func TestPodsBeforeTheirNode(t *testing.T) {
	s := snapshot.Empty()
	if _, err := s.AddPod(rt.Pod("ns", "early").Req("1", "").On("n1").Obj()); err != nil {
		t.Fatalf("a pod bound to a node not seen yet: %v", err)
	}
	if err := s.AddNode(rt.Node("n1").CPU("4").Obj()); err != nil {
		t.Fatal(err)
	}
	n := s.Node("n1")
	if len(n.Pods) != 1 || n.Requested.MilliCPU != 1000 {
		t.Fatalf("node has %d pods and %dm requested, want the early pod", len(n.Pods), n.Requested.MilliCPU)
	}
	s.RemoveNode("n1")
	if err := s.AddNode(rt.Node("n1").CPU("4").Obj()); err != nil {
		t.Fatal(err)
	}
	if len(s.Node("n1").Pods) != 1 {
		t.Fatal("pods of a removed node were lost")
	}
	s.RemovePod("ns/early")
	if len(s.Node("n1").Pods) != 0 || s.Node("n1").Requested.MilliCPU != 0 {
		t.Fatal("removing the pod left it on its node")
	}
	if _, err := snapshot.New(snapshot.Objects{Pods: []*v1.Pod{rt.Pod("ns", "p").On("nowhere").Obj()}}); err == nil {
		t.Error("New accepted a pod bound to a node that does not exist")
	}
}

// checkSums fails unless the snapshot's node sums say what its nodes say.
func checkSums(t *testing.T, step int, s *snapshot.Snapshot) {
	t.Helper()
	sums := s.Sums()
	if len(sums) != len(s.Nodes) {
		t.Fatalf("step %d: %d node sums for %d nodes", step, len(sums), len(s.Nodes))
	}
	total := 0
	for i, n := range s.Nodes {
		total += len(n.PodsWithRequiredAntiAffinity)
		a, r := n.Allocatable, n.Requested
		want := snapshot.NodeSums{
			Allocatable:             snapshot.Usage{MilliCPU: a.MilliCPU, Memory: a.Memory, EphemeralStorage: a.EphemeralStorage, Pods: a.AllowedPods},
			Requested:               snapshot.Usage{MilliCPU: r.MilliCPU, Memory: r.Memory, EphemeralStorage: r.EphemeralStorage, Pods: int64(len(n.Pods))},
			NumRequiredAntiAffinity: int32(len(n.PodsWithRequiredAntiAffinity)),
			Plain:                   !n.Unschedulable && len(n.Taints) == 0 && len(n.Nominated) == 0,
		}
		if sums[i] != want {
			t.Fatalf("step %d: node %s has sums %+v, want %+v", step, n.Name, sums[i], want)
		}
	}
	if total != s.NumRequiredAntiAffinity() {
		t.Fatalf("step %d: %d pods with required anti-affinity, the snapshot counts %d", step, total, s.NumRequiredAntiAffinity())
	}
}

// TestNewParallelMatchesNew: pods made ahead on several goroutines give
// New's snapshot, and New's first error.
func TestNewParallelMatchesNew(t *testing.T) {
	objs := func(change func(pods []*v1.Pod) []*v1.Pod) snapshot.Objects {
		var o snapshot.Objects
		o.Nodes = []*v1.Node{rt.Node("n1").CPU("100").Obj(), rt.Node("n2").CPU("100").Obj()}
		for i := range 1000 {
			b := rt.Pod("default", fmt.Sprintf("p%d", i)).Priority(int32(i%7)).Req(fmt.Sprintf("%dm", 10+i%5), "1Mi").On(fmt.Sprintf("n%d", 1+i%2)).StartedAt(i % 13)
			if i%10 == 0 {
				b.PodAntiAffinity("kubernetes.io/hostname", map[string]string{"app": "x"}).Label("app", "x")
			}
			o.Pods = append(o.Pods, b.Obj())
		}
		if change != nil {
			o.Pods = change(o.Pods)
		}
		return o
	}
	for name, change := range map[string]func([]*v1.Pod) []*v1.Pod{
		"valid":     nil,
		"duplicate": func(p []*v1.Pod) []*v1.Pod { return append(p[:700:700], append([]*v1.Pod{p[3]}, p[700:]...)...) },
		"unknown class and a later duplicate": func(p []*v1.Pod) []*v1.Pod {
			p[600] = rt.Pod("default", "p600").PriorityClass("nope").Obj()
			return append(p, p[5])
		},
		"no such node": func(p []*v1.Pod) []*v1.Pod { p[900].Spec.NodeName = "n9"; return p },
	} {
		want, wantErr := snapshot.New(objs(change))
		for _, workers := range []int{1, 2, 5} {
			got, err := snapshot.NewParallel(objs(change), workers)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("%s, %d goroutines: error %v, want %v", name, workers, err, wantErr)
			}
			if err != nil {
				continue
			}
			for _, w := range want.Pods() {
				g := got.Pod(w.Key)
				if g == nil || g.Seq != w.Seq || g.Priority != w.Priority || !cmp.Equal(g.Requests, w.Requests) || g.NodeName() != w.NodeName() {
					t.Fatalf("%s, %d goroutines: pod %s differs: %+v, want %+v", name, workers, w.Key, g, w)
				}
			}
			if len(got.Pods()) != len(want.Pods()) {
				t.Fatalf("%s: %d pods, want %d", name, len(got.Pods()), len(want.Pods()))
			}
		}
		if name != "valid" && wantErr == nil {
			t.Fatalf("%s: New accepts it", name)
		}
	}
}
