package whatif

import "github.com/reprieve/reprieve/internal/engine/snapshot"

// Snapshot is the cluster an evaluation reads: its nodes, pods, budgets,
// priority classes and the storage and DRA objects, indexed for the
// engine. Build one with NewSnapshot, or load manifests with pkg/loader
// and call the Set's Build. Evaluations do not change it.
type Snapshot = snapshot.Snapshot

// Objects are the API objects a Snapshot is built from, as the API server
// would hold them (pkg/loader applies its defaulting and validation).
type Objects = snapshot.Objects

// Pod is a pod as the engine reads it: a pending pod of the snapshot
// (Snapshot.Pod with "namespace/name") or a pod that does not exist yet,
// prepared with Snapshot.NewPod.
type Pod = snapshot.Pod

// NewSnapshot builds a snapshot from objs. Duplicate objects, pods bound
// to nodes that do not exist, unknown priority classes and unparsable
// selectors are errors naming the object.
func NewSnapshot(objs Objects) (*Snapshot, error) { return snapshot.New(objs) }
