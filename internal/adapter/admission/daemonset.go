package admission

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// DefaultDaemonSet is the API server's defaulting of what the daemonset
// controller reads: a RollingUpdate strategy (maxUnavailable 1, maxSurge
// 0), a revision history of 10, generation 1 with the template generation
// annotation, and the template's pod spec.
func DefaultDaemonSet(ds *appsv1.DaemonSet) {
	u := &ds.Spec.UpdateStrategy
	if u.Type == "" {
		u.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if u.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if u.RollingUpdate == nil {
			u.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if u.RollingUpdate.MaxUnavailable == nil {
			u.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(1))
		}
		if u.RollingUpdate.MaxSurge == nil {
			u.RollingUpdate.MaxSurge = ptr.To(intstr.FromInt32(0))
		}
	}
	if ds.Spec.RevisionHistoryLimit == nil {
		ds.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
	if ds.Generation == 0 {
		ds.Generation = 1
	}
	if _, ok := ds.Annotations[appsv1.DeprecatedTemplateGeneration]; !ok {
		if ds.Annotations == nil {
			ds.Annotations = map[string]string{}
		}
		ds.Annotations[appsv1.DeprecatedTemplateGeneration] = "1"
	}
	DefaultPodSpec(&ds.Spec.Template.Spec)
}

// ValidateDaemonSet checks the selector (required, non-empty, matching the
// template's labels), the template (restartPolicy Always) and the update
// strategy.
func ValidateDaemonSet(ds *appsv1.DaemonSet) field.ErrorList {
	errs := validateObjectMeta(&ds.ObjectMeta, true)
	errs = append(errs, validateReplicated(nil, ds.Spec.Selector, &ds.Spec.Template)...)
	switch ds.Spec.UpdateStrategy.Type {
	case appsv1.RollingUpdateDaemonSetStrategyType, appsv1.OnDeleteDaemonSetStrategyType:
	default:
		errs = append(errs, field.NotSupported(spec.Child("updateStrategy", "type"), ds.Spec.UpdateStrategy.Type,
			[]string{string(appsv1.RollingUpdateDaemonSetStrategyType), string(appsv1.OnDeleteDaemonSetStrategyType)}))
	}
	return errs
}

// DefaultCronJob is the API server's defaulting of a CronJob: concurrency
// Allow, not suspended, history limits 3 and 1, and its job template's
// spec as a Job's.
func DefaultCronJob(cj *batchv1.CronJob) {
	if cj.Spec.ConcurrencyPolicy == "" {
		cj.Spec.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	if cj.Spec.Suspend == nil {
		cj.Spec.Suspend = ptr.To(false)
	}
	if cj.Spec.SuccessfulJobsHistoryLimit == nil {
		cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](3)
	}
	if cj.Spec.FailedJobsHistoryLimit == nil {
		cj.Spec.FailedJobsHistoryLimit = ptr.To[int32](1)
	}
	job := batchv1.Job{Spec: cj.Spec.JobTemplate.Spec}
	DefaultJob(&job)
	cj.Spec.JobTemplate.Spec = job.Spec
}

// ValidateCronJob checks the schedule (required) and the job template as
// ValidateJob checks a Job's spec, its fields named under
// spec.jobTemplate.
func ValidateCronJob(cj *batchv1.CronJob) field.ErrorList {
	errs := validateObjectMeta(&cj.ObjectMeta, true)
	if cj.Spec.Schedule == "" {
		errs = append(errs, field.Required(spec.Child("schedule"), ""))
	}
	job := batchv1.Job{Spec: cj.Spec.JobTemplate.Spec}
	job.Name, job.Namespace = "job", "job" // the CronJob's metadata is checked above
	for _, e := range ValidateJob(&job) {
		e.Field = "spec.jobTemplate." + e.Field
		errs = append(errs, e)
	}
	return errs
}
