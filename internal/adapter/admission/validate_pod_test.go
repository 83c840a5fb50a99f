package admission

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// TestValidatePodRules has, for each rule of the API server's pod
// validation that admission carries out, a pod it refuses (with the
// error's type, field and detail as upstream words them) and one it
// accepts. Some rules are there to accept: what one might think invalid
// and the API server stores (a schedulerName that is no DNS name, Gt with
// a word, a topology key that is no label key).
func TestValidatePodRules(t *testing.T) {
	pod := func(f func(p *v1.Pod)) *v1.Pod {
		p := rt.Pod("ns", "p").Req("1", "1Gi").Obj()
		f(p)
		return p
	}
	rl := func(kv ...string) v1.ResourceList {
		out := v1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			out[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return out
	}
	container := func(name string, f func(c *v1.Container)) v1.Container {
		c := v1.Container{Name: name, Image: "img"}
		f(&c)
		return c
	}
	spread := func(labels map[string]string, f func(c *v1.TopologySpreadConstraint)) *v1.Pod {
		return pod(func(p *v1.Pod) {
			p.Labels = labels
			c := v1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: v1.DoNotSchedule,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, MatchLabelKeys: []string{"app"}}
			f(&c)
			p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{c}
		})
	}
	antiAffinity := func(labels map[string]string, term v1.PodAffinityTerm) *v1.Pod {
		return pod(func(p *v1.Pod) {
			p.Labels = labels
			term.TopologyKey = "zone"
			p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term}}}
		})
	}
	nodeAffinity := func(required bool, r v1.NodeSelectorRequirement, field bool) *v1.Pod {
		return pod(func(p *v1.Pod) {
			term := v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{r}}
			if field {
				term = v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{r}}
			}
			na := &v1.NodeAffinity{}
			if required {
				na.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{term}}
			} else {
				na.PreferredDuringSchedulingIgnoredDuringExecution = []v1.PreferredSchedulingTerm{{Weight: 1, Preference: term}}
			}
			p.Spec.Affinity = &v1.Affinity{NodeAffinity: na}
		})
	}
	ephemeral := func(spec v1.PersistentVolumeClaimSpec) *v1.Pod {
		return pod(func(p *v1.Pod) {
			p.Spec.Volumes = []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{
				VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{Spec: spec}}}}}
		})
	}
	rwo := []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
	storage := v1.VolumeResourceRequirements{Requests: rl("storage", "1Gi")}
	claim := "gpu"

	tests := map[string]struct {
		pod  *v1.Pod
		want *field.Error // nil: accepted
	}{
		// Container restart policies.
		"init container restartPolicy Sometimes": {
			pod:  rt.Pod("ns", "p").Obj(),
			want: field.NotSupported(field.NewPath("spec", "initContainers").Index(0).Child("restartPolicy"), "Sometimes", containerRestartPolicies),
		},
		"sidecar (restartPolicy Always)": {pod: rt.Pod("ns", "p").Init("side", "1", true).Obj()},
		"init container restartPolicy OnFailure": {pod: pod(func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{container("i", func(c *v1.Container) { c.RestartPolicy = ptr.To(v1.ContainerRestartPolicyOnFailure) })}
		})},
		"container restartPolicy Never": {pod: pod(func(p *v1.Pod) { p.Spec.Containers[0].RestartPolicy = ptr.To(v1.ContainerRestartPolicyNever) })},
		"container restartPolicy Sometimes": {
			pod:  pod(func(p *v1.Pod) { p.Spec.Containers[0].RestartPolicy = ptr.To[v1.ContainerRestartPolicy]("Sometimes") }),
			want: field.NotSupported(field.NewPath("spec", "containers").Index(0).Child("restartPolicy"), "Sometimes", containerRestartPolicies),
		},

		// Pod-level resources.
		"pod-level requests below the containers'": {
			pod:  rt.Pod("ns", "p").Req("1", "").Container("d", "1").PodLevelCPU("1500m").Obj(),
			want: field.Invalid(field.NewPath("spec", "resources", "requests").Key("cpu"), "1500m", "must be greater than or equal to aggregate container requests of 2"),
		},
		"pod-level requests below the containers' and a sidecar's": {
			pod:  rt.Pod("ns", "p").Req("1", "").Init("side", "1", true).PodLevelCPU("1500m").Obj(),
			want: field.Invalid(field.NewPath("spec", "resources", "requests").Key("cpu"), "1500m", "must be greater than or equal to aggregate container requests of 2"),
		},
		"pod-level requests equal to the containers'": {pod: rt.Pod("ns", "p").Req("1", "").Container("d", "1").PodLevelCPU("2").Obj()},
		"pod-level nvidia.com/gpu": {
			pod: pod(func(p *v1.Pod) {
				p.Spec.Resources = &v1.ResourceRequirements{Requests: rl("nvidia.com/gpu", "1")}
			}),
			want: field.NotSupported(field.NewPath("spec", "resources", "requests").Key("nvidia.com/gpu"), "nvidia.com/gpu", []string{"cpu", "hugepages-", "memory"}),
		},
		"pod-level cpu, memory and hugepages": {
			pod: pod(func(p *v1.Pod) {
				p.Spec.Resources = &v1.ResourceRequirements{Requests: rl("cpu", "2", "memory", "2Gi"), Limits: rl("cpu", "4", "hugepages-2Mi", "4Mi")}
			}),
		},
		"pod-level hugepages request, its limit from the containers'": {
			pod: pod(func(p *v1.Pod) {
				p.Spec.Containers[0].Resources.Limits = rl("hugepages-2Mi", "4Mi")
				p.Spec.Resources = &v1.ResourceRequirements{Requests: rl("hugepages-2Mi", "64Mi")}
			}),
		},
		"pod-level hugepages request, a container without a limit": {
			pod: pod(func(p *v1.Pod) {
				p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "d", Image: "img"})
				p.Spec.Containers[0].Resources.Limits = rl("hugepages-2Mi", "4Mi")
				p.Spec.Resources = &v1.ResourceRequirements{Requests: rl("hugepages-2Mi", "64Mi", "memory", "2Gi")}
			}),
			want: field.Required(field.NewPath("spec", "resources", "limits"), "Limit must be set for non overcommitable resources"),
		},
		"pod-level limit below a container's": {
			pod: pod(func(p *v1.Pod) {
				p.Spec.Containers[0].Resources.Limits = rl("memory", "2Gi")
				p.Spec.Resources = &v1.ResourceRequirements{Limits: rl("memory", "1Gi")}
			}),
			want: field.Invalid(field.NewPath("spec", "resources", "containers").Index(0).Key("memory").Child("limits"), "2Gi", "must be less than or equal to pod limits of 1Gi"),
		},
		"pod-level claims": {
			pod:  pod(func(p *v1.Pod) { p.Spec.Resources = &v1.ResourceRequirements{Claims: []v1.ResourceClaim{{Name: "c"}}} }),
			want: field.Forbidden(field.NewPath("spec", "resources", "claims"), "claims may not be set for Resources at pod-level"),
		},

		// Host ports.
		"host port 8080 twice": {
			pod:  rt.Pod("ns", "p").Container("d", "1").HostPort(8080, "", "").Obj(),
			want: field.Duplicate(field.NewPath("spec", "containers").Index(1).Child("ports").Index(0).Child("hostPort"), "TCP//8080"),
		},
		"host port 8080 on two protocols": {pod: pod(func(p *v1.Pod) {
			p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080}, {ContainerPort: 80, HostPort: 8080, Protocol: v1.ProtocolUDP}}
		})},
		"host port 8080 on two host IPs": {pod: rt.Pod("ns", "p").HostPort(8080, "TCP", "10.0.0.1").HostPort(8080, "TCP", "10.0.0.2").Obj()},
		"host port 8080 in an init and a regular container": {pod: pod(func(p *v1.Pod) {
			p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
			p.Spec.InitContainers = []v1.Container{container("i", func(c *v1.Container) { c.Ports = p.Spec.Containers[0].Ports })}
		})},
		"host network, host port not the container port": {
			pod: pod(func(p *v1.Pod) {
				p.Spec.HostNetwork = true
				p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
			}),
			want: field.Invalid(field.NewPath("spec", "containers").Index(0).Child("ports").Index(0).Child("hostPort"), 8080, "must match `containerPort` when `hostNetwork` is true"),
		},
		"duplicate port name": {
			pod: pod(func(p *v1.Pod) {
				p.Spec.Containers[0].Ports = []v1.ContainerPort{{Name: "http", ContainerPort: 80}, {Name: "http", ContainerPort: 81}}
			}),
			want: field.Duplicate(field.NewPath("spec", "containers").Index(0).Child("ports").Index(1).Child("name"), "http"),
		},

		// Resource names and quantities.
		"unqualified gpu": {
			pod:  rt.Pod("ns", "p").ReqRes("gpu", "1").Obj(),
			want: field.Invalid(field.NewPath("spec", "containers").Index(0).Child("resources", "requests").Key("gpu"), "gpu", "must be a standard resource type or fully qualified"),
		},
		"pods requested by a container": {
			pod:  rt.Pod("ns", "p").ReqRes("pods", "1").Obj(),
			want: field.Invalid(field.NewPath("spec", "containers").Index(0).Child("resources", "requests").Key("pods"), "pods", "must be a standard resource for containers"),
		},
		"extended resource with its limit":        {pod: pod(func(p *v1.Pod) { p.Spec.Containers[0].Resources.Limits = rl("example.com/gpu", "1") })},
		"a kubernetes.io resource needs no limit": {pod: rt.Pod("ns", "p").ReqRes("example.kubernetes.io/thing", "1").Obj()},
		"hugepages without cpu or memory": {
			pod:  rt.Pod("ns", "p").Obj(),
			want: field.Forbidden(field.NewPath("spec", "containers").Index(0).Child("resources"), "HugePages require cpu or memory"),
		},
		"hugepages beside memory": {pod: pod(func(p *v1.Pod) { p.Spec.Containers[0].Resources.Limits = rl("hugepages-2Mi", "4Mi", "memory", "1Gi") })},
		"hugepages not whole pages": {
			pod:  pod(func(p *v1.Pod) { p.Spec.Containers[0].Resources.Limits = rl("hugepages-2Mi", "3Mi", "memory", "1Gi") }),
			want: field.Invalid(field.NewPath("spec", "containers").Index(0).Child("resources", "limits").Key("hugepages-2Mi"), "3Mi", "3Mi is not positive integer multiple of hugepages-2Mi"),
		},
		"hugepages request without its limit": {
			pod:  pod(func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests["hugepages-2Mi"] = resource.MustParse("4Mi") }),
			want: field.Required(field.NewPath("spec", "containers").Index(0).Child("resources", "limits"), "Limit must be set for non overcommitable resources"),
		},
		"overhead of an unqualified gpu": {
			pod:  rt.Pod("ns", "p").Overhead("1").Obj(),
			want: field.Invalid(field.NewPath("spec", "overhead", "limits").Key("gpu"), "gpu", "must be a standard resource type or fully qualified"),
		},
		"overhead of cpu": {pod: rt.Pod("ns", "p").Overhead("250m").Obj()},

		// Names the API server does not check.
		"schedulerName Bad Name!": {pod: pod(func(p *v1.Pod) { p.Spec.SchedulerName = "Bad Name!" })},

		// matchLabelKeys and mismatchLabelKeys.
		"spread matchLabelKeys in the selector, pod labelled": {
			pod:  spread(map[string]string{"app": "web"}, func(*v1.TopologySpreadConstraint) {}),
			want: field.Invalid(field.NewPath("spec", "topologySpreadConstraints").Index(0).Index(0), "app", "exists in both matchLabelKeys and labelSelector"),
		},
		"spread matchLabelKeys in the selector, no such label": {pod: spread(map[string]string{"tier": "db"}, func(*v1.TopologySpreadConstraint) {})},
		"spread matchLabelKeys merged already (read back from a cluster)": {pod: spread(map[string]string{"app": "web", "hash": "h1"}, func(c *v1.TopologySpreadConstraint) {
			c.MatchLabelKeys = []string{"hash"}
			c.LabelSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "hash", Operator: metav1.LabelSelectorOpIn, Values: []string{"h1"}}}
		})},
		"spread matchLabelKeys without a selector": {
			pod:  spread(nil, func(c *v1.TopologySpreadConstraint) { c.LabelSelector = nil }),
			want: field.Forbidden(field.NewPath("spec", "topologySpreadConstraints").Index(0).Child("matchLabelKeys"), "must not be specified when labelSelector is not set"),
		},
		"spread topology key that is no label key": {pod: spread(nil, func(c *v1.TopologySpreadConstraint) { c.TopologyKey, c.MatchLabelKeys = "bad key!", nil })},
		"anti-affinity matchLabelKeys in the selector, pod labelled": {
			pod: antiAffinity(map[string]string{"tier": "db"}, v1.PodAffinityTerm{MatchLabelKeys: []string{"tier"},
				LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpExists}}}}),
			want: field.Invalid(field.NewPath("spec", "affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution").Index(0).Index(0), "tier", "exists in both matchLabelKeys and labelSelector"),
		},
		"anti-affinity matchLabelKeys beside another key": {pod: antiAffinity(map[string]string{"tier": "db"}, v1.PodAffinityTerm{MatchLabelKeys: []string{"tier"},
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}})},
		"a key both matchLabelKeys and mismatchLabelKeys": {
			pod:  antiAffinity(nil, v1.PodAffinityTerm{MatchLabelKeys: []string{"team"}, MismatchLabelKeys: []string{"team"}, LabelSelector: &metav1.LabelSelector{}}),
			want: field.Invalid(field.NewPath("spec", "affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution").Index(0).Child("matchLabelKeys").Index(0), "team", "exists in both matchLabelKeys and mismatchLabelKeys"),
		},
		"affinity namespace that is no DNS label": {
			pod:  antiAffinity(nil, v1.PodAffinityTerm{Namespaces: []string{"Bad_NS"}}),
			want: field.Invalid(field.NewPath("spec", "affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution").Index(0).Child("namespace"), "Bad_NS", "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"),
		},

		// Node affinity.
		"Gt with a word": {pod: nodeAffinity(true, v1.NodeSelectorRequirement{Key: "cores", Operator: v1.NodeSelectorOpGt, Values: []string{"abc"}}, false)},
		"required value that is no label value": {
			pod:  nodeAffinity(true, v1.NodeSelectorRequirement{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"bad value!"}}, false),
			want: field.Invalid(field.NewPath("spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms").Index(0).Child("matchExpressions").Index(0).Child("values").Index(0), "bad value!", "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
		},
		"preferred value that is no label value": {pod: nodeAffinity(false, v1.NodeSelectorRequirement{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"bad value!"}}, false)},
		"unknown node selector operator": {
			pod:  nodeAffinity(true, v1.NodeSelectorRequirement{Key: "zone", Operator: "Near"}, false),
			want: field.Invalid(field.NewPath("spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms").Index(0).Child("matchExpressions").Index(0).Child("operator"), "Near", "not a valid selector operator"),
		},
		"match field other than metadata.name": {
			pod:  nodeAffinity(true, v1.NodeSelectorRequirement{Key: "metadata.uid", Operator: v1.NodeSelectorOpIn, Values: []string{"u"}}, true),
			want: field.Invalid(field.NewPath("spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms").Index(0).Child("matchFields").Index(0).Child("key"), "metadata.uid", "not a valid field selector key"),
		},
		"match field metadata.name": {pod: nodeAffinity(true, v1.NodeSelectorRequirement{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"node-1"}}, true)},

		// Tolerations.
		"toleration value that is no label value": {
			pod:  rt.Pod("ns", "p").Toleration("k", "bad value!", v1.TaintEffectNoSchedule).Obj(),
			want: field.Invalid(field.NewPath("spec", "tolerations").Index(0).Child("operator"), "bad value!", "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
		},

		// Volumes.
		"ephemeral volume without access modes": {
			pod:  ephemeral(v1.PersistentVolumeClaimSpec{Resources: storage}),
			want: field.Required(field.NewPath("spec", "volumes").Index(0).Child("ephemeral", "volumeClaimTemplate", "spec", "accessModes"), "at least 1 access mode is required"),
		},
		"ephemeral volume without storage": {
			pod:  ephemeral(v1.PersistentVolumeClaimSpec{AccessModes: rwo}),
			want: field.Required(field.NewPath("spec", "volumes").Index(0).Child("ephemeral", "volumeClaimTemplate", "spec", "resources").Key("storage"), ""),
		},
		"ephemeral volume": {pod: ephemeral(v1.PersistentVolumeClaimSpec{AccessModes: rwo, Resources: storage})},
		"claim volume without a claim name": {
			pod:  rt.Pod("ns", "p").PVC("data", "").Obj(),
			want: field.Required(field.NewPath("spec", "volumes").Index(0).Child("persistentVolumeClaim", "claimName"), ""),
		},
		"claim volume of the pod's ephemeral claim": {
			pod: pod(func(p *v1.Pod) {
				p.Spec.Volumes = append(ephemeral(v1.PersistentVolumeClaimSpec{AccessModes: rwo, Resources: storage}).Spec.Volumes, rt.Pod("ns", "p").PVC("data", "p-scratch").Obj().Spec.Volumes...)
			}),
			want: field.Invalid(field.NewPath("spec", "volumes").Index(1).Child("persistentVolumeClaim", "claimName"), "p-scratch", "must not reference a PVC that gets created for an ephemeral volume"),
		},
		"volume without a source is an emptyDir": {pod: pod(func(p *v1.Pod) { p.Spec.Volumes = []v1.Volume{{Name: "scratch"}} })},
		"volume with two sources": {
			pod: pod(func(p *v1.Pod) {
				p.Spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}, PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}}}
			}),
			want: field.Forbidden(field.NewPath("spec", "volumes").Index(0), "may not specify more than 1 volume type"),
		},
		"duplicate volume name": {
			pod:  rt.Pod("ns", "p").PVC("data", "a").PVC("data", "b").Obj(),
			want: field.Duplicate(field.NewPath("spec", "volumes").Index(1).Child("name"), "data"),
		},

		// Resource claims.
		"container claim the pod does not have": {
			pod: pod(func(p *v1.Pod) { p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}} }),
			want: &field.Error{Type: field.ErrorTypeNotFound, Field: "spec.containers[0].resources.claims[0]", BadValue: "gpu",
				Detail: "must be one of the names in pod.spec.resourceClaims which is empty"},
		},
		"container claim the pod has": {pod: pod(func(p *v1.Pod) {
			p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: &claim}}
			p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}}
		})},
		"pod claim with both sources": {
			pod: pod(func(p *v1.Pod) {
				p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: &claim, ResourceClaimTemplateName: &claim}}
			}),
			want: field.Invalid(field.NewPath("spec", "resourceClaims").Index(0), nil, "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"),
		},

		// Scheduling gates and groups.
		"node name with scheduling gates": {
			pod: pod(func(p *v1.Pod) {
				p.Spec.NodeName = "node-1"
				p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "gate"}}
			}),
			want: field.Forbidden(field.NewPath("spec", "nodeName"), "cannot be set until all schedulingGates have been cleared"),
		},
		"scheduling gates": {pod: pod(func(p *v1.Pod) {
			p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/gate"}, {Name: "gate"}}
		})},
		"duplicate scheduling gate": {
			pod:  pod(func(p *v1.Pod) { p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "gate"}, {Name: "gate"}} }),
			want: field.Duplicate(field.NewPath("spec", "schedulingGates").Index(1), "gate"),
		},
		"pod group name that is no DNS subdomain": {
			pod:  pod(func(p *v1.Pod) { p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr.To("Bad_PG")} }),
			want: field.Invalid(field.NewPath("spec", "schedulingGroup", "podGroupName"), "Bad_PG", "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
		},
	}
	// The pods that need more than the builders give.
	tests["init container restartPolicy Sometimes"].pod.Spec.InitContainers = []v1.Container{container("i", func(c *v1.Container) { c.RestartPolicy = ptr.To[v1.ContainerRestartPolicy]("Sometimes") })}
	tests["hugepages without cpu or memory"].pod.Spec.Containers[0].Resources.Limits = rl("hugepages-2Mi", "4Mi")
	tests["overhead of an unqualified gpu"].pod.Spec.Overhead = rl("gpu", "1")
	tests["host port 8080 twice"].pod.Spec.Containers[1].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}

	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Admit(tc.pod)
			if diff := cmp.Diff(errorOf(tc.want), errorOf(got)); diff != "" {
				t.Errorf("Admit (-want +got):\n%s", diff)
			}
		})
	}
}

// fieldError is what a user reads of a field.Error: its type, field and
// detail.
type fieldError struct {
	Type   field.ErrorType
	Field  string
	Detail string
}

func errorOf(fe *field.Error) *fieldError {
	if fe == nil {
		return nil
	}
	return &fieldError{fe.Type, fe.Field, fe.Detail}
}
