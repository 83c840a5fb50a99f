package profile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Release is a kube-scheduler minor release whose decisions reprieve
// mirrors, named by its minor version (38 for 1.38). The zero value is not
// a release; Releases lists the valid ones.
type Release int

// The mirrored releases, each exact for the upstream tag Upstream names.
const (
	Release136 Release = 36
	Release137 Release = 37
	Release138 Release = 38
)

// DefaultRelease is the newest release mirrored: what --kube-version
// defaults to.
const DefaultRelease = Release138

// Releases lists the mirrored releases, the newest first.
func Releases() []Release { return []Release{Release138, Release137, Release136} }

// String is the release as --kube-version takes it: "1.38".
func (r Release) String() string { return "1." + strconv.Itoa(int(r)) }

// Upstream is the kube-scheduler tag whose decisions the release mirrors
// exactly, and which its conformance module imports.
func (r Release) Upstream() string {
	switch r {
	case Release136:
		return "v1.36.3"
	case Release137:
		return "v1.37.2"
	case Release138:
		return "v1.38.0-beta.0"
	}
	return ""
}

// parseMinor reads "1.38", "v1.38", "v1.38.0", "v1.38.0-beta.0" or a
// server's "v1.38.2+k3s1": the minor version of Kubernetes 1.x.
func parseMinor(s string) (int, error) {
	v := strings.TrimPrefix(strings.TrimSpace(s), "v")
	major, rest, ok := strings.Cut(v, ".")
	if !ok || major != "1" {
		return 0, fmt.Errorf("%q is not a Kubernetes version 1.x", s)
	}
	end := strings.IndexFunc(rest, func(c rune) bool { return c < '0' || c > '9' })
	if end < 0 {
		end = len(rest)
	}
	if end == 0 || (end < len(rest) && rest[end] != '.') {
		return 0, fmt.Errorf("%q is not a Kubernetes version 1.x", s)
	}
	minor, err := strconv.Atoi(rest[:end])
	if err != nil {
		return 0, fmt.Errorf("%q is not a Kubernetes version 1.x", s)
	}
	return minor, nil
}

// ParseRelease parses --kube-version: "1.38", "v1.38.0" or any patch or
// pre-release of a mirrored minor release; "" is DefaultRelease. A minor
// release that is not mirrored is an error naming those that are.
func ParseRelease(s string) (Release, error) {
	if strings.TrimSpace(s) == "" {
		return DefaultRelease, nil
	}
	minor, err := parseMinor(s)
	if err != nil {
		return 0, fmt.Errorf("%w (want one of %s)", err, releaseList())
	}
	r := Release(minor)
	if !slices.Contains(Releases(), r) {
		return 0, fmt.Errorf("kube-scheduler %s is not mirrored (want one of %s)", s, releaseList())
	}
	return r, nil
}

// NearestRelease is the mirrored release for an API server's gitVersion
// (discovery's /version): its own minor release when mirrored, else the
// nearest one with a warning saying so. A version that names no 1.x
// release (an unstamped build's "v0.0.0-master+…") gives DefaultRelease,
// with a warning.
func NearestRelease(gitVersion string) (r Release, warning string) {
	minor, err := parseMinor(gitVersion)
	if err != nil {
		return DefaultRelease, fmt.Sprintf("the API server's version %q names no Kubernetes 1.x release: deciding as kube-scheduler %s", gitVersion, DefaultRelease)
	}
	r = Release(minor)
	if slices.Contains(Releases(), r) {
		return r, ""
	}
	rs := Releases()
	nearest := rs[0]
	if r < rs[len(rs)-1] {
		nearest = rs[len(rs)-1]
	}
	return nearest, fmt.Sprintf("the API server runs Kubernetes %s, which reprieve does not mirror (it mirrors %s): deciding as kube-scheduler %s, the nearest",
		gitVersion, releaseList(), nearest)
}

func releaseList() string {
	var names []string
	for _, r := range Releases() {
		names = append(names, r.String())
	}
	return strings.Join(names, ", ")
}

// Semantics are the behaviours in which the mirrored releases differ, one
// switch each, named after what it changes. The zero value is v1.37's
// behaviour in every respect; Release.Semantics sets them for a release.
// The engine reads only these switches, never a version.
type Semantics struct {
	// PDBEmptySelectorMatchesAll: a PodDisruptionBudget whose selector is
	// empty ({}) covers every pod of its namespace, unlabeled pods
	// included, when preemption counts budget violations (1.38). Off, an
	// empty selector covers nothing and an unlabeled pod no budget.
	PDBEmptySelectorMatchesAll bool
	// SpreadEmptySelectorMatchesAll: a topology spread constraint whose
	// labelSelector is empty ({}) counts every pod of the namespace (1.38).
	// Off, PreFilter and PreScore count no pod for it.
	SpreadEmptySelectorMatchesAll bool
	// UnstartedVictimsNewest: a victim without status.startTime counts as
	// starting at the latest representable time (1.38). Off, it counts as
	// starting at the evaluation time (upstream reads the clock).
	UnstartedVictimsNewest bool
	// VictimUIDTieBreak: victims equal in priority, kind, size and start
	// time are ordered by their (first) pod's UID (1.38). Off, they keep
	// their order on the node.
	VictimUIDTieBreak bool
	// NoVictimsRejectsNode: a node where the dry run makes the pod fit
	// without evicting anything is UnschedulableAndUnresolvable ("No
	// preemption victims found for incoming pod") and the other nodes are
	// still tried (1.38). Off, such a node ends the whole PostFilter with
	// an error (upstream's "expected at least one victim pod on node").
	NoVictimsRejectsNode bool
	// CSIDriverNotRequired: NodeVolumeLimits does not reject a node whose
	// CSINode lacks the driver of one of the pod's new volumes (1.36,
	// where the VolumeLimitScaling gate is off by default). Off, such a
	// node is Unschedulable ("… CSI driver is not installed on the node").
	CSIDriverNotRequired bool
	// UnstartedVictimsTieAnyWay: the victim order reads the clock at each
	// comparison for a pod without a start time (1.36's MoreImportantPod):
	// of two such pods of equal priority, each ranks before the other, and
	// the order is the one upstream's sort makes of that. Off, each such
	// victim reads the clock once (v1.37), or UnstartedVictimsNewest.
	UnstartedVictimsTieAnyWay bool
}

// Semantics are the release's switches.
func (r Release) Semantics() Semantics {
	s := Semantics{}
	if r <= Release136 {
		s.CSIDriverNotRequired = true
		s.UnstartedVictimsTieAnyWay = true
	}
	if r >= Release138 {
		s.PDBEmptySelectorMatchesAll = true
		s.SpreadEmptySelectorMatchesAll = true
		s.UnstartedVictimsNewest = true
		s.VictimUIDTieBreak = true
		s.NoVictimsRejectsNode = true
	}
	return s
}

// lockedGates are gates kube-scheduler knows, locked to their default, that
// change nothing reprieve models, by the release that still accepts them:
// in 1.38 they are removed (always on) and kube-scheduler refuses them.
var lockedGates = map[Release][]string{
	Release136: {"InPlacePodVerticalScaling", "DynamicResourceAllocation", "MatchLabelKeysInPodAffinity"},
	Release137: {"InPlacePodVerticalScaling", "DynamicResourceAllocation", "MatchLabelKeysInPodAffinity"},
}

// ParseFeatureGatesFor is ParseFeatureGates for release r: the Features it
// returns carry r's Semantics. Gates r locks on and reprieve does not need
// (lockedGates) are accepted set to true with a warning, so that a
// cluster's kube-scheduler flags can be pasted; set to false they are an
// error, as kube-scheduler reports it. (CompositePodGroup's dependency on
// TopologyAwareWorkloadScheduling is not required, in any release: see
// GateTopologyAwareWorkloadScheduling.)
func ParseFeatureGatesFor(r Release, s string) (Features, []string, error) {
	var kept, warnings []string
	for _, part := range strings.Split(s, ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(part), "=")
		name = strings.TrimSpace(name)
		if slices.Contains(lockedGates[r], name) {
			b, err := strconv.ParseBool(strings.TrimSpace(value))
			if err != nil {
				return Features{}, nil, fmt.Errorf("invalid value of %s=%s, err: %v", name, value, err)
			}
			if !b {
				return Features{}, nil, fmt.Errorf("cannot set feature gate %s to false, feature is locked to true", name)
			}
			warnings = append(warnings, fmt.Sprintf("feature gate %s is locked on in kube-scheduler %s and changes nothing reprieve models: ignored", name, r))
			continue
		}
		kept = append(kept, part)
	}
	f, err := ParseFeatureGates(strings.Join(kept, ","))
	if err != nil {
		return Features{}, nil, err
	}
	f.Semantics = r.Semantics()
	return f, warnings, nil
}
