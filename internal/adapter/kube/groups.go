package kube

import (
	"context"
	"fmt"

	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	"github.com/reprieve/reprieve/internal/scheduler"
)

// listGroups lists the pod group kinds the gates bring in: PodGroups
// (scheduling.k8s.io/v1beta1) with GenericWorkload, CompositePodGroups
// (v1alpha3) too with CompositePodGroup. A kind the API server does not
// serve (its API group is off, as beta and alpha APIs are by default) has
// no objects; any other failure is a warning.
func listGroups(ctx context.Context, client kubernetes.Interface, objs *snapshot.Objects, features profile.Features) []string {
	if !features.GenericWorkload {
		return nil
	}
	var warnings []string
	warn := func(what string, err error) {
		if !apierrors.IsNotFound(err) {
			warnings = append(warnings, fmt.Sprintf("cannot list %s (%v); preemption sees no pod groups of that kind", what, err))
		}
	}
	if l, err := client.SchedulingV1beta1().PodGroups(metav1.NamespaceAll).List(ctx, metav1.ListOptions{}); err != nil {
		warn("podgroups", err)
	} else {
		for i := range l.Items {
			objs.PodGroups = append(objs.PodGroups, &l.Items[i])
		}
	}
	if !features.Composite() {
		return warnings
	}
	if l, err := client.SchedulingV1alpha3().CompositePodGroups(metav1.NamespaceAll).List(ctx, metav1.ListOptions{}); err != nil {
		warn("compositepodgroups", err)
	} else {
		for i := range l.Items {
			objs.CompositePodGroups = append(objs.CompositePodGroups, &l.Items[i])
		}
	}
	return warnings
}

// groupHandlers are the informers of the pod group kinds the gates bring
// in (see listGroups), for the kinds the API server serves: an informer of a
// kind it does not serve would never sync.
func groupHandlers(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory, s *scheduler.Live, features profile.Features) []storageHandler {
	if !features.GenericWorkload {
		return nil
	}
	logger := klog.FromContext(ctx)
	served := func(what string, err error) bool {
		if apierrors.IsNotFound(err) {
			logger.Info("The API server does not serve this kind: preemption sees none", "kind", what)
			return false
		}
		return true
	}
	var hs []storageHandler
	if _, err := client.SchedulingV1beta1().PodGroups(metav1.NamespaceAll).List(ctx, metav1.ListOptions{Limit: 1}); served("scheduling.k8s.io/v1beta1 PodGroup", err) {
		hs = append(hs, storageHandler{f.Scheduling().V1beta1().PodGroups().Informer(), storageFuncs(s,
			func(snap *snapshot.Snapshot, pg *schedulingv1beta1.PodGroup) {
				if err := snap.SetPodGroup(pg); err != nil {
					logger.Error(err, "Ignoring a PodGroup", "podGroup", klog.KObj(pg))
				}
			},
			func(snap *snapshot.Snapshot, pg *schedulingv1beta1.PodGroup) {
				snap.RemovePodGroup(pg.Namespace, pg.Name)
			})})
	}
	if !features.Composite() {
		return hs
	}
	if _, err := client.SchedulingV1alpha3().CompositePodGroups(metav1.NamespaceAll).List(ctx, metav1.ListOptions{Limit: 1}); served("scheduling.k8s.io/v1alpha3 CompositePodGroup", err) {
		hs = append(hs, storageHandler{f.Scheduling().V1alpha3().CompositePodGroups().Informer(), storageFuncs(s,
			func(snap *snapshot.Snapshot, cpg *schedulingv1alpha3.CompositePodGroup) {
				if err := snap.SetCompositePodGroup(cpg); err != nil {
					logger.Error(err, "Ignoring a CompositePodGroup", "compositePodGroup", klog.KObj(cpg))
				}
			},
			func(snap *snapshot.Snapshot, cpg *schedulingv1alpha3.CompositePodGroup) {
				snap.RemoveCompositePodGroup(cpg.Namespace, cpg.Name)
			})})
	}
	return hs
}
