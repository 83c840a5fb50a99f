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
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
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
	// Now is the evaluation time, required: pods without a start time
	// count as starting then.
	Now time.Time
	// Features are the kube-scheduler feature gates that change
	// preemption; the zero value is upstream's default (all off).
	Features Features
	// Policy chooses the victims; the zero value is Upstream.
	Policy Policy
	// Counter, when not nil, counts the dry run's Filter plugin calls.
	Counter *Counter

	// placementWork replaces MaxPlacementWork, and beyondSteps
	// MaxBeyondSteps, when positive (tests).
	placementWork, beyondSteps int
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
	// Proven reports, under a policy other than Upstream, that the search
	// for the node's victims finished: no better set exists among all the
	// subsets of the node's potential victims. Otherwise it stopped at a
	// work bound with the best set found (under Reschedulable also: the
	// placement work bound cut its count).
	Proven bool
	// Placements, under Reschedulable, say for each victim (in the order
	// of Victims) where it could run right after the eviction (the reasons
	// of those that could not are filled for Result.Chosen and
	// Result.Upstream only), and Unplaceable counts the victims that could
	// run nowhere else. Both are exact for Result.Chosen and
	// Result.Upstream; for another candidate the count may be an upper
	// bound (victims not tried count as unplaceable), when it stopped
	// because the set could no longer win or at the work bound.
	Placements  []Placement
	Unplaceable int

	// score caches Score for scoredAt.
	score    Score
	scored   bool
	scoredAt int64
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

	// Policy is the victim policy that decided. Under a policy other than
	// Upstream, Upstream is the candidate upstream's dry run would have
	// chosen (nil when it had none), for comparison.
	Policy   Policy
	Upstream *Candidate
	// Searched are, under a policy other than Upstream, the potential
	// nodes it searched for victim sets, in search order: every one up to
	// MaxPolicyNodes, else those the dry run visited. Beyond are those
	// among them where upstream's dry run found no room with every
	// lower-priority pod removed, and the policy searched the subsets of
	// those pods, since fit there is not monotone in the pods removed.
	// CutOff are those where a work bound (MaxSearchSteps, MaxBeyondSteps,
	// Reschedulable's placement work) stopped the search before it proved
	// its answer: a candidate there is not Proven, and a node without one
	// may have a set the search did not reach.
	Searched, Beyond, CutOff []*snapshot.Node
}

// ErrNoClock is returned when Options.Now is not set: the engine never
// reads the clock.
var ErrNoClock = errors.New("preemption: Options.Now is required")

// Evaluator holds the memory of preemption dry runs and hands it out
// again from one evaluation to the next: a scheduler keeps one, so that its
// preemption attempts allocate little. The zero value is ready. An
// Evaluator must not be used by two goroutines at once, and the Result of
// an evaluation lives in its memory: it is valid until the next call of
// Evaluate on the same Evaluator.
type Evaluator struct {
	workers                 []worker
	potential, visited      []*snapshot.Node
	statuses                []NodeStatus
	outcomes                []nodeOutcome
	nonViolating, violating []*Candidate
	pick                    pickBuffers
	result                  Result
}

// worker is the scratch memory of one goroutine of a dry run.
type worker struct {
	slab slab
	// order and evicted are unit indexes of the node being walked.
	order, evicted []int32
	// allowed are the budgets' disruptions left while splitting by PDB.
	allowed []int32
	// members, memberNodes and spans hold the node's units when they are
	// not a suffix of its importance order.
	members     []snapshot.RankedPod
	memberNodes []*snapshot.Node
	spans       []span
	seen        map[*snapshot.Group]bool
	// units are the potential victims of the node being walked; overlay
	// and sums are the two fit checkers, one of which serves a walk; why
	// is the walk's first rejection.
	units   unitList
	overlay overlayFit
	sums    sumsFit
	why     filter.Status
	// search is a victim policy's search on the node, its memory reused.
	search search
}

// indexes returns *buf resized to n, holding 0..n-1.
func (w *worker) indexes(buf *[]int32, n int) []int32 {
	if cap(*buf) < n {
		*buf = make([]int32, n, 2*n)
	}
	s := (*buf)[:n]
	for i := range s {
		s[i] = int32(i)
	}
	return s
}

// Evaluate runs DefaultPreemption for the pod of cycle c, whose filtering on
// every node gave fr, with memory of its own. It must only be called when
// the pod fits nowhere.
func Evaluate(c *filter.Cycle, fr filter.Result, opts Options) (*Result, error) {
	var e Evaluator
	return e.Evaluate(c, fr, opts)
}

// Evaluate runs DefaultPreemption for the pod of cycle c, whose filtering on
// every node gave fr, in e's memory: the result is valid until the next
// call. It must only be called when the pod fits nowhere. The dry run uses
// the cycle's parallelism.
func (e *Evaluator) Evaluate(c *filter.Cycle, fr filter.Result, opts Options) (*Result, error) {
	if opts.Now.IsZero() {
		return nil, ErrNoClock
	}
	snap := c.Snapshot()
	pod := c.Pod()
	e.result = Result{}
	res := &e.result
	rng := rand.New(rand.NewPCG(opts.Seed, 0x7265707269657665))

	// 1) Ensure the preemptor is eligible to preempt other pods.
	if ok, reason := eligible(snap, pod, fr, opts.Features); !ok {
		res.IneligibleReason = reason
		return res, nil
	}
	res.Eligible = true

	// 2) The nodes where removing pods may help: filter status Unschedulable.
	// They are counted first, so that a fresh evaluator's list is made
	// once at its size.
	numPotential := 0
	for i := range fr.Statuses {
		if fr.Statuses[i].Code == filter.Unschedulable {
			numPotential++
		}
	}
	res.PotentialNodes = reserve(&e.potential, numPotential)
	for i, n := range snap.Nodes {
		if fr.Statuses[i].Code == filter.Unschedulable {
			res.PotentialNodes = append(res.PotentialNodes, n)
		}
	}
	e.potential = res.PotentialNodes
	if len(res.PotentialNodes) == 0 {
		return res, nil
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
	d := e.newDryRun(c, opts)
	defer e.trim()
	d.run(res)
	d.countVisited(res.Visited)

	// 4) Pick the best candidate.
	pick(res, d.scoreNow(), rng, &e.pick)
	res.Policy = Upstream
	if opts.Policy != "" && opts.Policy != Upstream {
		// 5) Beyond upstream: the policy's victims, from upstream's.
		res.Policy, res.Upstream = opts.Policy, res.Chosen
		res.Best, res.Chosen, res.DecidedBy = nil, nil, ""
		d.improve(res, opts.Policy)
		pick(res, d.scoreNow(), rng, &e.pick)
		if res.Chosen != nil {
			res.Err = nil
			if d.placer != nil {
				d.placer.explain(res.Chosen)
			}
		}
	}
	return res, nil
}

// eligible is PodEligibleToPreemptOthers. With the GenericWorkload gate a
// pod on the nominated node counts with its group's priority (upstream's
// NewPodVictim with the snapshot's group listers).
func eligible(snap *snapshot.Snapshot, pod *snapshot.Pod, fr filter.Result, f Features) (bool, string) {
	if pod.PreemptionPolicy() == v1.PreemptNever {
		return false, MsgPreemptionPolicyNever
	}
	nnn := pod.NominatedNodeName()
	if nnn == "" {
		return true, ""
	}
	node := snap.Node(nnn)
	if node == nil || fr.Statuses[node.Index].Code == filter.UnschedulableAndUnresolvable {
		// A nominated node that no longer exists, or where nothing can
		// help any more, lets the pod preempt again.
		return true, ""
	}
	h := hierarchy{snap: snap, composite: f.Composite()}
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

// reserve returns *buf emptied, with room for n elements: reallocated
// (and kept in *buf) only when it has less.
func reserve[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, 0, n)
	}
	return (*buf)[:0]
}

// nodeOutcome is the dry-run result on one node.
type nodeOutcome struct {
	cand   *Candidate
	status filter.Status
}

// dryRun is one evaluation's dry run over the potential nodes.
type dryRun struct {
	c        *filter.Cycle
	e        *Evaluator
	budgets  []budget
	nowNanos int64
	// sem are the release's switches (Options.Features.Semantics).
	sem profile.Semantics
	// groups is set with the GenericWorkload gate.
	groups *groupIndex
	// byResources is set when the walk may check the fit on resource
	// sums alone (see sumsFit); req is then the request.
	byResources bool
	req         snapshot.Resources
	// placer, under Reschedulable, tries victims elsewhere, within
	// placementWork.
	placer                     *placer
	placementWork, beyondSteps int
	// counter counts the walk's Filter calls until upstream's dry run ends.
	counter *Counter
	// batch is the nodes being dry-run in parallel.
	batch batch
}

// unstartedStart is the start time of the tick-th pod without one that the
// walk ranks: the evaluation time a nanosecond later each, as upstream's
// time.Now() (v1.37), or the latest representable time
// (Semantics.UnstartedVictimsNewest, v1.38).
func (d *dryRun) unstartedStart(tick int64) int64 {
	if d.sem.UnstartedVictimsNewest {
		return math.MaxInt64
	}
	return d.nowNanos + tick
}

// scoreNow is the start time the node choice gives a victim without one.
func (d *dryRun) scoreNow() int64 { return d.unstartedStart(0) }

// trim clears the workers' memory that the evaluation did not use again.
func (e *Evaluator) trim() {
	for i := range e.workers {
		e.workers[i].slab.trim()
	}
}

func (e *Evaluator) newDryRun(c *filter.Cycle, opts Options) *dryRun {
	workers := c.Parallelism()
	if len(e.workers) != workers {
		e.workers = make([]worker, workers)
	}
	for i := range e.workers {
		e.workers[i].slab.reset()
	}
	d := &dryRun{c: c, e: e, budgets: prepareBudgets(c.Snapshot().PDBs, opts.Features.Semantics.PDBEmptySelectorMatchesAll), nowNanos: opts.Now.UnixNano(), placementWork: opts.placementWork,
		beyondSteps: opts.beyondSteps, sem: opts.Features.Semantics}
	if opts.Features.GenericWorkload {
		d.groups = newGroupIndex(c.Snapshot(), opts.Features)
	}
	d.counter = opts.Counter.begin(c)
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
	e := d.e
	nodes := res.PotentialNodes
	n, want := len(nodes), res.NumCandidates
	// The walk cannot stop before it has visited want nodes, so the first
	// batch is that many; later batches are what is still missing. The
	// lists are made for the first batch at once (a fresh evaluator's
	// would otherwise grow from nothing, one allocation a doubling).
	batch := max(min(want, n), 1)
	nonViolating, violating := reserve(&e.nonViolating, batch), e.violating[:0]
	res.Visited = reserve(&e.visited, batch)
	res.NodeStatuses = e.statuses[:0]
	done := false
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
		start = end
		batch = max(want-len(nonViolating)-len(violating), 4*len(e.workers), 32)
	}
	e.visited, e.statuses = res.Visited, res.NodeStatuses
	e.nonViolating, e.violating = nonViolating, violating
	res.Candidates = append(nonViolating, violating...)
	if len(res.Candidates) > 0 {
		res.Err = nil
	}
}

// evaluate dry-runs nodes[offset+start : offset+end] (wrapping around) on
// the evaluator's workers, the caller's goroutine being the first; with one
// worker no goroutine is started.
func (d *dryRun) evaluate(nodes []*snapshot.Node, offset, start, end int) []nodeOutcome {
	count := end - start
	e := d.e
	if cap(e.outcomes) < count {
		e.outcomes = make([]nodeOutcome, count)
	}
	out := e.outcomes[:count]
	clear(out)
	workers := e.workers
	if len(workers) <= 1 || count < d.parallelMin() {
		workers[0].slab.expect(count)
		for i := range count {
			out[i] = d.selectVictims(&workers[0], nodes[(offset+start+i)%len(nodes)])
		}
		return out
	}
	// The batch lives in d, so that starting a goroutine allocates only
	// what the go statement does.
	b := &d.batch
	b.nodes, b.first, b.out = nodes, offset+start, out
	b.next.Store(0)
	share := (count + len(workers) - 1) / len(workers)
	for k := range workers {
		workers[k].slab.expect(share)
	}
	for k := range min(len(workers), count) - 1 {
		b.wg.Add(1)
		go d.work(&workers[k+1], true)
	}
	d.work(&workers[0], false)
	b.wg.Wait()
	return out
}

// parallelDryRunMin is the fewest nodes a dry run shares out between
// goroutines; parallelSumsMin is the same when the walk checks the fit on
// resource sums alone (byResources), where a node takes a few hundred
// nanoseconds: a goroutine is worth it from some tens of microseconds of
// work, more than waking an idle processor for it costs (tens of
// microseconds on a small virtual machine).
const (
	parallelDryRunMin = 8
	parallelSumsMin   = 256
)

// parallelMin is the fewest nodes the dry run evaluates on several
// goroutines.
func (d *dryRun) parallelMin() int {
	if d.byResources && d.groups == nil {
		return parallelSumsMin
	}
	return parallelDryRunMin
}

// batch is the nodes a dry run's workers share out: they take the next
// index from next and dry-run nodes[(first+i)%len(nodes)] into out[i].
type batch struct {
	nodes []*snapshot.Node
	first int
	out   []nodeOutcome
	next  atomic.Int64
	wg    sync.WaitGroup
}

// work dry-runs the batch's nodes on w until none is left; done reports
// to the batch's wait group when it returns.
func (d *dryRun) work(w *worker, done bool) {
	b := &d.batch
	if done {
		defer b.wg.Done()
	}
	for {
		i := int(b.next.Add(1)) - 1
		if i >= len(b.out) {
			return
		}
		b.out[i] = d.selectVictims(w, b.nodes[(b.first+i)%len(b.nodes)])
	}
}

// selectVictims is the dry run on one node: its potential victims, the fit
// checker that suits the preemptor, and the victim walk over them.
func (d *dryRun) selectVictims(w *worker, node *snapshot.Node) nodeOutcome {
	fit, err := d.prepare(w, node)
	if err != nil {
		return nodeOutcome{status: filter.Status{Code: filter.Error, Reasons: []string{err.Error()}}}
	}
	if w.units.len() == 0 {
		return nodeOutcome{status: statusNoVictims}
	}
	return d.selectVictimsOnNode(w, node, &w.units, fit)
}

// prepare lists node's potential victims in w.units and readies the fit
// checker that suits the preemptor.
func (d *dryRun) prepare(w *worker, node *snapshot.Node) (fitChecker, error) {
	if d.groups != nil {
		var err error
		if w.units, err = d.groups.unitsOn(w, node, d.c.Pod().Priority, d.nowNanos); err != nil {
			return nil, err
		}
	} else {
		w.units = d.potentialPods(w, node)
	}
	if d.byResources {
		w.sums.reset(d.c, &d.req, node, &w.units)
		return d.counted(node, &w.units, &w.sums), nil
	}
	w.overlay.reset(d.c, node, &w.units)
	return d.counted(node, &w.units, &w.overlay), nil
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

// FailedSchedulingMessage is the message of the FailedScheduling event the
// scheduler records for the pod of c, which fits nowhere: the filters'
// FitError over fr, then the status of the PostFilter that ran on it.
func FailedSchedulingMessage(c *filter.Cycle, fr filter.Result, res *Result) string {
	n := len(c.Snapshot().Nodes)
	return filter.FitErrorMessage(n, c.PreFilterStatus(), fr.Statuses) + " " + res.PostFilterMessage(n)
}

// PostFilterMessage is the message DefaultPreemption's PostFilter status
// carries, prefixed "preemption: " as upstream does; the scheduler appends
// it to the FailedScheduling message. numNodes counts every node.
func (r *Result) PostFilterMessage(numNodes int) string {
	switch {
	case !r.Eligible:
		return "preemption: " + r.IneligibleReason
	case r.Chosen != nil:
		return "preemption: found a potential placement for pod on node " + r.Chosen.Node.Name + ", preempting " + strconv.Itoa(len(r.Chosen.Victims)) + " victims"
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
