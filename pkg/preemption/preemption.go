// Package preemption implements kube-scheduler v1.37.2's DefaultPreemption
// PostFilter as a pure function: given the filter cycle of a pod that fits
// nowhere, it decides whether the pod may preempt, dry-runs preemption on the
// nodes where removing pods could help, and picks the node and victims
// upstream would pick. Nothing is evicted; the caller actuates.
//
// With the GenericWorkload feature gate (Options.Features) victims are
// preemption units (Unit): single pods, or whole pod groups — the highest
// ancestor PodGroup or CompositePodGroup of a pod whose disruption mode is
// All, with its scheduled pods on every node — as upstream's
// GetVictimsOnNode builds them for a single-pod preemptor. With the gates
// off (upstream's default) the dry run is the single-pod one, unchanged.
package preemption

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/reprieve/reprieve/pkg/filter"
	"github.com/reprieve/reprieve/pkg/snapshot"
)

// Defaults of the DefaultPreemption plugin arguments.
const (
	DefaultMinCandidateNodesPercentage = 10
	DefaultMinCandidateNodesAbsolute   = 100
)

// Upstream's messages.
const (
	MsgPreemptionPolicyNever   = "not eligible due to preemptionPolicy=Never."
	MsgTerminatingOnNominated  = "not eligible due to a terminating pod on the nominated node."
	MsgNoVictims               = "No preemption victims found for incoming pod"
	MsgPreemptionNotHelpful    = "Preemption is not helpful for scheduling"
	msgExpectedAtLeastOneVictm = "expected at least one victim pod on node %q"
)

var statusNoVictims = filter.Status{Code: filter.UnschedulableAndUnresolvable, Reasons: []string{MsgNoVictims}}

// Options configures an evaluation.
type Options struct {
	// MinCandidateNodesPercentage and MinCandidateNodesAbsolute bound the
	// number of candidates the dry run looks for, as the plugin arguments
	// of the same names. Zero values mean the defaults (10 and 100); use
	// Exhaustive to visit every node.
	MinCandidateNodesPercentage int32
	MinCandidateNodesAbsolute   int32
	// Exhaustive dry-runs every potential node starting at offset 0 instead
	// of a random offset and upstream's candidate budget.
	Exhaustive bool
	// Offset, when not nil, replaces the random offset (modulo the number
	// of potential nodes).
	Offset *int
	// Seed seeds the random offset and the final tie-break.
	Seed uint64
	// Now is the evaluation time; pods without a start time count as
	// starting then. Zero means time.Now().
	Now time.Time
	// Parallelism bounds the goroutines of the dry run; 0 means GOMAXPROCS.
	Parallelism int
	// MoreImportant orders victims without the GenericWorkload gate; nil
	// means MoreImportant.
	MoreImportant MoreImportantFunc
	// MoreImportantUnit orders preemption units with the GenericWorkload
	// gate; nil means MoreImportantUnit.
	MoreImportantUnit MoreImportantUnitFunc
	// Features are the kube-scheduler feature gates that change
	// preemption; the zero value is upstream's default (all off).
	Features Features
}

// Candidate is a node where preemption would make the pod fit.
type Candidate struct {
	Node *snapshot.Node
	// Victims are the pods to evict, in decreasing importance, as upstream
	// returns them: with the GenericWorkload gate, the members of each unit
	// of Units in turn, on whichever node they run.
	Victims []*Victim
	// Units are the preemption units evicted, in decreasing importance;
	// nil without the GenericWorkload gate.
	Units []*Unit
	// NumPDBViolations is the number of victims whose eviction breaks a
	// PodDisruptionBudget.
	NumPDBViolations int
	// Broken maps a victim to the budget it breaks.
	Broken map[*Victim][]*policyv1.PodDisruptionBudget
}

// NodeStatus is why the dry run could not use a node.
type NodeStatus struct {
	Node   *snapshot.Node
	Status filter.Status
}

// Result is the outcome of an evaluation.
type Result struct {
	// Eligible reports whether the pod may preempt at all.
	Eligible bool
	// IneligibleReason is upstream's message when it may not.
	IneligibleReason string
	// PotentialNodes are the nodes whose filter status was Unschedulable,
	// in snapshot order: the only ones removing pods might fix.
	PotentialNodes []*snapshot.Node
	// Offset and NumCandidates are where the dry run started in
	// PotentialNodes and how many candidates it looked for.
	Offset, NumCandidates int
	// Visited are the potential nodes the dry run evaluated, in visit order.
	Visited []*snapshot.Node
	// Candidates are the nodes where preemption helps: those without PDB
	// violations first, then the others, each in visit order.
	Candidates []*Candidate
	// NodeStatuses holds the dry-run status of every visited node that is
	// not a candidate, in visit order.
	NodeStatuses []NodeStatus
	// Best are the candidates tied for best under upstream's ordered
	// criteria; upstream picks among them by map order.
	Best []*Candidate
	// Chosen is the candidate picked among Best (seeded).
	Chosen *Candidate
	// DecidedBy names the criterion that separated Chosen from the other
	// candidates ("" when there was a single candidate, "tie" when Best has
	// more than one).
	DecidedBy string
	// Err is set when the dry run failed on a node with an error status
	// and found no candidate.
	Err error

	// slabs hold the candidates and victims, for Release.
	slabs []slab
}

// Release gives the memory of the candidates and their victims back for
// later evaluations. The caller must not use the result afterwards; a
// result that is never released is simply garbage collected.
func (r *Result) Release() {
	if r.slabs != nil {
		putSlabs(r.slabs)
	}
	putNodeList(r.PotentialNodes)
	putNodeList(r.Visited)
	if cap(r.NodeStatuses) > 0 {
		l := r.NodeStatuses[:cap(r.NodeStatuses)]
		clear(l)
		nodeStatusLists.Put(&l)
	}
	*r = Result{}
}

// nodeStatusLists recycles the dry-run statuses of released results.
var nodeStatusLists sync.Pool

// nodeLists recycles the node lists of released results.
var nodeLists sync.Pool

// getNodeList returns an empty list of nodes with room for n.
func getNodeList(n int) []*snapshot.Node {
	if p, ok := nodeLists.Get().(*[]*snapshot.Node); ok && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]*snapshot.Node, 0, n)
}

func putNodeList(l []*snapshot.Node) {
	if cap(l) > 0 {
		l = l[:cap(l)]
		clear(l)
		nodeLists.Put(&l)
	}
}

// Evaluate runs DefaultPreemption for the pod of cycle c, whose filtering on
// every node gave fr. It must only be called when the pod fits nowhere.
func Evaluate(c *filter.Cycle, fr filter.Result, opts Options) *Result {
	snap := c.Snapshot()
	pod := c.Pod()
	res := &Result{}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	customOrder := opts.MoreImportant != nil
	if opts.MoreImportant == nil {
		opts.MoreImportant = MoreImportant
	}
	if opts.MoreImportantUnit == nil {
		opts.MoreImportantUnit = MoreImportantUnit
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x7265707269657665))

	// 1) Ensure the preemptor is eligible to preempt other pods.
	if ok, reason := eligible(snap, pod, fr, opts.Features); !ok {
		res.IneligibleReason = reason
		return res
	}
	res.Eligible = true

	// 2) The nodes where removing pods may help: filter status Unschedulable.
	numPotential := 0
	for i := range snap.Nodes {
		if fr.Statuses[i].Code == filter.Unschedulable {
			numPotential++
		}
	}
	res.PotentialNodes = getNodeList(numPotential)
	for i, n := range snap.Nodes {
		if fr.Statuses[i].Code == filter.Unschedulable {
			res.PotentialNodes = append(res.PotentialNodes, n)
		}
	}
	if len(res.PotentialNodes) == 0 {
		return res
	}

	// 3) Dry-run preemption on the candidate budget, from a random offset.
	n := len(res.PotentialNodes)
	if opts.Exhaustive {
		res.NumCandidates = n
	} else {
		res.Offset = rng.IntN(n)
		if opts.Offset != nil {
			res.Offset = ((*opts.Offset % n) + n) % n
		}
		res.NumCandidates = numCandidates(n, opts)
	}
	dr := newDryRun(c, opts)
	dr.customOrder = customOrder
	res.slabs = dr.slabs
	dr.run(res)

	// 4) Pick the best candidate.
	pick(res, opts, rng)
	return res
}

// eligible is PodEligibleToPreemptOthers. With the GenericWorkload gate a
// pod on the nominated node counts with its group's priority (upstream's
// NewPodVictim with the snapshot's group listers).
func eligible(snap *snapshot.Snapshot, pod *snapshot.Pod, fr filter.Result, f Features) (bool, string) {
	if pod.PreemptionPolicy() == v1.PreemptNever {
		return false, MsgPreemptionPolicyNever
	}
	nnn := pod.Obj.Status.NominatedNodeName
	if nnn == "" {
		return true, ""
	}
	node := snap.Node(nnn)
	if node == nil || fr.Statuses[node.Index].Code == filter.UnschedulableAndUnresolvable {
		// A nominated node that no longer exists, or where nothing can
		// help any more, lets the pod preempt again.
		return true, ""
	}
	h := hierarchy{snap: snap, composite: f.composite()}
	for _, p := range node.Pods {
		prio := p.Priority
		if f.GenericWorkload {
			prio = h.priority(p)
		}
		if prio < pod.Priority && p.TerminatingByPreemption() {
			return false, MsgTerminatingOnNominated
		}
	}
	return true, ""
}

// numCandidates is calculateNumCandidates: a percentage of the potential
// nodes, at least an absolute number, at most all of them.
func numCandidates(numNodes int, opts Options) int {
	pct, abs := opts.MinCandidateNodesPercentage, opts.MinCandidateNodesAbsolute
	if pct == 0 && abs == 0 {
		pct, abs = DefaultMinCandidateNodesPercentage, DefaultMinCandidateNodesAbsolute
	}
	n := int(int32(numNodes) * pct / 100)
	n = max(n, int(abs))
	return min(n, numNodes)
}

// nodeOutcome is the dry-run result on one node.
type nodeOutcome struct {
	cand   *Candidate
	status filter.Status
}

// outcomeBuffers recycles the outcome slices of dry-run batches, which a
// scheduler otherwise allocates anew for every preemption attempt.
var outcomeBuffers sync.Pool

func outcomeBuffer(n int) []nodeOutcome {
	if b, ok := outcomeBuffers.Get().(*[]nodeOutcome); ok && cap(*b) >= n {
		return (*b)[:n]
	}
	return make([]nodeOutcome, n)
}

// releaseOutcomes gives a batch's outcomes back once they are consumed.
func releaseOutcomes(o []nodeOutcome) {
	clear(o)
	outcomeBuffers.Put(&o)
}

type dryRun struct {
	c        *filter.Cycle
	opts     Options
	budgets  []budget
	nowNanos int64
	workers  int
	// groups is set with the GenericWorkload gate.
	groups *groupIndex
	// byResources is set when the dry run may reason on resource sums
	// alone (see filter.Cycle.ResourcesOnly); req is then the request.
	byResources bool
	req         snapshot.Resources
	// customOrder is set when Options.MoreImportant replaces MoreImportant,
	// so that nodes' importance orders do not apply.
	customOrder bool
	// slabs are the workers' allocators, one each.
	slabs []slab
}

func newDryRun(c *filter.Cycle, opts Options) *dryRun {
	w := opts.Parallelism
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	d := &dryRun{c: c, opts: opts, budgets: prepareBudgets(c.Snapshot().PDBs), nowNanos: opts.Now.UnixNano(), workers: w, slabs: getSlabs(w)}
	if opts.Features.GenericWorkload {
		d.groups = newGroupIndex(c.Snapshot(), opts.Features)
	}
	d.req = c.Request()
	d.byResources = c.ResourcesOnly() && len(d.req.Scalars) == 0
	return d
}

// run visits potential nodes from the offset in order, exactly as a
// sequential upstream dry run would: candidates without PDB violations and
// with violations are collected separately, each list capped at
// NumCandidates, and the walk stops once there is a non-violating candidate
// and the two lists together reach NumCandidates. Nodes are evaluated in
// parallel in chunks; the result does not depend on the parallelism.
func (d *dryRun) run(res *Result) {
	nodes := res.PotentialNodes
	n, want := len(nodes), res.NumCandidates
	var nonViolating, violating []*Candidate
	res.Visited = getNodeList(min(n, want))
	if p, ok := nodeStatusLists.Get().(*[]NodeStatus); ok {
		res.NodeStatuses = (*p)[:0]
	}
	done := false
	// The walk cannot stop before it has visited want nodes, so the first
	// batch is that many; later batches are what is still missing.
	batch := max(min(want, n), 1)
	for start := 0; start < n && !done; {
		end := min(start+batch, n)
		outcomes := d.evaluate(nodes, res.Offset, start, end)
		for i := start; i < end; i++ {
			node := nodes[(res.Offset+i)%n]
			res.Visited = append(res.Visited, node)
			o := outcomes[i-start]
			if o.cand == nil {
				res.NodeStatuses = append(res.NodeStatuses, NodeStatus{Node: node, Status: o.status})
				if o.status.Code == filter.Error && res.Err == nil {
					res.Err = fmt.Errorf("%s", o.status.Message())
				}
				continue
			}
			if o.cand.NumPDBViolations == 0 {
				if len(nonViolating) < want {
					nonViolating = append(nonViolating, o.cand)
				}
			} else if len(violating) < want {
				violating = append(violating, o.cand)
			}
			if len(nonViolating) > 0 && len(nonViolating)+len(violating) >= want {
				done = true
				break
			}
		}
		releaseOutcomes(outcomes)
		start = end
		batch = max(want-len(nonViolating)-len(violating), 4*d.workers, 32)
	}
	res.Candidates = append(nonViolating, violating...)
	if len(res.Candidates) > 0 {
		res.Err = nil
	}
}

// evaluate dry-runs nodes[offset+start : offset+end] (wrapping around) on
// d.workers goroutines, the caller being one of them.
func (d *dryRun) evaluate(nodes []*snapshot.Node, offset, start, end int) []nodeOutcome {
	count := end - start
	out := outcomeBuffer(count)
	if d.workers <= 1 || count < 8 {
		for i := range count {
			out[i] = d.selectVictims(&d.slabs[0], nodes[(offset+start+i)%len(nodes)])
		}
		return out
	}
	var next atomic.Int64
	work := func(s *slab) {
		for {
			i := int(next.Add(1)) - 1
			if i >= count {
				return
			}
			out[i] = d.selectVictims(s, nodes[(offset+start+i)%len(nodes)])
		}
	}
	var wg sync.WaitGroup
	for w := range min(d.workers, count) - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(&d.slabs[w+1])
		}()
	}
	work(&d.slabs[0])
	wg.Wait()
	return out
}

// maxInsertion is the length up to which the standard library's
// pattern-defeating quicksort (upstream's sort.Slice, and sortVictims) runs
// a plain insertion sort, which is stable.
const maxInsertion = 12

// potentialVictims returns the node's pods of lower priority than the
// preemptor: as ranked pods in the order sortVictims would give them (with
// the node's other pods, kept), or as victims in the node's order. Ranked
// pods are there when victims are ranked by MoreImportant and every pod of
// the node has started: the node's importance order has them as a suffix,
// which any sort leaves as it is when no two of them are equal or there are
// so few that the sort is stable, and which is sorted anew otherwise.
func (d *dryRun) potentialVictims(s *slab, node *snapshot.Node) (ranked, kept []snapshot.RankedPod, victims []*Victim) {
	prio := d.c.Pod().Priority
	if !d.customOrder {
		if o := node.ImportanceOrder(); o.AllStarted {
			i := o.Below(prio)
			if n := len(o.Ranked) - i; n == 0 {
				return nil, nil, nil
			} else if n <= maxInsertion || o.LastTie <= i {
				return o.Ranked[i:], o.Ranked[:i], nil
			}
			// Ties a sort may reorder: sort the pods as sortVictims
			// would sort their victims.
			return o.SortedSuffix(i, sortRanked), o.Ranked[:i], nil
		}
	}
	n := 0
	for _, p := range node.Pods {
		if p.Priority < prio {
			n++
		}
	}
	if n == 0 {
		return nil, nil, nil
	}
	victims = s.victims(n)
	k := 0
	for i, p := range node.Pods {
		if p.Priority < prio {
			// A pod that has not started counts as starting now, later
			// pods of the node a nanosecond later each.
			v := Victim{Pod: p, Priority: p.Priority, Start: d.nowNanos + int64(i)}
			if ns, ok := p.StartNanos(); ok {
				v.Start = ns
			}
			*victims[k] = v
			k++
		}
	}
	return nil, nil, victims
}

// selectVictims is SelectVictimsOnNode: remove every lower-priority pod,
// check the pod fits, then reprieve victims in importance order (those whose
// eviction would break a budget first) as long as the pod still fits.
func (d *dryRun) selectVictims(s *slab, node *snapshot.Node) nodeOutcome {
	if d.groups != nil {
		return d.selectUnits(s, node)
	}
	c := d.c
	ranked, kept, potential := d.potentialVictims(s, node)
	if len(ranked) == 0 && len(potential) == 0 {
		return nodeOutcome{status: statusNoVictims}
	}
	if d.byResources && ranked != nil && len(d.budgets) == 0 {
		return d.selectRankedByResources(s, node, ranked, kept, c.NominatedPods(node))
	}
	sorted := ranked != nil
	if sorted {
		potential = s.victimsOf(ranked)
	}
	if d.byResources {
		return d.selectByResources(s, node, potential, sorted, c.NominatedPods(node))
	}
	stv, nvv := c.StateOf(), c.NodeViewOf(node)
	st, nv := &stv, &nvv
	for _, v := range potential {
		c.RemovePod(st, nv, v.Pod, node)
	}
	if s := c.FilterWithNominatedPods(st, nv, true); !s.IsSuccess() {
		return nodeOutcome{status: s}
	}
	if !sorted {
		sortVictims(potential, d.opts.MoreImportant)
	}
	return d.reprieveAll(s, node, potential, func(v *Victim) bool {
		c.AddPod(st, nv, v.Pod, node)
		if c.FilterWithNominatedPods(st, nv, true).IsSuccess() {
			return true
		}
		c.RemovePod(st, nv, v.Pod, node)
		return false
	})
}

// reprieveAll walks the potential victims, sorted, those whose eviction
// would break a budget first, and reprieves each that keep allows: keep
// adds the victim back and reports whether the pod still fits, undoing the
// addition when it does not. The others are the node's victims, in
// importance order.
func (d *dryRun) reprieveAll(s *slab, node *snapshot.Node, potential []*Victim, keep func(*Victim) bool) nodeOutcome {
	violating, nonViolating, broken := splitByPDB(potential, d.budgets)
	// Victims are appended no faster than potential victims are read, so
	// they may overwrite them.
	victims := potential[:0]
	numViolating := 0
	for _, v := range violating {
		if !keep(v) {
			victims = append(victims, v)
			numViolating++
		}
	}
	for _, v := range nonViolating {
		if !keep(v) {
			victims = append(victims, v)
		}
	}
	if len(violating) != 0 && len(nonViolating) != 0 {
		sortVictims(victims, d.opts.MoreImportant)
	}
	return outcome(s, node, victims, numViolating, broken)
}

// outcome makes a node's candidate of its victims, keeping the budgets each
// breaks; no victim is upstream's "expected at least one victim" error.
func outcome(s *slab, node *snapshot.Node, victims []*Victim, numViolating int, broken map[*Victim][]*policyv1.PodDisruptionBudget) nodeOutcome {
	if len(victims) == 0 {
		return nodeOutcome{status: filter.Status{Code: filter.Error, Reasons: []string{fmt.Sprintf(msgExpectedAtLeastOneVictm, node.Name)}}}
	}
	cand := s.candidate()
	*cand = Candidate{Node: node, Victims: victims, NumPDBViolations: numViolating}
	for _, v := range victims {
		if b, ok := broken[v]; ok {
			if cand.Broken == nil {
				cand.Broken = map[*Victim][]*policyv1.PodDisruptionBudget{}
			}
			cand.Broken[v] = b
		}
	}
	return nodeOutcome{cand: cand}
}

// addPods adds pods' requests to u.
func addPods(u *snapshot.Usage, pods []*snapshot.Pod) {
	for _, p := range pods {
		r := &p.Requests
		u.Add(r.MilliCPU, r.Memory, r.EphemeralStorage, 1)
	}
}

// misfit is the outcome on a node where the pod does not fit even without
// every potential victim: the first pass of the filters with nominated pods
// fails this way.
func (d *dryRun) misfit(node *snapshot.Node, u snapshot.Usage) nodeOutcome {
	nv := filter.NodeView{Node: node, NumPods: int(u.Pods), Requested: snapshot.Resources{MilliCPU: u.MilliCPU, Memory: u.Memory, EphemeralStorage: u.EphemeralStorage}}
	return nodeOutcome{status: d.c.FilterResources(&nv)}
}

// selectByResources is selectVictims when NodeResourcesFit is the only
// filter that depends on the node's pods: the same walk, with the filter
// reduced to arithmetic on the node's sums. Pods nominated to the node that
// the preemptor must yield to count as running: with resources alone the
// second pass of FilterWithNominatedPods (without them) cannot fail when
// the first passed.
func (d *dryRun) selectByResources(s *slab, node *snapshot.Node, potential []*Victim, sorted bool, nominated []*snapshot.Pod) nodeOutcome {
	req, alloc := &d.req, node.Allocatable.Usage(node.Allocatable.AllowedPods)
	u := node.Requested.Usage(int64(len(node.Pods)))
	addPods(&u, nominated)
	for _, v := range potential {
		r := &v.Pod.Requests
		u.Add(r.MilliCPU, r.Memory, r.EphemeralStorage, -1)
	}
	if !u.Fits(req, &alloc) {
		return d.misfit(node, u)
	}
	if !sorted {
		sortVictims(potential, d.opts.MoreImportant)
	}
	return d.reprieveAll(s, node, potential, func(v *Victim) bool {
		r := &v.Pod.Requests
		u.Add(r.MilliCPU, r.Memory, r.EphemeralStorage, 1)
		if u.Fits(req, &alloc) {
			return true
		}
		u.Add(r.MilliCPU, r.Memory, r.EphemeralStorage, -1)
		return false
	})
}

// selectRankedByResources is selectByResources for ranked pods, already in
// victim order, when no disruption budget exists: nothing is violating, so
// the walk is one pass and only the pods it evicts become victims. It reads
// the ranked pods only, not the pods themselves.
func (d *dryRun) selectRankedByResources(s *slab, node *snapshot.Node, potential, kept []snapshot.RankedPod, nominated []*snapshot.Pod) nodeOutcome {
	req, alloc := &d.req, node.Allocatable.Usage(node.Allocatable.AllowedPods)
	// What the node's pods request without the potential victims, summed
	// over the shorter of the two lists.
	var u snapshot.Usage
	if len(kept) <= len(potential) {
		for i := range kept {
			r := &kept[i]
			u.Add(r.MilliCPU, r.Memory, r.EphemeralStorage, 1)
		}
	} else {
		u = node.Requested.Usage(int64(len(node.Pods)))
		for i := range potential {
			r := &potential[i]
			u.Add(r.MilliCPU, r.Memory, r.EphemeralStorage, -1)
		}
	}
	addPods(&u, nominated)
	if !u.Fits(req, &alloc) {
		return d.misfit(node, u)
	}
	var buf [64]int32
	evicted := buf[:0] // indexes into potential
	for i := range potential {
		r := &potential[i]
		u.Add(r.MilliCPU, r.Memory, r.EphemeralStorage, 1)
		if !u.Fits(req, &alloc) {
			u.Add(r.MilliCPU, r.Memory, r.EphemeralStorage, -1)
			evicted = append(evicted, int32(i))
		}
	}
	victims := s.victims(len(evicted))
	for k, i := range evicted {
		r := &potential[i]
		*victims[k] = Victim{Pod: r.Pod, Priority: r.Priority, Start: r.Start}
	}
	return outcome(s, node, victims, 0, nil)
}

// selectUnits is SelectVictimsOnNode with the GenericWorkload gate: the
// same walk over preemption units instead of pods. Removing or re-adding a
// unit updates every node it touches: the candidate node's view (the only
// node the preemptor is filtered on) and the plugin state of the others, as
// upstream's PreFilterExtensions see them.
func (d *dryRun) selectUnits(s *slab, node *snapshot.Node) nodeOutcome {
	c := d.c
	pod := c.Pod()
	// 1) The units on the node, and among them those below the preemptor's
	// priority (upstream also asks IsEligiblePod on every node a unit
	// touches; the default allows all).
	potential, err := d.groups.unitsOn(node, pod.Priority, d.nowNanos)
	if err != nil {
		return nodeOutcome{status: filter.Status{Code: filter.Error, Reasons: []string{err.Error()}}}
	}
	if len(potential) == 0 {
		return nodeOutcome{status: statusNoVictims}
	}
	stv, nvv := c.StateOf(), c.NodeViewOf(node)
	st, nv := &stv, &nvv
	st.ModelCriticalPaths()
	remove := func(u *Unit) {
		for i, m := range u.Members {
			c.RemovePod(st, nv, m.Pod, u.nodes[i])
		}
	}
	add := func(u *Unit) {
		for i, m := range u.Members {
			c.AddPod(st, nv, m.Pod, u.nodes[i])
		}
	}
	// 2) Remove them all; the preemptor must fit then.
	for _, u := range potential {
		remove(u)
	}
	if s := c.FilterWithNominatedPods(st, nv, true); !s.IsSuccess() {
		return nodeOutcome{status: s}
	}
	// 3) Reprieve units in importance order, those that would break a
	// budget first.
	sortUnits(potential, d.opts.MoreImportantUnit)
	violating, nonViolating, broken := splitUnitsByPDB(potential, d.budgets)
	var victims []*Unit
	reprieve := func(u *Unit) bool {
		add(u)
		if c.FilterWithNominatedPods(st, nv, true).IsSuccess() {
			return true
		}
		remove(u)
		victims = append(victims, u)
		return false
	}
	numViolating := 0
	for _, v := range violating {
		if !reprieve(v.unit) {
			numViolating += v.violateCount
		}
	}
	for _, u := range nonViolating {
		reprieve(u)
	}
	if len(violating) != 0 && len(nonViolating) != 0 {
		sortUnits(victims, d.opts.MoreImportantUnit)
	}
	if len(victims) == 0 {
		return nodeOutcome{status: filter.Status{Code: filter.Error, Reasons: []string{fmt.Sprintf(msgExpectedAtLeastOneVictm, node.Name)}}}
	}
	cand := s.candidate()
	*cand = Candidate{Node: node, Units: victims, NumPDBViolations: numViolating}
	for _, u := range victims {
		for _, m := range u.Members {
			cand.Victims = append(cand.Victims, m)
			if b, ok := broken[m]; ok {
				if cand.Broken == nil {
					cand.Broken = map[*Victim][]*policyv1.PodDisruptionBudget{}
				}
				cand.Broken[m] = b
			}
		}
	}
	return nodeOutcome{cand: cand}
}

// DisruptedWorkloads counts the candidate's units that affect pod groups
// (upstream's numPodGroupDisruptions): groups evicted whole and pods of pod
// groups evicted on their own. It is 0 without the GenericWorkload gate.
func (c *Candidate) DisruptedWorkloads() int {
	n := 0
	for _, u := range c.Units {
		if u.IsGroup() {
			n++
		}
	}
	return n
}

// Criteria are upstream's ordered node-choice criteria, each a score where
// higher is better.
var Criteria = []struct {
	Name  string
	Score func(c *Candidate, nowNanos int64) int64
}{
	{"fewest PDB violations", func(c *Candidate, _ int64) int64 { return -int64(c.NumPDBViolations) }},
	{"lowest highest-priority victim", func(c *Candidate, _ int64) int64 { return -int64(c.Victims[0].Pod.Priority) }},
	{"smallest sum of victim priorities", func(c *Candidate, _ int64) int64 {
		var sum int64
		for _, v := range c.Victims {
			sum += int64(v.Pod.Priority) + int64(math.MaxInt32+1)
		}
		return -sum
	}},
	{"fewest victims", func(c *Candidate, _ int64) int64 { return -int64(len(c.Victims)) }},
	{"latest start of the highest-priority victims", func(c *Candidate, now int64) int64 { return EarliestStart(c, now) }},
}

// EarliestStart is the earliest start time, in Unix nanoseconds, among the
// candidate's victims of the highest priority (a pod that has not started
// counts as starting at now).
func EarliestStart(c *Candidate, now int64) int64 {
	start := func(p *snapshot.Pod) int64 {
		if ns, ok := p.StartNanos(); ok {
			return ns
		}
		return now
	}
	maxPrio := c.Victims[0].Pod.Priority
	earliest := start(c.Victims[0].Pod)
	for _, v := range c.Victims {
		switch p := v.Pod.Priority; {
		case p == maxPrio:
			earliest = min(earliest, start(v.Pod))
		case p > maxPrio:
			maxPrio, earliest = p, start(v.Pod)
		}
	}
	return earliest
}

// pick is SelectCandidate with pickOneNodeForPreemption's default criteria.
func pick(res *Result, opts Options, rng *rand.Rand) {
	switch len(res.Candidates) {
	case 0:
		return
	case 1:
		res.Best, res.Chosen = res.Candidates, res.Candidates[0]
		return
	}
	now := opts.Now.UnixNano()
	best := res.Candidates
	for _, crit := range Criteria {
		var next []*Candidate
		top := int64(math.MinInt64)
		for _, c := range best {
			s := crit.Score(c, now)
			if s > top {
				top, next = s, next[:0]
			}
			if s == top {
				next = append(next, c)
			}
		}
		best = next
		if len(best) == 1 {
			res.DecidedBy = crit.Name
			break
		}
	}
	if len(best) > 1 {
		res.DecidedBy = "tie"
	}
	res.Best = best
	res.Chosen = best[rng.IntN(len(best))]
}

// PostFilterMessage is the message DefaultPreemption's PostFilter status
// carries, prefixed "preemption: " as upstream does; the scheduler appends
// it to the FailedScheduling message. numNodes counts every node.
func (r *Result) PostFilterMessage(numNodes int) string {
	switch {
	case !r.Eligible:
		return "preemption: " + r.IneligibleReason
	case r.Chosen != nil:
		return fmt.Sprintf("preemption: found a potential placement for pod on node %s, preempting %d victims", r.Chosen.Node.Name, len(r.Chosen.Victims))
	case r.Err != nil:
		return "preemption: " + r.Err.Error()
	}
	// No candidate: a FitError over the dry run's statuses, every other
	// node "Preemption is not helpful for scheduling".
	statuses := make([]filter.Status, 0, numNodes)
	for _, s := range r.NodeStatuses {
		statuses = append(statuses, s.Status)
	}
	notHelpful := filter.Status{Code: filter.UnschedulableAndUnresolvable, Reasons: []string{MsgPreemptionNotHelpful}}
	for len(statuses) < numNodes {
		statuses = append(statuses, notHelpful)
	}
	return "preemption: " + filter.FitErrorMessage(numNodes, filter.Status{}, statuses)
}
