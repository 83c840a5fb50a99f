// Package filter implements the Filter plugins of kube-scheduler's default
// profile (v1.37.2) for one incoming pod over a snapshot: NodeName,
// NodeUnschedulable, TaintToleration, NodeAffinity, NodePorts,
// NodeResourcesFit, VolumeRestrictions, NodeVolumeLimits, VolumeBinding,
// VolumeZone, PodTopologySpread, InterPodAffinity and DynamicResources, in
// upstream's order, with upstream's status codes and reason texts.
//
// A Cycle is the PreFilter of one pod: everything computed once over the
// whole cluster. A State is a reversible overlay on the Cycle's plugin state
// and a NodeView an overlay on one node, so that a preemption dry run can
// remove and re-add pods without copying anything cluster-wide. Adding and
// removing pods updates the overlays exactly as upstream's
// PreFilterExtensions AddPod/RemovePod update the cloned CycleState, quirks
// included (see the comments on spread and affinity).
//
// The plugins live in one package rather than one package each because they
// share the overlays and are evaluated in a tight loop; each has its own file.
package filter

import (
	"fmt"
	"strings"
)

// Code is the outcome of a filter, with upstream's meaning.
type Code int

const (
	// Success means the pod passes. It is the zero value.
	Success Code = iota
	// Unschedulable means the pod does not fit now but might after
	// preemption: the node is a preemption candidate.
	Unschedulable
	// UnschedulableAndUnresolvable means removing pods cannot help: the
	// node is never a preemption candidate.
	UnschedulableAndUnresolvable
	// Error means the evaluation itself failed.
	Error
)

// String returns upstream's name of the code.
func (c Code) String() string {
	switch c {
	case Success:
		return "Success"
	case Unschedulable:
		return "Unschedulable"
	case UnschedulableAndUnresolvable:
		return "UnschedulableAndUnresolvable"
	case Error:
		return "Error"
	}
	return fmt.Sprintf("Code(%d)", int(c))
}

// Plugin names, as upstream spells them.
const (
	NodeName          = "NodeName"
	NodeUnschedulable = "NodeUnschedulable"
	TaintToleration   = "TaintToleration"
	NodeAffinity      = "NodeAffinity"
	NodePorts         = "NodePorts"
	NodeResourcesFit  = "NodeResourcesFit"
	PodTopologySpread = "PodTopologySpread"
	InterPodAffinity  = "InterPodAffinity"
	DynamicResources  = "DynamicResources"

	VolumeRestrictions = "VolumeRestrictions"
	NodeVolumeLimits   = "NodeVolumeLimits"
	VolumeBinding      = "VolumeBinding"
	VolumeZone         = "VolumeZone"
)

// Upstream's reason texts.
const (
	ReasonNodeName                 = "node(s) didn't match the requested node name"
	ReasonNodeUnschedulable        = "node(s) were unschedulable"
	ReasonUntoleratedTaint         = "node(s) had untolerated taint(s)"
	ReasonNodeAffinity             = "node(s) didn't match Pod's node affinity/selector"
	ReasonNodeAffinityConflict     = "pod affinity terms conflict"
	ReasonNodeAffinityEnforced     = "node(s) didn't match scheduler-enforced node affinity"
	ReasonNodePorts                = "node(s) didn't have free ports for the requested pod ports"
	ReasonTooManyPods              = "Too many pods"
	ReasonSpreadConstraints        = "node(s) didn't match pod topology spread constraints"
	ReasonSpreadMissingLabel       = ReasonSpreadConstraints + " (missing required label)"
	ReasonPodAffinity              = "node(s) didn't match pod affinity rules"
	ReasonPodAntiAffinity          = "node(s) didn't match pod anti-affinity rules"
	ReasonExistingPodsAntiAffinity = "node(s) didn't satisfy existing pods anti-affinity rules"

	ReasonDiskConflict           = "node(s) had no available disk"
	ReasonRWOPConflict           = "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
	ReasonMaxVolumeCount         = "node(s) exceed max volume count"
	ReasonUnboundImmediateClaims = "pod has unbound immediate PersistentVolumeClaims"
	ReasonVolumeNodeConflict     = "node(s) didn't match PersistentVolume's node affinity"
	ReasonVolumeBindConflict     = "node(s) didn't find available persistent volumes to bind"
	ReasonNotEnoughSpace         = "node(s) did not have enough free storage"
	ReasonPVNotExist             = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
	ReasonVolumeZone             = "node(s) had no available volume zone"
)

// The volume plugins' common statuses.
var (
	statusDiskConflict   = reject(Unschedulable, VolumeRestrictions, ReasonDiskConflict)
	statusRWOPConflict   = reject(Unschedulable, VolumeRestrictions, ReasonRWOPConflict)
	statusMaxVolumeCount = reject(Unschedulable, NodeVolumeLimits, ReasonMaxVolumeCount)
	statusVolumeZone     = reject(UnschedulableAndUnresolvable, VolumeZone, ReasonVolumeZone)
)

// Status is the result of filtering a pod on a node: a code, the plugin
// that decided it and upstream's reasons. The zero Status is Success.
type Status struct {
	Code    Code     `json:"code"`
	Plugin  string   `json:"plugin,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
}

// IsSuccess reports whether the status is Success.
func (s Status) IsSuccess() bool { return s.Code == Success }

// Message joins the reasons the way upstream's Status.Message does.
func (s Status) Message() string { return strings.Join(s.Reasons, ", ") }

func reject(code Code, plugin string, reasons ...string) Status {
	return Status{Code: code, Plugin: plugin, Reasons: reasons}
}
