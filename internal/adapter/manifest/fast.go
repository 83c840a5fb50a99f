package manifest

import (
	"context"
	"io"
	"sync"
)

// fastPath is the loader's one seam to its speed machinery. The general
// path (loader.go, documents.go, decode.go, parallel.go) reaches every
// mechanism that exists only for speed through a Set's fast field, nil on
// the general path (Options.general), and through the fastWorker it hands
// each goroutine; the methods of this file are the whole seam. Each either
// does its job exactly as the general path would — the same objects, the
// same errors, the same warnings — or declines, having changed nothing,
// and the general path then does it:
//
//   - stream reads a large input that is one List as it comes, its items
//     cut on the reading goroutine and prepared by workers, instead of
//     whole (fast_stream.go, fast_chunks.go, fast_yamllist.go);
//   - yamlReader cuts a YAML stream into its documents without copying
//     them (fast_documents.go);
//   - a worker converts YAML straight to JSON (fast_yaml*.go) and decodes
//     nodes and pods in one pass over the structural scanner (fast_scan.go,
//     fast_decode.go, fast_valid.go); on a lean load it makes the pods of
//     a workload from a template of their shape (fast_memo.go and the
//     files it names);
//   - addSeen finds repeated objects with an index that holds less than
//     the general path's map (fast_seen.go).
//
// The speed machinery stays in this package, not in a package of its own,
// because it makes the general path's own values — a document prepared
// with its problems, a pod in parts as a lean load keeps it, the set a
// streamed List is committed to — and calls the general path's steps back
// (prepare, commit, checkList) where it declines one item of many: a
// package of its own would export all of them. TestGeneralPathStandsAlone
// holds the general files to naming nothing of the fast_*.go files but
// through this one; TestFastMatchesGeneral and FuzzFastMatchesGeneral hold
// the two paths to the same results.
type fastPath struct {
	// index finds objects defined twice.
	index objectIndex
	// memoHitCounts are the counters of the pod memos of the load's
	// workers, each counting its own hits (held apart from the memos,
	// which go with their workers); mu guards the slice.
	mu            sync.Mutex
	memoHitCounts []*int
	// streamed counts the inputs the streaming reader read (tests).
	streamed int
}

func newFastPath() *fastPath { return &fastPath{} }

// stream reads the input r, named name, into s as the general path would
// read it whole, and reports done; or it declines (done false, nil error)
// without having changed s, for an input it does not read (anything but
// one List of kind List, or a List it does not cut or convert as the
// general path would), and the general path then reads r from its start.
// An error reading r, or ctx done, ends it with done and the error.
func (f *fastPath) stream(ctx context.Context, s *Set, name string, r io.Reader) (done bool, err error) {
	done, err = s.streamList(ctx, name, r)
	if done {
		f.streamed++
	}
	return done, err
}

// yamlReader is the fast path's reader of the documents of a YAML stream
// (cutYAMLDocuments), with about how many there are, or nil when it
// declines: then apimachinery's YAMLReader reads them (splitYAML).
func (f *fastPath) yamlReader(data []byte) (next func() ([]byte, error), docs int) {
	return cutYAMLDocuments(data)
}

// worker returns the fast path's worker for one goroutine: lean and
// duplicates are the set's (Options.Lean, and Validation not ignore).
func (f *fastPath) worker(lean, duplicates bool) *fastWorker {
	w := &fastWorker{lean: lean, duplicates: duplicates}
	if lean {
		hits := new(int)
		f.mu.Lock()
		f.memoHitCounts = append(f.memoHitCounts, hits)
		f.mu.Unlock()
		w.memo = newPodMemo(w, hits)
	}
	return w
}

// addSeen is Set.addSeen.
func (f *fastPath) addSeen(key objectKey, at source) (prev source, dup bool) {
	return f.index.add(key, at)
}

// memoHits returns how many pods the memos made from a template.
func (f *fastPath) memoHits() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, hits := range f.memoHitCounts {
		n += *hits
	}
	return n
}

// fastWorker is the fast path for one goroutine: its YAML converter's
// scratch, its decoder and, on a lean load, its pod memo.
type fastWorker struct {
	lean, duplicates bool
	scratch          yamlScratch
	dec              fastDecoder
	memo             *podMemo
}

// toJSON converts a YAML document to JSON as convertYAML does, or
// declines (a duplicate key among what it declines).
func (w *fastWorker) toJSON(doc []byte) ([]byte, bool) {
	return fastYAMLToJSONWith(doc, &w.scratch)
}

// prepare prepares a JSON document as prepare does, or declines.
func (w *fastWorker) prepare(raw []byte) (prepared, bool) {
	if w.memo != nil {
		return w.memo.prepare(raw)
	}
	return w.decode(raw, w.lean)
}

// release hands back the JSON of a document once nothing needs it: the
// next document is converted into its room.
func (w *fastWorker) release(data []byte) { w.scratch.recycle(data) }
