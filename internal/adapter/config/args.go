package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/score"
)

// pluginArgs are the defaulted arguments of the default plugins.
type pluginArgs struct {
	preemption configv1.DefaultPreemptionArgs
	fit        configv1.NodeResourcesFitArgs
	balanced   configv1.NodeResourcesBalancedAllocationArgs
	affinity   configv1.InterPodAffinityArgs
	spread     configv1.PodTopologySpreadArgs
	nodeAff    configv1.NodeAffinityArgs
	volume     configv1.VolumeBindingArgs
	dra        configv1.DynamicResourcesArgs
	// fitPath is the path of NodeResourcesFit's pluginConfig entry, if any,
	// for its deferred validation.
	fitPath *field.Path
}

// target returns where the arguments of a plugin are decoded, or nil for a
// plugin without arguments.
func (a *pluginArgs) target(name string) any {
	switch name {
	case defaultPreemption:
		return &a.preemption
	case nodeResourcesFit:
		return &a.fit
	case balancedAlloc:
		return &a.balanced
	case interPodAffinity:
		return &a.affinity
	case podTopologySpread:
		return &a.spread
	case nodeAffinity:
		return &a.nodeAff
	case score.VolumeBinding:
		return &a.volume
	case score.DynamicResources:
		return &a.dra
	}
	return nil
}

// decodeArgs decodes each pluginConfig entry strictly into its plugin's
// arguments, applies upstream's defaults to all of them and validates them
// as validatePluginConfig does (NodeResourcesFit's later, as its plugin
// does, and only when the plugin is enabled).
func decodeArgs(path *field.Path, pcs []configv1.PluginConfig) (pluginArgs, field.ErrorList, []string) {
	var a pluginArgs
	var errs field.ErrorList
	var unsupported []string
	seen := sets.New[string]()
	for i, pc := range pcs {
		pcPath := path.Child("pluginConfig").Index(i)
		argsPath := pcPath.Child("args")
		if seen.Has(pc.Name) {
			errs = append(errs, field.Duplicate(pcPath, pc.Name))
			continue
		}
		seen.Insert(pc.Name)
		if removedPlugins.Has(pc.Name) {
			errs = append(errs, field.Invalid(pcPath, pc.Name, fmt.Sprintf("was invalid in version %q (KubeSchedulerConfiguration is version %q)", apiVersion, apiVersion)))
			continue
		}
		t := a.target(pc.Name)
		if t == nil {
			if _, known := inTree[pc.Name]; !known {
				unsupported = append(unsupported, fmt.Sprintf("%s: arguments for %q, which is not an in-tree plugin of kube-scheduler v1.37.2", pcPath, pc.Name))
			}
			continue
		}
		if len(pc.Args.Raw) == 0 || string(pc.Args.Raw) == "null" {
			continue
		}
		if err := strictJSON(pc.Args.Raw, t); err != nil {
			errs = append(errs, field.Invalid(argsPath, string(pc.Args.Raw), err.Error()))
			continue
		}
		if err := checkArgsKind(pc.Name, t); err != nil {
			errs = append(errs, field.Invalid(argsPath, pc.Name, err.Error()))
			continue
		}
		if pc.Name == nodeResourcesFit {
			a.fitPath = argsPath
		}
		a.setDefaults()
		errs = append(errs, a.validate(pc.Name, argsPath)...)
	}
	a.setDefaults()
	return a, errs, unsupported
}

// checkArgsKind refuses arguments whose apiVersion or kind name another type.
func checkArgsKind(name string, t any) error {
	// Every plugin's args type embeds TypeMeta.
	var apiV, kind string
	if o, ok := t.(interface{ GetObjectKind() schema.ObjectKind }); ok {
		if tm, ok := o.GetObjectKind().(*metav1.TypeMeta); ok {
			apiV, kind = tm.APIVersion, tm.Kind
		}
	}
	if apiV != "" && apiV != apiVersion {
		return fmt.Errorf("args for plugin %s must be %s, got apiVersion %q", name, apiVersion, apiV)
	}
	if kind != "" && kind != name+"Args" {
		return fmt.Errorf("args for plugin %s were not of type %sArgs, got %s", name, name, kind)
	}
	return nil
}

// setDefaults applies upstream's SetDefaults_*Args to every argument.
func (a *pluginArgs) setDefaults() {
	if a.preemption.MinCandidateNodesPercentage == nil {
		a.preemption.MinCandidateNodesPercentage = ptrTo[int32](DefaultMinCandidateNodesPercentage)
	}
	if a.preemption.MinCandidateNodesAbsolute == nil {
		a.preemption.MinCandidateNodesAbsolute = ptrTo[int32](DefaultMinCandidateNodesAbsolute)
	}
	if a.affinity.HardPodAffinityWeight == nil {
		a.affinity.HardPodAffinityWeight = ptrTo[int32](1)
	}
	if a.spread.DefaultingType == "" {
		a.spread.DefaultingType = configv1.SystemDefaulting
	}
	defaultResources := func() []configv1.ResourceSpec {
		return []configv1.ResourceSpec{{Name: string(v1.ResourceCPU), Weight: 1}, {Name: string(v1.ResourceMemory), Weight: 1}}
	}
	if len(a.balanced.Resources) == 0 {
		a.balanced.Resources = defaultResources()
	}
	for i := range a.balanced.Resources {
		if a.balanced.Resources[i].Weight == 0 {
			a.balanced.Resources[i].Weight = 1
		}
	}
	if a.fit.ScoringStrategy == nil {
		a.fit.ScoringStrategy = &configv1.ScoringStrategy{Type: configv1.LeastAllocated, Resources: defaultResources()}
	}
	if len(a.fit.ScoringStrategy.Resources) == 0 {
		a.fit.ScoringStrategy.Resources = defaultResources()
	}
	for i := range a.fit.ScoringStrategy.Resources {
		if a.fit.ScoringStrategy.Resources[i].Weight == 0 {
			a.fit.ScoringStrategy.Resources[i].Weight = 1
		}
	}
	if a.volume.BindTimeoutSeconds == nil {
		a.volume.BindTimeoutSeconds = ptrTo[int64](600)
	}
	// StorageCapacityScoring is on by default: the default shape.
	if len(a.volume.Shape) == 0 {
		a.volume.Shape = []configv1.UtilizationShapePoint{{Utilization: 0, Score: 10}, {Utilization: 100, Score: 0}}
	}
}

// validate runs upstream's validation of one plugin's arguments.
func (a *pluginArgs) validate(name string, path *field.Path) field.ErrorList {
	switch name {
	case defaultPreemption:
		return validatePreemption(path, &a.preemption)
	case interPodAffinity:
		if w := *a.affinity.HardPodAffinityWeight; w < 0 || w > 100 {
			return field.ErrorList{field.Invalid(path.Child("hardPodAffinityWeight"), w, "not in valid range [0, 100]")}
		}
	case podTopologySpread:
		return validateSpread(path, &a.spread)
	case balancedAlloc:
		var errs field.ErrorList
		seen := sets.New[string]()
		for i, r := range a.balanced.Resources {
			rPath := path.Child("resources").Index(i)
			if seen.Has(r.Name) {
				errs = append(errs, field.Duplicate(rPath.Child("name"), r.Name))
			}
			seen.Insert(r.Name)
			if r.Weight != 1 {
				errs = append(errs, field.Invalid(rPath.Child("weight"), r.Weight, "must be 1"))
			}
		}
		return errs
	case nodeAffinity:
		return validateNodeAffinity(path, &a.nodeAff)
	case score.VolumeBinding:
		var errs field.ErrorList
		if *a.volume.BindTimeoutSeconds < 0 {
			errs = append(errs, field.Invalid(path.Child("bindTimeoutSeconds"), *a.volume.BindTimeoutSeconds, "invalid BindTimeoutSeconds, should not be a negative value"))
		}
		return append(errs, validateShape(path.Child("shape"), a.volume.Shape)...)
	case score.DynamicResources:
		// DRASchedulerFilterTimeout, DRADeviceBindingConditions and
		// DRAResourceClaimDeviceStatus are on by default in v1.37.
		var errs field.ErrorList
		if t := a.dra.FilterTimeout; t != nil && t.Duration < 0 {
			errs = append(errs, field.Invalid(path.Child("filterTimeout"), t.Duration.String(), "must be zero or positive"))
		}
		if t := a.dra.BindingTimeout; t != nil && t.Duration < time.Second {
			errs = append(errs, field.Invalid(path.Child("bindingTimeout"), t.Duration.String(), "must be at least 1 second"))
		}
		return errs
	}
	return nil
}

// validatePreemption is upstream's ValidateDefaultPreemptionArgs.
func validatePreemption(path *field.Path, args *configv1.DefaultPreemptionArgs) field.ErrorList {
	var errs field.ErrorList
	pct, abs := *args.MinCandidateNodesPercentage, *args.MinCandidateNodesAbsolute
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
	return errs
}

// validateSpread is upstream's ValidatePodTopologySpreadArgs.
func validateSpread(path *field.Path, args *configv1.PodTopologySpreadArgs) field.ErrorList {
	var errs field.ErrorList
	dt := args.DefaultingType
	switch {
	case dt != configv1.SystemDefaulting && dt != configv1.ListDefaulting:
		errs = append(errs, field.NotSupported(path.Child("defaultingType"), dt, []string{string(configv1.SystemDefaulting), string(configv1.ListDefaulting)}))
	case dt == configv1.SystemDefaulting && len(args.DefaultConstraints) > 0:
		errs = append(errs, field.Invalid(path.Child("defaultingType"), dt, "when .defaultConstraints are not empty"))
	}
	consPath := path.Child("defaultConstraints")
	for i, c := range args.DefaultConstraints {
		p := consPath.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, "not in valid range (0, inf)"))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
		} else {
			errs = append(errs, metav1validation.ValidateLabelName(c.TopologyKey, p.Child("topologyKey"))...)
		}
		switch c.WhenUnsatisfiable {
		case "":
			errs = append(errs, field.Required(p.Child("whenUnsatisfiable"), "can not be empty"))
		case v1.DoNotSchedule, v1.ScheduleAnyway:
		default:
			errs = append(errs, field.NotSupported(p.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, []string{string(v1.DoNotSchedule), string(v1.ScheduleAnyway)}))
		}
		if c.LabelSelector != nil {
			errs = append(errs, field.Forbidden(p.Child("labelSelector"), "constraint must not define a selector, as they deduced for each pod"))
		}
		for j := range args.DefaultConstraints[:i] {
			o := &args.DefaultConstraints[j]
			if c.TopologyKey == o.TopologyKey && c.WhenUnsatisfiable == o.WhenUnsatisfiable {
				errs = append(errs, field.Duplicate(consPath.Index(i), fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
				break
			}
		}
	}
	return errs
}

// validateNodeAffinity is upstream's ValidateNodeAffinityArgs.
func validateNodeAffinity(path *field.Path, args *configv1.NodeAffinityArgs) field.ErrorList {
	a := args.AddedAffinity
	if a == nil {
		return nil
	}
	var errs []error
	if ns := a.RequiredDuringSchedulingIgnoredDuringExecution; ns != nil {
		if _, err := nodeaffinity.NewNodeSelector(ns, field.WithPath(path.Child("addedAffinity", "requiredDuringSchedulingIgnoredDuringExecution"))); err != nil {
			errs = append(errs, err)
		}
	}
	if terms := a.PreferredDuringSchedulingIgnoredDuringExecution; len(terms) > 0 {
		if _, err := nodeaffinity.NewPreferredSchedulingTerms(terms, field.WithPath(path.Child("addedAffinity", "preferredDuringSchedulingIgnoredDuringExecution"))); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	var out field.ErrorList
	for _, err := range utilerrors.Flatten(utilerrors.NewAggregate(errs)).Errors() {
		if fe := (*field.Error)(nil); errors.As(err, &fe) {
			out = append(out, fe)
		} else {
			out = append(out, field.Invalid(path.Child("addedAffinity"), "", err.Error()))
		}
	}
	return out
}

// validateShape is upstream's validateFunctionShape.
func validateShape(path *field.Path, shape []configv1.UtilizationShapePoint) field.ErrorList {
	var errs field.ErrorList
	if len(shape) == 0 {
		return field.ErrorList{field.Required(path, "at least one point must be specified")}
	}
	for i := 1; i < len(shape); i++ {
		if shape[i-1].Utilization >= shape[i].Utilization {
			errs = append(errs, field.Invalid(path.Index(i).Child("utilization"), shape[i].Utilization, "values must be sorted in increasing order"))
			break
		}
	}
	for i, p := range shape {
		if p.Utilization < 0 || p.Utilization > 100 {
			errs = append(errs, field.Invalid(path.Index(i).Child("utilization"), p.Utilization, "not in valid range [0, 100]"))
		}
		if p.Score < 0 || p.Score > 10 {
			errs = append(errs, field.Invalid(path.Index(i).Child("score"), p.Score, "not in valid range [0, 10]"))
		}
	}
	return errs
}

// validateFit is upstream's ValidateNodeResourcesFitArgs, which the
// NodeResourcesFit plugin runs when it is built.
func validateFit(path *field.Path, args *configv1.NodeResourcesFitArgs) field.ErrorList {
	var errs field.ErrorList
	for i, r := range args.IgnoredResources {
		errs = append(errs, metav1validation.ValidateLabelName(r, path.Child("ignoredResources").Index(i))...)
	}
	for i, g := range args.IgnoredResourceGroups {
		p := path.Child("ignoredResourceGroups").Index(i)
		if strings.Contains(g, "/") {
			errs = append(errs, field.Invalid(p, g, "resource group name can't contain '/'"))
		}
		errs = append(errs, metav1validation.ValidateLabelName(g, p)...)
	}
	s := args.ScoringStrategy
	sPath := path.Child("scoringStrategy")
	types := []string{string(configv1.LeastAllocated), string(configv1.MostAllocated), string(configv1.RequestedToCapacityRatio)}
	if !slices.Contains(types, string(s.Type)) {
		errs = append(errs, field.NotSupported(sPath.Child("type"), s.Type, types))
	}
	for i, r := range s.Resources {
		if r.Weight <= 0 || r.Weight > 100 {
			errs = append(errs, field.Invalid(sPath.Child("resources").Index(i).Child("weight"), r.Weight, fmt.Sprintf("resource weight of %v not in valid range (0, 100]", r.Name)))
		}
	}
	if s.Type == configv1.RequestedToCapacityRatio {
		if s.RequestedToCapacityRatio == nil {
			errs = append(errs, field.Required(sPath.Child("requestedToCapacityRatio"), "must be specified when type is RequestedToCapacityRatio"))
		} else {
			errs = append(errs, validateShape(sPath.Child("requestedToCapacityRatio", "shape"), s.RequestedToCapacityRatio.Shape)...)
		}
	} else if s.RequestedToCapacityRatio != nil {
		errs = append(errs, field.Forbidden(sPath.Child("requestedToCapacityRatio"), "must be nil when type is not RequestedToCapacityRatio"))
	}
	return errs
}

// enabledAnywhere reports whether a plugin runs at any extension point.
func (e expanded) enabledAnywhere(name string) bool {
	for _, names := range e {
		if slices.Contains(names, name) {
			return true
		}
	}
	return false
}

// check validates what is validated only for enabled plugins.
func (a *pluginArgs) check(path *field.Path, eps expanded) field.ErrorList {
	var errs field.ErrorList
	if eps.enabledAnywhere(nodeResourcesFit) {
		p := a.fitPath
		if p == nil {
			p = path.Child("pluginConfig").Key(nodeResourcesFit).Child("args")
		}
		errs = append(errs, validateFit(p, &a.fit)...)
	}
	return errs
}

// filterOptions converts the arguments that change filtering.
func (a *pluginArgs) filterOptions() filter.Options {
	var o filter.Options
	if len(a.fit.IgnoredResources) > 0 {
		o.IgnoredResources = sets.New(a.fit.IgnoredResources...)
	}
	if len(a.fit.IgnoredResourceGroups) > 0 {
		o.IgnoredResourceGroups = sets.New(a.fit.IgnoredResourceGroups...)
	}
	if aa := a.nodeAff.AddedAffinity; aa != nil && aa.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		// Validated with the arguments.
		o.AddedAffinity, _ = nodeaffinity.NewNodeSelector(aa.RequiredDuringSchedulingIgnoredDuringExecution)
	}
	if a.spread.DefaultingType == configv1.ListDefaulting {
		o.SpreadDefaultConstraints = a.spread.DefaultConstraints
	}
	return o
}

// scoreConfig converts the arguments into a score.Config (without its
// plugins).
func (a *pluginArgs) scoreConfig() *score.Config {
	conv := func(rs []configv1.ResourceSpec) []score.ResourceWeight {
		out := make([]score.ResourceWeight, len(rs))
		for i, r := range rs {
			out[i] = score.ResourceWeight{Name: v1.ResourceName(r.Name), Weight: r.Weight}
		}
		return out
	}
	s := a.fit.ScoringStrategy
	fit := score.Fit{Strategy: string(s.Type), Resources: conv(s.Resources)}
	if s.RequestedToCapacityRatio != nil {
		for _, p := range s.RequestedToCapacityRatio.Shape {
			fit.Shape = append(fit.Shape, score.ShapePoint{Utilization: int64(p.Utilization), Score: int64(p.Score)})
		}
	}
	cfg := &score.Config{
		Fit:                                fit,
		BalancedResources:                  conv(a.balanced.Resources),
		HardPodAffinityWeight:              *a.affinity.HardPodAffinityWeight,
		IgnorePreferredTermsOfExistingPods: a.affinity.IgnorePreferredTermsOfExistingPods,
		SpreadListDefaulting:               a.spread.DefaultingType == configv1.ListDefaulting,
		SpreadDefaultConstraints:           a.spread.DefaultConstraints,
	}
	if aa := a.nodeAff.AddedAffinity; aa != nil {
		cfg.AddedPreferredAffinity = aa.PreferredDuringSchedulingIgnoredDuringExecution
	}
	for _, p := range a.volume.Shape {
		cfg.VolumeShape = append(cfg.VolumeShape, score.ShapePoint{Utilization: int64(p.Utilization), Score: int64(p.Score)})
	}
	return cfg
}
