package workload

import (
	"fmt"
	"maps"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// jobTrackingFinalizer is the finalizer the job controller gives its pods.
const jobTrackingFinalizer = "batch.kubernetes.io/job-tracking"

// The unprefixed labels the API server still gives a Job's template.
const (
	legacyJobNameLabel       = "job-name"
	legacyControllerUIDLabel = "controller-uid"
)

// job makes the pods a new Job starts with: parallelism of them, at most
// its completions, each with the labels the API server adds to the
// template (job name, controller UID) and, for an Indexed Job, its
// completion index (label, annotation, hostname, name NAME-INDEX-). A
// suspended Job starts none.
func job(in *batchv1.Job, n *Namer) (*Workload, error) {
	j := in.DeepCopy()
	setUID(j, "Job", n)
	w := &Workload{Kind: "Job", Namespace: j.Namespace, Name: j.Name}
	if j.Spec.Suspend != nil && *j.Spec.Suspend {
		w.Note = "suspended: the job controller starts no pods"
		return w, nil
	}
	generateSelector(j)
	active := count(j.Spec.Parallelism)
	if j.Spec.Completions != nil {
		active = min(active, int(*j.Spec.Completions))
	}
	indexed := j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion
	for i := range active {
		pod := podFromTemplate(&j.Spec.Template, j, jobKind)
		pod.Finalizers = append(pod.Finalizers, jobTrackingFinalizer)
		if indexed {
			index := strconv.Itoa(i)
			pod.Annotations[batchv1.JobCompletionIndexAnnotation] = index
			pod.Labels[batchv1.JobCompletionIndexAnnotation] = index
			pod.Spec.Hostname = fmt.Sprintf("%s-%d", j.Name, i)
			pod.GenerateName = indexedPrefix(j.Name, i)
		}
		pod, err := admit(pod, n)
		if err != nil {
			return nil, err
		}
		w.Pods = append(w.Pods, pod)
	}
	return w, nil
}

// indexedPrefix is the generateName of an Indexed Job's pod: NAME-INDEX-,
// the name cut so that it fits what the API server keeps of a prefix.
func indexedPrefix(name string, index int) string {
	suffix := "-" + strconv.Itoa(index) + "-"
	if len(name)+len(suffix) > maxGeneratedNameLength {
		name = name[:maxGeneratedNameLength-len(suffix)]
	}
	return name + suffix
}

// generateSelector is what the API server does to a Job without
// manualSelector: its template labelled with the job's name and UID, and
// selected by the UID.
func generateSelector(j *batchv1.Job) {
	if j.Spec.ManualSelector != nil && *j.Spec.ManualSelector {
		return
	}
	labels := maps.Clone(j.Spec.Template.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	for _, k := range []string{legacyJobNameLabel, batchv1.JobNameLabel} {
		if _, ok := labels[k]; !ok {
			labels[k] = j.Name
		}
	}
	for _, k := range []string{legacyControllerUIDLabel, batchv1.ControllerUidLabel} {
		if _, ok := labels[k]; !ok {
			labels[k] = string(j.UID)
		}
	}
	j.Spec.Template.Labels = labels
	if j.Spec.Selector == nil {
		j.Spec.Selector = &metav1.LabelSelector{}
	}
	if j.Spec.Selector.MatchLabels == nil {
		j.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, ok := j.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel]; !ok {
		j.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel] = string(j.UID)
	}
}

// cronJobScheduledTimestamp is the annotation of a CronJob's Job with the
// time it was scheduled for.
const cronJobScheduledTimestamp = "batch.kubernetes.io/cronjob-scheduled-timestamp"

// cronJob makes the Job a CronJob starts when its schedule comes, taken to
// be now (the minute it falls in): NAME-MINUTES since the epoch, owned by
// the CronJob, and that Job's pods. A suspended CronJob starts none.
func cronJob(in *batchv1.CronJob, now time.Time, n *Namer) (*Workload, error) {
	cj := in.DeepCopy()
	setUID(cj, "CronJob", n)
	w := &Workload{Kind: "CronJob", Namespace: cj.Namespace, Name: cj.Name}
	if cj.Spec.Suspend != nil && *cj.Spec.Suspend {
		w.Note = "suspended: the cronjob controller starts no job"
		return w, nil
	}
	scheduled := now.Truncate(time.Minute)
	annotations := maps.Clone(cj.Spec.JobTemplate.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[cronJobScheduledTimestamp] = scheduled.UTC().Format(time.RFC3339)
	j := &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            fmt.Sprintf("%s-%d", cj.Name, scheduled.Unix()/60),
			Namespace:       cj.Namespace,
			Labels:          maps.Clone(cj.Spec.JobTemplate.Labels),
			Annotations:     annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cj, cronJobKind)},
		},
		Spec: *cj.Spec.JobTemplate.Spec.DeepCopy(),
	}
	made, err := job(j, n)
	if err != nil {
		return nil, err
	}
	w.Pods, w.Note = made.Pods, made.Note
	return w, nil
}
