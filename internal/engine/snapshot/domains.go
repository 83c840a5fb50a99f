package snapshot

import (
	"sync"

	v1 "k8s.io/api/core/v1"
)

// Domains are the topology domains of one node label key: the distinct
// values the key takes on the snapshot's nodes, each with an id, and the
// domain of every node. Filters count pods per domain in slices indexed by
// these ids instead of maps keyed by label values, and find a node's
// domain without reading its labels.
type Domains struct {
	// Key is the node label key.
	Key string
	// Values are the domains' label values by id.
	Values []string
	// OfNode holds the domain id of each node of Snapshot.Nodes by
	// Node.Index, -1 for a node without the key.
	OfNode []int32
}

// Of returns the domain id of n, or -1 when n does not have the key or is
// not one of the snapshot's nodes (Index -1).
func (d *Domains) Of(n *Node) int32 {
	if n.Index < 0 || n.Index >= len(d.OfNode) {
		return -1
	}
	return d.OfNode[n.Index]
}

// domainCache keeps the Domains computed so far, by key, until nodes
// change. Evaluations running at the same time may fill it.
type domainCache struct {
	mu    sync.Mutex
	byKey map[string]*Domains
}

// Domains returns the topology domains of key over the snapshot's nodes.
// The result is cached until nodes are added, updated or removed and must
// not be modified. It is safe to call from concurrent evaluations.
func (s *Snapshot) Domains(key string) *Domains {
	c := &s.domains
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.byKey[key]; ok {
		return d
	}
	d := &Domains{Key: key, OfNode: make([]int32, len(s.Nodes))}
	ids := map[string]int32{}
	for i, n := range s.Nodes {
		v, ok := n.Obj.Labels[key]
		if !ok {
			d.OfNode[i] = -1
			continue
		}
		id, seen := ids[v]
		if !seen {
			id = int32(len(d.Values))
			ids[v] = id
			d.Values = append(d.Values, v)
		}
		d.OfNode[i] = id
	}
	if c.byKey == nil {
		c.byKey = map[string]*Domains{}
	}
	c.byKey[key] = d
	return d
}

// buildDomains makes the Domains of the well-known topology keys, the
// node labels topology spread constraints and inter-pod terms name most
// (the scheduler's default spreading constraints among them), so that a
// one-shot evaluation does not read every node's labels for them.
func (s *Snapshot) buildDomains() {
	for _, key := range []string{v1.LabelHostname, v1.LabelTopologyZone, v1.LabelTopologyRegion} {
		s.Domains(key)
	}
}

// forgetDomains drops the cached Domains: nodes changed.
func (s *Snapshot) forgetDomains() {
	s.domains.mu.Lock()
	s.domains.byKey = nil
	s.domains.mu.Unlock()
}
