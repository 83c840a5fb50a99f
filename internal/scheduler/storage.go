package scheduler

import "github.com/reprieve/reprieve/internal/engine/snapshot"

// OnStorage applies a change of a storage object (PersistentVolume,
// PersistentVolumeClaim, StorageClass, CSINode, CSIDriver,
// CSIStorageCapacity, VolumeAttachment) to the scheduler's snapshot, and
// moves unschedulable pods back to the active or backoff queue when added
// is set (an object was created or changed), since it may make them
// schedulable: a claim created, bound or provisioned, a class or CSINode
// created.
func (s *Core) OnStorage(apply func(*snapshot.Snapshot), added bool) {
	apply(s.snap)
	if added {
		s.queue.MoveAllToActiveOrBackoff()
	}
}

// OnSelector applies a change of a Service, ReplicationController,
// ReplicaSet or StatefulSet (their selectors give PodTopologySpread's
// default constraints theirs) to the scheduler's snapshot. As upstream,
// whose PodTopologySpread registers no event for them, it moves no pod.
func (s *Core) OnSelector(apply func(*snapshot.Snapshot)) {
	apply(s.snap)
}
