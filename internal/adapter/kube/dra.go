package kube

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// listDRA adds the cluster's dynamic resource allocation objects
// (resource.k8s.io/v1 ResourceSlices, DeviceClasses and ResourceClaims) to
// objs, claims with the API server's defaults. A cluster that does not serve
// the API, or an identity that may not list it, gets a warning instead:
// pods with claims are then decided as if no device existed.
func listDRA(ctx context.Context, client kubernetes.Interface, objs *snapshot.Objects) []string {
	warn := func(what string, err error) []string {
		return []string{fmt.Sprintf("cannot list %s (%v); dynamic resource allocation is decided without them", what, err)}
	}
	slices, err := client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
	if err != nil {
		return warn("resourceslices", err)
	}
	classes, err := client.ResourceV1().DeviceClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return warn("deviceclasses", err)
	}
	claims, err := client.ResourceV1().ResourceClaims(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return warn("resourceclaims", err)
	}
	for i := range slices.Items {
		objs.ResourceSlices = append(objs.ResourceSlices, &slices.Items[i])
	}
	for i := range classes.Items {
		objs.DeviceClasses = append(objs.DeviceClasses, &classes.Items[i])
	}
	for i := range claims.Items {
		snapshot.DefaultResourceClaim(&claims.Items[i])
		objs.ResourceClaims = append(objs.ResourceClaims, &claims.Items[i])
	}
	return nil
}
