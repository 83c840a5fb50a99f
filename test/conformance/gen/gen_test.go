package gen

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

var seeds = flag.Int("gen.seeds", 300, "number of seeds per profile for the statistical tests")

// TestGenerateDeterministic: the same seed and profile give the same bytes;
// different seeds give different scenarios.
func TestGenerateDeterministic(t *testing.T) {
	for _, p := range Profiles() {
		t.Run(string(p), func(t *testing.T) {
			prev := []byte(nil)
			t.Parallel()
			for seed := range int64(20) {
				a, err := Generate(seed, p).YAML()
				if err != nil {
					t.Fatalf("seed %d: YAML: %v", seed, err)
				}
				b, err := Generate(seed, p).YAML()
				if err != nil {
					t.Fatalf("seed %d: YAML: %v", seed, err)
				}
				if !bytes.Equal(a, b) {
					t.Fatalf("seed %d: two runs differ (-first,+second):\n%s", seed, cmp.Diff(string(a), string(b)))
				}
				if bytes.Equal(a, prev) {
					t.Fatalf("seed %d gives the same scenario as seed %d", seed, seed-1)
				}
				prev = a
			}
		})
	}
}

// TestRoundTrip: Parse(YAML()) gives back the generated objects.
func TestRoundTrip(t *testing.T) {
	for _, p := range Profiles() {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			for seed := range int64(40) {
				want := Generate(seed, p)
				y, err := want.YAML()
				if err != nil {
					t.Fatalf("seed %d: YAML: %v", seed, err)
				}
				if !bytes.HasPrefix(y, []byte(fmt.Sprintf("# seed=%d profile=%s replay: reprieve whatif --snapshot FILE --pod %s/preemptor\n", seed, p, want.Preemptor.Namespace))) {
					t.Fatalf("seed %d: unexpected header line %q", seed, y[:bytes.IndexByte(y, '\n')])
				}
				got, err := Parse(y)
				if err != nil {
					t.Fatalf("seed %d: Parse: %v", seed, err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("seed %d: round trip (-want,+got):\n%s", seed, diff)
				}
				if !slices.Contains(got.Pods, got.Preemptor) {
					t.Fatalf("seed %d: parsed preemptor is not an element of Pods", seed)
				}
			}
		})
	}
}

// TestInvariants checks that every scenario could exist in a real cluster
// and follows the generator's rules.
func TestInvariants(t *testing.T) {
	for _, p := range Profiles() {
		t.Run(string(p), func(t *testing.T) {
			for seed := range int64(*seeds) {
				s := Generate(seed, p)
				for _, err := range invariantErrors(s) {
					t.Errorf("seed %d: %v", seed, err)
				}
				if t.Failed() {
					t.FailNow()
				}
			}
		})
	}
}

func invariantErrors(s *Scenario) []error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if n := len(s.Nodes); n < 2 || n > 12 {
		fail("%d nodes, want 2–12", n)
	}
	classes := map[string]*struct {
		value  int32
		policy v1.PreemptionPolicy
	}{}
	classes[systemClusterCritical] = &struct {
		value  int32
		policy v1.PreemptionPolicy
	}{systemClusterCriticalValue, v1.PreemptLowerPriority}
	uids := map[string]bool{}
	uid := func(kind, name, u string) {
		if u == "" {
			fail("%s %s has no UID", kind, name)
		}
		if uids[u] {
			fail("%s %s: UID %s is not unique", kind, name, u)
		}
		uids[u] = true
	}
	for _, pc := range s.PriorityClasses {
		if classes[pc.Name] != nil {
			fail("duplicate PriorityClass %s", pc.Name)
		}
		if pc.PreemptionPolicy == nil {
			fail("PriorityClass %s has no preemptionPolicy", pc.Name)
			continue
		}
		classes[pc.Name] = &struct {
			value  int32
			policy v1.PreemptionPolicy
		}{pc.Value, *pc.PreemptionPolicy}
		uid("PriorityClass", pc.Name, string(pc.UID))
	}
	namespaces := map[string]bool{}
	for _, ns := range s.Namespaces {
		if namespaces[ns.Name] {
			fail("duplicate Namespace %s", ns.Name)
		}
		namespaces[ns.Name] = true
		uid("Namespace", ns.Name, string(ns.UID))
	}
	nodes := map[string]*v1.Node{}
	for _, n := range s.Nodes {
		if nodes[n.Name] != nil {
			fail("duplicate Node %s", n.Name)
		}
		nodes[n.Name] = n
		uid("Node", n.Name, string(n.UID))
		if n.CreationTimestamp.IsZero() {
			fail("node %s has no creationTimestamp", n.Name)
		}
		if n.Labels[v1.LabelHostname] != n.Name {
			fail("node %s: hostname label %q", n.Name, n.Labels[v1.LabelHostname])
		}
		for _, r := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourcePods} {
			if _, ok := n.Status.Allocatable[r]; !ok {
				fail("node %s has no allocatable %s", n.Name, r)
			}
		}
		if s.Profile == Resources && len(n.Spec.Taints) > 0 {
			fail("node %s has taints in profile %s", n.Name, s.Profile)
		}
	}

	podKeys := map[string]bool{}
	used := map[string]res{}
	count := map[string]int64{}
	ports := map[string][]hostPort{}
	preemptorSeen := false
	for _, p := range s.Pods {
		key := p.Namespace + "/" + p.Name
		if podKeys[key] {
			fail("duplicate Pod %s", key)
		}
		podKeys[key] = true
		uid("Pod", key, string(p.UID))
		if !namespaces[p.Namespace] {
			fail("pod %s: namespace %s is not in Namespaces", key, p.Namespace)
		}
		if p.CreationTimestamp.IsZero() {
			fail("pod %s has no creationTimestamp", key)
		}
		if p.Spec.Priority == nil || p.Spec.PreemptionPolicy == nil {
			fail("pod %s: priority or preemptionPolicy not set", key)
			continue
		}
		if name := p.Spec.PriorityClassName; name != "" {
			c := classes[name]
			switch {
			case c == nil:
				fail("pod %s: unknown PriorityClass %q", key, name)
			case c.value != *p.Spec.Priority || c.policy != *p.Spec.PreemptionPolicy:
				fail("pod %s: priority %d/%s does not match class %s (%d/%s)", key, *p.Spec.Priority, *p.Spec.PreemptionPolicy, name, c.value, c.policy)
			}
		} else {
			for _, pc := range s.PriorityClasses {
				if pc.GlobalDefault {
					fail("pod %s has no class although %s is the global default", key, pc.Name)
				}
			}
			if *p.Spec.Priority != 0 || *p.Spec.PreemptionPolicy != v1.PreemptLowerPriority {
				fail("pod %s without class has priority %d/%s", key, *p.Spec.Priority, *p.Spec.PreemptionPolicy)
			}
		}
		for _, c := range slices.Concat(p.Spec.InitContainers, p.Spec.Containers) {
			r := fromList(c.Resources.Requests)
			if r.cpu%cpuUnit != 0 || r.mem%memUnit != 0 {
				fail("pod %s container %s: requests %v not in units of 100m and 128Mi", key, c.Name, c.Resources.Requests)
			}
		}
		if got, want := p.Status.QOSClass, qosClass(p); got != want {
			fail("pod %s: qosClass %s, want %s", key, got, want)
		}
		isPreemptor := p == s.Preemptor
		if isPreemptor {
			preemptorSeen = true
		}
		if (p.Annotations[PreemptorAnnotation] == "true") != isPreemptor {
			fail("pod %s: annotation %s=%q, preemptor %v", key, PreemptorAnnotation, p.Annotations[PreemptorAnnotation], isPreemptor)
		}
		for _, err := range constraintErrors(p) {
			fail("pod %s: %v", key, err)
		}
		if s.Profile == Resources {
			if p.Spec.Affinity != nil || len(p.Spec.NodeSelector) > 0 || len(p.Spec.TopologySpreadConstraints) > 0 ||
				len(p.Spec.Tolerations) != 2 || len(podHostPorts(p)) > 0 {
				fail("pod %s has constraints in profile %s", key, s.Profile)
			}
		}
		if p.Spec.NodeName == "" {
			if p.Status.Phase != v1.PodPending {
				fail("pending pod %s has phase %q", key, p.Status.Phase)
			}
			continue
		}
		if isPreemptor {
			fail("preemptor %s is bound to %s", key, p.Spec.NodeName)
		}
		if p.Status.NominatedNodeName != "" {
			fail("bound pod %s has a nominated node", key)
		}
		if nodes[p.Spec.NodeName] == nil {
			fail("pod %s is bound to unknown node %s", key, p.Spec.NodeName)
			continue
		}
		if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		if p.Status.Phase == v1.PodRunning && p.Status.StartTime == nil {
			fail("running pod %s has no startTime", key)
		}
		used[p.Spec.NodeName] = used[p.Spec.NodeName].add(podRequests(p))
		count[p.Spec.NodeName]++
		for _, hp := range podHostPorts(p) {
			if slices.ContainsFunc(ports[p.Spec.NodeName], hp.conflicts) {
				fail("pod %s: host port %v conflicts on node %s", key, hp, p.Spec.NodeName)
			}
			ports[p.Spec.NodeName] = append(ports[p.Spec.NodeName], hp)
		}
	}
	if !preemptorSeen {
		fail("the preemptor is not an element of Pods")
	}
	if pre := s.Preemptor; pre != nil && (pre.Spec.NodeName != "" || pre.Status.Phase != v1.PodPending) {
		fail("preemptor is not pending")
	}
	for _, n := range s.Nodes {
		alloc, maxPods := nodeAllocatable(n)
		if !used[n.Name].fitsIn(alloc) || count[n.Name] > maxPods {
			fail("node %s is overcommitted: %d pods requesting %+v, allocatable %+v and %d pods", n.Name, count[n.Name], used[n.Name], alloc, maxPods)
		}
		if count[n.Name] > 12 {
			fail("node %s has %d pods, want at most 12", n.Name, count[n.Name])
		}
	}
	pdbKeys := map[string]bool{}
	for _, pdb := range s.PDBs {
		key := pdb.Namespace + "/" + pdb.Name
		if pdbKeys[key] {
			fail("duplicate PDB %s", key)
		}
		pdbKeys[key] = true
		uid("PodDisruptionBudget", key, string(pdb.UID))
		if !namespaces[pdb.Namespace] {
			fail("PDB %s: namespace %s is not in Namespaces", key, pdb.Namespace)
		}
		if (pdb.Spec.MinAvailable == nil) == (pdb.Spec.MaxUnavailable == nil) {
			fail("PDB %s needs exactly one of minAvailable and maxUnavailable", key)
		}
	}
	if s.Profile.level() < Everything.level() && len(s.PDBs) > 0 {
		fail("%d PDBs in profile %s", len(s.PDBs), s.Profile)
	}
	return errs
}

// constraintErrors lists what the API server's validation would reject in
// p's pod affinity terms and topology spread constraints.
func constraintErrors(p *v1.Pod) []error {
	var errs []error
	if a := p.Spec.Affinity; a != nil {
		var terms []v1.PodAffinityTerm
		if a.PodAffinity != nil {
			terms = append(terms, a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		}
		if a.PodAntiAffinity != nil {
			terms = append(terms, a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		}
		for _, t := range terms {
			if t.TopologyKey == "" || t.LabelSelector == nil {
				errs = append(errs, fmt.Errorf("pod affinity term without topologyKey or labelSelector: %+v", t))
			}
		}
	}
	type keyAction struct {
		key    string
		action v1.UnsatisfiableConstraintAction
	}
	seen := map[keyAction]bool{}
	for _, c := range p.Spec.TopologySpreadConstraints {
		k := keyAction{c.TopologyKey, c.WhenUnsatisfiable}
		if seen[k] {
			errs = append(errs, fmt.Errorf("duplicate topology spread constraint %v", k))
		}
		seen[k] = true
		if c.MaxSkew < 1 || (c.MinDomains != nil && (*c.MinDomains < 1 || c.WhenUnsatisfiable != v1.DoNotSchedule)) {
			errs = append(errs, fmt.Errorf("invalid topology spread constraint %+v", c))
		}
	}
	return errs
}

// TestFeatureCoverage: over many seeds every feature of a profile shows up,
// and no feature of a richer profile does. Run with -v -gen.seeds=1000 for
// the frequency table.
func TestFeatureCoverage(t *testing.T) {
	for _, p := range Profiles() {
		t.Run(string(p), func(t *testing.T) {
			counts := map[string]int{}
			for seed := range int64(*seeds) {
				for _, f := range Generate(seed, p).Features() {
					counts[f]++
				}
			}
			want := AllFeatures(p)
			var table strings.Builder
			for _, f := range allFeatureNames() {
				switch {
				case slices.Contains(want, f) && counts[f] == 0:
					t.Errorf("feature %s never appears in %d scenarios", f, *seeds)
				case !slices.Contains(want, f) && counts[f] > 0:
					t.Errorf("feature %s of a richer profile appears %d times", f, counts[f])
				}
				if counts[f] > 0 {
					fmt.Fprintf(&table, "%6d  %5.1f%%  %s\n", counts[f], 100*float64(counts[f])/float64(*seeds), f)
				}
			}
			t.Logf("features in %d %s scenarios:\n%s", *seeds, p, table.String())
		})
	}
}

// TestPreemptorUsuallyDoesNotFit: in most scenarios the preemptor requests
// more cpu than any node has free, a proxy for "preemption is needed"; and
// in Resources, where resources are the only filter, it fits nowhere in at
// least 80% of scenarios.
func TestPreemptorUsuallyDoesNotFit(t *testing.T) {
	tests := []struct {
		profile  Profile
		feature  string
		minShare float64
	}{
		{Resources, "preemptor/cpu-exceeds-free-everywhere", 0.7},
		{Constraints, "preemptor/cpu-exceeds-free-everywhere", 0.7},
		{Everything, "preemptor/cpu-exceeds-free-everywhere", 0.7},
		{Resources, "preemptor/resources-fit-nowhere", 0.8},
	}
	for _, tc := range tests {
		t.Run(string(tc.profile)+"/"+tc.feature, func(t *testing.T) {
			t.Parallel()
			n := 0
			for seed := range int64(*seeds) {
				if slices.Contains(Generate(seed, tc.profile).Features(), tc.feature) {
					n++
				}
			}
			share := float64(n) / float64(*seeds)
			t.Logf("%s in %.1f%% of %d scenarios", tc.feature, 100*share, *seeds)
			if share < tc.minShare {
				t.Errorf("%s in %.1f%% of scenarios, want >= %.0f%%", tc.feature, 100*share, 100*tc.minShare)
			}
		})
	}
}

// TestFiltersCauses: in Filters the preemptor usually fits resource-wise on
// most nodes, and pods around it are often what violates its constraints.
func TestFiltersCauses(t *testing.T) {
	tests := []struct {
		feature  string
		minShare float64
	}{
		{"preemptor/resources-fit-most-nodes", 0.6},
		{"lower/matched-by-anti-affinity", 0.4},
		{"lower/anti-affinity-to-preemptor", 0.6},
		{"lower/hostPort-conflict", 0.25},
		{"lower/matched-by-spread", 0.4},
		{"spread/terminating-matching-pod", 0.3},
		{"preemptor/podAffinity-zone-local", 0.1},
		{"pending/nominated-podAntiAffinity", 0.15},
	}
	counts := map[string]int{}
	for seed := range int64(*seeds) {
		for _, f := range Generate(seed, Filters).Features() {
			counts[f]++
		}
	}
	for _, tc := range tests {
		share := float64(counts[tc.feature]) / float64(*seeds)
		t.Logf("%s in %.1f%% of %d scenarios", tc.feature, 100*share, *seeds)
		if share < tc.minShare {
			t.Errorf("%s in %.1f%% of Filters scenarios, want >= %.0f%%", tc.feature, 100*share, 100*tc.minShare)
		}
	}
}

// TestGenerateStable: recorded seeds replay. Generated scenarios are saved
// (failing differential cases) and cited by seed, so a profile's output for
// a seed must never change; a new profile is appended to Profiles instead.
// The digests cover seeds 0–19 of each profile.
func TestGenerateStable(t *testing.T) {
	want := map[Profile]string{
		Resources:   "b6a9e447f07daba17682066b5ac055866f4c05483b6158d6d7b151a930b887af",
		Constraints: "783b918a73d244790e0275911407b426eda49285b394c22ed44c1049794b5d91",
		Everything:  "bc47ebca843d4f07d1bf204de7224890889ac57422bdb666d981dbe83867cf3e",
		Filters:     "530d1456fa61a332657e603563c03e0abe4bdd716b42b599efa3ede03f2ff392",
		Storage:     "3a17a104d71afa64c96d3266320362b08e82d1da1a026fe5f8c0b8af6a86ce27",
	}
	for _, p := range Profiles() {
		h := sha256.New()
		for seed := range int64(20) {
			y, err := Generate(seed, p).YAML()
			if err != nil {
				t.Fatalf("%s seed %d: %v", p, seed, err)
			}
			h.Write(y)
		}
		if got := fmt.Sprintf("%x", h.Sum(nil)); got != want[p] {
			t.Errorf("profile %s: seeds 0-19 digest %s, recorded %s: the generator's output changed", p, got, want[p])
		}
	}
}

// TestParse covers hand-written files and the errors Parse reports.
func TestParse(t *testing.T) {
	const node = `apiVersion: v1
kind: Node
metadata:
  name: n1
status:
  allocatable: {cpu: "1", memory: 1Gi, pods: "10"}
`
	const pods = `apiVersion: v1
kind: PodList
items:
- metadata: {name: running, namespace: default}
  spec:
    nodeName: n1
    containers: [{name: c}]
- metadata:
    name: pending
    namespace: default
    annotations: {reprieve.dev/preemptor: "true"}
  spec:
    containers: [{name: c}]
`
	tests := map[string]struct {
		input         string
		wantErr       error
		wantPods      []string
		wantPreemptor string
		wantNodes     int
	}{
		"multi-document with a typed list": {
			input:         node + "---\n" + pods,
			wantPods:      []string{"running", "pending"},
			wantPreemptor: "pending",
			wantNodes:     1,
		},
		"JSON document": {
			input:         `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":{"reprieve.dev/preemptor":"true"}},"spec":{"containers":[{"name":"c"}]}}`,
			wantPods:      []string{"p"},
			wantPreemptor: "p",
		},
		"no preemptor": {
			input:   node + "---\n" + strings.ReplaceAll(pods, `reprieve.dev/preemptor: "true"`, `other: "x"`),
			wantErr: ErrInvalid,
		},
		"two preemptors": {
			input:   pods + "---\n" + strings.ReplaceAll(strings.ReplaceAll(pods, "running", "r2"), "name: pending", "name: p2"),
			wantErr: ErrInvalid,
		},
		"bound preemptor": {
			input:   strings.Replace(pods, "    containers: [{name: c}]\n", "    containers: [{name: c}]\n    nodeName: n1\n", 2),
			wantErr: ErrInvalid,
		},
		"unsupported kind": {
			input:   "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n",
			wantErr: ErrInvalid,
		},
		"wrong apiVersion": {
			input:   strings.Replace(node, "apiVersion: v1", "apiVersion: v2", 1),
			wantErr: ErrInvalid,
		},
		"unknown field": {
			input:   strings.Replace(pods, "nodeName: n1", "nodeNmae: n1", 1),
			wantErr: ErrInvalid,
		},
		"nested list": {
			input:   "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items: []\n",
			wantErr: ErrInvalid,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, err := Parse([]byte(tc.input))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Parse error = %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			var gotPods []string
			for _, p := range s.Pods {
				gotPods = append(gotPods, p.Name)
			}
			if diff := cmp.Diff(tc.wantPods, gotPods); diff != "" {
				t.Errorf("pods (-want,+got):\n%s", diff)
			}
			if s.Preemptor.Name != tc.wantPreemptor {
				t.Errorf("preemptor = %s, want %s", s.Preemptor.Name, tc.wantPreemptor)
			}
			if len(s.Nodes) != tc.wantNodes {
				t.Errorf("%d nodes, want %d", len(s.Nodes), tc.wantNodes)
			}
		})
	}
}

// TestYAMLAnnotatesPreemptor: YAML marks the preemptor even if the caller's
// pod lacks the annotation, without changing the caller's pod.
func TestYAMLAnnotatesPreemptor(t *testing.T) {
	s := Generate(1, Resources)
	s.Preemptor.Annotations = map[string]string{"keep": "me"}
	y, err := s.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Preemptor.Annotations[PreemptorAnnotation]; ok {
		t.Fatal("YAML modified the caller's preemptor")
	}
	got, err := Parse(y)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"keep": "me", PreemptorAnnotation: "true"}
	if diff := cmp.Diff(want, got.Preemptor.Annotations); diff != "" {
		t.Errorf("annotations (-want,+got):\n%s", diff)
	}
}

// TestWorkloadProfile: Workload scenarios are valid, replay, round-trip and
// exercise every pod-group feature; the digest pins the stream like
// TestGenerateStable does for Profiles.
func TestWorkloadProfile(t *testing.T) {
	counts := map[string]int{}
	h := sha256.New()
	for seed := range int64(*seeds) {
		s := Generate(seed, Workload)
		for _, err := range invariantErrors(s) {
			t.Errorf("seed %d: %v", seed, err)
		}
		for _, f := range s.Features() {
			counts[f]++
		}
		y, err := s.YAML()
		if err != nil {
			t.Fatalf("seed %d: YAML: %v", seed, err)
		}
		if seed < 20 {
			h.Write(y)
		}
		if seed < 40 {
			got, err := Parse(y)
			if err != nil {
				t.Fatalf("seed %d: Parse: %v", seed, err)
			}
			if diff := cmp.Diff(s, got); diff != "" {
				t.Fatalf("seed %d: round trip (-want,+got):\n%s", seed, diff)
			}
			again, _ := Generate(seed, Workload).YAML()
			if !bytes.Equal(y, again) {
				t.Fatalf("seed %d: two runs differ", seed)
			}
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	var table strings.Builder
	for _, f := range AllFeatures(Workload) {
		if strings.HasPrefix(f, "group/") && counts[f] == 0 {
			t.Errorf("feature %s never appears in %d Workload scenarios", f, *seeds)
		}
		if counts[f] > 0 {
			fmt.Fprintf(&table, "%6d  %5.1f%%  %s\n", counts[f], 100*float64(counts[f])/float64(*seeds), f)
		}
	}
	t.Logf("features in %d workload scenarios:\n%s", *seeds, table.String())
	const wantDigest = "78b312a28f7c9fd29f6adc2b97a6e42886ac4bbdb1a6a4519611856880dd7302"
	if got := fmt.Sprintf("%x", h.Sum(nil)); got != wantDigest && *seeds >= 20 {
		t.Errorf("workload seeds 0-19 digest %s, recorded %s: the generator's output changed", got, wantDigest)
	}
}
