package sim

import (
	"strings"

	v1 "k8s.io/api/core/v1"
)

// ReplicaStory is what became of a preempted pod that its controller
// re-created under the same name with the same claims (a StatefulSet
// replica): where it ran, who preempted it, and how the re-created pod
// fared, with the volumes that pin it.
type ReplicaStory struct {
	Pod         string  `json:"pod"`
	Node        string  `json:"node"`
	Preempted   float64 `json:"preempted"`
	PreemptedBy string  `json:"preemptedBy,omitempty"`
	// Recreated is when the replica came back (nil: not before the end).
	Recreated *float64 `json:"recreated,omitempty"`
	// Bound and BoundNode: when and where the re-created replica was
	// bound (nil: still pending at the end).
	Bound     *float64 `json:"bound,omitempty"`
	BoundNode string   `json:"boundNode,omitempty"`
	// Unschedulable is the re-created replica's last FailedScheduling
	// message while it was pending.
	Unschedulable string `json:"unschedulable,omitempty"`
	// Volumes are the replica's claims and the volumes bound to them.
	Volumes []ClaimVolume `json:"volumes,omitempty"`
}

// ClaimVolume is a claim, the volume bound to it and the nodes that volume
// is limited to.
type ClaimVolume struct {
	Claim  string `json:"claim"`
	Volume string `json:"volume,omitempty"`
	// Topology is the volume's required node affinity, as
	// "topology.kubernetes.io/zone in (zone-a)"; "" when it has none.
	Topology string `json:"topology,omitempty"`
}

// replicaStories pairs each preempted pod with the next pod of the same
// name its controller created.
func (w *world) replicaStories() []ReplicaStory {
	var out []ReplicaStory
	for i, h := range w.rec.hist {
		if h.Preempted == nil {
			continue
		}
		var next *PodHistory
		for _, n := range w.rec.hist[i+1:] {
			if n.Pod == h.Pod {
				next = n
				break
			}
		}
		if next == nil && len(h.Claims) == 0 {
			continue // nothing ties a replacement to this pod
		}
		s := ReplicaStory{Pod: h.Pod, Node: h.Node, Preempted: *h.Preempted, PreemptedBy: h.PreemptedBy}
		claims := h.Claims
		if next != nil {
			s.Recreated, s.Bound, s.BoundNode, s.Unschedulable = ptr(next.Created), next.Bound, next.Node, next.Unschedulable
			claims = next.Claims
		}
		for _, c := range claims {
			cv := ClaimVolume{Claim: c}
			if pvc := w.storage.claims[c]; pvc != nil && pvc.Spec.VolumeName != "" {
				cv.Volume = pvc.Spec.VolumeName
				if pv := w.storage.pvs[cv.Volume]; pv != nil {
					cv.Topology = topologyString(pv.Spec.NodeAffinity)
				}
			}
			s.Volumes = append(s.Volumes, cv)
		}
		if next == nil && len(s.Volumes) == 0 {
			continue
		}
		out = append(out, s)
	}
	return out
}

// topologyString renders a volume's required node affinity.
func topologyString(a *v1.VolumeNodeAffinity) string {
	if a == nil || a.Required == nil {
		return ""
	}
	var terms []string
	for _, t := range a.Required.NodeSelectorTerms {
		var reqs []string
		for _, r := range t.MatchExpressions {
			reqs = append(reqs, r.Key+" "+strings.ToLower(string(r.Operator))+" ("+strings.Join(r.Values, ", ")+")")
		}
		terms = append(terms, strings.Join(reqs, ", "))
	}
	return strings.Join(terms, " or ")
}
