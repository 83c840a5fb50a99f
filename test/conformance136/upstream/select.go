package upstream

import (
	"math"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
)

// tiedBest re-implements the default ordered score functions of upstream's
// pickOneNodeForPreemption (pkg/scheduler/framework/preemption) and returns,
// sorted, every candidate tied for the best score after all five. Upstream
// returns the first of these in map iteration order.
//
// now stands in for the start time of victims that have none: upstream's
// util.GetPodStartTime returns time.Now() for them at each call, which makes
// such victims "latest" against any real start time and ties them with each
// other up to the clock's progress between calls.
func tiedBest(candidates []preemption.Candidate, now metav1.Time) []string {
	victims := make(map[string][]*v1.Pod, len(candidates))
	pdbViolations := make(map[string]int64, len(candidates))
	names := make([]string, 0, len(candidates))
	for _, c := range candidates {
		victims[c.Name()] = c.Victims().Pods
		pdbViolations[c.Name()] = c.Victims().NumPDBViolations
		names = append(names, c.Name())
	}

	scoreFuncs := []func(node string) int64{
		// 1. Fewest PDB violations.
		func(node string) int64 { return -pdbViolations[node] },
		// 2. Lowest priority of the first (most important) victim.
		func(node string) int64 { return -int64(corev1helpers.PodPriority(victims[node][0])) },
		// 3. Smallest sum of priorities, each shifted by MaxInt32+1.
		func(node string) int64 {
			var sum int64
			for _, p := range victims[node] {
				sum += int64(corev1helpers.PodPriority(p)) + int64(math.MaxInt32+1)
			}
			return -sum
		},
		// 4. Fewest victims.
		func(node string) int64 { return -int64(len(victims[node])) },
		// 5. Latest earliest start time among the highest-priority victims.
		func(node string) int64 { return earliestStartTime(victims[node], now).UnixNano() },
	}

	for _, f := range scoreFuncs {
		var selected []string
		maxScore := int64(math.MinInt64)
		for _, node := range names {
			score := f(node)
			if score > maxScore {
				maxScore = score
				selected = selected[:0]
			}
			if score == maxScore {
				selected = append(selected, node)
			}
		}
		names = selected
		if len(names) == 1 {
			break
		}
	}
	slices.Sort(names)
	return names
}

// earliestStartTime is util.GetEarliestPodStartTime with now for a missing
// start time: the earliest start time among the victims that share the
// highest priority, scanning from the first victim.
func earliestStartTime(pods []*v1.Pod, now metav1.Time) *metav1.Time {
	startTime := func(p *v1.Pod) *metav1.Time {
		if p.Status.StartTime != nil {
			return p.Status.StartTime
		}
		return &now
	}
	earliest := startTime(pods[0])
	maxPriority := corev1helpers.PodPriority(pods[0])
	for _, p := range pods {
		switch priority := corev1helpers.PodPriority(p); {
		case priority == maxPriority:
			if t := startTime(p); t.Before(earliest) {
				earliest = t
			}
		case priority > maxPriority:
			maxPriority = priority
			earliest = startTime(p)
		}
	}
	return earliest
}
