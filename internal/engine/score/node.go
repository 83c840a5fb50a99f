package score

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// scoreTaintToleration is the TaintToleration plugin: a node's raw score is
// the number of its PreferNoSchedule taints that the pod's PreferNoSchedule
// (or effect-less) tolerations do not tolerate; normalized in reverse, so
// the nodes with the fewest such taints get MaxNodeScore. It never skips.
func scoreTaintToleration(c *cycle) (raw, normalized []int64, skip bool, err error) {
	var tolerations []v1.Toleration
	for _, t := range c.obj.Spec.Tolerations {
		if t.Effect == "" || t.Effect == v1.TaintEffectPreferNoSchedule {
			tolerations = append(tolerations, t)
		}
	}
	raw = make([]int64, len(c.feasible))
	for i, n := range c.feasible {
		for j := range n.Taints {
			taint := &n.Taints[j]
			if taint.Effect != v1.TaintEffectPreferNoSchedule {
				continue
			}
			// TaintTolerationComparisonOperators is alpha and off.
			if !corev1helpers.TolerationsTolerateTaint(klog.Background(), tolerations, taint, false) {
				raw[i]++
			}
		}
	}
	return raw, defaultNormalize(raw, true), false, nil
}

// scoreNodeAffinity is the NodeAffinity plugin: a node's raw score is the
// sum of the weights of the pod's preferred node affinity terms it matches,
// plus those of the profile's addedAffinity preferred terms, normalized to
// [0, MaxNodeScore]. PreScore skips pods whose preferredDuringScheduling
// list is nil when the profile adds no preferred terms.
func scoreNodeAffinity(c *cycle) (raw, normalized []int64, skip bool, err error) {
	var podPreferred []v1.PreferredSchedulingTerm
	if a := c.obj.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		podPreferred = a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	}
	var terms, added *nodeaffinity.PreferredSchedulingTerms
	if podPreferred != nil {
		if terms, err = nodeaffinity.NewPreferredSchedulingTerms(podPreferred); err != nil {
			return nil, nil, false, err
		}
	}
	if len(c.cfg.AddedPreferredAffinity) > 0 {
		// Validated with the configuration.
		if added, err = nodeaffinity.NewPreferredSchedulingTerms(c.cfg.AddedPreferredAffinity); err != nil {
			return nil, nil, false, err
		}
	}
	if terms == nil && added == nil {
		return nil, nil, true, nil
	}
	raw = make([]int64, len(c.feasible))
	for i, n := range c.feasible {
		if added != nil {
			raw[i] += added.Score(n.Obj)
		}
		if terms != nil {
			raw[i] += terms.Score(n.Obj)
		}
	}
	return raw, defaultNormalize(raw, false), false, nil
}

// Bounds of ImageLocality's score range, in bytes.
const (
	mb                    int64 = 1024 * 1024
	minImageThreshold     int64 = 23 * mb
	maxContainerThreshold int64 = 1000 * mb
)

// scoreImageLocality is the ImageLocality plugin: for each image of the pod
// (init containers, containers, image volumes) that the node reports in
// status.images, the image's size scaled by the fraction of all nodes that
// have it; the sum is clamped to [23MB, 1000MB × number of images] and
// scaled to [0, MaxNodeScore]. It has no PreScore and no NormalizeScore.
//
// Image names are matched as upstream does: the pod's normalized
// (":latest" added when untagged) against the node's names as reported.
// A node's size for a name is the one it reports (the last, should it list
// the name twice), as upstream's snapshot builds it.
func scoreImageLocality(c *cycle) (raw, normalized []int64, skip bool, err error) {
	spec := &c.obj.Spec
	var images []string
	for _, ctr := range spec.InitContainers {
		images = append(images, normalizedImageName(ctr.Image))
	}
	for _, ctr := range spec.Containers {
		images = append(images, normalizedImageName(ctr.Image))
	}
	for _, vol := range spec.Volumes {
		if vol.Image != nil {
			images = append(images, normalizedImageName(vol.Image.Reference))
		}
	}
	// numNodes counts, for each image of the pod, the nodes that have it.
	numNodes := make(map[string]int, len(images))
	for _, name := range images {
		numNodes[name] = 0
	}
	for _, n := range c.snap.Nodes {
		if !n.HasImages {
			continue
		}
		seen := map[string]bool{}
		for _, img := range n.Obj.Status.Images {
			for _, name := range img.Names {
				if _, ok := numNodes[name]; ok && !seen[name] {
					seen[name] = true
					numNodes[name]++
				}
			}
		}
	}
	totalNumNodes := len(c.snap.Nodes)
	raw = make([]int64, len(c.feasible))
	for i, n := range c.feasible {
		if !n.HasImages {
			continue
		}
		sizes := map[string]int64{}
		for _, img := range n.Obj.Status.Images {
			for _, name := range img.Names {
				if _, ok := numNodes[name]; ok {
					sizes[name] = img.SizeBytes
				}
			}
		}
		var sum int64
		for _, name := range images {
			if size, ok := sizes[name]; ok {
				spread := float64(numNodes[name]) / float64(totalNumNodes)
				sum += int64(float64(size) * spread)
			}
		}
		raw[i] = imageLocalityPriority(sum, len(images))
	}
	return raw, raw, false, nil
}

// imageLocalityPriority is upstream's calculatePriority.
func imageLocalityPriority(sumScores int64, imageCount int) int64 {
	maxThreshold := maxContainerThreshold * int64(imageCount)
	if sumScores < minImageThreshold {
		sumScores = minImageThreshold
	} else if sumScores > maxThreshold {
		sumScores = maxThreshold
	}
	return MaxNodeScore * (sumScores - minImageThreshold) / (maxThreshold - minImageThreshold)
}

// normalizedImageName adds ":latest" to an image name without a tag.
func normalizedImageName(name string) string {
	if strings.LastIndex(name, ":") <= strings.LastIndex(name, "/") {
		name = name + ":latest"
	}
	return name
}
