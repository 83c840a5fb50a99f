// Package config reads the parts of a KubeSchedulerConfiguration
// (kubescheduler.config.k8s.io/v1) that reprieve honours: the scheduler name
// of the profile and the DefaultPreemption plugin arguments, defaulted and
// validated as kube-scheduler does.
package config

import (
	"encoding/json"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/util/validation/field"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"sigs.k8s.io/yaml"
)

// Defaults.
const (
	DefaultSchedulerName               = "reprieve"
	DefaultMinCandidateNodesPercentage = 10
	DefaultMinCandidateNodesAbsolute   = 100
	apiVersion                         = "kubescheduler.config.k8s.io/v1"
)

// Config is what reprieve takes from a KubeSchedulerConfiguration.
type Config struct {
	// SchedulerName is the profile's schedulerName.
	SchedulerName string
	// MinCandidateNodesPercentage and MinCandidateNodesAbsolute are the
	// DefaultPreemption arguments.
	MinCandidateNodesPercentage int32
	MinCandidateNodesAbsolute   int32
}

// Default returns the configuration used without a file.
func Default() Config {
	return Config{
		SchedulerName:               DefaultSchedulerName,
		MinCandidateNodesPercentage: DefaultMinCandidateNodesPercentage,
		MinCandidateNodesAbsolute:   DefaultMinCandidateNodesAbsolute,
	}
}

// Load reads and validates a configuration file.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	c, err := Parse(data)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Parse reads and validates a configuration document. reprieve runs a
// single profile: with several, the first is used unless another is named
// for reprieve.
func Parse(data []byte) (Config, error) {
	var kc configv1.KubeSchedulerConfiguration
	if err := yaml.UnmarshalStrict(data, &kc); err != nil {
		return Config{}, fmt.Errorf("malformed KubeSchedulerConfiguration: %v", err)
	}
	if kc.APIVersion != apiVersion || kc.Kind != "KubeSchedulerConfiguration" {
		return Config{}, fmt.Errorf("apiVersion/kind: want %s KubeSchedulerConfiguration, got %q %q", apiVersion, kc.APIVersion, kc.Kind)
	}
	c := Default()
	if len(kc.Profiles) == 0 {
		return c, nil
	}
	idx := 0
	for i, p := range kc.Profiles {
		if p.SchedulerName != nil && *p.SchedulerName == DefaultSchedulerName {
			idx = i
		}
	}
	prof := kc.Profiles[idx]
	profPath := field.NewPath("profiles").Index(idx)
	if prof.SchedulerName != nil && *prof.SchedulerName != "" {
		c.SchedulerName = *prof.SchedulerName
	}
	for j, pc := range prof.PluginConfig {
		if pc.Name != "DefaultPreemption" {
			continue
		}
		argsPath := profPath.Child("pluginConfig").Index(j).Child("args")
		var args configv1.DefaultPreemptionArgs
		if len(pc.Args.Raw) > 0 {
			if err := json.Unmarshal(pc.Args.Raw, &args); err != nil {
				return Config{}, fmt.Errorf("%s: %v", argsPath, err)
			}
		}
		if args.MinCandidateNodesPercentage != nil {
			c.MinCandidateNodesPercentage = *args.MinCandidateNodesPercentage
		}
		if args.MinCandidateNodesAbsolute != nil {
			c.MinCandidateNodesAbsolute = *args.MinCandidateNodesAbsolute
		}
		if err := validatePreemption(argsPath, c.MinCandidateNodesPercentage, c.MinCandidateNodesAbsolute); err != nil {
			return Config{}, err
		}
	}
	return c, nil
}

// validatePreemption validates the DefaultPreemption arguments as upstream's
// ValidateDefaultPreemptionArgs does.
func validatePreemption(path *field.Path, pct, abs int32) error {
	var errs field.ErrorList
	pctPath, absPath := path.Child("minCandidateNodesPercentage"), path.Child("minCandidateNodesAbsolute")
	if pct < 0 || pct > 100 {
		errs = append(errs, field.Invalid(pctPath, pct, "not in valid range [0, 100]"))
	}
	if abs < 0 {
		errs = append(errs, field.Invalid(absPath, abs, "not in valid range [0, inf)"))
	}
	if pct == 0 && abs == 0 {
		errs = append(errs,
			field.Invalid(pctPath, pct, "cannot be zero at the same time as minCandidateNodesAbsolute"),
			field.Invalid(absPath, abs, "cannot be zero at the same time as minCandidateNodesPercentage"))
	}
	return errs.ToAggregate()
}
