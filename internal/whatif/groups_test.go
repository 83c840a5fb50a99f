package whatif_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
	"github.com/reprieve/reprieve/internal/whatif"
)

var gangGates = profile.Features{GenericWorkload: true, CompositePodGroup: true}

var podGroup = rt.PodGroup

// in puts the pod in the PodGroup name.
func in(b *rt.PodBuilder, name string) *rt.PodBuilder {
	b.Obj().Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &name}
	return b
}

type groupScenario struct {
	nodes   []*v1.Node
	pods    []*v1.Pod
	pgs     []*schedulingv1beta1.PodGroup
	cpgs    []*schedulingv1alpha3.CompositePodGroup
	pdbs    []*policyv1.PodDisruptionBudget
	classes []*schedulingv1.PriorityClass
	pod     *v1.Pod
}

// evaluateGroups decides for sc.pod with the given features and checks that
// the evaluation changed neither the objects nor the snapshot.
func evaluateGroups(t *testing.T, sc groupScenario, f profile.Features) *whatif.Decision {
	t.Helper()
	snap, err := snapshot.New(snapshot.Objects{Nodes: sc.nodes, Pods: sc.pods, PDBs: sc.pdbs, PodGroups: sc.pgs, CompositePodGroups: sc.cpgs, PriorityClasses: sc.classes})
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	pod, err := snap.NewPod(sc.pod)
	if err != nil {
		t.Fatal(err)
	}
	var before []any
	for _, p := range sc.pods {
		before = append(before, p.DeepCopy())
	}
	for _, g := range sc.pgs {
		before = append(before, g.DeepCopy())
	}
	requested := map[string]snapshot.Resources{}
	for _, n := range snap.Nodes {
		requested[n.Name] = n.Requested.Clone()
	}
	d, err := whatif.Evaluate(snap, pod, whatif.Options{Now: now, Features: f})
	if err != nil {
		t.Fatal(err)
	}
	var after []any
	for _, p := range sc.pods {
		after = append(after, p.DeepCopy())
	}
	for _, g := range sc.pgs {
		after = append(after, g.DeepCopy())
	}
	if !equality.Semantic.DeepEqual(before, after) {
		t.Errorf("evaluation modified its input objects")
	}
	for _, n := range snap.Nodes {
		if !equality.Semantic.DeepEqual(requested[n.Name], n.Requested) {
			t.Errorf("evaluation modified node %s of the snapshot", n.Name)
		}
	}
	return d
}

// victims returns the decision's victims, sorted.
func victims(d *whatif.Decision) []string {
	var out []string
	for _, v := range d.Victims {
		out = append(out, v.Pod+"@"+v.Node)
	}
	slices.Sort(out)
	return out
}

func TestPodGroupVictims(t *testing.T) {
	twoNodes := []*v1.Node{node("n1", "2").Obj(), node("n2", "2").Obj()}
	// A gang of two pods (one per node, 1 cpu each) and a single pod on n1.
	gang := groupScenario{
		nodes: twoNodes,
		pods: []*v1.Pod{
			in(pod("g1", 0, "1").On("n1").StartedAt(1), "gang").Obj(),
			in(pod("g2", 0, "1").On("n2").StartedAt(1), "gang").Obj(),
			pod("single", 0, "1").On("n1").StartedAt(2).Obj(),
			pod("busy", 100, "1").On("n2").Obj(),
		},
		pgs: []*schedulingv1beta1.PodGroup{podGroup("gang", 0, "All", "")},
		pod: pod("p", 10, "1").NodeSelector(v1.LabelHostname, "n1").Obj(),
	}
	tests := map[string]struct {
		sc             groupScenario
		features       profile.Features
		wantNode       string
		wantVictims    []string
		wantGroups     []whatif.VictimGroup
		wantPDB        int
		wantWL         int
		wantIneligible string
	}{
		"gates off: group members are plain pods, today's answer": {
			sc: gang, features: profile.Features{},
			// g1 and single tie on priority; single started later and goes.
			wantNode: "n1", wantVictims: []string{"default/single@n1"},
		},
		"a single pod is preferred over a gang of equal priority": {
			sc: gang, features: gangGates,
			wantNode: "n1", wantVictims: []string{"default/single@n1"}, wantWL: 0,
		},
		"a gang must go whole, with its pods on other nodes": {
			sc: func() groupScenario {
				sc := gang
				sc.pod = pod("p", 10, "2").NodeSelector(v1.LabelHostname, "n1").Obj()
				return sc
			}(), features: gangGates,
			wantNode: "n1", wantVictims: []string{"default/g1@n1", "default/g2@n2", "default/single@n1"},
			wantGroups: []whatif.VictimGroup{{Kind: "PodGroup", Name: "default/gang", Priority: 0,
				Members: []whatif.GroupMember{{Pod: "default/g1", Node: "n1"}, {Pod: "default/g2", Node: "n2"}}, Nodes: []string{"n1", "n2"}}},
			wantWL: 1,
		},
		"a group is a victim only below the preemptor: group priority, not the pods'": {
			sc: func() groupScenario {
				sc := gang
				sc.pgs = []*schedulingv1beta1.PodGroup{podGroup("gang", 10, "All", "")}
				sc.pod = pod("p", 10, "2").NodeSelector(v1.LabelHostname, "n1").Obj()
				return sc
			}(), features: gangGates,
			// Only single may go, which is not enough.
			wantNode: "",
		},
		"a group below the preemptor goes although its pods are above it": {
			sc: groupScenario{
				nodes: twoNodes,
				pods: []*v1.Pod{
					in(pod("g1", 1000, "2").On("n1"), "gang").Obj(),
					in(pod("g2", 1000, "1").On("n2"), "gang").Obj(),
				},
				pgs: []*schedulingv1beta1.PodGroup{podGroup("gang", 5, "All", "")},
				pod: pod("p", 10, "2").NodeSelector(v1.LabelHostname, "n1").Obj(),
			}, features: gangGates,
			wantNode: "n1", wantVictims: []string{"default/g1@n1", "default/g2@n2"},
			wantGroups: []whatif.VictimGroup{{Kind: "PodGroup", Name: "default/gang", Priority: 5,
				Members: []whatif.GroupMember{{Pod: "default/g1", Node: "n1"}, {Pod: "default/g2", Node: "n2"}}, Nodes: []string{"n1", "n2"}}},
			wantWL: 1,
		},
		"disruption mode Single: members go one by one, with the group's priority": {
			sc: func() groupScenario {
				sc := gang
				sc.pgs = []*schedulingv1beta1.PodGroup{podGroup("gang", 0, "Single", "")}
				sc.pod = pod("p", 10, "2").NodeSelector(v1.LabelHostname, "n1").Obj()
				return sc
			}(), features: gangGates,
			wantNode: "n1", wantVictims: []string{"default/g1@n1", "default/single@n1"}, wantWL: 1,
		},
		"a CompositePodGroup with disruption mode All goes whole": {
			sc: groupScenario{
				nodes: twoNodes,
				pods: []*v1.Pod{
					in(pod("a", 0, "2").On("n1"), "left").Obj(),
					in(pod("b", 0, "1").On("n2"), "right").Obj(),
				},
				pgs:  []*schedulingv1beta1.PodGroup{podGroup("left", 0, "Single", "job"), podGroup("right", 0, "Single", "job")},
				cpgs: []*schedulingv1alpha3.CompositePodGroup{rt.CompositePodGroup("job", 3, "All", "")},
				pod:  pod("p", 10, "1").NodeSelector(v1.LabelHostname, "n1").Obj(),
			}, features: gangGates,
			wantNode: "n1", wantVictims: []string{"default/a@n1", "default/b@n2"},
			wantGroups: []whatif.VictimGroup{{Kind: "CompositePodGroup", Name: "default/job", Priority: 3,
				Members: []whatif.GroupMember{{Pod: "default/a", Node: "n1"}, {Pod: "default/b", Node: "n2"}}, Nodes: []string{"n1", "n2"}}},
			wantWL: 1,
		},
		"PDB atomicity: one member breaking a budget makes the group violating; each such member counts": {
			sc: func() groupScenario {
				sc := gang
				sc.pods = nil
				for _, p := range gang.pods {
					sc.pods = append(sc.pods, p.DeepCopy())
				}
				for _, p := range sc.pods[:2] {
					p.Labels = map[string]string{"app": "train"}
				}
				sc.pdbs = []*policyv1.PodDisruptionBudget{rt.PDB("default", "train", map[string]string{"app": "train"}, 0)}
				sc.pod = pod("p", 10, "2").NodeSelector(v1.LabelHostname, "n1").Obj()
				return sc
			}(), features: gangGates,
			wantNode: "n1", wantVictims: []string{"default/g1@n1", "default/g2@n2", "default/single@n1"}, wantPDB: 2, wantWL: 1,
			wantGroups: []whatif.VictimGroup{{Kind: "PodGroup", Name: "default/gang", Priority: 0,
				Members: []whatif.GroupMember{{Pod: "default/g1", Node: "n1"}, {Pod: "default/g2", Node: "n2"}}, Nodes: []string{"n1", "n2"}}},
		},
		"the terminating pod on the nominated node counts with its group's priority": {
			sc: groupScenario{
				nodes: []*v1.Node{node("n1", "2").Obj()},
				pods: []*v1.Pod{
					in(pod("going", 100, "2").On("n1").TerminatingByPreemption(), "gang").Obj(),
				},
				pgs: []*schedulingv1beta1.PodGroup{podGroup("gang", 0, "All", "")},
				pod: pod("p", 10, "1").Nominated("n1").Obj(),
			}, features: gangGates,
			wantIneligible: "not eligible due to a terminating pod on the nominated node.",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			// Scenarios share pod objects; work on copies.
			sc := tc.sc
			sc.pods = nil
			for _, p := range tc.sc.pods {
				sc.pods = append(sc.pods, p.DeepCopy())
			}
			d := evaluateGroups(t, sc, tc.features)
			if d.IneligibleReason != tc.wantIneligible {
				t.Fatalf("ineligible %q, want %q", d.IneligibleReason, tc.wantIneligible)
			}
			if d.NominatedNode != tc.wantNode {
				t.Fatalf("nominated %q, want %q (%s)", d.NominatedNode, tc.wantNode, d.Summary)
			}
			got := victims(d)
			if diff := cmp.Diff(tc.wantVictims, got); diff != "" {
				t.Errorf("victims (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantGroups, d.VictimGroups, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("victim groups (-want,+got):\n%s", diff)
			}
			if d.NumPDBViolations != tc.wantPDB || d.DisruptedWorkloads != tc.wantWL {
				t.Errorf("pdb violations %d, disrupted workloads %d; want %d, %d", d.NumPDBViolations, d.DisruptedWorkloads, tc.wantPDB, tc.wantWL)
			}
			if tc.features == (profile.Features{}) {
				if b, _ := json.Marshal(d); json.Valid(b) && (containsKey(b, "victimGroups") || containsKey(b, "disruptedWorkloads")) {
					t.Errorf("gates off: the JSON has pod-group fields: %s", b)
				}
			}
		})
	}
}

func containsKey(b []byte, key string) bool {
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	_, ok := m[key]
	return ok
}

// TestPodGroupMembersOrderedByImportance: the flat victim list is the
// members of each unit in turn, units in decreasing importance.
func TestPodGroupMembersOrderedByImportance(t *testing.T) {
	sc := groupScenario{
		nodes: []*v1.Node{node("n1", "4").Obj(), node("n2", "2").Obj()},
		pods: []*v1.Pod{
			pod("lonely", 0, "1").On("n1").StartedAt(1).Obj(),
			in(pod("g1", 0, "1").On("n1").StartedAt(2), "gang").Obj(),
			in(pod("g2", 0, "1").On("n2").StartedAt(2), "gang").Obj(),
			pod("mid", 5, "2").On("n1").StartedAt(1).Obj(),
		},
		pgs: []*schedulingv1beta1.PodGroup{podGroup("gang", 0, "All", "")},
		pod: pod("p", 10, "4").NodeSelector(v1.LabelHostname, "n1").Obj(),
	}
	d := evaluateGroups(t, sc, gangGates)
	var got []string
	for _, v := range d.Victims {
		got = append(got, v.Pod)
	}
	// mid (5) first, then the gang (rank over a pod), then lonely.
	want := []string{"default/mid", "default/g1", "default/g2", "default/lonely"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("victim order (-want,+got):\n%s", diff)
	}
	var cand []string
	for _, c := range d.Candidates {
		cand = append(cand, c.VictimGroups...)
	}
	if diff := cmp.Diff([]string{"PodGroup default/gang"}, cand); diff != "" {
		t.Errorf("candidate groups (-want,+got):\n%s", diff)
	}
	if d.Summary != "preempts 4 pods on n1, evicting PodGroup default/gang whole (2 nodes)" {
		t.Errorf("summary %q", d.Summary)
	}
}

// TestPodGroupRemoteStateUpdates ports upstream's "Cross-node PodGroup"
// cases of TestSelectVictimsOnNode: re-adding a group victim updates the
// affinity and spread state of every node it touches, while the preemptor
// is only filtered on the candidate node.
func TestPodGroupRemoteStateUpdates(t *testing.T) {
	zoneNode := func(name, zone string) *v1.Node { return node(name, "2").Zone(zone).Obj() }
	antiFoo := func(b *rt.PodBuilder) *rt.PodBuilder {
		p := b.Obj()
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "foo", Operator: metav1.LabelSelectorOpExists}}},
			TopologyKey:   v1.LabelTopologyZone,
		}}}}
		return b
	}
	tests := map[string]struct {
		sc   groupScenario
		want []string
	}{
		"zone anti-affinity to a member on another node blocks the reprieve": {
			sc: groupScenario{
				nodes: []*v1.Node{zoneNode("node-a", "z1"), zoneNode("node-b", "z1")},
				pods: []*v1.Pod{
					in(pod("pod-x", 0, "1").On("node-a"), "pg1").Obj(),
					in(pod("pod-y", 0, "1").Label("foo", "").On("node-b"), "pg1").Obj(),
				},
				pgs: []*schedulingv1beta1.PodGroup{podGroup("pg1", 0, "All", "")},
				pod: antiFoo(pod("p", 1000, "1").NodeSelector(v1.LabelHostname, "node-a")).Obj(),
			},
			want: []string{"default/pod-x@node-a", "default/pod-y@node-b"},
		},
		"negative control: without the label on the remote member the group is reprieved": {
			sc: groupScenario{
				nodes: []*v1.Node{zoneNode("node-a", "z1"), zoneNode("node-b", "z1")},
				pods: []*v1.Pod{
					in(pod("pod-x", 0, "1").On("node-a"), "pg1").Obj(),
					in(pod("pod-y", 0, "1").On("node-b"), "pg1").Obj(),
					pod("z", 0, "1").Label("foo", "").On("node-a").Obj(),
				},
				pgs: []*schedulingv1beta1.PodGroup{podGroup("pg1", 0, "All", "")},
				pod: antiFoo(pod("p", 1000, "1").NodeSelector(v1.LabelHostname, "node-a")).Obj(),
			},
			want: []string{"default/z@node-a"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			d := evaluateGroups(t, tc.sc, gangGates)
			if diff := cmp.Diff(tc.want, victims(d)); diff != "" {
				t.Errorf("victims (-want,+got):\n%s\n%s", diff, d.Summary)
			}
		})
	}
}

// TestPodGroupPreemptorWarning: a preemptor in a pod group is evaluated on
// its own, with a warning, when the gate is on.
func TestPodGroupPreemptorWarning(t *testing.T) {
	sc := groupScenario{nodes: []*v1.Node{node("n1", "2").Obj()}, pod: in(pod("p", 1, "1"), "mine").Obj()}
	if d := evaluateGroups(t, sc, profile.Features{}); len(d.Warnings) != 0 {
		t.Errorf("gates off: warnings %v", d.Warnings)
	}
	if d := evaluateGroups(t, sc, gangGates); len(d.Warnings) != 1 {
		t.Errorf("gates on: warnings %v, want one", d.Warnings)
	}
}
