// Package upstream runs the real kube-scheduler v1.37.2 framework (default
// profile, in-tree plugins, default feature gates) over a set of cluster
// objects and reports, deterministically, what it decides for one pending
// pod: where it fits, and if nowhere, what DefaultPreemption would do.
//
// It is the oracle of reprieve's conformance tests. It imports
// k8s.io/kubernetes and so lives in its own module.
package upstream

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/featuregate"
	"k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	internalqueue "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/parallelize"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
)

// noNodesAvailable is upstream's ErrNoNodesAvailable message (pkg/scheduler).
const noNodesAvailable = "no nodes available to schedule pods"

// featureGateMu serialises Runs and Environments that change the
// process-wide feature gates (write lock) against all others (read lock).
var featureGateMu sync.RWMutex

// everyPotentialNode is the internal candidate budget of Run: dry-run every
// potential node, none skipped.
const everyPotentialNode int32 = -1

// Run evaluates, with the real upstream kube-scheduler v1.37.2 framework
// (default profile plugins, default feature gates), what the scheduler
// decides for in.Preemptor over the cluster objects. The dry run starts at
// the first potential node and asks for as many candidates as there are
// potential nodes, so that none is skipped.
//
// It returns an error wrapping ErrInvalidInput for objects a real cluster
// could not hold, and other errors when the upstream machinery could not be
// built; upstream's own verdicts, including plugin errors, are in the Result.
// Run is safe for concurrent use; each call builds and tears down its own
// clientset, informers, cache, queue and framework.
func Run(ctx context.Context, in Input) (*Result, error) {
	e, err := NewEnvironment(ctx, in, EnvOptions{})
	if err != nil {
		return nil, err
	}
	// Stop every goroutine of this run before returning.
	defer e.Close()
	return e.evaluate(ctx, 0, everyPotentialNode)
}

// EnvOptions configures NewEnvironment.
type EnvOptions struct {
	// Parallelism is the scheduler's parallelism setting: how many
	// goroutines Filter and the preemption dry run use. 0 means upstream's
	// default (16). With 1 the dry run visits the potential nodes one by one
	// from the offset and stops as soon as it has enough candidates; with
	// more, which nodes it visits before stopping depends on goroutine
	// timing, as in a real scheduler.
	Parallelism int
	// SnapshotOrder makes the dry run visit the potential nodes in the
	// snapshot's node order (the order Filter lists them in) instead of
	// upstream's order. Upstream lists them (NodeToStatus.NodesForStatusCode)
	// by iterating a Go map whenever Filter gave every node an explicit
	// status, i.e. in a random order, so which nodes the dry run reaches
	// from an offset is random. With SnapshotOrder and Parallelism 1 the
	// answer for a given offset and candidate budget is deterministic. The
	// dry run itself is unchanged.
	SnapshotOrder bool
	// Config, when set, is a KubeSchedulerConfiguration document decoded
	// (with defaults) and validated as kube-scheduler does; its first
	// profile replaces the default one. Without DefaultPreemption at
	// postFilter the Result has PreemptionDisabled set and no dry run.
	Config []byte
}

// Environment is one upstream scheduler instance (clientset, informers,
// cache, snapshot, queue, framework and DefaultPreemption, wired as Run
// wires them) holding one cluster state, so that the preemptor can be
// evaluated repeatedly without rebuilding it. Evaluate may not be called
// concurrently. Close releases it.
type Environment struct {
	env    *environment
	objs   *objects
	logger klog.Logger
	// cancel stops the environment's goroutines.
	cancel context.CancelFunc
	// release undoes the feature gates and releases featureGateMu.
	release   func()
	closeOnce sync.Once
}

// NewEnvironment builds what Run builds for in: it admits the objects,
// applies in.FeatureGates and starts the scheduler machinery, whose
// goroutines live until Close or until ctx is cancelled. It returns an error
// wrapping ErrInvalidInput for objects a real cluster could not hold.
//
// An Environment holds featureGateMu until Close: for reading normally, for
// writing when in.FeatureGates is set (which then excludes every other Run
// and Environment). Close an Environment before calling Run from the same
// goroutine while another goroutine may set feature gates.
func NewEnvironment(ctx context.Context, in Input, opts EnvOptions) (_ *Environment, err error) {
	if opts.Parallelism < 0 {
		return nil, fmt.Errorf("%w: parallelism %d is negative", ErrInvalidInput, opts.Parallelism)
	}
	e := &Environment{}
	if in.FeatureGates != nil {
		featureGateMu.Lock()
		restore, err := setFeatureGates(in.FeatureGates)
		if err != nil {
			featureGateMu.Unlock()
			return nil, err
		}
		e.release = func() {
			restore()
			featureGateMu.Unlock()
		}
	} else {
		featureGateMu.RLock()
		e.release = featureGateMu.RUnlock
	}
	defer func() {
		if err != nil {
			e.release()
		}
	}()

	// Upstream's plugins, cache and queue use the scheduler metrics and
	// panic on nil vectors unless they are registered, as scheduler.New
	// does. Registering is idempotent.
	metrics.Register()

	e.logger = logr.Discard()
	if in.Logger != nil {
		e.logger = *in.Logger
	}
	if e.objs, err = prepare(in); err != nil {
		return nil, err
	}
	ctx, e.cancel = context.WithCancel(klog.NewContext(ctx, e.logger))
	if e.env, err = newEnvironment(ctx, e.cancel, e.objs, opts); err != nil {
		e.cancel()
		return nil, err
	}
	return e, nil
}

// Evaluate runs one scheduling attempt of the preemptor as upstream does
// it: PreFilter on a fresh CycleState, Filter (with nominated pods) on every
// node, and, if the pod fits nowhere, DefaultPreemption: eligibility, the
// Unschedulable nodes as potential nodes (in upstream's random order unless
// EnvOptions.SnapshotOrder), the disruption budgets (sorted by
// namespace and name), DryRunPreemption from offset (which must not be
// negative; it is taken modulo the number of potential nodes by upstream's
// own indexing) looking for numCandidates candidates, and SelectCandidate.
// numCandidates <= 0 means upstream's own budget for the default plugin
// arguments: max(10% of the potential nodes, 100), at most all of them.
//
// The Result is filled as Run fills it. Run's exhaustive dry run is
// Evaluate(ctx, 0, number of potential nodes).
func (e *Environment) Evaluate(ctx context.Context, offset int32, numCandidates int32) (*Result, error) {
	if offset < 0 {
		return nil, fmt.Errorf("%w: negative dry-run offset %d", ErrInvalidInput, offset)
	}
	return e.evaluate(ctx, offset, max(numCandidates, 0))
}

// evaluate is Evaluate with everyPotentialNode allowed as numCandidates.
func (e *Environment) evaluate(ctx context.Context, offset, numCandidates int32) (*Result, error) {
	return e.env.schedule(klog.NewContext(ctx, e.logger), e.objs.preemptor, offset, numCandidates)
}

// Close stops every goroutine of the environment, waits for them and
// restores the feature gates. It is safe to call more than once.
func (e *Environment) Close() {
	e.closeOnce.Do(func() {
		e.env.shutdown(e.cancel)
		e.release()
	})
}

// setFeatureGates applies gates to the process-wide feature gate and returns
// a function that restores the previous values.
func setFeatureGates(gates map[string]bool) (func(), error) {
	known := utilfeature.DefaultMutableFeatureGate.GetAll()
	previous := make(map[string]bool, len(gates))
	for name := range gates {
		if _, ok := known[featuregate.Feature(name)]; !ok {
			return nil, fmt.Errorf("%w: unknown feature gate %q", ErrInvalidInput, name)
		}
		previous[name] = utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(name))
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(gates); err != nil {
		return nil, fmt.Errorf("setting feature gates: %w", err)
	}
	return func() {
		// Restoring values that were accepted a moment ago cannot fail.
		_ = utilfeature.DefaultMutableFeatureGate.SetFromMap(previous)
	}, nil
}

// objects are the admitted (normalised, priority-resolved) copies of the
// input.
type objects struct {
	nodes           []*v1.Node
	pods            []*v1.Pod // non-terminal pods, input order, preemptor included
	pdbs            []*policyv1.PodDisruptionBudget
	priorityClasses []*schedulingv1.PriorityClass
	namespaces      []*v1.Namespace
	storage         []runtime.Object
	preemptor       *v1.Pod
	// dra are the DRA objects (slices, classes, claims).
	dra []runtime.Object
	// selectors are the Services, ReplicationControllers, ReplicaSets and
	// StatefulSets.
	selectors []runtime.Object
}

// prepare deep-copies the input and applies what the API server would have
// done on create: defaults (namespace, UID, schedulerName) and the Priority
// admission plugin.
func prepare(in Input) (*objects, error) {
	if in.Preemptor == nil {
		return nil, fmt.Errorf("%w: no preemptor", ErrInvalidInput)
	}
	if in.Preemptor.Spec.NodeName != "" {
		return nil, fmt.Errorf("%w: preemptor %s/%s is already bound to %q", ErrInvalidInput, in.Preemptor.Namespace, in.Preemptor.Name, in.Preemptor.Spec.NodeName)
	}
	o := &objects{}
	resolver := newPriorityResolver(in.PriorityClasses)
	admit := func(p *v1.Pod) (*v1.Pod, error) {
		p = p.DeepCopy()
		normalizePod(p)
		if err := resolver.resolve(p); err != nil {
			return nil, err
		}
		return p, nil
	}

	preemptor, err := admit(in.Preemptor)
	if err != nil {
		return nil, err
	}
	o.preemptor = preemptor
	for _, obj := range in.Storage {
		o.storage = append(o.storage, obj.DeepCopyObject())
	}
	preemptorKey := preemptor.Namespace + "/" + preemptor.Name

	seen := sets.New[string]()
	for _, p := range in.Pods {
		if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		ap, err := admit(p)
		if err != nil {
			return nil, err
		}
		key := ap.Namespace + "/" + ap.Name
		if seen.Has(key) {
			return nil, fmt.Errorf("%w: duplicate pod %s", ErrInvalidInput, key)
		}
		seen.Insert(key)
		if key == preemptorKey {
			ap = preemptor
		}
		o.pods = append(o.pods, ap)
	}
	if !seen.Has(preemptorKey) {
		o.pods = append(o.pods, preemptor)
	}

	nodeNames := sets.New[string]()
	for _, n := range in.Nodes {
		if nodeNames.Has(n.Name) {
			return nil, fmt.Errorf("%w: duplicate node %s", ErrInvalidInput, n.Name)
		}
		nodeNames.Insert(n.Name)
		o.nodes = append(o.nodes, n.DeepCopy())
	}
	for _, pdb := range in.PDBs {
		pdb = pdb.DeepCopy()
		if pdb.Namespace == "" {
			pdb.Namespace = v1.NamespaceDefault
		}
		o.pdbs = append(o.pdbs, pdb)
	}
	for _, pc := range in.PriorityClasses {
		o.priorityClasses = append(o.priorityClasses, pc.DeepCopy())
	}
	for _, ns := range in.Namespaces {
		o.namespaces = append(o.namespaces, ns.DeepCopy())
	}
	for _, rs := range in.ResourceSlices {
		o.dra = append(o.dra, rs.DeepCopy())
	}
	addSelector := func(obj runtime.Object, meta metav1.Object) {
		if meta.GetNamespace() == "" {
			meta.SetNamespace(v1.NamespaceDefault)
		}
		o.selectors = append(o.selectors, obj)
	}
	for _, x := range in.Services {
		x = x.DeepCopy()
		addSelector(x, x)
	}
	for _, x := range in.ReplicationControllers {
		x = x.DeepCopy()
		addSelector(x, x)
	}
	for _, x := range in.ReplicaSets {
		x = x.DeepCopy()
		addSelector(x, x)
	}
	for _, x := range in.StatefulSets {
		x = x.DeepCopy()
		addSelector(x, x)
	}
	for _, dc := range in.DeviceClasses {
		o.dra = append(o.dra, dc.DeepCopy())
	}
	for _, rc := range in.ResourceClaims {
		rc = rc.DeepCopy()
		if rc.Namespace == "" {
			rc.Namespace = v1.NamespaceDefault
		}
		o.dra = append(o.dra, rc)
	}
	return o, nil
}

// environment is one scheduler instance, wired the way pkg/scheduler.New
// wires it, holding one cluster state.
type environment struct {
	informerFactory informers.SharedInformerFactory
	framework       framework.Framework
	snapshot        *internalcache.Snapshot
	tracker         *resourceslicetracker.Tracker
	preemption      *defaultpreemption.DefaultPreemption
	// snapshotOrder is EnvOptions.SnapshotOrder.
	snapshotOrder bool
}

// newEnvironment builds the environment under ctx; cancel must cancel ctx.
// On error, everything already started is stopped.
func newEnvironment(ctx context.Context, cancel context.CancelFunc, o *objects, opts EnvOptions) (_ *environment, err error) {
	logger := klog.FromContext(ctx)
	env := &environment{snapshotOrder: opts.SnapshotOrder}
	defer func() {
		if err != nil {
			env.shutdown(cancel)
		}
	}()

	cfg, err := schedulerConfig(opts.Config)
	if err != nil {
		return nil, err
	}
	profile := &cfg.Profiles[0]

	var clientObjs []runtime.Object
	for _, n := range o.nodes {
		clientObjs = append(clientObjs, n)
	}
	for _, p := range o.pods {
		clientObjs = append(clientObjs, p)
	}
	for _, pdb := range o.pdbs {
		clientObjs = append(clientObjs, pdb)
	}
	for _, pc := range o.priorityClasses {
		clientObjs = append(clientObjs, pc)
	}
	for _, ns := range o.namespaces {
		clientObjs = append(clientObjs, ns)
	}
	clientObjs = append(clientObjs, o.dra...)
	clientObjs = append(clientObjs, o.storage...)
	// PodTopologySpread's default constraints register informers for
	// these (helper.DefaultSelector's listers); they start below.
	clientObjs = append(clientObjs, o.selectors...)
	client := fake.NewClientset(clientObjs...)
	env.informerFactory = informers.NewSharedInformerFactory(client, 0)
	podInformer := env.informerFactory.Core().V1().Pods()
	podInformer.Informer()
	env.informerFactory.Core().V1().Nodes().Informer()
	env.informerFactory.Policy().V1().PodDisruptionBudgets().Informer()
	env.informerFactory.Scheduling().V1().PriorityClasses().Informer()

	// As in scheduler.New.
	var draManager fwk.SharedDRAManager
	// draSynced are what the DRA manager must have seen before a cycle:
	// the scheduler waits for them with WaitForHandlersSync.
	var draSynced []cache.InformerSynced
	if utilfeature.DefaultFeatureGate.Enabled(features.DynamicResourceAllocation) {
		claimCache := assumecache.NewAssumeCache(logger, env.informerFactory.Resource().V1().ResourceClaims().Informer(), "ResourceClaim", "", nil)
		opts := resourceslicetracker.Options{
			EnableDeviceTaintRules:   utilfeature.DefaultFeatureGate.Enabled(features.DRADeviceTaintRules),
			EnableConsumableCapacity: utilfeature.DefaultFeatureGate.Enabled(features.DRAConsumableCapacity),
			SliceInformer:            env.informerFactory.Resource().V1().ResourceSlices(),
			KubeClient:               client,
		}
		if opts.EnableDeviceTaintRules {
			opts.TaintInformer = env.informerFactory.Resource().V1beta2().DeviceTaintRules()
		}
		env.tracker, err = resourceslicetracker.StartTracker(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("starting resource slice tracker: %w", err)
		}
		draManager = dynamicresources.NewDRAManager(ctx, claimCache, env.tracker, env.informerFactory)
		// The assume cache's informer registration: synced once every claim
		// reached the cache and, through it, the manager's allocated devices.
		reg := claimCache.AddEventHandler(cache.ResourceEventHandlerFuncs{})
		draSynced = append(draSynced, reg.HasSynced, env.tracker.HasSynced)
		// The scheduler's event handlers feed DeviceClasses to the
		// extended resource cache (DRAExtendedResource), which NodeResourcesFit
		// and DynamicResources read.
		if erCache, ok := draManager.DeviceClassResolver().(*extendedresourcecache.ExtendedResourceCache); ok && erCache != nil {
			classReg, err := env.informerFactory.Resource().V1().DeviceClasses().Informer().AddEventHandler(erCache)
			if err != nil {
				return nil, fmt.Errorf("registering the extended resource cache: %w", err)
			}
			draSynced = append(draSynced, classReg.HasSynced)
		}
	}

	// v1.36: no pod groups here (the runner serves no gate that uses them).
	schedulerCache := internalcache.New(ctx, nil, utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload))
	env.snapshot = internalcache.NewEmptySnapshot()
	metricsRecorder := metrics.NewMetricsAsyncRecorder(1000, time.Second, ctx.Done())

	parallelism := opts.Parallelism
	if parallelism == 0 {
		parallelism = parallelize.DefaultParallelism
	}
	env.framework, err = frameworkruntime.NewFramework(ctx, frameworkplugins.NewInTreeRegistry(), profile,
		frameworkruntime.WithParallelism(parallelism),
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(env.informerFactory),
		frameworkruntime.WithSharedDRAManager(draManager),
		frameworkruntime.WithSnapshotSharedLister(env.snapshot),
		frameworkruntime.WithMetricsRecorder(metricsRecorder),
		frameworkruntime.WithWaitingPods(frameworkruntime.NewWaitingPodsMap()),
		frameworkruntime.WithPodsInPreBind(frameworkruntime.NewPodsInPreBindMap()),
		frameworkruntime.WithSharedCSIManager(nodevolumelimits.NewCSIManager(env.informerFactory.Storage().V1().CSINodes().Lister())),
		frameworkruntime.WithPodGroupManager(schedulerCache),
	)
	if err != nil {
		return nil, fmt.Errorf("building framework: %w", err)
	}

	// Plugins have registered their informers; start them all and wait.
	env.informerFactory.Start(ctx.Done())
	for typ, synced := range env.informerFactory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			return nil, fmt.Errorf("informer for %v did not sync", typ)
		}
	}
	if !cache.WaitForCacheSync(ctx.Done(), draSynced...) {
		return nil, fmt.Errorf("DRA manager did not sync")
	}

	// The scheduler cache holds nodes and assigned, non-terminal pods (the
	// informer's field selector drops terminal ones; prepare already has).
	for _, n := range o.nodes {
		schedulerCache.AddNode(logger, n)
	}
	for _, p := range o.pods {
		if p.Spec.NodeName == "" {
			continue
		}
		if err := schedulerCache.AddPod(logger, p); err != nil {
			return nil, fmt.Errorf("adding pod %s/%s to the scheduler cache: %w", p.Namespace, p.Name, err)
		}
	}
	if err := schedulerCache.UpdateSnapshot(logger, env.snapshot); err != nil {
		return nil, fmt.Errorf("updating snapshot: %w", err)
	}

	// The scheduling queue is the nominator. Pending pods this profile is
	// responsible for enter it; Add records their status.nominatedNodeName.
	// Pods without a nomination would only sit in activeQ, so they are left
	// out.
	queue := internalqueue.NewSchedulingQueue(env.framework.QueueSortFunc(), env.informerFactory,
		internalqueue.WithPodLister(podInformer.Lister()),
		internalqueue.WithMetricsRecorder(metricsRecorder),
	)
	for _, p := range o.pods {
		if p.Spec.NodeName == "" && p.Status.NominatedNodeName != "" && p.Spec.SchedulerName == env.framework.ProfileName() {
			queue.Add(ctx, p)
		}
	}
	env.framework.SetPodNominator(queue)
	env.framework.SetPodActivator(queue)

	if !slices.ContainsFunc(env.framework.ListPlugins().PostFilter.Enabled, func(p schedulerapi.Plugin) bool { return p.Name == defaultpreemption.Name }) {
		// The profile does not preempt.
		return env, nil
	}
	dpArgs, err := defaultPreemptionArgs(profile)
	if err != nil {
		return nil, err
	}
	env.preemption, err = defaultpreemption.New(ctx, dpArgs, env.framework, plfeature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate))
	if err != nil {
		return nil, fmt.Errorf("building DefaultPreemption: %w", err)
	}
	return env, nil
}

// schedulerConfig returns the configuration of doc as kube-scheduler reads
// it (decoded with defaults, validated), or the default configuration
// (v1 defaulting, then conversion to the internal config, as scheduler.New
// does with applyDefaultProfile) when doc is empty.
func schedulerConfig(doc []byte) (*schedulerapi.KubeSchedulerConfiguration, error) {
	var cfg schedulerapi.KubeSchedulerConfiguration
	if len(doc) == 0 {
		var versioned configv1.KubeSchedulerConfiguration
		scheme.Scheme.Default(&versioned)
		if err := scheme.Scheme.Convert(&versioned, &cfg, nil); err != nil {
			return nil, fmt.Errorf("converting default scheduler configuration: %w", err)
		}
	} else {
		obj, _, err := scheme.Codecs.UniversalDecoder().Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%w: decoding the scheduler configuration: %v", ErrInvalidInput, err)
		}
		c, ok := obj.(*schedulerapi.KubeSchedulerConfiguration)
		if !ok {
			return nil, fmt.Errorf("%w: the scheduler configuration is a %T", ErrInvalidInput, obj)
		}
		if err := validation.ValidateKubeSchedulerConfiguration(c); err != nil {
			return nil, fmt.Errorf("%w: invalid scheduler configuration: %v", ErrInvalidInput, err)
		}
		cfg = *c
	}
	if len(cfg.Profiles) == 0 {
		return nil, fmt.Errorf("the scheduler configuration has no profile")
	}
	return &cfg, nil
}

// defaultPreemptionArgs returns the profile's (defaulted, converted)
// DefaultPreemptionArgs; New validates them.
func defaultPreemptionArgs(profile *schedulerapi.KubeSchedulerProfile) (runtime.Object, error) {
	for _, pc := range profile.PluginConfig {
		if pc.Name == defaultpreemption.Name {
			return pc.Args, nil
		}
	}
	return nil, fmt.Errorf("default profile has no %s args", defaultpreemption.Name)
}

// shutdown stops everything the environment started and waits for its
// goroutines: cancel (which must cancel the context the environment was
// built with) first, then the tracker, the informers and the framework's
// metrics recorder.
func (env *environment) shutdown(cancel context.CancelFunc) {
	cancel()
	if env.tracker != nil {
		env.tracker.Stop()
	}
	if env.informerFactory != nil {
		env.informerFactory.Shutdown()
	}
	if env.framework != nil {
		frameworkruntime.WaitForShutdown(env.framework)
	}
}

// schedule runs one scheduling attempt for pod, mimicking
// schedule_one.go's schedulePod + findNodesThatFitPod and, when nothing fits,
// DefaultPreemption's PostFilter, but without cut-offs: every node is
// filtered. The dry run starts at offset and looks for numCandidates
// candidates (0: upstream's calculateNumCandidates; everyPotentialNode: all
// potential nodes).
func (env *environment) schedule(ctx context.Context, pod *v1.Pod, offset, numCandidates int32) (*Result, error) {
	res := &Result{
		FeasibleNodes: []string{},
		NodeStatuses:  map[string]Status{},
	}
	allNodes, err := env.snapshot.NodeInfos().List()
	if err != nil {
		return nil, err
	}
	// 1) No nodes: upstream gives up before PreFilter, with no PostFilter.
	if len(allNodes) == 0 {
		res.AbortReason = noNodesAvailable
		return res, nil
	}

	// 2) PreFilter on a fresh CycleState, set up as scheduleOnePod does.
	state := framework.NewCycleState()
	state.Write(framework.PodsToActivateKey, framework.NewPodsToActivate())
	nodeToStatus := framework.NewDefaultNodeToStatus()
	// feasible are the feasible nodes in node order.
	var feasible []fwk.NodeInfo
	preRes, s, unscheduledPlugins := env.framework.RunPreFilterPlugins(ctx, state, pod)
	if !s.IsSuccess() {
		if !s.IsRejected() {
			res.AbortReason = s.Message()
			return res, nil
		}
		// Every node gets the PreFilter status, as the absent-node status.
		st := toStatus(s)
		res.PreFilterStatus = &st
		nodeToStatus.SetAbsentNodesStatus(s)
	} else {
		// 3) Filter every node the PreFilterResult allows, in parallel as
		// findNodesThatPassFilters does; the others get the absent-node
		// status. Statuses are collected by node position and read in node
		// order, so the result does not depend on the parallelism.
		nodes := allNodes
		if !preRes.AllNodes() {
			nodes = make([]fwk.NodeInfo, 0, len(preRes.NodeNames))
			for _, ni := range allNodes {
				if preRes.NodeNames.Has(ni.Node().Name) {
					nodes = append(nodes, ni)
				}
			}
			nodeToStatus.SetAbsentNodesStatus(fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(unscheduledPlugins))))
		}
		statuses := make([]*fwk.Status, len(nodes))
		env.framework.Parallelizer().Until(ctx, len(nodes), func(i int) {
			statuses[i] = env.framework.RunFilterPluginsWithNominatedPods(ctx, state, pod, nodes[i])
		}, metrics.Filter)
		if err := ctx.Err(); err != nil {
			// Some nodes may not have been filtered.
			return nil, err
		}
		for i, ni := range nodes {
			switch status := statuses[i]; {
			case status.IsSuccess():
				res.FeasibleNodes = append(res.FeasibleNodes, ni.Node().Name)
				feasible = append(feasible, ni)
			case status.Code() == fwk.Error:
				// findNodesThatPassFilters aborts the cycle on an error;
				// report the first in node order.
				nodeToStatus.Set(ni.Node().Name, status)
				if res.AbortReason == "" {
					res.AbortReason = status.Message()
				}
			default:
				nodeToStatus.Set(ni.Node().Name, status)
			}
		}
	}
	slices.Sort(res.FeasibleNodes)
	for _, ni := range allNodes {
		name := ni.Node().Name
		if _, feasible := slices.BinarySearch(res.FeasibleNodes, name); !feasible {
			res.NodeStatuses[name] = toStatus(nodeToStatus.Get(name))
		}
	}
	if res.AbortReason != "" {
		return res, nil
	}
	if len(res.FeasibleNodes) > 0 {
		res.Fits = true
		env.score(ctx, state, pod, feasible, res)
		return res, nil
	}

	// 4) Nothing fits: DefaultPreemption's PostFilter (Evaluator.evaluate)
	// step by step, if the profile has it.
	if env.preemption == nil {
		res.PreemptionDisabled = true
		return res, nil
	}
	env.preempt(ctx, state, pod, nodeToStatus, len(allNodes), offset, numCandidates, res)
	if res.Chosen != "" && !slices.Contains(res.TiedBest, res.Chosen) {
		return nil, fmt.Errorf("upstream chose %q, which is not among the best candidates %v by the runner's re-implementation of pickOneNodeForPreemption", res.Chosen, res.TiedBest)
	}
	return res, nil
}

// score mirrors schedulePod for a pod that fits: its nominated node, when
// feasible, is taken unscored (findNodesThatFitPod tries it first); so is a
// single feasible node, and so is the first one when the profile has no score
// plugins (numFeasibleNodesToFind is then 1); otherwise prioritizeNodes
// (PreScore, then Score, weighted and summed) scores them all (the
// scenarios have fewer than 100 nodes, so every feasible node is scored),
// and the best are those of the highest total.
func (env *environment) score(ctx context.Context, state fwk.CycleState, pod *v1.Pod, feasible []fwk.NodeInfo, res *Result) {
	if nnn := pod.Status.NominatedNodeName; nnn != "" && slices.ContainsFunc(feasible, func(ni fwk.NodeInfo) bool { return ni.Node().Name == nnn }) {
		res.BestNodes = []string{nnn}
		return
	}
	if len(feasible) == 1 || !env.framework.HasScorePlugins() {
		res.BestNodes = []string{feasible[0].Node().Name}
		return
	}
	if s := env.framework.RunPreScorePlugins(ctx, state, pod, feasible); !s.IsSuccess() {
		res.ScoreError = s.AsError().Error()
		return
	}
	scores, s := env.framework.RunScorePlugins(ctx, state, pod, feasible)
	if !s.IsSuccess() {
		res.ScoreError = s.AsError().Error()
		return
	}
	res.Scores = map[string]int64{}
	best := int64(math.MinInt64)
	for _, sc := range scores {
		res.Scores[sc.Name] = sc.TotalScore
		best = max(best, sc.TotalScore)
	}
	for _, sc := range scores {
		if sc.TotalScore == best {
			res.BestNodes = append(res.BestNodes, sc.Name)
		}
	}
	slices.Sort(res.BestNodes)
}

// preempt mirrors preemption.Evaluator.evaluate (fetch the preemptor, check
// eligibility, dry-run the potential nodes from offset for numCandidates
// candidates, select a candidate) and fills the preemption fields of res.
func (env *environment) preempt(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeToStatus *framework.NodeToStatus, numAllNodes int, offset, numCandidates int32, res *Result) {
	res.PotentialNodes = []string{}
	res.Candidates = map[string]Candidate{}
	res.DryRunStatuses = map[string]Status{}
	res.TiedBest = []string{}
	ev := env.preemption.Evaluator
	fail := func(s *fwk.Status) {
		// DefaultPreemption.PostFilter prefixes every message.
		res.PostFilterMessage = "preemption: " + s.Message()
	}

	// 0) The evaluator re-reads the preemptor from the informer.
	pod, err := ev.PodLister.Pods(pod.Namespace).Get(pod.Name)
	if err != nil {
		fail(fwk.AsStatus(err))
		return
	}

	// 1) Eligibility.
	res.Eligible, res.IneligibleReason = ev.PodEligibleToPreemptOthers(ctx, pod, nodeToStatus.Get(pod.Status.NominatedNodeName))
	if !res.Eligible {
		fail(fwk.NewStatus(fwk.Unschedulable, res.IneligibleReason))
		return
	}

	// 2) Candidates: the Unschedulable nodes, dry-run from offset for
	// numCandidates candidates.
	nodeLister := env.framework.SnapshotSharedLister().NodeInfos()
	potential, err := nodeToStatus.NodesForStatusCode(nodeLister, fwk.Unschedulable)
	if err != nil {
		fail(fwk.AsStatus(err))
		return
	}
	if env.snapshotOrder {
		// A copy: potential may be the lister's own list.
		potential = slices.Clone(potential)
		if err := sortBySnapshotOrder(potential, nodeLister); err != nil {
			fail(fwk.AsStatus(err))
			return
		}
	}
	for _, ni := range potential {
		res.PotentialNodes = append(res.PotentialNodes, ni.Node().Name)
	}
	slices.Sort(res.PotentialNodes)

	var candidates []preemption.Candidate
	dryRunStatuses := framework.NewDefaultNodeToStatus()
	if len(potential) > 0 {
		pdbs, err := ev.PdbLister.List(labels.Everything())
		if err != nil {
			fail(fwk.AsStatus(err))
			return
		}
		// The lister returns budgets in map order; a pod matched by several
		// budgets is then charged in a random order. Fix the order (by
		// namespace and name, as reprieve does) so the answer is one of
		// upstream's possible answers and the same every run.
		slices.SortFunc(pdbs, func(a, b *policyv1.PodDisruptionBudget) int {
			return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
		})
		switch numCandidates {
		case everyPotentialNode:
			numCandidates = int32(len(potential))
		case 0:
			// Upstream's own calculateNumCandidates; the random offset
			// it returns with it is not used.
			_, numCandidates = ev.GetOffsetAndNumCandidates(int32(len(potential)))
		}
		cs, statuses, err := ev.DryRunPreemption(ctx, state, pod, potential, pdbs, offset, numCandidates)
		dryRunStatuses = statuses
		statuses.ForEachExplicitNode(func(name string, s *fwk.Status) {
			res.DryRunStatuses[name] = toStatus(s)
		})
		for _, c := range cs {
			v := c.Victims()
			cand := Candidate{Victims: []string{}, NumPDBViolations: v.NumPDBViolations}
			for _, p := range v.Pods {
				cand.Victims = append(cand.Victims, p.Namespace+"/"+p.Name)
			}
			res.Candidates[c.Name()] = cand
			candidates = append(candidates, c)
		}
		if err != nil && len(cs) == 0 {
			fail(fwk.AsStatus(err))
			return
		}
	}
	if len(candidates) == 0 {
		fitError := &framework.FitError{
			Pod:         pod,
			NumAllNodes: numAllNodes,
			Diagnosis:   framework.Diagnosis{NodeToStatus: dryRunStatuses},
		}
		fitError.Diagnosis.NodeToStatus.SetAbsentNodesStatus(fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "Preemption is not helpful for scheduling"))
		fail(fwk.NewStatus(fwk.Unschedulable, fitError.Error()))
		return
	}

	// 3) No extenders. 4) The best candidate, and every candidate tied with it.
	best := ev.SelectCandidate(ctx, candidates)
	now := metav1.Now()
	if best != nil {
		res.Chosen = best.Name()
	}
	res.TiedBest = tiedBest(candidates, now)
}

// sortBySnapshotOrder sorts nodes, a subset of lister's nodes, into the
// order lister lists them in.
func sortBySnapshotOrder(nodes []fwk.NodeInfo, lister fwk.NodeInfoLister) error {
	all, err := lister.List()
	if err != nil {
		return err
	}
	position := make(map[string]int, len(all))
	for i, ni := range all {
		position[ni.Node().Name] = i
	}
	slices.SortFunc(nodes, func(a, b fwk.NodeInfo) int {
		return cmp.Compare(position[a.Node().Name], position[b.Node().Name])
	})
	return nil
}

func toStatus(s *fwk.Status) Status {
	st := Status{Code: s.Code().String(), Plugin: s.Plugin()}
	if r := s.Reasons(); len(r) > 0 {
		st.Reasons = slices.Clone(r)
	}
	return st
}

func objectMeta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }
