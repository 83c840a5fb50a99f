package preemption

import (
	"fmt"
	"math"
	"slices"
	"strings"

	policyv1 "k8s.io/api/policy/v1"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// unitList is a node's potential victims as the walk sees them: preemption
// units below the preemptor's priority, each a run of members. Without the
// GenericWorkload gate every unit is one pod and spans is nil; with it,
// spans says which members form each unit and what the importance order
// weighs of it.
type unitList struct {
	// members are the units' pods with their priority, start time and
	// requests. They may be a node's importance order, which the walk
	// must not modify.
	members []snapshot.RankedPod
	// memberNodes holds the node of each member, nil when every member
	// runs on the candidate node.
	memberNodes []*snapshot.Node
	// spans describes each unit; nil means unit i is members[i].
	spans []span
	// sorted reports that the units are already in importance order, as
	// sorting them the way upstream does would leave them.
	sorted bool
	// kept, when not nil, are the node's other pods: with members, all of
	// its pods (members are then a suffix of its importance order).
	kept []snapshot.RankedPod
	// allStarted reports that every member has a start time, which is
	// then its Start.
	allStarted bool
	// uidTieBreak: units equal in every other key are ordered by their
	// first member's UID (Semantics.VictimUIDTieBreak, v1.38), which makes
	// the order total.
	uidTieBreak bool
	// eitherFirst: two single pods of equal priority without a start time
	// each rank before the other (Semantics.UnstartedVictimsTieAnyWay,
	// v1.36); the sort's comparisons then decide their order.
	eitherFirst bool
}

// span is one unit of a unitList: members[lo:hi], and the unit's keys in
// the importance order.
type span struct {
	lo, hi   int32
	kind     UnitKind
	group    *snapshot.Group
	priority int32
	start    int64
	// nodes are the distinct nodes the unit's members run on.
	nodes []*snapshot.Node
}

// len returns the number of units.
func (l *unitList) len() int {
	if l.spans == nil {
		return len(l.members)
	}
	return len(l.spans)
}

// bounds returns the members of unit u as members[lo:hi].
func (l *unitList) bounds(u int) (lo, hi int) {
	if l.spans == nil {
		return u, u + 1
	}
	return int(l.spans[u].lo), int(l.spans[u].hi)
}

// nodeOf returns the node of member m; node is the candidate's.
func (l *unitList) nodeOf(m int, node *snapshot.Node) *snapshot.Node {
	if l.memberNodes == nil {
		return node
	}
	return l.memberNodes[m]
}

// moreImportant reports whether unit a ranks before unit b: upstream's
// MoreImportantPod for single pods and MoreImportantVictim for units (which
// reduces to the former when both are single pods without a pod group).
func (l *unitList) moreImportant(a, b int) bool {
	return l.compare(a, b) < 0
}

// compare orders units a and b: negative when a is more important. Without
// uidTieBreak, 0 means they rank alike and their order is the sort's.
func (l *unitList) compare(a, b int) int {
	if l.spans == nil {
		ma, mb := &l.members[a], &l.members[b]
		switch {
		case ma.Priority != mb.Priority:
			return cmpBool(ma.Priority > mb.Priority)
		case l.eitherFirst && !l.started(a) && !l.started(b):
			return -1
		case ma.Start != mb.Start:
			return cmpBool(ma.Start < mb.Start)
		case l.uidTieBreak:
			return strings.Compare(string(ma.Pod.UID()), string(mb.Pod.UID()))
		}
		return 0
	}
	sa, sb := &l.spans[a], &l.spans[b]
	if sa.priority != sb.priority {
		return cmpBool(sa.priority > sb.priority)
	}
	if ra, rb := sa.kind.rank(), sb.kind.rank(); ra != rb {
		return cmpBool(ra > rb)
	}
	if na, nb := sa.hi-sa.lo, sb.hi-sb.lo; na != nb {
		return cmpBool(na > nb)
	}
	if sa.start != sb.start {
		return cmpBool(sa.start < sb.start)
	}
	if l.uidTieBreak {
		return strings.Compare(string(l.members[sa.lo].Pod.UID()), string(l.members[sb.lo].Pod.UID()))
	}
	return 0
}

// started reports whether member m has a start time.
func (l *unitList) started(m int) bool {
	if l.allStarted {
		return true
	}
	_, ok := l.members[m].Pod.StartNanos()
	return ok
}

// cmpBool is -1 when a is first, else 1.
func cmpBool(aFirst bool) int {
	if aFirst {
		return -1
	}
	return 1
}

// sortUnits sorts unit indexes as upstream's sort.Slice sorts the units
// themselves: slices.SortFunc runs the same pattern-defeating quicksort on
// the same comparisons, so units of equal importance end in the same order
// (TestSortMatchesSortSlice). The algorithm only asks whether cmp(a, b) < 0.
//
// Single pods, up to maxKeySort of them, are sorted as keys side by side
// instead of through their indexes: by insertion when no two rank alike
// (then every sort gives the one order there is), else by the same
// quicksort on the same comparisons, which moves the keys as it would move
// the indexes.
func (l *unitList) sortUnits(order []int32) {
	if l.uidTieBreak || l.eitherFirst {
		// A total order, which every sort gives alike, or (eitherFirst)
		// upstream's sort on the same comparisons: slices.SortFunc only
		// asks whether cmp(a, b) < 0, as sort.Slice asks less(a, b).
		slices.SortFunc(order, func(a, b int32) int { return l.compare(int(a), int(b)) })
		return
	}
	if l.spans == nil && len(order) <= maxKeySort {
		l.sortPods(order)
		return
	}
	slices.SortFunc(order, func(a, b int32) int {
		if l.moreImportant(int(a), int(b)) {
			return -1
		}
		return 0
	})
}

// maxKeySort is the most single pods sortPods sorts as keys on the stack.
const maxKeySort = 64

// rankKey is what the importance order weighs of a single pod, and its
// index.
type rankKey struct {
	priority, index int32
	start           int64
}

// sortPods is sortUnits for up to maxKeySort single pods.
func (l *unitList) sortPods(order []int32) {
	packed := sortPacked(l.members, order)
	if packed == sortedPacked {
		return
	}
	var buf [maxKeySort]rankKey
	keys := buf[:len(order)]
	for i, u := range order {
		m := &l.members[u]
		keys[i] = rankKey{priority: m.Priority, index: u, start: m.Start}
	}
	if packed == tiedPacked || !insertionSortDistinct(keys) {
		// A tie: the order depends on the algorithm. Sort the keys as
		// they were given.
		for i, u := range order {
			m := &l.members[u]
			keys[i] = rankKey{priority: m.Priority, index: u, start: m.Start}
		}
		slices.SortFunc(keys, func(a, b rankKey) int {
			if moreImportant(a.priority, b.priority, a.start, b.start) {
				return -1
			}
			return 0
		})
	}
	for i := range keys {
		order[i] = keys[i].index
	}
}

// packedSort is what sortPacked did.
type packedSort int

const (
	sortedPacked packedSort = iota // sorted order
	tiedPacked                     // found two pods that rank alike; order is as it was
	notPacked                      // start times it does not pack; order is as it was
)

// sortPacked sorts up to maxKeySort single pods of members, given by
// their indexes in order, by importance when no two rank alike and their
// start times are whole seconds apart within two years (as the API
// server's second-precision start times are). It packs each pod's rank
// and position in order into one integer (snapshot.PackImportance), so
// that sorting compares and moves one word. A tie is found
// as the pods are sorted, and leaves order as it was.
func sortPacked(members []snapshot.RankedPod, order []int32) packedSort {
	n := len(order)
	switch {
	case n < 2:
		return sortedPacked
	case n > maxKeySort:
		return notPacked
	}
	earliest := int64(math.MaxInt64)
	for _, u := range order {
		earliest = min(earliest, members[u].Start)
	}
	var buf [maxKeySort]uint64
	keys := buf[:n]
	for i, u := range order {
		k, ok := snapshot.PackImportance(members[u].Priority, members[u].Start, earliest, i)
		if !ok {
			return notPacked
		}
		keys[i] = k
	}
	for i := 1; i < n; i++ {
		k := keys[i]
		j := i
		for ; j > 0 && keys[j-1] > k; j-- {
			keys[j] = keys[j-1]
		}
		// keys[j-1] is the greatest key below k: a pod ranked alike, if
		// there is one before k, is that one.
		if j > 0 && keys[j-1]>>snapshot.PackedPosBits == k>>snapshot.PackedPosBits {
			return tiedPacked
		}
		keys[j] = k
	}
	var positions [maxKeySort]int32
	copy(positions[:n], order)
	for i, k := range keys {
		order[i] = positions[k&(1<<snapshot.PackedPosBits-1)]
	}
	return sortedPacked
}

// insertionSortDistinct sorts keys in importance order and reports true
// when no two of them rank alike; on a tie it stops and reports false,
// keys then partly sorted.
func insertionSortDistinct(keys []rankKey) bool {
	for i := 1; i < len(keys); i++ {
		k := keys[i]
		j := i
		for ; j > 0 && moreImportant(k.priority, keys[j-1].priority, k.start, keys[j-1].start); j-- {
			keys[j] = keys[j-1]
		}
		// keys[j-1] does not rank after k: a tie when it does not rank
		// before it either.
		if j > 0 && keys[j-1].priority == k.priority && keys[j-1].start == k.start {
			return false
		}
		keys[j] = k
	}
	return true
}

// fitChecker answers the victim walk's one question — does the preemptor
// fit on the node now? — while the walk removes units and adds them back.
// The walk removes every unit first and then adds some back, each at most
// once; a checker never sees a unit added that it has not seen removed.
type fitChecker interface {
	// remove takes unit u of the walk's list off the cluster.
	remove(u int)
	// add puts unit u back.
	add(u int)
	// fits reports whether the preemptor passes the filters on the node
	// as it is now, nominated pods included; when it does not and why is
	// not nil, *why is the first rejection.
	fits(why *filter.Status) bool
}

// removerOfAll is a fit checker that removes every unit at once faster
// than one by one.
type removerOfAll interface {
	// removeAll removes every unit, as remove on each would.
	removeAll()
}

// removeAll removes the n units of a walk from fit, at once when it can.
func removeAll(fit fitChecker, n int) {
	if all, ok := fit.(removerOfAll); ok {
		all.removeAll()
		return
	}
	for u := range n {
		fit.remove(u)
	}
}

// reprieverOfAll is a fit checker that runs the walk's reprieve loop over
// many units faster than add, fits and remove one by one.
type reprieverOfAll interface {
	// reprieveAll does for each unit of order in turn what the walk does:
	// add it back and, when the preemptor no longer fits, remove it again
	// and append it to evicted. It returns evicted.
	reprieveAll(order, evicted []int32) []int32
}

// reprieveAll adds the units of order back to fit one by one, in order,
// evicting again each without which the preemptor no longer fits; the
// evicted units are appended to evicted, which is returned.
func reprieveAll(fit fitChecker, order, evicted []int32) []int32 {
	if all, ok := fit.(reprieverOfAll); ok {
		return all.reprieveAll(order, evicted)
	}
	return reprieveEach(fit, order, evicted)
}

// reprieveEach is reprieveAll through add, fits and remove.
func reprieveEach(fit fitChecker, order, evicted []int32) []int32 {
	for _, u := range order {
		fit.add(int(u))
		if !fit.fits(nil) {
			fit.remove(int(u))
			evicted = append(evicted, u)
		}
	}
	return evicted
}

// selectVictimsOnNode is upstream's SelectVictimsOnNode: which units must
// go for the preemptor to fit on node, given its potential victims and a
// fit checker over them. w holds the walk's scratch memory.
func (d *dryRun) selectVictimsOnNode(w *worker, node *snapshot.Node, units *unitList, fit fitChecker) nodeOutcome {
	n := units.len()
	if n == 0 {
		return nodeOutcome{status: statusNoVictims}
	}
	// 1) Remove every potential victim; the preemptor must fit then, or
	// preemption cannot help on this node.
	removeAll(fit, n)
	// (The status lives in w: through the interface it would escape.)
	if !fit.fits(&w.why) {
		return nodeOutcome{status: w.why}
	}
	// 2) Rank the potential victims, most important first.
	order := w.indexes(&w.order, n)
	if !units.sorted {
		units.sortUnits(order)
	}
	// 3) Split them by whether evicting them breaks a disruption budget,
	// keeping importance order within each part.
	var violating, violations []int32
	var broken map[*snapshot.Pod][]*policyv1.PodDisruptionBudget
	nonViolating := order
	if len(d.budgets) > 0 {
		violating, nonViolating, violations, broken = d.splitByPDB(w, units, order)
	}
	// 4) Reprieve as many as possible, the budget-breaking ones first: add
	// each back, and evict it again only if the preemptor then no longer
	// fits.
	// (At most n units are evicted: the list is made once at that size.)
	evicted := reprieveAll(fit, violating, reserve(&w.evicted, n))
	numViolating := 0
	for i, j := 0, 0; i < len(evicted); i++ {
		// The evicted units are a subsequence of violating.
		for violating[j] != evicted[i] {
			j++
		}
		numViolating += int(violations[j])
	}
	evicted = reprieveAll(fit, nonViolating, evicted)
	w.evicted = evicted
	// 5) The victims in importance order, as upstream sorts them again
	// when both parts had some.
	if len(violating) != 0 && len(nonViolating) != 0 {
		units.sortUnits(evicted)
	}
	if len(evicted) == 0 {
		// The pod fits without evicting anything (a filter that removing
		// pods does not help, or nominated pods, made it fail before).
		if d.sem.NoVictimsRejectsNode {
			return nodeOutcome{status: statusNoVictims}
		}
		return nodeOutcome{status: filter.Status{Code: filter.Error, Reasons: []string{fmt.Sprintf(msgExpectedAtLeastOneVictm, node.Name)}}}
	}
	cand := w.candidate(node, units, evicted, numViolating, broken)
	// Scored here, on the worker, while its victims are in cache: the
	// node choice reads every candidate's score.
	cand.Score(d.scoreNow())
	return nodeOutcome{cand: cand}
}

// candidate makes the node's candidate of the evicted units.
func (w *worker) candidate(node *snapshot.Node, units *unitList, evicted []int32, numViolating int, broken map[*snapshot.Pod][]*policyv1.PodDisruptionBudget) *Candidate {
	numVictims := 0
	for _, u := range evicted {
		lo, hi := units.bounds(int(u))
		numVictims += hi - lo
	}
	cand := w.slab.candidate()
	*cand = Candidate{Node: node, Victims: w.slab.victims(numVictims), NumPDBViolations: numViolating}
	k := 0
	for _, u := range evicted {
		lo, hi := units.bounds(int(u))
		first := k
		for m := lo; m < hi; m++ {
			r := &units.members[m]
			v := cand.Victims[k]
			started := units.allStarted
			if !started {
				_, started = r.Pod.StartNanos()
			}
			*v = Victim{Pod: r.Pod, Priority: r.Priority, Start: r.Start, Started: started}
			k++
			if broken == nil {
				continue
			}
			if b, ok := broken[r.Pod]; ok {
				if cand.Broken == nil {
					cand.Broken = map[*Victim][]*policyv1.PodDisruptionBudget{}
				}
				cand.Broken[v] = b
			}
		}
		if units.spans != nil {
			s := &units.spans[u]
			nodes := s.nodes
			if nodes == nil {
				nodes = []*snapshot.Node{node}
			}
			cand.Units = append(cand.Units, &Unit{Kind: s.kind, Group: s.group, Priority: s.priority, Start: s.start,
				Members: cand.Victims[first:k:k], Nodes: nodes})
		}
	}
	return cand
}

// splitByPDB is upstream's FilterVictimsWithPDBViolation: it walks the
// units in importance order, charging each matching budget pod by pod
// (pods already in a budget's disruptedPods are not charged); a unit is
// violating as soon as one of its pods makes a budget go negative, and
// violations counts how many of its pods do. The budgets each pod breaks
// are returned for explanations.
func (d *dryRun) splitByPDB(w *worker, units *unitList, order []int32) (violating, nonViolating, violations []int32, broken map[*snapshot.Pod][]*policyv1.PodDisruptionBudget) {
	allowed := w.allowed[:0]
	for i := range d.budgets {
		allowed = append(allowed, d.budgets[i].pdb.Status.DisruptionsAllowed)
	}
	w.allowed = allowed
	for _, u := range order {
		lo, hi := units.bounds(int(u))
		count := int32(0)
		for m := lo; m < hi; m++ {
			p := units.members[m].Pod
			if pdb := chargeBudgets(p, d.budgets, allowed); pdb != nil {
				count++
				if broken == nil {
					broken = map[*snapshot.Pod][]*policyv1.PodDisruptionBudget{}
				}
				broken[p] = append(broken[p], pdb)
			}
		}
		if count > 0 {
			violating = append(violating, u)
			violations = append(violations, count)
		} else {
			nonViolating = append(nonViolating, u)
		}
	}
	return violating, nonViolating, violations, broken
}

// potentialPods returns the node's pods below the preemptor's priority as
// single-pod units. When the node's importance order is cached (its second
// visit on) and every pod of the node has started, they are a suffix of
// it, which any sort leaves as it is when no two of them are equal or
// there are so few that the sort is stable, and which is sorted anew
// (once, and cached) otherwise. Else they are listed in the node's order,
// for the walk to sort, a pod that has not started counting as starting at
// the evaluation time, later pods of the node a nanosecond later each, as
// upstream's time.Now() fallback does.
func (d *dryRun) potentialPods(w *worker, node *snapshot.Node) unitList {
	prio := d.c.Pod().Priority
	uid := d.sem.VictimUIDTieBreak
	if o := node.CachedImportanceOrder(); o != nil && o.AllStarted {
		i := o.Below(prio)
		if n := len(o.Ranked) - i; o.LastTie <= i || (n <= maxInsertion && !uid) {
			return unitList{members: o.Ranked[i:], sorted: true, kept: o.Ranked[:i:i], allStarted: true, uidTieBreak: uid}
		}
		if !uid {
			return unitList{members: o.SortedSuffix(i, sortRanked), sorted: true, kept: o.Ranked[:i:i], allStarted: true}
		}
		// Ties broken by UID: the walk sorts the pods below.
	}
	members := w.members[:0]
	for i, p := range node.Pods {
		if p.Priority < prio {
			start, ok := p.StartNanos()
			if !ok {
				start = d.unstartedStart(int64(i))
			}
			r := &p.Requests
			members = append(members, snapshot.RankedPod{Pod: p, Priority: p.Priority, Pos: int32(i), Start: start,
				MilliCPU: r.MilliCPU, Memory: r.Memory, EphemeralStorage: r.EphemeralStorage})
		}
	}
	w.members = members
	return unitList{members: members, uidTieBreak: uid, eitherFirst: d.sem.UnstartedVictimsTieAnyWay}
}

// maxInsertion is the length up to which the standard library's
// pattern-defeating quicksort (upstream's sort.Slice) runs a plain
// insertion sort, which is stable.
const maxInsertion = snapshot.MaxStableSort
