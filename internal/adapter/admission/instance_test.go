package admission

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// TestValidatePodInstance changes a valid pod in the fields
// ValidatePodInstance validates, well and badly: it must refuse exactly
// what ValidatePod refuses.
func TestValidatePodInstance(t *testing.T) {
	tests := map[string]struct {
		change  func(p *v1.Pod)
		wantBad bool
		// resources says the change is to the resources the status
		// reports (else AdmitPodInstanceOfResources must agree).
		resources bool
	}{
		"as it is":            {change: func(*v1.Pod) {}},
		"another name":        {change: func(p *v1.Pod) { p.Name = "web-2" }},
		"bad name":            {change: func(p *v1.Pod) { p.Name = "Bad_Name" }, wantBad: true},
		"name too long":       {change: func(p *v1.Pod) { p.Name = strings.Repeat("a", 254) }, wantBad: true},
		"annotations":         {change: func(p *v1.Pod) { p.Annotations = map[string]string{"a": "b"} }},
		"bad annotation key":  {change: func(p *v1.Pod) { p.Annotations = map[string]string{"-a-": "b"} }, wantBad: true},
		"annotations too big": {change: func(p *v1.Pod) { p.Annotations = map[string]string{"a": strings.Repeat("x", 300<<10)} }, wantBad: true},
		"managed fields":      {change: func(p *v1.Pod) { p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m", Operation: "Update"}} }},
		"bad managed fields":  {change: func(p *v1.Pod) { p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m", Operation: "Dance"}} }, wantBad: true},
		"node name":           {change: func(p *v1.Pod) { p.Spec.NodeName = "node-2" }},
		"bad node name":       {change: func(p *v1.Pod) { p.Spec.NodeName = "Bad_Node" }, wantBad: true},
		"allocated":           {change: func(p *v1.Pod) { allocated(p, "2") }, resources: true},
		"negative allocated":  {change: func(p *v1.Pod) { allocated(p, "-2") }, wantBad: true, resources: true},
		"allocated too much":  {change: func(p *v1.Pod) { allocated(p, "9223372036854775807") }, wantBad: true, resources: true},
		"status cleared":      {change: func(p *v1.Pod) { p.Status = v1.PodStatus{} }},
		"volumes": {change: func(p *v1.Pod) {
			p.Spec.Volumes = []v1.Volume{{Name: "token", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{}}}, {Name: "data", VolumeSource: v1.VolumeSource{
				PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data-web-1"}}}}
		}},
		"claim volume without a claim": {change: func(p *v1.Pod) {
			p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{}}}}
		}, wantBad: true},
		"ephemeral claim name too long": {change: func(p *v1.Pod) {
			p.Name = strings.Repeat("a", 250)
			p.Spec.Volumes = []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{
				Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}, Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: q("1Gi")}}}}}}}}
		}, wantBad: true},
		"running": {change: func(p *v1.Pod) { p.Status = v1.PodStatus{Phase: v1.PodRunning} }},
		"status requests": {change: func(p *v1.Pod) {
			p.Status.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: q("-1")}}
		}, wantBad: true, resources: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := rt.Pod("ns", "web-1").Req("1", "1Gi").Obj()
			DefaultPod(p)
			if errs := ValidatePod(p); len(errs) > 0 {
				t.Fatalf("the pod is refused as it is: %v", errs)
			}
			tc.change(p)
			whole, instance := ValidatePod(p), ValidatePodInstance(p)
			if bad := len(whole) > 0; bad != tc.wantBad {
				t.Fatalf("ValidatePod refuses it: %v, want %v (%v)", bad, tc.wantBad, whole)
			}
			if bad := len(instance) > 0; bad != tc.wantBad {
				t.Errorf("ValidatePodInstance refuses it: %v, want %v as ValidatePod (%v)", bad, tc.wantBad, instance)
			}
			// Admitted as an instance, it is what Admit makes of it.
			inst, whole2 := p.DeepCopy(), p.DeepCopy()
			admitted, err := AdmitPodInstance(inst), Admit(whole2)
			if admitted != (err == nil) || inst.Status.Phase != whole2.Status.Phase {
				t.Errorf("AdmitPodInstance: %v, phase %q; Admit: %v, phase %q", admitted, inst.Status.Phase, err, whole2.Status.Phase)
			}
			if inst := p.DeepCopy(); !tc.resources && AdmitPodInstanceOfResources(inst) != admitted {
				t.Errorf("AdmitPodInstanceOfResources: %v, AdmitPodInstance: %v", !admitted, admitted)
			}
		})
	}
}

func allocated(p *v1.Pod, cpu string) {
	p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: p.Spec.Containers[0].Name, AllocatedResources: v1.ResourceList{v1.ResourceCPU: q(cpu)}}}
}
