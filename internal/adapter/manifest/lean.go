package manifest

import (
	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// leanPod drops from an admitted pod what neither the scheduler's filters
// and scores nor preemption read, for Options.Lean: of each container its
// command, environment, mounts, probes, lifecycle, security context and
// limits (admission has already defaulted requests from them) — not of
// ephemeral containers, which the scheduler ignores — the pod's
// annotations, of its status the conditions other than DisruptionTarget
// and PodResizePending (whose reason Infeasible changes what a resized
// pod occupies) and the addresses, and of each container status its state and image (all container statuses
// when the resources they report are the spec's requests).
// It drops too the volumes no scheduler plugin reads (schedulingVolumes:
// service account tokens, secrets, config maps, emptyDir). What stays:
// names, labels, owners, every scheduling field of the spec (node name,
// selectors, affinity, tolerations, spread constraints, claim and disk
// volumes, resource claims, priority, scheduling group and gates, overhead and
// pod-level resources), container names, images (ImageLocality), ports
// (host ports) and requests, and the status fields that preemption reads
// (phase, start time, nominated node, resize status).
func leanPod(p *v1.Pod) {
	p.Annotations = nil
	p.Spec.Volumes = schedulingVolumes(p.Spec.Volumes)
	for _, cs := range [][]v1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range cs {
			leanContainer(&cs[i])
		}
	}
	leanStatus(&p.Status)
	leanContainerStatuses(&p.Status, &p.Spec)
}

// leanStatus drops what leanPod says of a pod's status, but for
// leanContainerStatuses.
func leanStatus(st *v1.PodStatus) {
	conds := st.Conditions[:0]
	for _, c := range st.Conditions {
		if c.Type == v1.DisruptionTarget || c.Type == v1.PodResizePending {
			conds = append(conds, c)
		}
	}
	if len(conds) == 0 {
		conds = nil
	}
	st.Conditions = conds
	st.HostIPs, st.PodIPs, st.HostIP, st.PodIP, st.Message = nil, nil, "", "", ""
	for _, css := range [][]v1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses, st.EphemeralContainerStatuses} {
		for i := range css {
			cs := &css[i]
			cs.State, cs.LastTerminationState = v1.ContainerState{}, v1.ContainerState{}
			cs.Image, cs.ImageID, cs.ContainerID = "", "", ""
			cs.VolumeMounts, cs.User, cs.AllocatedResourcesStatus = nil, nil, nil
		}
	}
}

// leanContainerStatuses drops st's container statuses when the resources
// they report are its spec's requests (snapshot.StatusRequestsAgree), as
// a kubelet reports them but during a resize: of a container's status the
// scheduler reads nothing else.
func leanContainerStatuses(st *v1.PodStatus, spec *v1.PodSpec) {
	if snapshot.StatusRequestsAgree(spec, st.Conditions, st.InitContainerStatuses, st.ContainerStatuses) {
		st.InitContainerStatuses, st.ContainerStatuses, st.EphemeralContainerStatuses = nil, nil, nil
	}
}

// leanContainer drops what leanPod says of a container.
func leanContainer(c *v1.Container) {
	c.Command, c.Args, c.WorkingDir = nil, nil, ""
	c.Env, c.EnvFrom = nil, nil
	c.VolumeMounts, c.VolumeDevices = nil, nil
	c.LivenessProbe, c.ReadinessProbe, c.StartupProbe, c.Lifecycle = nil, nil, nil, nil
	c.TerminationMessagePath, c.TerminationMessagePolicy, c.ImagePullPolicy = "", "", ""
	c.SecurityContext = nil
	c.Resources.Limits = nil
}

// schedulingVolumes returns the volumes of vols that the scheduler reads:
// all but projected, secret, config map, downward API and emptyDir volumes,
// which no filter, score or preemption reads (they hold nothing of the
// node's: claims, CSI and in-tree disks stay). It returns vols when it
// keeps them all, nil when it keeps none, and else a new slice.
func schedulingVolumes(vols []v1.Volume) []v1.Volume {
	n := 0
	for i := range vols {
		if !nodeIndependent(&vols[i].VolumeSource) {
			n++
		}
	}
	switch n {
	case len(vols):
		return vols
	case 0:
		return nil
	}
	kept := make([]v1.Volume, 0, n)
	for _, v := range vols {
		if !nodeIndependent(&v.VolumeSource) {
			kept = append(kept, v)
		}
	}
	return kept
}

// nodeIndependent reports whether s is one of the sources schedulingVolumes
// drops, and no other.
func nodeIndependent(s *v1.VolumeSource) bool {
	set := 0
	for _, p := range []bool{s.Projected != nil, s.Secret != nil, s.ConfigMap != nil, s.DownwardAPI != nil, s.EmptyDir != nil} {
		if p {
			set++
		}
	}
	return set == 1 && *s == (v1.VolumeSource{Projected: s.Projected, Secret: s.Secret, ConfigMap: s.ConfigMap, DownwardAPI: s.DownwardAPI, EmptyDir: s.EmptyDir})
}
