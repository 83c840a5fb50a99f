package kube

import (
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
	"github.com/reprieve/reprieve/internal/scheduler"
)

// draHandlers are the informers of the dynamic resource allocation kinds
// DynamicResources reads: ResourceSlices and DeviceClasses as storage
// objects are fed, ResourceClaims through the scheduler's claim handlers,
// which keep the allocations its cycles assumed (scheduler.OnResourceClaim).
// Claims are defaulted as the loader does (a copy: the informer's store is
// shared).
func draHandlers(f informers.SharedInformerFactory, s *scheduler.Live) []storageHandler {
	r := f.Resource().V1()
	claim := func(o any) {
		if c, ok := o.(*resourceapi.ResourceClaim); ok {
			c = c.DeepCopy()
			snapshot.DefaultResourceClaim(c)
			s.OnResourceClaim(c)
		}
	}
	return []storageHandler{
		{r.ResourceSlices().Informer(), storageFuncs(s,
			(*snapshot.Snapshot).SetResourceSlice,
			func(snap *snapshot.Snapshot, o *resourceapi.ResourceSlice) { snap.RemoveResourceSlice(o.Name) })},
		{r.DeviceClasses().Informer(), storageFuncs(s,
			(*snapshot.Snapshot).SetDeviceClass,
			func(snap *snapshot.Snapshot, o *resourceapi.DeviceClass) { snap.RemoveDeviceClass(o.Name) })},
		{r.ResourceClaims().Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    claim,
			UpdateFunc: func(_, o any) { claim(o) },
			DeleteFunc: func(o any) {
				if c, ok := unwrap[*resourceapi.ResourceClaim](o); ok {
					s.OnResourceClaimDelete(c.Namespace, c.Name, c.UID)
				}
			},
		}},
	}
}
