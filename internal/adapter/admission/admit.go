package admission

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Admit defaults obj in place and validates it, as the API server does on
// create. It returns the first problem, or nil when the API server would
// have accepted obj. Kinds it does not know are accepted unchanged.
func Admit(obj any) *field.Error {
	var errs field.ErrorList
	switch o := obj.(type) {
	case *v1.Pod:
		DefaultPod(o)
		errs = ValidatePod(o)
	case *v1.Node:
		DefaultNode(o)
		errs = ValidateNode(o)
	case *v1.Namespace:
		DefaultNamespace(o)
		errs = ValidateNamespace(o)
	case *schedulingv1.PriorityClass:
		DefaultPriorityClass(o)
		errs = ValidatePriorityClass(o)
	case *policyv1.PodDisruptionBudget:
		errs = ValidatePDB(o)
	case *appsv1.Deployment:
		DefaultDeployment(o)
		errs = ValidateDeployment(o)
	case *appsv1.ReplicaSet:
		DefaultReplicaSet(o)
		errs = ValidateReplicaSet(o)
	case *appsv1.StatefulSet:
		DefaultStatefulSet(o)
		errs = ValidateStatefulSet(o)
	case *batchv1.Job:
		DefaultJob(o)
		errs = ValidateJob(o)
	case *v1.ReplicationController:
		DefaultReplicationController(o)
		errs = ValidateReplicationController(o)
	case *appsv1.DaemonSet:
		DefaultDaemonSet(o)
		errs = ValidateDaemonSet(o)
	case *batchv1.CronJob:
		DefaultCronJob(o)
		errs = ValidateCronJob(o)
	case *schedulingv1beta1.PodGroup:
		errs = ValidatePodGroup(o)
	case *schedulingv1alpha3.CompositePodGroup:
		errs = ValidateCompositePodGroup(o)
	}
	if len(errs) == 0 {
		return nil
	}
	return errs[0]
}

// GlobalDefaults tracks the globalDefault PriorityClass, as the Priority
// admission plugin does: only one class may be the global default. The
// zero value is ready to use.
type GlobalDefaults struct {
	name string
}

// Add records pc, returning an error when another class is already the
// global default.
func (g *GlobalDefaults) Add(pc *schedulingv1.PriorityClass) *field.Error {
	if !pc.GlobalDefault {
		return nil
	}
	if g.name != "" && g.name != pc.Name {
		return field.Forbidden(field.NewPath("globalDefault"), "PriorityClass "+g.name+" is already marked as default. Only one PriorityClass can be marked as globalDefault")
	}
	g.name = pc.Name
	return nil
}
