package conformance

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	api "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install" // v1 defaults and conversions in legacyscheme
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/reprieve/reprieve/internal/adapter/admission"
)

// admissionPods is how many generated pods TestAdmissionMatchesAPIServer
// compares (REPRIEVE_ADMISSION_PODS).
var admissionPods = envInt("REPRIEVE_ADMISSION_PODS", 4000)

// TestAdmissionMatchesAPIServer generates pods and requires that reprieve's
// admission (admission.Admit: defaults, then validation) accepts a pod
// exactly when the API server's own defaulting and validation do
// (apiServerCreate).
func TestAdmissionMatchesAPIServer(t *testing.T) {
	accepted, refused := 0, 0
	// One example of each kind of disagreement: who refused, on which
	// field (indices left out).
	kinds := map[string]int{}
	var examples []string
	for seed := range int64(admissionPods) {
		ok, d := compareAdmission(seed)
		switch {
		case d != nil:
			kinds[d.kind]++
			if kinds[d.kind] == 1 {
				examples = append(examples, d.msg)
			}
		case ok:
			accepted++
		default:
			refused++
		}
	}
	failed := admissionPods - accepted - refused
	t.Logf("%d pods: %d accepted and %d refused by both, %d disagreements", admissionPods, accepted, refused, failed)
	for _, ex := range examples {
		t.Error(ex)
	}
	if failed > 0 {
		t.Errorf("disagreements by kind: %v", kinds)
	}
	// Both outcomes must be well represented for the comparison to mean
	// something.
	if accepted < admissionPods/5 || refused < admissionPods/5 {
		t.Errorf("accepted %d, refused %d: the generator is lopsided", accepted, refused)
	}
}

// FuzzAdmissionMatchesAPIServer is TestAdmissionMatchesAPIServer on the
// seeds the fuzzer picks:
//
//	go test -run XXX -fuzz FuzzAdmissionMatchesAPIServer -fuzztime 5m .
func FuzzAdmissionMatchesAPIServer(f *testing.F) {
	for seed := range int64(8) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed int64) {
		if _, d := compareAdmission(seed); d != nil {
			t.Fatal(d.msg)
		}
	})
}

// disagreement is a pod one side accepts and the other refuses.
type disagreement struct {
	// kind names the side that refused and the field of its first
	// error, without indices.
	kind string
	// msg has the seed, both answers and the pod.
	msg string
}

var indices = regexp.MustCompile(`\[[0-9]+\]`)

// compareAdmission admits the pod of seed both ways. accepted says whether
// both accepted it; a disagreement is returned when they differ.
func compareAdmission(seed int64) (accepted bool, d *disagreement) {
	pod := generatePod(seed)
	upstreamErrs := apiServerCreate(pod)
	ours := admission.Admit(pod.DeepCopy())
	if (ours == nil) == (len(upstreamErrs) == 0) {
		return ours == nil, nil
	}
	var kind string
	if ours != nil {
		kind = "reprieve refuses " + indices.ReplaceAllString(ours.Field, "[]")
	} else {
		kind = "API server refuses " + indices.ReplaceAllString(upstreamErrs[0].Field, "[]")
	}
	out, _ := yaml.Marshal(pod)
	return false, &disagreement{kind, fmt.Sprintf("seed %d: reprieve: %v; API server: %v\n%s", seed, ours, upstreamErrs.ToAggregate(), out)}
}

// apiServerCreate is what the API server does to a v1 pod sent to
// POST /api/v1/namespaces/{ns}/pods before it stores it, admission plugins
// aside: the decoder's defaults (legacyscheme: SetObjectDefaults_Pod),
// conversion to the internal type, the pod strategy's PrepareForCreate as
// far as it changes what validation sees (dropping disabled fields,
// pod-level resource defaults, matchLabelKeys merged into label selectors),
// ValidatePodCreate with the options the feature gates give, and
// declarative validation. It returns the errors the API server would
// answer with, none when it would store the pod.
//
// (The pod strategy itself, k8s.io/kubernetes/pkg/registry/core/pod,
// would bring etcd's client and a dozen other modules into this module;
// its three calls are made here instead, and its two unexported mutations
// copied in mergeLabelKeys.)
func apiServerCreate(p *v1.Pod) field.ErrorList {
	versioned := p.DeepCopy()
	legacyscheme.Scheme.Default(versioned)
	internal := &api.Pod{}
	if err := legacyscheme.Scheme.Convert(versioned, internal, nil); err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	podutil.DropDisabledPodFields(internal, nil)
	mergeLabelKeys(internal)
	podutil.DefaultPodLevelResources(internal)
	opts := podutil.GetValidationOptionsFromPodSpecAndMeta(&internal.Spec, nil, &internal.ObjectMeta, nil)
	opts.ResourceIsPod = true
	errs := corevalidation.ValidatePodCreate(internal, opts)
	ctx := genericapirequest.WithRequestInfo(context.Background(), &genericapirequest.RequestInfo{
		IsResourceRequest: true, Verb: "create", APIVersion: "v1", Resource: "pods", Namespace: p.Namespace, Name: p.Name,
	})
	ctx = genericapirequest.WithNamespace(ctx, p.Namespace)
	return rest.ValidateDeclarativelyWithMigrationChecks(ctx, legacyscheme.Scheme, internal, nil, errs, operation.Create, rest.DeclarativeValidationConfig{})
}

// mergeLabelKeys is the pod strategy's mutatePodAffinity and
// mutateTopologySpreadConstraints (MatchLabelKeysInPodAffinity, GA, and
// MatchLabelKeysInPodTopologySpreadSelectorMerge, beta, both on): for each
// key of matchLabelKeys (mismatchLabelKeys) the pod has a label of, the
// requirement "key In (value)" ("NotIn") is added to the term's or the
// constraint's label selector, when it has one.
func mergeLabelKeys(p *api.Pod) {
	add := func(sel *metav1.LabelSelector, keys []string, op metav1.LabelSelectorOperator) {
		for _, k := range keys {
			if v, ok := p.Labels[k]; ok {
				sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: op, Values: []string{v}})
			}
		}
	}
	term := func(t *api.PodAffinityTerm) {
		if t.LabelSelector != nil && len(t.MatchLabelKeys)+len(t.MismatchLabelKeys) > 0 {
			add(t.LabelSelector, t.MatchLabelKeys, metav1.LabelSelectorOpIn)
			add(t.LabelSelector, t.MismatchLabelKeys, metav1.LabelSelectorOpNotIn)
		}
	}
	if a := p.Spec.Affinity; a != nil {
		if pa := a.PodAffinity; pa != nil {
			for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
				term(&pa.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
			}
			for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
				term(&pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
			}
		}
		if pa := a.PodAntiAffinity; pa != nil {
			for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
				term(&pa.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
			}
			for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
				term(&pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
			}
		}
	}
	for i := range p.Spec.TopologySpreadConstraints {
		c := &p.Spec.TopologySpreadConstraints[i]
		if c.LabelSelector != nil && len(c.MatchLabelKeys) > 0 {
			add(c.LabelSelector, c.MatchLabelKeys, metav1.LabelSelectorOpIn)
		}
	}
}

// podGen makes a random pod. Each choice is of a valid value, or with
// probability bad of an invalid one; bad itself is drawn per pod, so that
// both pods the API server accepts and pods it refuses for one reason
// are frequent.
//
// The generator sets only fields whose validity reprieve decides as the
// API server does: those that change scheduling. It leaves out fields
// reprieve deliberately does not validate, which the scheduler does not
// read: images (always set), probes, lifecycle hooks, security contexts,
// environment, volume mounts, DNS settings, spec.os, resize policies,
// hostname and subdomain, runtime class, readiness gates and ephemeral
// containers (which the API server refuses on create but a pod read back
// from a cluster may have). It also leaves out what reprieve is
// deliberately stricter about: quantities too large for the scheduler's
// 64-bit sums; and what it deliberately accepts that the API server would
// refuse on create: a label selector already holding the requirement the
// API server merges for a matchLabelKeys key (a pod read back from a
// cluster has it) — the values of selector requirements are never those
// of the pod's labels. Volumes of one source the scheduler does not read
// (emptyDir here, or none, which becomes emptyDir) are not validated at
// all, as a lean load leaves them out: theirs are valid, distinct names.
type podGen struct {
	r   *rand.Rand
	bad float64
}

func generatePod(seed int64) *v1.Pod {
	g := &podGen{r: rand.New(rand.NewPCG(uint64(seed), 0x5eed))}
	// One pod in five is made valid, then given one fault (of faults);
	// the others have faults anywhere, at one of three rates.
	oneFault := g.chance(0.2)
	if !oneFault {
		g.bad = []float64{0, 0.01, 0.03, 0.1}[g.r.IntN(4)]
	}
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name:      g.pick([]string{"p", "web-0", strings.Repeat("long", 60)}, "Bad_Name"),
		Namespace: g.pick([]string{"ns"}, "Bad.NS"),
		Labels:    map[string]string{},
	}}
	for range g.r.IntN(3) {
		p.Labels[g.pick(labelKeys)] = g.pick(podLabelValues)
	}
	s := &p.Spec
	for i := range g.count(3, 0.1) {
		s.InitContainers = append(s.InitContainers, g.container(fmt.Sprintf("init-%d", i), true))
	}
	for i := range g.count(3, 0) {
		s.Containers = append(s.Containers, g.container(fmt.Sprintf("c-%d", i), false))
	}
	if g.chance(0.03) || g.isBad() {
		s.Containers = nil
	}
	s.HostNetwork = g.chance(0.1)
	if g.chance(0.2) {
		s.Resources = g.podLevel()
	}
	if g.chance(0.1) {
		s.Overhead = g.requirements(containerNames, false).Limits
	}
	s.RestartPolicy = v1.RestartPolicy(g.pick([]string{"", "Always", "OnFailure", "Never"}, "Sometimes"))
	if g.chance(0.2) {
		s.TerminationGracePeriodSeconds = ptr.To(int64(g.pick3(0, 30, -5)))
	}
	s.SchedulerName = g.pick([]string{"", v1.DefaultSchedulerName, "my-scheduler", "Bad Name!"})
	s.PriorityClassName = g.pick([]string{"", "high"}, "Bad_Class")
	if g.chance(0.2) {
		s.Priority = ptr.To(int32(g.pick3(0, 1000, -5)))
	}
	if g.chance(0.2) {
		s.PreemptionPolicy = ptr.To(v1.PreemptionPolicy(g.pick([]string{string(v1.PreemptLowerPriority), string(v1.PreemptNever)}, "Always", "")))
	}
	s.NodeName = g.pick([]string{"", "", "node-1"}, "Bad_Node")
	if g.chance(0.2) && (s.NodeName == "" || g.isBad()) {
		for _, name := range g.names([]string{"example.com/gate", "gate"}, "bad gate!") {
			s.SchedulingGates = append(s.SchedulingGates, v1.PodSchedulingGate{Name: name})
		}
	}
	if g.chance(0.2) {
		s.NodeSelector = map[string]string{g.pick(labelKeys, "bad key!"): g.pick([]string{"a", ""}, "bad value!")}
	}
	for range g.count(3, 0.3) {
		s.Tolerations = append(s.Tolerations, g.toleration())
	}
	if g.chance(0.4) {
		s.Affinity = g.affinity()
	}
	seen := map[string]bool{}
	for range g.count(3, 0.3) {
		c := g.spread()
		key := c.TopologyKey + "/" + string(c.WhenUnsatisfiable)
		if seen[key] && !g.isBad() {
			continue
		}
		seen[key] = true
		s.TopologySpreadConstraints = append(s.TopologySpreadConstraints, c)
	}
	if g.chance(0.7) {
		for i, name := range g.names([]string{"data", "scratch", "cache"}, "Bad_Vol", "") {
			v := g.volume(name)
			if nodeIndependent(&v) {
				v.Name = fmt.Sprintf("tmp-%d", i) // see podGen
			}
			s.Volumes = append(s.Volumes, v)
		}
	}
	if g.chance(0.2) {
		for _, name := range g.names([]string{"claim-a", "claim-b"}, "Bad_Claim", "") {
			s.ResourceClaims = append(s.ResourceClaims, g.podClaim(name))
		}
	}
	if len(s.ResourceClaims) > 0 && len(s.Containers) > 0 && g.chance(0.7) {
		c := &s.Containers[0]
		c.Resources.Claims = append(c.Resources.Claims, v1.ResourceClaim{Name: g.pick([]string{s.ResourceClaims[0].Name}, "missing")})
		if g.isBad() {
			c.Resources.Claims = append(c.Resources.Claims, c.Resources.Claims[0])
		}
	}
	if g.isBad() {
		s.Resources = g.requirements(podLevelNames, false)
		s.Resources.Claims = []v1.ResourceClaim{{Name: "claim-a"}}
	}
	if oneFault {
		if len(s.Containers) == 0 {
			s.Containers = []v1.Container{{Name: "c-0", Image: "registry.example/app:1"}}
		}
		faults[g.r.IntN(len(faults))](g, p)
	}
	return p
}

// faults each change one thing of a pod, most for the API server to
// refuse it, some (marked "accepted") for it to accept a pod one might
// think invalid.
var faults = []func(g *podGen, p *v1.Pod){
	// An init container restartPolicy other than Always, Never, OnFailure.
	func(g *podGen, p *v1.Pod) {
		p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{Name: "sidecar", Image: "i", RestartPolicy: ptr.To[v1.ContainerRestartPolicy]("Sometimes")})
	},
	// Accepted: init containers may restart OnFailure (ContainerRestartRules).
	func(g *podGen, p *v1.Pod) {
		p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{Name: "retry", Image: "i", RestartPolicy: ptr.To(v1.ContainerRestartPolicyOnFailure)})
	},
	// Accepted: a regular container's own restartPolicy.
	func(g *podGen, p *v1.Pod) {
		p.Spec.Containers[0].RestartPolicy = ptr.To(v1.ContainerRestartPolicyNever)
	},
	// Pod-level requests below the containers' sum.
	func(g *podGen, p *v1.Pod) {
		setRequest(&p.Spec.Containers[0], v1.ResourceCPU, "2")
		p.Spec.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}}
	},
	// Accepted: pod-level hugepages requested alone, cpu, memory and the
	// hugepages limit defaulted from the containers'.
	func(g *podGen, p *v1.Pod) {
		c := &p.Spec.Containers[0]
		c.Resources = v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi"), "hugepages-2Mi": resource.MustParse("4Mi")}}
		p.Spec.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{"hugepages-2Mi": resource.MustParse("64Mi")}}
	},
	// Pod-level limits below a container's limit.
	func(g *podGen, p *v1.Pod) {
		c := &p.Spec.Containers[0]
		c.Resources = v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse("2Gi")}}
		p.Spec.Resources = &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi")}}
	},
	// Pod-level hugepages below the containers'.
	func(g *podGen, p *v1.Pod) {
		c := &p.Spec.Containers[0]
		c.Resources = v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi"), "hugepages-2Mi": resource.MustParse("8Mi")}}
		p.Spec.Resources = &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse("2Gi"), "hugepages-2Mi": resource.MustParse("4Mi")}}
	},
	// A pod-level extended resource.
	func(g *podGen, p *v1.Pod) {
		p.Spec.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}, Limits: v1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}
	},
	// Pod-level ephemeral-storage.
	func(g *podGen, p *v1.Pod) {
		p.Spec.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceEphemeralStorage: resource.MustParse("1Gi")}}
	},
	// Host port 8080 twice among the regular containers.
	func(g *podGen, p *v1.Pod) {
		for _, name := range []string{"a", "b"} {
			p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: name, Image: "i", Ports: []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}})
		}
	},
	// Accepted: host port 8080 in an init container and a regular one.
	func(g *podGen, p *v1.Pod) {
		port := []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
		p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{Name: "a", Image: "i", Ports: port})
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "b", Image: "i", Ports: port})
	},
	// Under host networking, a host port other than the container port.
	func(g *podGen, p *v1.Pod) {
		p.Spec.HostNetwork = true
		p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
	},
	// An unqualified resource name that is not a standard one.
	func(g *podGen, p *v1.Pod) { setRequest(&p.Spec.Containers[0], "gpu", "1") },
	// A standard resource name containers may not request.
	func(g *podGen, p *v1.Pod) { setRequest(&p.Spec.Containers[0], v1.ResourcePods, "1") },
	// Accepted: a name in kubernetes.io, native, needs no limit.
	func(g *podGen, p *v1.Pod) { setRequest(&p.Spec.Containers[0], "example.kubernetes.io/thing", "1") },
	// Hugepages without cpu or memory.
	func(g *podGen, p *v1.Pod) {
		p.Spec.Containers[0].Resources = v1.ResourceRequirements{Limits: v1.ResourceList{"hugepages-2Mi": resource.MustParse("4Mi")}}
	},
	// Hugepages not a whole number of pages.
	func(g *podGen, p *v1.Pod) {
		p.Spec.Containers[0].Resources = v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi"), "hugepages-2Mi": resource.MustParse("3Mi")}}
	},
	// An overhead of a resource containers may not have.
	func(g *podGen, p *v1.Pod) { p.Spec.Overhead = v1.ResourceList{"gpu": resource.MustParse("1")} },
	// Accepted: the API server does not check schedulerName.
	func(g *podGen, p *v1.Pod) { p.Spec.SchedulerName = "Bad Name!" },
	// A spread matchLabelKeys key that the selector has, the pod having
	// the label.
	func(g *podGen, p *v1.Pod) {
		p.Labels["app"] = "web"
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: v1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}, MatchLabelKeys: []string{"app"}}}
	},
	// Accepted: the same, without the label.
	func(g *podGen, p *v1.Pod) {
		delete(p.Labels, "app")
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: v1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}, MatchLabelKeys: []string{"app"}}}
	},
	// Accepted: a topology key that is no label key.
	func(g *podGen, p *v1.Pod) {
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "bad key!", WhenUnsatisfiable: v1.ScheduleAnyway}}
	},
	// A pod affinity matchLabelKeys key the selector has (pod labelled).
	func(g *podGen, p *v1.Pod) {
		p.Labels["tier"] = "db"
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			TopologyKey: "zone", MatchLabelKeys: []string{"tier"},
			LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpExists}}},
		}}}}
	},
	// A key in both matchLabelKeys and mismatchLabelKeys.
	func(g *podGen, p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			TopologyKey: "zone", MatchLabelKeys: []string{"team"}, MismatchLabelKeys: []string{"team"}, LabelSelector: &metav1.LabelSelector{},
		}}}}
	},
	// Accepted: Gt with a value that is not an integer.
	func(g *podGen, p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: "cores", Operator: v1.NodeSelectorOpGt, Values: []string{"abc"}}},
		}}}}}
	},
	// A required node affinity value that is no label value.
	func(g *podGen, p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"bad value!"}}},
		}}}}}
	},
	// Accepted: the same in a preferred term.
	func(g *podGen, p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{Weight: 1, Preference: v1.NodeSelectorTerm{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"bad value!"}}},
		}}}}}
	},
	// A toleration value that is no label value.
	func(g *podGen, p *v1.Pod) { p.Spec.Tolerations = []v1.Toleration{{Key: "k", Value: "bad value!"}} },
	// A comparison toleration operator (alpha, off).
	func(g *podGen, p *v1.Pod) {
		p.Spec.Tolerations = []v1.Toleration{{Key: "k", Operator: "Gt", Value: "5"}}
	},
	// A generic ephemeral volume without access modes.
	func(g *podGen, p *v1.Pod) {
		p.Spec.Volumes = []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{
			Spec: v1.PersistentVolumeClaimSpec{Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}}}}}}}
	},
	// A claim volume without a claim name.
	func(g *podGen, p *v1.Pod) {
		p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{}}}}
	},
	// A container claim the pod does not have.
	func(g *podGen, p *v1.Pod) {
		p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "missing"}}
	},
	// A node name while scheduling gates remain.
	func(g *podGen, p *v1.Pod) {
		p.Spec.NodeName = "node-1"
		p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "gate"}}
	},
}

// nodeIndependent reports whether v is an emptyDir volume, or one without a
// source (which the API server makes an emptyDir).
func nodeIndependent(v *v1.Volume) bool {
	return v.VolumeSource == v1.VolumeSource{} || v.VolumeSource == v1.VolumeSource{EmptyDir: v.EmptyDir}
}

func setRequest(c *v1.Container, name v1.ResourceName, q string) {
	if c.Resources.Requests == nil {
		c.Resources.Requests = v1.ResourceList{}
	}
	c.Resources.Requests[name] = resource.MustParse(q)
}

var (
	labelKeys       = []string{"app", "tier", "example.com/team"}
	podLabelValues  = []string{"web", "db"}
	selectorValues  = []string{"x", "y"} // never a pod's label value
	containerNames  = []string{"cpu", "memory", "ephemeral-storage", "hugepages-2Mi", "example.com/gpu", "nvidia.com/gpu"}
	badContainerRes = []string{"gpu", "pods", "requests.cpu", "hugepages-foo", "storage", "kubernetes.io/thing", "bad name/x"}
	podLevelNames   = []string{"cpu", "memory", "hugepages-2Mi"}
	badPodLevelRes  = []string{"nvidia.com/gpu", "ephemeral-storage", "gpu", "pods", "example.com/gpu"}
	badQuantities   = []string{"-1", "3Mi", "1.5", "1500m"}
)

func (g *podGen) chance(p float64) bool { return g.r.Float64() < p }

func (g *podGen) isBad() bool { return g.chance(g.bad) }

// pick returns one of good, or with probability bad one of bad (if any).
func (g *podGen) pick(good []string, bad ...string) string {
	if len(bad) > 0 && g.isBad() {
		return bad[g.r.IntN(len(bad))]
	}
	return good[g.r.IntN(len(good))]
}

// pick3 returns a or b, or with probability bad the invalid c.
func (g *podGen) pick3(a, b, c int) int {
	if g.isBad() {
		return c
	}
	if g.chance(0.5) {
		return a
	}
	return b
}

// count returns how many of a list to make: 0 with probability none, else
// 1 to max.
func (g *podGen) count(max int, none float64) int {
	if g.chance(none) {
		return 0
	}
	return 1 + g.r.IntN(max)
}

// names returns 1 to len(good) distinct names of good, in random order,
// but with probability bad one of them repeated or replaced by one of bad.
func (g *podGen) names(good []string, bad ...string) []string {
	names := slices.Clone(good)
	g.r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	names = names[:1+g.r.IntN(len(names))]
	if g.isBad() {
		names = append(names, names[0])
	}
	if len(bad) > 0 && g.isBad() {
		names[g.r.IntN(len(names))] = bad[g.r.IntN(len(bad))]
	}
	return names
}

func (g *podGen) container(name string, init bool) v1.Container {
	c := v1.Container{Name: name, Image: "registry.example/app:1"}
	if g.isBad() {
		c.Name = g.pick([]string{"c-0", "init-0", "Bad_Name", ""})
	}
	if g.chance(0.8) {
		c.Resources = *g.requirements(containerNames, true)
	}
	if init && g.chance(0.5) || !init && g.chance(0.1) {
		c.RestartPolicy = ptr.To(v1.ContainerRestartPolicy(g.pick([]string{"Always", "Always", "OnFailure", "Never"}, "Sometimes")))
	}
	for i := range g.count(2, 0.6) {
		port := v1.ContainerPort{
			ContainerPort: int32(g.pick3(80, 8080, 70000)),
			Protocol:      v1.Protocol(g.pick([]string{"", "TCP", "UDP"}, "HTTP")),
			HostIP:        g.pick([]string{"", "", "127.0.0.1"}),
			Name:          g.pick([]string{"", fmt.Sprintf("port-%d", i)}, "Bad_Port", "port-0"),
		}
		if g.chance(0.3) {
			// Host ports 8080 and 8081 are shared by every container
			// that takes them: two clash only in regular containers,
			// or in one init container.
			port.HostPort = int32(g.pick3(8080+i, 8080, 70000))
		}
		if g.isBad() {
			port.ContainerPort = 0
		}
		c.Ports = append(c.Ports, port)
	}
	return c
}

// requirements makes requests and limits of some of the resource names,
// valid but with probability bad: quantities fit for each resource,
// hugepages beside memory, limits for resources that cannot be
// overcommitted (equal to their requests), requests within limits.
func (g *podGen) requirements(names []string, container bool) *v1.ResourceRequirements {
	bad := badPodLevelRes
	if container {
		bad = badContainerRes
	}
	r := &v1.ResourceRequirements{Requests: v1.ResourceList{}, Limits: v1.ResourceList{}}
	for range g.count(3, 0.1) {
		name := g.pick(names, bad...)
		q := resource.MustParse(g.pick(fitQuantities(name), badQuantities...))
		overcommit := !strings.Contains(name, "/") && !strings.HasPrefix(name, "hugepages-")
		switch {
		case g.chance(0.2) && (overcommit || g.isBad()):
			r.Limits[v1.ResourceName(name)] = q // requests from limits, for a pod
		case overcommit && g.chance(0.5):
			r.Requests[v1.ResourceName(name)] = q
		default:
			r.Requests[v1.ResourceName(name)] = q
			lim := q.DeepCopy()
			if overcommit && !g.isBad() {
				lim.Add(q) // twice the request
			} else if g.isBad() {
				lim = resource.MustParse("1")
			}
			r.Limits[v1.ResourceName(name)] = lim
		}
		if strings.HasPrefix(name, "hugepages-") && !g.isBad() {
			r.Requests[v1.ResourceMemory] = resource.MustParse("1Gi")
		}
	}
	if len(r.Requests) == 0 {
		r.Requests = nil
	}
	if len(r.Limits) == 0 {
		r.Limits = nil
	}
	return r
}

// podLevel makes pod-level resources, large enough for the containers'
// but with probability bad.
func (g *podGen) podLevel() *v1.ResourceRequirements {
	r := &v1.ResourceRequirements{}
	big := map[string][2]string{"cpu": {"16", "32"}, "memory": {"64Gi", "128Gi"}, "hugepages-2Mi": {"64Mi", "64Mi"}}
	small := map[string][2]string{"cpu": {"100m", "200m"}, "memory": {"64Mi", "128Mi"}, "hugepages-2Mi": {"2Mi", "2Mi"}}
	for _, name := range g.names(podLevelNames, badPodLevelRes...) {
		q, ok := big[name]
		if !ok {
			q = [2]string{"1", "1"}
		}
		if sq, ok := small[name]; ok && g.isBad() {
			q = sq // likely below what the containers ask for
		}
		if g.chance(0.7) {
			if r.Requests == nil {
				r.Requests = v1.ResourceList{}
			}
			r.Requests[v1.ResourceName(name)] = resource.MustParse(q[0])
		}
		if g.chance(0.5) || strings.HasPrefix(name, "hugepages-") && !g.isBad() {
			if r.Limits == nil {
				r.Limits = v1.ResourceList{}
			}
			r.Limits[v1.ResourceName(name)] = resource.MustParse(q[1])
		}
	}
	return r
}

// fitQuantities are valid quantities of the resource name.
func fitQuantities(name string) []string {
	switch {
	case name == "cpu":
		return []string{"0", "100m", "500m", "1", "2"}
	case strings.HasPrefix(name, "hugepages-"):
		return []string{"2Mi", "4Mi"}
	case strings.Contains(name, "/"):
		return []string{"1", "2"}
	}
	return []string{"64Mi", "1Gi"}
}

func (g *podGen) toleration() v1.Toleration {
	t := v1.Toleration{
		Key:      g.pick([]string{"", "k", "example.com/k"}, "bad key!"),
		Operator: v1.TolerationOperator(g.pick([]string{"", "Equal", "Exists"}, "Lt", "Maybe")),
		Value:    g.pick([]string{"", "v"}, "bad value!"),
		Effect:   v1.TaintEffect(g.pick([]string{"", "NoSchedule", "PreferNoSchedule", "NoExecute"}, "Sometimes")),
	}
	if t.Operator == v1.TolerationOpExists && !g.isBad() {
		t.Value = ""
	}
	if t.Key == "" && !g.isBad() {
		t.Operator = v1.TolerationOpExists
		t.Value = ""
	}
	if g.chance(0.2) {
		t.TolerationSeconds = ptr.To[int64](30)
		if !g.isBad() {
			t.Effect = v1.TaintEffectNoExecute
		}
	}
	return t
}

func (g *podGen) affinity() *v1.Affinity {
	a := &v1.Affinity{}
	if g.chance(0.5) {
		na := &v1.NodeAffinity{}
		if g.chance(0.7) {
			na.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{}
			for range g.count(2, 0) {
				na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = append(na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms, g.nodeSelectorTerm())
			}
			if g.isBad() {
				na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = nil
			}
		}
		for range g.count(2, 0.5) {
			na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution,
				v1.PreferredSchedulingTerm{Weight: int32(g.pick3(1, 100, 0)), Preference: g.nodeSelectorTerm()})
		}
		a.NodeAffinity = na
	}
	terms := func() (req []v1.PodAffinityTerm, pref []v1.WeightedPodAffinityTerm) {
		for range g.count(2, 0.4) {
			req = append(req, g.podAffinityTerm())
		}
		for range g.count(2, 0.5) {
			pref = append(pref, v1.WeightedPodAffinityTerm{Weight: int32(g.pick3(1, 50, 101)), PodAffinityTerm: g.podAffinityTerm()})
		}
		return req, pref
	}
	if g.chance(0.5) {
		req, pref := terms()
		a.PodAffinity = &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: req, PreferredDuringSchedulingIgnoredDuringExecution: pref}
	}
	if g.chance(0.5) {
		req, pref := terms()
		a.PodAntiAffinity = &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: req, PreferredDuringSchedulingIgnoredDuringExecution: pref}
	}
	return a
}

func (g *podGen) nodeSelectorTerm() v1.NodeSelectorTerm {
	var t v1.NodeSelectorTerm
	for range g.count(2, 0.2) {
		r := v1.NodeSelectorRequirement{
			Key:      g.pick([]string{"zone", "example.com/disk"}, "bad key!"),
			Operator: v1.NodeSelectorOperator(g.pick([]string{"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"}, "Near")),
		}
		switch r.Operator {
		case v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn:
			r.Values = []string{g.pick([]string{"a", "b"}, "bad value!")}
		case v1.NodeSelectorOpGt, v1.NodeSelectorOpLt:
			r.Values = []string{g.pick([]string{"5", "10", "abc"}, "-1", "bad value!")}
		}
		if g.isBad() {
			r.Values = append(r.Values, "c")
		}
		t.MatchExpressions = append(t.MatchExpressions, r)
	}
	if g.chance(0.3) {
		t.MatchFields = append(t.MatchFields, v1.NodeSelectorRequirement{
			Key:      g.pick([]string{"metadata.name"}, "metadata.uid"),
			Operator: v1.NodeSelectorOperator(g.pick([]string{"In", "NotIn"}, "Exists")),
			Values:   []string{g.pick([]string{"node-1"}, "Bad_Node")},
		})
	}
	return t
}

// selector makes a label selector, or nil; its requirements' values are
// never those of the pod's labels (see podGen).
func (g *podGen) selector() *metav1.LabelSelector {
	if g.chance(0.15) {
		return nil
	}
	sel := &metav1.LabelSelector{}
	if g.chance(0.6) {
		sel.MatchLabels = map[string]string{g.pick(labelKeys, "bad key!"): g.pick(selectorValues, "bad value!")}
	}
	for range g.count(2, 0.6) {
		r := metav1.LabelSelectorRequirement{Key: g.pick(labelKeys), Operator: metav1.LabelSelectorOperator(g.pick([]string{"In", "NotIn", "Exists"}, "Near"))}
		if r.Operator != metav1.LabelSelectorOpExists {
			r.Values = []string{g.pick(selectorValues)}
		}
		sel.MatchExpressions = append(sel.MatchExpressions, r)
	}
	return sel
}

func (g *podGen) labelKeyList() []string {
	var keys []string
	for range g.count(2, 0.6) {
		keys = append(keys, g.pick(labelKeys, "bad key!"))
	}
	return keys
}

func (g *podGen) podAffinityTerm() v1.PodAffinityTerm {
	t := v1.PodAffinityTerm{
		LabelSelector: g.selector(),
		TopologyKey:   g.pick([]string{"zone", "kubernetes.io/hostname"}, "", "bad key!"),
	}
	if g.chance(0.2) {
		t.Namespaces = []string{g.pick([]string{"ns", "other"}, "Bad_NS")}
	}
	if g.chance(0.2) {
		t.NamespaceSelector = g.selector()
	}
	if g.chance(0.4) {
		t.MatchLabelKeys = g.labelKeyList()
	}
	if g.chance(0.2) {
		t.MismatchLabelKeys = g.labelKeyList()
	}
	return t
}

func (g *podGen) spread() v1.TopologySpreadConstraint {
	c := v1.TopologySpreadConstraint{
		MaxSkew:           int32(g.pick3(1, 2, 0)),
		TopologyKey:       g.pick([]string{"zone", "kubernetes.io/hostname", "bad key!"}, ""),
		WhenUnsatisfiable: v1.UnsatisfiableConstraintAction(g.pick([]string{"DoNotSchedule", "ScheduleAnyway"}, "", "Never")),
		LabelSelector:     g.selector(),
	}
	if g.chance(0.4) {
		c.MatchLabelKeys = g.labelKeyList()
	}
	if g.chance(0.2) {
		c.MinDomains = ptr.To(int32(g.pick3(1, 3, 0)))
		if !g.isBad() {
			c.WhenUnsatisfiable = v1.DoNotSchedule
		}
	}
	if g.chance(0.2) {
		c.NodeAffinityPolicy = ptr.To(v1.NodeInclusionPolicy(g.pick([]string{"Honor", "Ignore"}, "Maybe")))
	}
	if g.chance(0.2) {
		c.NodeTaintsPolicy = ptr.To(v1.NodeInclusionPolicy(g.pick([]string{"Honor", "Ignore"}, "Maybe")))
	}
	return c
}

func (g *podGen) volume(name string) v1.Volume {
	v := v1.Volume{Name: name}
	switch g.r.IntN(3) {
	case 0:
		v.EmptyDir = &v1.EmptyDirVolumeSource{}
	case 1:
		v.PersistentVolumeClaim = &v1.PersistentVolumeClaimVolumeSource{ClaimName: g.pick([]string{"claim-1", "claim-2"}, "", "p-scratch")}
	default:
		t := &v1.PersistentVolumeClaimTemplate{Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.PersistentVolumeAccessMode(g.pick([]string{"ReadWriteOnce", "ReadWriteOncePod", "ReadOnlyMany"}, "ReadSometimes"))},
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(g.pick([]string{"1Gi", "10Gi"}, "0", "-1Gi"))}},
			StorageClassName: ptr.To(g.pick([]string{"fast", ""}, "Bad_Class")),
		}}
		switch {
		case g.isBad():
			t.Spec.AccessModes = nil
		case g.isBad():
			t.Spec.Resources.Requests = nil
		case g.isBad():
			t.Spec.AccessModes = append(t.Spec.AccessModes, v1.ReadWriteOncePod, v1.ReadWriteOnce)
		case g.isBad():
			t.Name = "named"
		case g.isBad():
			t = nil
		}
		if g.chance(0.2) && t != nil {
			t.Labels = map[string]string{g.pick(labelKeys, "bad key!"): "v"}
		}
		v.Ephemeral = &v1.EphemeralVolumeSource{VolumeClaimTemplate: t}
	}
	switch {
	case g.isBad():
		v.VolumeSource = v1.VolumeSource{}
	case g.isBad():
		v.HostPath = &v1.HostPathVolumeSource{Path: "/data"}
	}
	return v
}

func (g *podGen) podClaim(name string) v1.PodResourceClaim {
	c := v1.PodResourceClaim{Name: name}
	claim := g.pick([]string{"gpu-claim"}, "Bad_Claim")
	switch {
	case g.isBad():
	case g.isBad():
		c.ResourceClaimName, c.ResourceClaimTemplateName = &claim, &claim
	case g.chance(0.5):
		c.ResourceClaimName = &claim
	default:
		c.ResourceClaimTemplateName = &claim
	}
	return c
}
