// Package config reads a KubeSchedulerConfiguration
// (kubescheduler.config.k8s.io/v1) as kube-scheduler v1.37.2 does: decoded
// strictly, defaulted (default plugins merged into each profile, default
// plugin arguments), validated by kube-scheduler's rules, and resolved into
// one Profile per schedulerName that the engine consumes.
//
// What reprieve does not implement (extenders, out-of-tree or unknown
// plugins, changes to the filter plugins, arguments that change filtering)
// is listed in Config.Unsupported, never silently dropped: the scheduler
// refuses such a configuration, whatif and simulate warn about it.
package config

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	configv1 "k8s.io/kube-scheduler/config/v1"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/reprieve/reprieve/internal/adapter/files"
	"github.com/reprieve/reprieve/internal/engine/profile"
)

// Defaults.
const (
	// DefaultSchedulerName is the name of the profile of a configuration
	// with a single profile that names none: kube-scheduler's.
	DefaultSchedulerName               = v1.DefaultSchedulerName
	DefaultMinCandidateNodesPercentage = 10
	DefaultMinCandidateNodesAbsolute   = 100
	// DefaultParallelism is kube-scheduler's parallelism.
	DefaultParallelism = 16
	apiVersion         = "kubescheduler.config.k8s.io/v1"
)

// Config is a KubeSchedulerConfiguration as reprieve uses it.
type Config struct {
	// Profiles in the order of the file; schedulerNames are unique.
	Profiles []profile.Profile
	// Parallelism is the scheduler's parallelism (16 by default).
	Parallelism int32
	// PodInitialBackoff and PodMaxBackoff bound the backoff of pods that
	// failed to schedule (1s and 10s by default).
	PodInitialBackoff, PodMaxBackoff time.Duration
	// Unsupported describes, one line each with its field path, what the
	// configuration asks for that reprieve does not implement.
	Unsupported []string
}

// Default returns kube-scheduler's configuration without a file: one
// profile, default-scheduler, with the default plugins.
func Default() Config {
	// An empty configuration always resolves (TestDefault).
	c, _ := Parse([]byte("apiVersion: " + apiVersion + "\nkind: KubeSchedulerConfiguration\n"))
	return c
}

// Profile returns the profile for a pod's schedulerName, or nil when no
// profile has that name (kube-scheduler then ignores the pod).
func (c *Config) Profile(schedulerName string) *profile.Profile {
	for i := range c.Profiles {
		if c.Profiles[i].SchedulerName == schedulerName {
			return &c.Profiles[i]
		}
	}
	return nil
}

// EffectiveParallelism bounds the goroutines of an evaluation: the
// configuration's parallelism, but never more than GOMAXPROCS. reprieve's
// answers do not depend on it.
func (c *Config) EffectiveParallelism() int {
	return min(int(c.Parallelism), runtime.GOMAXPROCS(0))
}

// SchedulerNames lists the profiles' names in order.
func (c *Config) SchedulerNames() []string {
	names := make([]string, len(c.Profiles))
	for i := range c.Profiles {
		names[i] = c.Profiles[i].SchedulerName
	}
	return names
}

// Load reads and validates a configuration file.
func Load(path string) (Config, error) {
	data, err := files.Read(path, files.MaxSmall)
	if err != nil {
		return Config{}, err
	}
	c, err := Parse(data)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Parse reads, defaults and validates a configuration document. Decoding is
// strict, as kube-scheduler's: unknown and duplicate fields are errors.
func Parse(data []byte) (Config, error) {
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return Config{}, fmt.Errorf("malformed KubeSchedulerConfiguration: %v", err)
	}
	var kc configv1.KubeSchedulerConfiguration
	if err := strictJSON(js, &kc); err != nil {
		return Config{}, fmt.Errorf("malformed KubeSchedulerConfiguration: %v", err)
	}
	if kc.APIVersion != apiVersion || kc.Kind != "KubeSchedulerConfiguration" {
		return Config{}, fmt.Errorf("apiVersion/kind: want %s KubeSchedulerConfiguration, got %q %q", apiVersion, kc.APIVersion, kc.Kind)
	}
	return resolve(&kc)
}

// strictJSON decodes as kube-scheduler's strict codec: case-sensitive,
// unknown and duplicate fields refused.
func strictJSON(js []byte, v any) error {
	strict, err := sigsjson.UnmarshalStrict(js, v)
	if err != nil {
		return err
	}
	if len(strict) > 0 {
		msgs := make([]string, len(strict))
		for i, e := range strict {
			msgs[i] = e.Error()
		}
		return fmt.Errorf("strict decoding error: %s", strings.Join(msgs, ", "))
	}
	return nil
}

// resolve defaults, validates and resolves a decoded configuration.
func resolve(kc *configv1.KubeSchedulerConfiguration) (Config, error) {
	var errs field.ErrorList
	out := Config{Parallelism: DefaultParallelism}

	// 1) Top-level defaults and validation.
	if kc.Parallelism != nil {
		out.Parallelism = *kc.Parallelism
	}
	if out.Parallelism <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("parallelism"), out.Parallelism, "should be an integer value greater than zero"))
	}
	var globalPct int32
	if kc.PercentageOfNodesToScore != nil {
		globalPct = *kc.PercentageOfNodesToScore
	}
	errs = append(errs, validatePercentage(field.NewPath("percentageOfNodesToScore"), globalPct)...)
	initial, maxBackoff := int64(1), int64(10)
	if kc.PodInitialBackoffSeconds != nil {
		initial = *kc.PodInitialBackoffSeconds
	}
	if kc.PodMaxBackoffSeconds != nil {
		maxBackoff = *kc.PodMaxBackoffSeconds
	}
	if initial <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("podInitialBackoffSeconds"), initial, "must be greater than 0"))
	}
	if maxBackoff < initial {
		errs = append(errs, field.Invalid(field.NewPath("podMaxBackoffSeconds"), maxBackoff, "must be greater than or equal to PodInitialBackoffSeconds"))
	}
	out.PodInitialBackoff, out.PodMaxBackoff = time.Duration(initial)*time.Second, time.Duration(maxBackoff)*time.Second
	errs = append(errs, validateExtenders(field.NewPath("extenders"), kc.Extenders)...)
	if len(kc.Extenders) > 0 {
		out.Unsupported = append(out.Unsupported, fmt.Sprintf("extenders: reprieve does not call scheduler extenders (%d configured)", len(kc.Extenders)))
	}

	// 2) Profiles: defaults, validation, resolution.
	profiles := kc.Profiles
	if len(profiles) == 0 {
		profiles = []configv1.KubeSchedulerProfile{{}}
	}
	if len(profiles) == 1 && profiles[0].SchedulerName == nil {
		profiles[0].SchedulerName = ptrTo(DefaultSchedulerName)
	}
	seen := map[string]int{}
	profilesPath := field.NewPath("profiles")
	for i := range profiles {
		path := profilesPath.Index(i)
		p, perrs, unsupported := resolveProfile(path, &profiles[i], globalPct)
		errs = append(errs, perrs...)
		out.Unsupported = append(out.Unsupported, unsupported...)
		if j, ok := seen[p.SchedulerName]; ok {
			errs = append(errs, field.Duplicate(path.Child("schedulerName"), profilesPath.Index(j).Child("schedulerName")))
		}
		seen[p.SchedulerName] = i
		out.Profiles = append(out.Profiles, p)
	}
	errs = append(errs, validateCommonQueueSort(profilesPath, profiles)...)
	if len(errs) > 0 {
		return Config{}, errs.ToAggregate()
	}
	return out, nil
}

// resolveProfile defaults, validates and resolves one profile.
func resolveProfile(path *field.Path, prof *configv1.KubeSchedulerProfile, globalPct int32) (profile.Profile, field.ErrorList, []string) {
	var errs field.ErrorList
	p := profile.Profile{PercentageOfNodesToScore: globalPct}
	if prof.SchedulerName != nil {
		p.SchedulerName = *prof.SchedulerName
	}
	if p.SchedulerName == "" {
		errs = append(errs, field.Required(path.Child("schedulerName"), ""))
	}
	if prof.PercentageOfNodesToScore != nil {
		p.PercentageOfNodesToScore = *prof.PercentageOfNodesToScore
		errs = append(errs, validatePercentage(path.Child("percentageOfNodesToScore"), p.PercentageOfNodesToScore)...)
	}
	errs = append(errs, validateRemovedPlugins(path.Child("plugins"), prof.Plugins)...)

	// Arguments: decoded, defaulted and validated for every pluginConfig
	// entry, defaults for the rest.
	args, aerrs, unsupported := decodeArgs(path, prof.PluginConfig)
	errs = append(errs, aerrs...)
	if prof.Plugins != nil {
		unsupported = append(unsupported, unknownPlugins(path.Child("plugins"), prof.Plugins)...)
	}

	// Plugins per extension point.
	plugins := mergeDefaultPlugins(prof.Plugins)
	eps, perrs := expand(path.Child("plugins"), plugins)
	errs = append(errs, perrs...)
	if len(errs) > 0 {
		return p, errs, unsupported
	}
	unsupported = append(unsupported, compareWithDefaults(path.Child("plugins"), eps)...)
	if cerrs := args.check(path, eps); len(cerrs) > 0 {
		return p, cerrs, unsupported
	}

	p.Preemption = slices.Contains(eps[postFilter], defaultPreemption)
	p.HasPostFilter = len(eps[postFilter]) > 0
	p.MinCandidateNodesPercentage = *args.preemption.MinCandidateNodesPercentage
	p.MinCandidateNodesAbsolute = *args.preemption.MinCandidateNodesAbsolute
	sc, serrs := scoreConfig(path.Child("plugins"), plugins, eps, &args)
	if len(serrs) > 0 {
		return p, serrs, unsupported
	}
	p.Score = sc
	p.Filter = args.filterOptions()
	return p, nil, unsupported
}

func ptrTo[T any](v T) *T { return &v }

// validatePercentage is upstream's validatePercentageOfNodesToScore.
func validatePercentage(path *field.Path, v int32) field.ErrorList {
	if v < 0 || v > 100 {
		return field.ErrorList{field.Invalid(path, v, "not in valid range [0-100]")}
	}
	return nil
}
