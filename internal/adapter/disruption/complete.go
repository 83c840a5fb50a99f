package disruption

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Complete gives each budget of pdbs without a status (Unset) the status
// the controller would write at now from pods (whole, with their
// conditions) and scales, in place, and returns one warning line per such
// budget saying so. Budgets with a status are left as they are.
func Complete(pdbs []*policyv1.PodDisruptionBudget, pods []*v1.Pod, scales Scales, now time.Time) []string {
	var byNamespace map[string][]*v1.Pod
	var warnings []string
	for _, pdb := range pdbs {
		if !Unset(pdb) {
			continue
		}
		if byNamespace == nil {
			byNamespace = map[string][]*v1.Pod{}
			for _, p := range pods {
				byNamespace[p.Namespace] = append(byNamespace[p.Namespace], p)
			}
		}
		r := Sync(pdb, byNamespace[pdb.Namespace], scales, now)
		pdb.Status = r.Status
		warnings = append(warnings, Describe(pdb, r))
	}
	return warnings
}

// NeedsPods reports whether any budget of pdbs has no status, for which
// Complete needs the pods whole.
func NeedsPods(pdbs []*policyv1.PodDisruptionBudget) bool {
	for _, pdb := range pdbs {
		if Unset(pdb) {
			return true
		}
	}
	return false
}

// Describe words, in one line, the status r computed for pdb.
func Describe(pdb *policyv1.PodDisruptionBudget, r Result) string {
	head := fmt.Sprintf("PodDisruptionBudget %s/%s has no status: computed as the disruption controller would from the snapshot's pods", pdb.Namespace, pdb.Name)
	if r.Err != nil {
		return fmt.Sprintf("%s: no disruption allowed (%v)", head, r.Err)
	}
	st := r.Status
	line := fmt.Sprintf("%s: %d expected, %d healthy (Ready), %d desired: %s allowed", head, st.ExpectedPods, st.CurrentHealthy, st.DesiredHealthy, plural(st.DisruptionsAllowed, "disruption"))
	if n := len(r.Unmanaged); n > 0 && (pdb.Spec.MaxUnavailable != nil || pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.Type == intstr.String) {
		line += fmt.Sprintf(" (%s without a controller count for no scale)", plural(int32(n), "pod"))
	}
	return line
}

// plural words n things.
func plural(n int32, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
