package manifest

// The loader's memos (pods by template, YAML blocks by their lines) cost a
// lookup each and pay only when what they look up repeats. Each counts its
// lookups in trials; after a trial in which fewer than one in eight was
// found, it does without lookups for a pause, then tries again: a file
// whose objects share nothing costs little, and one whose shapes change
// (DaemonSet pods, each of its own shape, before the Deployments') loses
// the memo only for a while.

// trials counts a memo's lookups; the zero value needs its size and pause.
type trials struct {
	// size is how many lookups a trial counts, and pause how many are
	// skipped after one that found little.
	size, pause int
	// n and found count this trial's lookups and those found; left is
	// what remains of a pause.
	n, found, left int
}

// pausing reports whether the memo is pausing.
func (t *trials) pausing() bool { return t.left > 0 }

// skip reports whether the memo is pausing, counting one skipped lookup.
func (t *trials) skip() bool {
	if t.left > 0 {
		t.left--
		return true
	}
	return false
}

// count counts a lookup, and whether it found what it looked up; it ends a
// trial that found little with a pause.
func (t *trials) count(found bool) {
	t.n++
	if found {
		t.found++
	}
	if t.n == t.size {
		if t.found < t.n/8 {
			t.left = t.pause
		}
		t.n, t.found = 0, 0
	}
}
