package kube

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// listStorage lists the storage objects the volume plugins read, with list
// calls only: PersistentVolumes, PersistentVolumeClaims, StorageClasses,
// CSINodes, CSIDrivers, CSIStorageCapacities and VolumeAttachments.
func listStorage(ctx context.Context, client kubernetes.Interface, st *snapshot.StorageObjects) error {
	opts := metav1.ListOptions{}
	pvs, err := client.CoreV1().PersistentVolumes().List(ctx, opts)
	if err != nil {
		return fmt.Errorf("listing persistentvolumes: %w", err)
	}
	for i := range pvs.Items {
		st.PersistentVolumes = append(st.PersistentVolumes, &pvs.Items[i])
	}
	pvcs, err := client.CoreV1().PersistentVolumeClaims(metav1.NamespaceAll).List(ctx, opts)
	if err != nil {
		return fmt.Errorf("listing persistentvolumeclaims: %w", err)
	}
	for i := range pvcs.Items {
		st.PersistentVolumeClaims = append(st.PersistentVolumeClaims, &pvcs.Items[i])
	}
	scs, err := client.StorageV1().StorageClasses().List(ctx, opts)
	if err != nil {
		return fmt.Errorf("listing storageclasses: %w", err)
	}
	for i := range scs.Items {
		st.StorageClasses = append(st.StorageClasses, &scs.Items[i])
	}
	csiNodes, err := client.StorageV1().CSINodes().List(ctx, opts)
	if err != nil {
		return fmt.Errorf("listing csinodes: %w", err)
	}
	for i := range csiNodes.Items {
		st.CSINodes = append(st.CSINodes, &csiNodes.Items[i])
	}
	drivers, err := client.StorageV1().CSIDrivers().List(ctx, opts)
	if err != nil {
		return fmt.Errorf("listing csidrivers: %w", err)
	}
	for i := range drivers.Items {
		st.CSIDrivers = append(st.CSIDrivers, &drivers.Items[i])
	}
	caps, err := client.StorageV1().CSIStorageCapacities(metav1.NamespaceAll).List(ctx, opts)
	if err != nil {
		return fmt.Errorf("listing csistoragecapacities: %w", err)
	}
	for i := range caps.Items {
		st.CSIStorageCapacities = append(st.CSIStorageCapacities, &caps.Items[i])
	}
	vas, err := client.StorageV1().VolumeAttachments().List(ctx, opts)
	if err != nil {
		return fmt.Errorf("listing volumeattachments: %w", err)
	}
	for i := range vas.Items {
		st.VolumeAttachments = append(st.VolumeAttachments, &vas.Items[i])
	}
	return nil
}
