// Package reprieve answers, for one pod and a cluster snapshot, what
// kube-scheduler would do: where the pod fits, or which node preemption
// would nominate, which pods it would evict, which PodDisruptionBudgets
// would break, and why every other node was rejected. It is the library
// face of `reprieve whatif`: the same answers, the same JSON.
//
// Load a Snapshot from manifests (LoadSnapshot) or from API objects
// (NewSnapshot), then Evaluate a pod with Options that give the time, the
// seed, the scheduler configuration, the feature gates and the victim
// policy. Inputs are defaulted and validated as the API server would do
// it; errors caused by bad input match ErrInput with errors.Is.
package reprieve

// KubeVersion is the kube-scheduler release whose decisions this package
// reproduces (the CLI's --kube-version chooses among more).
const KubeVersion = "v1.37.2"
