package admission

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"

	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

func limits(p *v1.Pod, rl v1.ResourceList) *v1.Pod {
	p.Spec.Containers[0].Resources.Limits = rl
	return p
}

func q(s string) resource.Quantity { return resource.MustParse(s) }

// TestDefaultPodRequests checks what the scheduler will count for a pod
// once the API server's defaults are applied.
func TestDefaultPodRequests(t *testing.T) {
	tests := map[string]struct {
		pod  *v1.Pod
		want v1.ResourceList
	}{
		"requests from limits (the issue's 3-CPU pod)": {
			pod:  limits(rt.Pod("ns", "p").Obj(), v1.ResourceList{v1.ResourceCPU: q("3")}),
			want: v1.ResourceList{v1.ResourceCPU: q("3")},
		},
		"a request given is kept": {
			pod:  limits(rt.Pod("ns", "p").Req("1", "").Obj(), v1.ResourceList{v1.ResourceCPU: q("3"), v1.ResourceMemory: q("1Gi")}),
			want: v1.ResourceList{v1.ResourceCPU: q("1"), v1.ResourceMemory: q("1Gi")},
		},
		"init container requests from limits": {
			pod: func() *v1.Pod {
				p := rt.Pod("ns", "p").Obj()
				p.Spec.InitContainers = []v1.Container{{Name: "init", Resources: v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: q("5")}}}}
				return p
			}(),
			want: v1.ResourceList{v1.ResourceCPU: q("5")},
		},
		"pod-level requests from pod-level limits": {
			pod: func() *v1.Pod {
				p := rt.Pod("ns", "p").Obj()
				p.Spec.Resources = &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: q("2")}}
				return p
			}(),
			want: v1.ResourceList{v1.ResourceCPU: q("2")},
		},
		"pod-level requests from the containers' requests": {
			pod: func() *v1.Pod {
				p := rt.Pod("ns", "p").Req("500m", "").Obj()
				p.Spec.Resources = &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: q("2")}}
				return p
			}(),
			want: v1.ResourceList{v1.ResourceCPU: q("500m")},
		},
		"quantities rounded up to millis": {
			pod:  rt.Pod("ns", "p").Req("0.0001", "").Obj(),
			want: v1.ResourceList{v1.ResourceCPU: q("1m")},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			DefaultPod(tc.pod)
			got := resourcehelper.PodRequests(tc.pod, resourcehelper.PodResourcesOptions{})
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			again := tc.pod.DeepCopy()
			DefaultPod(again)
			if diff := cmp.Diff(tc.pod, again); diff != "" {
				t.Errorf("defaulting twice changed the pod (-once +twice):\n%s", diff)
			}
		})
	}
}

func TestDefaultPodFields(t *testing.T) {
	p := rt.Pod("ns", "p").Obj()
	p.Spec.HostNetwork = true
	p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 8080}}
	p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](-5)
	DefaultPod(p)
	s := p.Spec
	if s.SchedulerName != v1.DefaultSchedulerName || *s.TerminationGracePeriodSeconds != 1 || s.RestartPolicy != v1.RestartPolicyAlways ||
		s.Containers[0].Ports[0].HostPort != 8080 || s.Containers[0].Ports[0].Protocol != v1.ProtocolTCP {
		t.Errorf("defaults not applied: %+v", s)
	}
	if s.PreemptionPolicy != nil || s.Priority != nil {
		t.Errorf("priority and preemption policy are priority admission's, not defaulting's")
	}
	p = rt.Pod("ns", "p").Obj()
	DefaultPod(p)
	if *p.Spec.TerminationGracePeriodSeconds != 30 {
		t.Errorf("grace period %d, want 30", *p.Spec.TerminationGracePeriodSeconds)
	}
}

func TestDefaultWorkloads(t *testing.T) {
	d := &appsv1.Deployment{}
	DefaultDeployment(d)
	rs := &appsv1.ReplicaSet{}
	DefaultReplicaSet(rs)
	j := &batchv1.Job{}
	DefaultJob(j)
	queue := &batchv1.Job{Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](3)}}
	DefaultJob(queue)
	if *d.Spec.Replicas != 1 || *rs.Spec.Replicas != 1 || *j.Spec.Parallelism != 1 || *j.Spec.Completions != 1 {
		t.Errorf("replicas %d %d, job %d/%d; want 1", *d.Spec.Replicas, *rs.Spec.Replicas, *j.Spec.Parallelism, *j.Spec.Completions)
	}
	if queue.Spec.Completions != nil || *queue.Spec.Parallelism != 3 {
		t.Errorf("a work-queue Job must keep completions unset")
	}
	n := rt.Node("n").Obj()
	n.Status.Allocatable, n.Status.Capacity = nil, v1.ResourceList{v1.ResourceCPU: q("4")}
	DefaultNode(n)
	if a := n.Status.Allocatable[v1.ResourceCPU]; a.Cmp(q("4")) != 0 {
		t.Errorf("allocatable not defaulted from capacity: %v", n.Status.Allocatable)
	}
}

// TestValidate covers what the API server refuses, each with its field.
func TestValidate(t *testing.T) {
	pod := func(f func(p *v1.Pod)) *v1.Pod {
		p := rt.Pod("ns", "p").Obj()
		f(p)
		return p
	}
	req := func(name v1.ResourceName, s string) *v1.Pod {
		return pod(func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests = v1.ResourceList{name: q(s)} })
	}
	deployment := func(sel, tmpl map[string]string, replicas int32) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns"}, Spec: appsv1.DeploymentSpec{
			Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: tmpl}, Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}}}}
	}
	tests := map[string]struct {
		obj       any
		wantField string // "" means valid
		wantIn    string
	}{
		"valid pod":                 {obj: rt.Pod("ns", "p").Req("1", "1Gi").Obj()},
		"negative cpu":              {obj: req(v1.ResourceCPU, "-1"), wantField: "spec.containers[0].resources.requests[cpu]", wantIn: "greater than or equal to 0"},
		"negative memory":           {obj: req(v1.ResourceMemory, "-5Gi"), wantField: "spec.containers[0].resources.requests[memory]"},
		"cpu 1e20 overflows":        {obj: req(v1.ResourceCPU, "1e20"), wantField: "spec.containers[0].resources.requests[cpu]", wantIn: "overflow"},
		"memory 1e30 overflows":     {obj: req(v1.ResourceMemory, "1e30"), wantField: "spec.containers[0].resources.requests[memory]"},
		"largest cpu is fine":       {obj: req(v1.ResourceCPU, "9223372036854775")},
		"one more core overflows":   {obj: req(v1.ResourceCPU, "9223372036854776"), wantField: "spec.containers[0].resources.requests[cpu]"},
		"largest memory is fine":    {obj: req(v1.ResourceMemory, "9223372036854775807")},
		"one more byte overflows":   {obj: req(v1.ResourceMemory, "9223372036854775808"), wantField: "spec.containers[0].resources.requests[memory]"},
		"tiny cpu is fine":          {obj: req(v1.ResourceCPU, "1e-900")},
		"fractional extended":       {obj: pod(func(p *v1.Pod) { p.Spec.Containers[0].Resources.Limits = v1.ResourceList{"example.com/gpu": q("500m")} }), wantField: "spec.containers[0].resources.limits[example.com/gpu]", wantIn: "integer"},
		"extended request no limit": {obj: req("example.com/gpu", "1"), wantField: "spec.containers[0].resources.limits", wantIn: "Limit must be set"},
		"request above limit": {obj: pod(func(p *v1.Pod) {
			p.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: q("2")}, Limits: v1.ResourceList{v1.ResourceCPU: q("1")}}
		}), wantField: "spec.containers[0].resources.requests", wantIn: "less than or equal to cpu limit"},
		"sum over containers": {obj: rt.Pod("ns", "p").Req("9000000000000000", "").Container("d", "9000000000000000").Obj(), wantField: "spec.containers[*].resources.requests[cpu]"},
		"scoring defaults overflow": {obj: pod(func(p *v1.Pod) {
			// 807m short of the largest count, and nine containers the
			// scorers count 100m for.
			p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: q("9223372036854775")}
			for i := range 9 {
				p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: fmt.Sprintf("d%d", i)})
			}
		}), wantField: "spec.containers[*].resources.requests[cpu]"},
		"resize status overflow": {obj: pod(func(p *v1.Pod) {
			p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c", AllocatedResources: v1.ResourceList{v1.ResourceCPU: q("1e20")}}}
		}), wantField: "status.containerStatuses[0].allocatedResources[cpu]"},
		"invalid pod name":          {obj: rt.Pod("ns", "Bad_Name").Obj(), wantField: "metadata.name"},
		"invalid namespace":         {obj: rt.Pod("Bad.NS", "p").Obj(), wantField: "metadata.namespace"},
		"toleration operator Maybe": {obj: pod(func(p *v1.Pod) { p.Spec.Tolerations = []v1.Toleration{{Key: "k", Operator: "Maybe"}} }), wantField: "spec.tolerations[0].operator", wantIn: "Unsupported value"},
		"toleration effect": {obj: pod(func(p *v1.Pod) {
			p.Spec.Tolerations = []v1.Toleration{{Key: "k", Operator: "Exists", Effect: "Sometimes"}}
		}), wantField: "spec.tolerations[0].effect"},
		"duplicate container":       {obj: rt.Pod("ns", "p").Container("c", "1").Obj(), wantField: "spec.containers[1].name", wantIn: "Duplicate value"},
		"init and app share a name": {obj: rt.Pod("ns", "p").Init("c", "1", false).Obj(), wantField: "spec.containers[0].name"},
		"bad restart policy":        {obj: pod(func(p *v1.Pod) { p.Spec.RestartPolicy = "Sometimes" }), wantField: "spec.restartPolicy"},
		"bad preemption policy":     {obj: pod(func(p *v1.Pod) { p.Spec.PreemptionPolicy = ptr.To[v1.PreemptionPolicy]("Always") }), wantField: "spec.preemptionPolicy"},
		"node affinity operator": {obj: pod(func(p *v1.Pod) {
			p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "k", Operator: "Near"}}}}}}}
		}), wantField: "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator"},
		"spread without key":       {obj: rt.Pod("ns", "p").Spread(1, "", nil).Obj(), wantField: "spec.topologySpreadConstraints[0].topologyKey"},
		"spread zero skew":         {obj: rt.Pod("ns", "p").Spread(0, "zone", nil).Obj(), wantField: "spec.topologySpreadConstraints[0].maxSkew"},
		"invalid node selector":    {obj: rt.Pod("ns", "p").NodeSelector("bad key!", "v").Obj(), wantField: "spec.nodeSelector"},
		"negative node capacity":   {obj: rt.Node("n").CPU("-4").Obj(), wantField: "status.allocatable[cpu]"},
		"node overflow":            {obj: rt.Node("n").Memory("1e30").Obj(), wantField: "status.allocatable[memory]"},
		"invalid node name":        {obj: rt.Node("Node_1").Obj(), wantField: "metadata.name"},
		"taint effect":             {obj: rt.Node("n").Taint("k", "v", "Never").Obj(), wantField: "spec.taints[0].effect"},
		"valid deployment":         {obj: deployment(map[string]string{"app": "a"}, map[string]string{"app": "a"}, 2)},
		"selector mismatch":        {obj: deployment(map[string]string{"app": "a"}, map[string]string{"app": "b"}, 2), wantField: "spec.template.metadata.labels", wantIn: "does not match"},
		"empty selector":           {obj: deployment(nil, map[string]string{"app": "b"}, 2), wantField: "spec.selector"},
		"negative replicas":        {obj: deployment(map[string]string{"app": "a"}, map[string]string{"app": "a"}, -3), wantField: "spec.replicas"},
		"negative parallelism":     {obj: &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns"}, Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](-2), Template: v1.PodTemplateSpec{Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{{Name: "c"}}}}}}, wantField: "spec.parallelism"},
		"job restartPolicy Always": {obj: &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns"}, Spec: batchv1.JobSpec{Template: v1.PodTemplateSpec{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}}}}, wantField: "spec.template.spec.restartPolicy"},
		"user class above 1e9":     {obj: &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "huge"}, Value: 2_000_000_000}, wantField: "value"},
		"system- prefix reserved":  {obj: &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "system-mine"}, Value: 5}, wantField: "metadata.name"},
		"built-in system class":    {obj: &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "system-node-critical"}, Value: 2_000_001_000}},
		"PDB min and max":          {obj: &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns"}, Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(1))}}, wantField: "spec"},
		"PDB percentage over 100":  {obj: &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns"}, Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromString("150%"))}}, wantField: "spec.minAvailable"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			fe := Admit(tc.obj)
			switch {
			case tc.wantField == "" && fe != nil:
				t.Fatalf("refused: %v", fe)
			case tc.wantField == "":
				return
			case fe == nil:
				t.Fatalf("accepted; want an error on %s", tc.wantField)
			}
			if fe.Field != tc.wantField || !strings.Contains(fe.Error(), tc.wantIn) {
				t.Errorf("error %q on %s; want field %s containing %q", fe.Error(), fe.Field, tc.wantField, tc.wantIn)
			}
		})
	}
}

func TestGlobalDefaults(t *testing.T) {
	var g GlobalDefaults
	a := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "a"}, GlobalDefault: true}
	b := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "b"}, GlobalDefault: true}
	c := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
	if g.Add(a) != nil || g.Add(c) != nil {
		t.Fatal("first default refused")
	}
	if fe := g.Add(b); fe == nil || fe.Field != "globalDefault" || !strings.Contains(fe.Error(), "PriorityClass a is already marked as default") {
		t.Errorf("second default: %v", fe)
	}
}
