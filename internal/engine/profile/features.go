package profile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Feature gate names, as kube-scheduler spells them.
const (
	// GateGenericWorkload makes preemption treat pods of a PodGroup whose
	// disruption mode is All (or of a CompositePodGroup hierarchy with such
	// an ancestor) as one victim, and use group priorities.
	GateGenericWorkload = "GenericWorkload"
	// GateCompositePodGroup adds CompositePodGroup hierarchies.
	GateCompositePodGroup = "CompositePodGroup"
	// GateTopologyAwareWorkloadScheduling only matters to the scheduling of
	// pod groups, which reprieve does not model. It is accepted so that
	// kube-scheduler's flags can be reused; kube-scheduler requires it for
	// CompositePodGroup, reprieve does not, since it changes nothing in
	// preemption.
	GateTopologyAwareWorkloadScheduling = "TopologyAwareWorkloadScheduling"
	// GateDRAPreemption lets preemption free devices: in the dry run, a
	// victim's ResourceClaims reserved only for victims release their
	// devices. It is the gate KEP-5690 plans for 1.38 (alpha, off by
	// default); kube-scheduler v1.37 does not have it.
	GateDRAPreemption = "DRAPreemption"
)

// Features are the kube-scheduler feature gates that change preemption
// (and DRAPreemption, reprieve's own). All are off by default in v1.37, and the zero value is upstream's
// default: with both off, preemption is exactly what it was without them.
type Features struct {
	// GenericWorkload: victims are single pods or whole pod groups (see
	// Unit); a pod of a pod group has its group's priority.
	GenericWorkload bool
	// CompositePodGroup: groups form hierarchies through
	// parentCompositePodGroupName, and a CompositePodGroup with disruption
	// mode All is evicted whole. It only has an effect with
	// GenericWorkload, on which upstream makes it depend.
	CompositePodGroup bool
	// DRAPreemption: reprieve's model of the planned 1.38 gate (see
	// GateDRAPreemption). Off, DynamicResources decides as in v1.37 and
	// preemption never frees devices.
	DRAPreemption bool
	// Semantics are the behaviours that differ between the mirrored
	// kube-scheduler releases (Release.Semantics); the zero value is
	// v1.37's.
	Semantics Semantics
}

// Composite reports whether CompositePodGroup hierarchies are in effect.
func (f Features) Composite() bool { return f.GenericWorkload && f.CompositePodGroup }

// knownGates are the gates ParseFeatureGates accepts, with the gates each
// depends on (upstream's dependency table, pkg/features, without
// TopologyAwareWorkloadScheduling: see its constant).
var knownGates = map[string][]string{
	GateGenericWorkload:                 nil,
	GateCompositePodGroup:               {GateGenericWorkload},
	GateTopologyAwareWorkloadScheduling: {GateGenericWorkload},
	GateDRAPreemption:                   nil,
}

// ParseFeatureGates parses kube-scheduler's --feature-gates syntax,
// "Name=true,Other=false", accepting the gates that matter to preemption.
// Unknown names, values that are not booleans and enabled gates whose
// dependencies are disabled are errors, as kube-scheduler reports them.
// The empty string gives the defaults (all off).
func ParseFeatureGates(s string) (Features, error) {
	enabled := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, value, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		if !ok {
			return Features{}, fmt.Errorf("missing bool value for %s", name)
		}
		if _, known := knownGates[name]; !known {
			return Features{}, fmt.Errorf("unrecognized feature gate: %s (reprieve models %s)", name, strings.Join(gateNames(), ", "))
		}
		b, err := strconv.ParseBool(strings.TrimSpace(value))
		if err != nil {
			return Features{}, fmt.Errorf("invalid value of %s=%s, err: %v", name, value, err)
		}
		enabled[name] = b
	}
	for _, name := range gateNames() {
		if !enabled[name] {
			continue
		}
		var disabled []string
		for _, dep := range knownGates[name] {
			if !enabled[dep] {
				disabled = append(disabled, dep)
			}
		}
		if len(disabled) > 0 {
			return Features{}, fmt.Errorf("%s is enabled, but depends on features that are disabled: [%s]", name, strings.Join(disabled, " "))
		}
	}
	return Features{GenericWorkload: enabled[GateGenericWorkload], CompositePodGroup: enabled[GateCompositePodGroup],
		DRAPreemption: enabled[GateDRAPreemption]}, nil
}

func gateNames() []string {
	names := make([]string, 0, len(knownGates))
	for n := range knownGates {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Gates returns the feature gates as a map of upstream names, with the
// dependencies upstream requires for them (for passing the same gates to
// kube-scheduler). DRAPreemption is left out: kube-scheduler v1.37 does not
// know it.
func (f Features) Gates() map[string]bool {
	m := map[string]bool{GateGenericWorkload: f.GenericWorkload}
	if f.Composite() {
		m[GateCompositePodGroup] = true
		m[GateTopologyAwareWorkloadScheduling] = true
	}
	return m
}
