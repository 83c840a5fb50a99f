package reprieve

import (
	"fmt"
	"os"
	"sync"

	"github.com/reprieve/reprieve/internal/adapter/config"
	"github.com/reprieve/reprieve/internal/engine/profile"
)

// Config is a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1)
// read as kube-scheduler reads it: decoded strictly, defaulted and
// validated. Evaluate takes the profile named by the pod's schedulerName.
type Config struct {
	c config.Config
}

// LoadConfig reads a KubeSchedulerConfiguration file.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := config.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInput, path, err)
	}
	return &Config{c: c}, nil
}

// ParseConfig reads a KubeSchedulerConfiguration document, YAML or JSON.
func ParseConfig(data []byte) (*Config, error) {
	c, err := config.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	return &Config{c: c}, nil
}

// SchedulerNames lists the configuration's profiles, in order.
func (c *Config) SchedulerNames() []string { return c.c.SchedulerNames() }

// Unsupported lists, one line each, what the configuration asks for that
// reprieve does not implement (extenders, unknown plugins, ...), which
// Evaluate leaves out: callers should show them as warnings.
func (c *Config) Unsupported() []string { return append([]string(nil), c.c.Unsupported...) }

// defaultConfig is kube-scheduler's configuration without a file, as the
// command line uses it when given no --config.
var defaultConfig = sync.OnceValue(config.Default)

// Policy is how preemption chooses its victims; the zero value is
// PolicyUpstream. See `reprieve whatif --help` for each policy.
type Policy string

// The victim policies.
const (
	// PolicyUpstream is kube-scheduler's DefaultPreemption, exactly.
	PolicyUpstream Policy = "upstream"
	// PolicyMinimal chooses on each node the victim set that is best under
	// upstream's own criteria, never worse than upstream's.
	PolicyMinimal Policy = "minimal"
	// PolicyReschedulable is PolicyMinimal that first minimises the
	// victims that could run nowhere else right after the eviction.
	PolicyReschedulable Policy = "reschedulable"
	// PolicyStrictPDB is PolicyMinimal that never breaks a
	// PodDisruptionBudget.
	PolicyStrictPDB Policy = "strict-pdb"
)

// Policies lists the victim policies, the default first.
func Policies() []Policy {
	return convert(profile.Policies(), func(p profile.Policy) Policy { return Policy(p) })
}

// ParsePolicy parses a policy name; "" is PolicyUpstream.
func ParsePolicy(s string) (Policy, error) {
	p, err := profile.ParsePolicy(s)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrInput, err)
	}
	return Policy(p), nil
}

// Features are the feature gates that change preemption. The zero value
// is kube-scheduler v1.37's default: all off.
type Features struct {
	// GenericWorkload evicts pods of a pod group whose disruption mode is
	// All as one victim, and gives pods their group's priority.
	GenericWorkload bool
	// CompositePodGroup adds CompositePodGroup hierarchies (it needs
	// GenericWorkload).
	CompositePodGroup bool
	// DRAPreemption lets the dry run free the devices of victims'
	// ResourceClaims, as planned for 1.38 (beyond v1.37).
	DRAPreemption bool
}

// ParseFeatureGates parses kube-scheduler's --feature-gates syntax,
// "Name=true,Other=false", refusing unknown gates and unmet dependencies.
func ParseFeatureGates(s string) (Features, error) {
	f, err := profile.ParseFeatureGates(s)
	if err != nil {
		return Features{}, fmt.Errorf("%w: %w", ErrInput, err)
	}
	return Features{GenericWorkload: f.GenericWorkload, CompositePodGroup: f.CompositePodGroup, DRAPreemption: f.DRAPreemption}, nil
}

// engine returns the features as the engine takes them.
func (f Features) engine() profile.Features {
	return profile.Features{GenericWorkload: f.GenericWorkload, CompositePodGroup: f.CompositePodGroup, DRAPreemption: f.DRAPreemption}
}
