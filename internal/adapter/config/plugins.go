package config

import (
	"fmt"
	"math"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/reprieve/reprieve/internal/engine/score"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// point is an extension point, by its field name in Plugins.
type point string

// Extension points, in the order upstream's framework builds them.
const (
	preFilter          point = "preFilter"
	filterPoint        point = "filter"
	postFilter         point = "postFilter"
	reserve            point = "reserve"
	preScore           point = "preScore"
	scorePoint         point = "score"
	preBind            point = "preBind"
	bind               point = "bind"
	postBind           point = "postBind"
	permit             point = "permit"
	preEnqueue         point = "preEnqueue"
	queueSort          point = "queueSort"
	placementGenerate  point = "placementGenerate"
	placementScore     point = "placementScore"
	podGroupPostFilter point = "podGroupPostFilter"
)

var points = []point{preFilter, filterPoint, postFilter, reserve, preScore, scorePoint, preBind, bind, postBind, permit, preEnqueue, queueSort, placementGenerate, placementScore, podGroupPostFilter}

// set returns the PluginSet of an extension point.
func set(p *configv1.Plugins, pt point) *configv1.PluginSet {
	switch pt {
	case preFilter:
		return &p.PreFilter
	case filterPoint:
		return &p.Filter
	case postFilter:
		return &p.PostFilter
	case reserve:
		return &p.Reserve
	case preScore:
		return &p.PreScore
	case scorePoint:
		return &p.Score
	case preBind:
		return &p.PreBind
	case bind:
		return &p.Bind
	case postBind:
		return &p.PostBind
	case permit:
		return &p.Permit
	case preEnqueue:
		return &p.PreEnqueue
	case queueSort:
		return &p.QueueSort
	case placementGenerate:
		return &p.PlacementGenerate
	case placementScore:
		return &p.PlacementScore
	default:
		return &p.PodGroupPostFilter
	}
}

// Plugin names, as upstream registers them.
const (
	defaultPreemption = "DefaultPreemption"
	nodeAffinity      = "NodeAffinity"
	nodeResourcesFit  = "NodeResourcesFit"
	podTopologySpread = "PodTopologySpread"
	interPodAffinity  = "InterPodAffinity"
	balancedAlloc     = "NodeResourcesBalancedAllocation"
)

// inTree are the extension points each in-tree plugin of v1.37.2
// implements.
var inTree = map[string][]point{
	"SchedulingGates":            {preEnqueue},
	"PrioritySort":               {queueSort},
	"NodeName":                   {preFilter, filterPoint},
	"NodeUnschedulable":          {preFilter, filterPoint},
	score.TaintToleration:        {preFilter, filterPoint, preScore, scorePoint},
	nodeAffinity:                 {preFilter, filterPoint, preScore, scorePoint},
	"NodePorts":                  {preFilter, filterPoint},
	nodeResourcesFit:             {preFilter, filterPoint, preScore, scorePoint, placementScore},
	"VolumeRestrictions":         {preFilter, filterPoint},
	"NodeVolumeLimits":           {preFilter, filterPoint},
	score.VolumeBinding:          {preFilter, filterPoint, reserve, preScore, scorePoint, preBind},
	"VolumeZone":                 {preFilter, filterPoint},
	podTopologySpread:            {preFilter, filterPoint, preScore, scorePoint},
	interPodAffinity:             {preFilter, filterPoint, preScore, scorePoint},
	defaultPreemption:            {preEnqueue, postFilter},
	balancedAlloc:                {preScore, scorePoint},
	score.ImageLocality:          {scorePoint},
	"DefaultBinder":              {bind},
	"NodeDeclaredFeatures":       {preFilter, filterPoint},
	score.DynamicResources:       {preEnqueue, preFilter, filterPoint, postFilter, reserve, preBind, scorePoint, podGroupPostFilter},
	"DeferredPodScheduling":      {preFilter, filterPoint, permit},
	"GangScheduling":             {preEnqueue, permit},
	"TopologyPlacementGenerator": {placementGenerate},
	"PodGroupPodsCount":          {placementScore},
}

func implements(name string, pt point) bool { return slices.Contains(inTree[name], pt) }

// defaultPlugins is kube-scheduler v1.37.2's default multiPoint list with
// the default feature gates (NodeDeclaredFeatures and DynamicResources on).
func defaultPlugins() []configv1.Plugin {
	w := func(v int32) *int32 { return &v }
	return []configv1.Plugin{
		{Name: "SchedulingGates"},
		{Name: "PrioritySort"},
		{Name: "NodeName"},
		{Name: "NodeUnschedulable"},
		{Name: score.TaintToleration, Weight: w(3)},
		{Name: nodeAffinity, Weight: w(2)},
		{Name: "NodePorts"},
		{Name: nodeResourcesFit, Weight: w(1)},
		{Name: "VolumeRestrictions"},
		{Name: "NodeVolumeLimits"},
		{Name: score.VolumeBinding},
		{Name: "VolumeZone"},
		{Name: podTopologySpread, Weight: w(2)},
		{Name: interPodAffinity, Weight: w(2)},
		{Name: score.DynamicResources, Weight: w(2)},
		{Name: defaultPreemption},
		{Name: balancedAlloc, Weight: w(1)},
		{Name: score.ImageLocality, Weight: w(1)},
		{Name: "DefaultBinder"},
		{Name: "NodeDeclaredFeatures"},
	}
}

// mergeDefaultPlugins is upstream's defaulting of a profile's plugins
// (mergePlugins): the default multiPoint set merged with the profile's, the
// other extension points as the profile gives them.
func mergeDefaultPlugins(custom *configv1.Plugins) *configv1.Plugins {
	out := &configv1.Plugins{MultiPoint: configv1.PluginSet{Enabled: defaultPlugins()}}
	if custom == nil {
		return out
	}
	out.MultiPoint = mergePluginSet(out.MultiPoint, custom.MultiPoint)
	for _, pt := range points {
		*set(out, pt) = mergePluginSet(configv1.PluginSet{}, *set(custom, pt))
	}
	return out
}

// mergePluginSet is upstream's mergePluginSet: custom's disabled plugins
// (or all, with "*") removed from the defaults, defaults that custom enables
// replaced in place, custom's other plugins appended.
func mergePluginSet(defaults, custom configv1.PluginSet) configv1.PluginSet {
	disabled := sets.New[string]()
	var disabledList []configv1.Plugin
	for _, p := range append(slices.Clone(custom.Disabled), defaults.Disabled...) {
		disabledList = append(disabledList, configv1.Plugin{Name: p.Name})
		disabled.Insert(p.Name)
	}
	customIndex := map[string]int{}
	for i, p := range custom.Enabled {
		customIndex[p.Name] = i
	}
	replaced := sets.New[int]()
	var enabled []configv1.Plugin
	if !disabled.Has("*") {
		for _, p := range defaults.Enabled {
			if disabled.Has(p.Name) {
				continue
			}
			if i, ok := customIndex[p.Name]; ok {
				p = custom.Enabled[i]
				replaced.Insert(i)
			}
			enabled = append(enabled, p)
		}
	}
	for i, p := range custom.Enabled {
		if !replaced.Has(i) {
			enabled = append(enabled, p)
		}
	}
	return configv1.PluginSet{Enabled: enabled, Disabled: disabledList}
}

// expanded are the plugins enabled at each extension point, in the order
// the framework runs them.
type expanded map[point][]string

// expand is what upstream's NewFramework makes of the defaulted plugins:
// each extension point's own list, then the multiPoint plugins that
// implement it and are not disabled there (all are with "*"), an explicit
// entry taking precedence. Plugins that are not in-tree are left out here;
// unknownPlugins reports them.
func expand(path *field.Path, plugins *configv1.Plugins) (expanded, field.ErrorList) {
	var errs field.ErrorList
	out := expanded{}
	for _, pt := range points {
		ps := set(plugins, pt)
		ptPath := path.Child(string(pt), "enabled")
		var own []string
		for i, p := range ps.Enabled {
			if _, known := inTree[p.Name]; !known {
				continue
			}
			if !implements(p.Name, pt) {
				errs = append(errs, field.Invalid(ptPath.Index(i), p.Name, fmt.Sprintf("plugin %q does not extend the %s extension point", p.Name, pt)))
				continue
			}
			if slices.Contains(own, p.Name) {
				errs = append(errs, field.Duplicate(ptPath.Index(i), p.Name))
				continue
			}
			own = append(own, p.Name)
		}
		disabled := sets.New[string]()
		for _, p := range ps.Disabled {
			disabled.Insert(p.Name)
		}
		if disabled.Has("*") {
			out[pt] = own
			continue
		}
		var override, multi []string
		for i, p := range plugins.MultiPoint.Enabled {
			if _, known := inTree[p.Name]; !known || !implements(p.Name, pt) || disabled.Has(p.Name) {
				continue
			}
			if slices.Contains(own, p.Name) {
				override = append(override, p.Name)
				continue
			}
			if slices.Contains(multi, p.Name) {
				errs = append(errs, field.Duplicate(path.Child("multiPoint", "enabled").Index(i), p.Name))
				continue
			}
			multi = append(multi, p.Name)
		}
		// Overrides first in their own order, then multiPoint, then the rest.
		var list []string
		for _, name := range own {
			if slices.Contains(override, name) {
				list = append(list, name)
			}
		}
		list = append(list, multi...)
		for _, name := range own {
			if !slices.Contains(override, name) {
				list = append(list, name)
			}
		}
		out[pt] = list
	}
	if n := len(out[queueSort]); n != 1 {
		errs = append(errs, field.Invalid(path.Child("queueSort"), n, "exactly one queue sort plugin is required"))
	}
	if len(out[bind]) == 0 {
		errs = append(errs, field.Required(path.Child("bind"), "at least one bind plugin is needed"))
	}
	if len(out[placementGenerate]) > 1 {
		errs = append(errs, field.Invalid(path.Child("placementGenerate"), len(out[placementGenerate]), "at most one placement generate plugin is allowed"))
	}
	return out, errs
}

// modelledScorePlugins are the score plugins reprieve computes, and those
// it accepts because they score 0 for every pod it models.
var modelledScorePlugins = sets.New(score.TaintToleration, nodeAffinity, nodeResourcesFit, podTopologySpread,
	interPodAffinity, balancedAlloc, score.ImageLocality, score.VolumeBinding, score.DynamicResources)

// modelled are the plugins that decide something for the pods reprieve
// models, outside scoring (the volume plugins and DynamicResources among
// them since reprieve models volumes and devices); the other default
// plugins (declared node features) pass every such pod, so that disabling
// them changes nothing. nonDefault are the in-tree plugins
// outside the default profile (feature-gated), which reprieve does not run.
var (
	modelled = sets.New("SchedulingGates", "PrioritySort", "NodeName", "NodeUnschedulable", score.TaintToleration,
		nodeAffinity, "NodePorts", nodeResourcesFit, podTopologySpread, interPodAffinity, "DefaultBinder",
		"VolumeRestrictions", "NodeVolumeLimits", score.VolumeBinding, "VolumeZone", score.DynamicResources)
	nonDefault = sets.New("DeferredPodScheduling", "GangScheduling", "TopologyPlacementGenerator", "PodGroupPodsCount")
)

// relevant keeps the modelled and non-default plugins of names, in order.
func relevant(names []string) []string {
	var out []string
	for _, n := range names {
		if modelled.Has(n) || nonDefault.Has(n) {
			out = append(out, n)
		}
	}
	return out
}

// compareWithDefaults reports the plugins reprieve does not run as the
// profile asks: at every extension point other than preScore, score and
// postFilter (DefaultPreemption), a list of modelled plugins that differs
// from the default profile's (a filter plugin disabled, say) or a
// non-default in-tree plugin; score plugins reprieve does not compute.
func compareWithDefaults(path *field.Path, eps expanded) []string {
	var out []string
	defaults, _ := expand(path, mergeDefaultPlugins(nil))
	for _, pt := range points {
		switch pt {
		case preScore, scorePoint, postFilter:
			continue
		}
		got, want := relevant(eps[pt]), relevant(defaults[pt])
		if !slices.Equal(got, want) {
			out = append(out, fmt.Sprintf("%s: reprieve runs the default %s plugins [%s], not [%s]",
				path.Child(string(pt)), pt, strings.Join(want, " "), strings.Join(got, " ")))
		}
	}
	for _, name := range eps[scorePoint] {
		if !modelledScorePlugins.Has(name) {
			out = append(out, fmt.Sprintf("%s: reprieve does not compute the scores of %s", path.Child("score"), name))
		}
	}
	for _, name := range eps[preScore] {
		if !modelledScorePlugins.Has(name) {
			out = append(out, fmt.Sprintf("%s: reprieve does not run %s's PreScore", path.Child("preScore"), name))
		}
	}
	for _, name := range eps[scorePoint] {
		if implements(name, preScore) && !slices.Contains(eps[preScore], name) && name != score.VolumeBinding {
			out = append(out, fmt.Sprintf("%s: reprieve does not score with %s when its PreScore is disabled", path.Child("preScore"), name))
		}
	}
	for _, name := range eps[postFilter] {
		if name != defaultPreemption && name != score.DynamicResources {
			out = append(out, fmt.Sprintf("%s: reprieve does not run %s", path.Child("postFilter"), name))
		}
	}
	return out
}

// unknownPlugins reports, once each, the enabled plugins that are not
// in-tree.
func unknownPlugins(path *field.Path, plugins *configv1.Plugins) []string {
	var out []string
	seen := sets.New[string]()
	report := func(p *field.Path, sets configv1.PluginSet) {
		for i, pl := range sets.Enabled {
			if _, known := inTree[pl.Name]; known || seen.Has(pl.Name) {
				continue
			}
			seen.Insert(pl.Name)
			out = append(out, fmt.Sprintf("%s: %q is not an in-tree plugin of kube-scheduler v1.37.2; reprieve runs no out-of-tree plugins", p.Child("enabled").Index(i), pl.Name))
		}
	}
	report(path.Child("multiPoint"), plugins.MultiPoint)
	for _, pt := range points {
		report(path.Child(string(pt)), *set(plugins, pt))
	}
	return out
}

// scoreConfig builds the profile's scoring: the preScore and score plugins
// with the weights upstream's getValidScoreWeights gives them (the score
// extension point's entry first, then multiPoint's; 0 or unset is 1), and
// the plugin arguments.
func scoreConfig(path *field.Path, plugins *configv1.Plugins, eps expanded, args *pluginArgs) (*score.Config, field.ErrorList) {
	weights := map[string]int64{}
	var total int64
	for _, p := range append(slices.Clone(plugins.Score.Enabled), plugins.MultiPoint.Enabled...) {
		if !implements(p.Name, scorePoint) {
			continue
		}
		if _, ok := weights[p.Name]; ok {
			continue
		}
		w := int64(1)
		if p.Weight != nil && *p.Weight != 0 {
			w = int64(*p.Weight)
		}
		weights[p.Name] = w
		if w*score.MaxNodeScore > math.MaxInt64-total {
			return nil, field.ErrorList{field.Invalid(path.Child("score"), w, "total score of Score plugins could overflow")}
		}
		total += w * score.MaxNodeScore
	}
	cfg := args.scoreConfig()
	cfg.Plugins = nil
	// PreScore runs in preScore order, before any Score; plugins only at
	// score come after.
	for _, name := range eps[preScore] {
		cfg.Plugins = append(cfg.Plugins, score.Plugin{Name: name, Weight: weights[name], Score: slices.Contains(eps[scorePoint], name)})
	}
	for _, name := range eps[scorePoint] {
		if !slices.Contains(eps[preScore], name) {
			cfg.Plugins = append(cfg.Plugins, score.Plugin{Name: name, Weight: weights[name], Score: true})
		}
	}
	return cfg, nil
}

// removedPlugins were removed from kube-scheduler before v1.
var removedPlugins = sets.New("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")

// validateRemovedPlugins is upstream's validatePluginSetForInvalidPlugins
// over the extension points it checks.
func validateRemovedPlugins(path *field.Path, plugins *configv1.Plugins) field.ErrorList {
	if plugins == nil {
		return nil
	}
	var errs field.ErrorList
	for _, pt := range []point{preEnqueue, queueSort, preFilter, filterPoint, postFilter, preScore, scorePoint, reserve, permit, preBind, bind, postBind, podGroupPostFilter} {
		for i, p := range set(plugins, pt).Enabled {
			if removedPlugins.Has(p.Name) {
				errs = append(errs, field.Invalid(path.Child(string(pt), "enabled").Index(i), p.Name,
					fmt.Sprintf("was invalid in version %q (KubeSchedulerConfiguration is version %q)", apiVersion, apiVersion)))
			}
		}
	}
	return errs
}

// validateCommonQueueSort is upstream's check that every profile has the
// same queueSort plugins and arguments.
func validateCommonQueueSort(path *field.Path, profiles []configv1.KubeSchedulerProfile) field.ErrorList {
	var errs field.ErrorList
	var canon configv1.PluginSet
	var name string
	if profiles[0].Plugins != nil {
		canon = profiles[0].Plugins.QueueSort
		if len(canon.Enabled) > 0 {
			name = canon.Enabled[0].Name
		}
		if n := len(canon.Enabled); n > 1 {
			errs = append(errs, field.Invalid(path.Index(0).Child("plugins", "queueSort", "Enabled"), n, "only one queue sort plugin can be enabled"))
		}
	}
	var canonArgs []byte
	for _, pc := range profiles[0].PluginConfig {
		if name != "" && pc.Name == name {
			canonArgs = pc.Args.Raw
		}
	}
	for i := 1; i < len(profiles); i++ {
		var curr configv1.PluginSet
		if profiles[i].Plugins != nil {
			curr = profiles[i].Plugins.QueueSort
		}
		if !apiequality.Semantic.DeepEqual(canon, curr) {
			errs = append(errs, field.Invalid(path.Index(i).Child("plugins", "queueSort"), curr, "must be the same for all profiles"))
		}
		for _, pc := range profiles[i].PluginConfig {
			if pc.Name == name && string(pc.Args.Raw) != string(canonArgs) {
				errs = append(errs, field.Invalid(path.Index(i).Child("pluginConfig", "args"), string(pc.Args.Raw), "queueSort must be the same for all profiles"))
			}
		}
	}
	return errs
}

// validateExtenders is upstream's validation of the extenders.
func validateExtenders(path *field.Path, extenders []configv1.Extender) field.ErrorList {
	var errs field.ErrorList
	binders := 0
	managed := sets.New[string]()
	for i, e := range extenders {
		p := path.Index(i)
		if e.PrioritizeVerb != "" && e.Weight <= 0 {
			errs = append(errs, field.Invalid(p.Child("weight"), e.Weight, "must have a positive weight applied to it"))
		}
		if e.BindVerb != "" {
			binders++
		}
		for j, r := range e.ManagedResources {
			rp := p.Child("managedResources").Index(j).Child("name")
			errs = append(errs, validateExtendedResourceName(rp, r.Name)...)
			if managed.Has(r.Name) {
				errs = append(errs, field.Invalid(rp, r.Name, "duplicate extender managed resource name"))
			}
			managed.Insert(r.Name)
		}
	}
	if binders > 1 {
		errs = append(errs, field.Invalid(path, fmt.Sprintf("found %d extenders implementing bind", binders), "only one extender can implement bind"))
	}
	return errs
}

// validateExtendedResourceName checks that name is a qualified extended
// resource name.
func validateExtendedResourceName(path *field.Path, name string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	if len(errs) > 0 {
		return errs
	}
	if !snapshot.IsExtendedResourceName(v1.ResourceName(name)) {
		errs = append(errs, field.Invalid(path, name, "is an invalid extended resource name"))
	}
	return errs
}
