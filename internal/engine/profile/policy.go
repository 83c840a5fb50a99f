package profile

import "fmt"

// Policy is how preemption chooses victims (reprieve's --victim-policy).
// The zero value is PolicyUpstream.
type Policy string

const (
	// PolicyUpstream is kube-scheduler's DefaultPreemption, exactly.
	PolicyUpstream Policy = "upstream"
	// PolicyMinimal chooses, on each node, the victim set that is best
	// under upstream's own node-choice criteria applied to sets (fewest
	// budget violations, then the lowest highest victim priority, the
	// smallest sum of priorities, the fewest victims, the latest start)
	// among every subset of the node's lower-priority pods, found by
	// branch and bound from upstream's own set, so that it is never worse
	// than upstream's, and also on the nodes upstream's dry run drops
	// because removing every such pod breaks what the pod needs (its
	// required pod affinity). The node is then chosen by upstream's
	// criteria among every potential node when there are at most 1,000 of
	// them, else among the nodes upstream's dry run visits. The search is
	// bounded in fit checks; a node it cuts off is not proven.
	PolicyMinimal Policy = "minimal"
	// PolicyStrictPDB is PolicyMinimal that never breaks a
	// PodDisruptionBudget: nodes where every victim set that makes room
	// breaks one are no candidates, and with no candidate left the pod is
	// not preempted for.
	PolicyStrictPDB Policy = "strict-pdb"
	// PolicyReschedulable is PolicyMinimal that first minimises the victims
	// that could not run anywhere else right after the eviction, placed one
	// after another, most important first, each taking its room: among
	// upstream's set, minimal's and the next best sets its search finds on
	// each node, and then across nodes, fewer such victims wins before
	// upstream's criteria. Its placements are bounded in work; a candidate
	// whose count the bound cut is not proven, but the choice is never
	// worse than upstream's by (victims that fit nowhere else, upstream's
	// order).
	PolicyReschedulable Policy = "reschedulable"
)

// Policies lists the victim policies, the default first.
func Policies() []Policy {
	return []Policy{PolicyUpstream, PolicyMinimal, PolicyReschedulable, PolicyStrictPDB}
}

// ParsePolicy parses a policy name; "" is PolicyUpstream.
func ParsePolicy(s string) (Policy, error) {
	if s == "" {
		return PolicyUpstream, nil
	}
	for _, p := range Policies() {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown victim policy %q (want one of %v)", s, Policies())
}
