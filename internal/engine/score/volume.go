package score

import (
	"math"

	"github.com/reprieve/reprieve/internal/engine/filter"
)

// maxUtilization is VolumeBinding's utilization scale (percent).
const maxUtilization = 100

// defaultVolumeShape is VolumeBindingArgs' default shape with
// StorageCapacityScoring on (beta and on by default in v1.37): utilization
// 0 scores 10, 100 scores 0, scaled to node scores.
func defaultVolumeShape() []ShapePoint {
	return []ShapePoint{{Utilization: 0, Score: 10}, {Utilization: 100, Score: 0}}
}

// scoreVolumeBinding is VolumeBinding's Score with StorageCapacityScoring:
// per StorageClass of the pod's unbound WaitForFirstConsumer claims on the
// node (see filter.VolumeScoreInputs), the shape's score of the requested
// share of the capacity (of the maximum utilization when there is no
// capacity or the request exceeds it), averaged over the classes and
// rounded. Every node scores 0 for a pod without such claims. No
// NormalizeScore.
func scoreVolumeBinding(c *cycle) (raw, normalized []int64, skip bool, err error) {
	shape := c.cfg.VolumeShape
	if len(shape) == 0 {
		shape = defaultVolumeShape()
	}
	scaled := make([]ShapePoint, len(shape))
	for i, p := range shape {
		scaled[i] = ShapePoint{Utilization: p.Utilization, Score: p.Score * (MaxNodeScore / maxCustomPriorityScore)}
	}
	raw = make([]int64, len(c.feasible))
	if hasClaims(c) {
		for i, classes := range filter.VolumeScoreInputs(c.snap, c.obj, c.feasible) {
			if len(classes) == 0 {
				continue
			}
			var sum int64
			for _, cs := range classes {
				u := int64(maxUtilization)
				if cs.Capacity != 0 && cs.Requested <= cs.Capacity {
					u = cs.Requested * maxUtilization / cs.Capacity
				}
				sum += brokenLinear(scaled, u)
			}
			raw[i] = int64(math.Round(float64(sum) / float64(len(classes))))
		}
	}
	return raw, raw, false, nil
}

// hasClaims reports whether the pod has a claim or generic ephemeral
// volume, the only pods VolumeBinding can score above 0.
func hasClaims(c *cycle) bool {
	for _, v := range c.obj.Spec.Volumes {
		if v.PersistentVolumeClaim != nil || v.Ephemeral != nil {
			return true
		}
	}
	return false
}
