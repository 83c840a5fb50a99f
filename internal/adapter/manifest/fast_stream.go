package manifest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"unicode"

	"sigs.k8s.io/yaml"
)

// A large input is most often one List, as `kubectl get -o json|yaml`
// writes it. Read whole, it is held three times at the peak (the file, the
// items cut from it, the decoded objects) and scanned from end to end
// before any item is decoded. streamList reads such an input in one pass
// instead: it cuts the items as the bytes arrive, hands them in batches to
// workers that convert, decode, default and validate each (prepare), and
// drops each item's bytes once it is decoded. The items are committed, in
// order, once the List ends: only then is its kind known (kubectl writes
// "kind" after "items"), and the List's own fields are checked before its
// items, as the general path checks them.
//
// streamList handles an input of exactly one List of kind List, whose items
// its cutters read (the JSON scanner of fast_scan.go, the YAML line cutter
// of fast_yamllist.go). Most items are cut by their lines without being
// read on the reading goroutine (cutJSONItems, cutYAMLItems); the worker
// that prepares such a loose item checks it is what the cutter would have
// cut, or declines the input. A JSON item the fast path did not decode
// itself is checked to be JSON as the decoder of the whole List would
// check it (validJSON). For anything else — several documents, a typed
// list such as PodList, an item a cutter or a converter declines, a
// structure the scanner does not walk, what may not be JSON — it gives up
// before it has changed the set, and the general path reads the input
// whole, which gives the same result or words the error.

// streamBatch is how many items a worker prepares at a time.
const streamBatch = 64

// streamChunk is how much of the input is read at a time.
const streamChunk = 1 << 20

// errDecline is a cutter giving up: the input is read whole instead.
var errDecline = errors.New("not a List the streaming reader cuts")

// itemBatch is a batch of items of a streamed List: their bytes as cut
// (JSON, or YAML to convert), then their JSON where commit still needs it,
// and their prepared forms.
type itemBatch struct {
	raw [][]byte
	// loose marks the items cut by their lines (cutJSONItems), not yet
	// known to be one value each.
	loose []bool
	// chunks are the chunks the items are slices of (nil for an item
	// of its own), held until each is prepared.
	chunks []*chunk
	preps  []preparedItem
}

// preparedItem is an item prepared, as its batch keeps it until the List
// is committed: its name, object and problems, and the rest of its
// prepared form where it is the same as the item's before (the pods of a
// workload share it). A batch of a List of 150,000 pods so holds 48 bytes
// an item instead of 128.
type preparedItem struct {
	// like is prepared but for h.Name, obj and bad.
	like *prepared
	name string
	obj  any
	bad  *problems
}

// keep returns p as a batch keeps it, sharing last's like when that is
// p's but for its own fields.
func keep(p prepared, last *prepared) preparedItem {
	like := last
	if last == nil || !sameButOwn(last, &p) {
		like = new(prepared)
		*like = p
		like.h.Name, like.obj, like.bad = "", nil, nil
	}
	return preparedItem{like: like, name: p.h.Name, obj: p.obj, bad: p.bad}
}

// sameButOwn reports whether like, a preparedItem's like, is p but for
// p's name, object and problems.
func sameButOwn(like, p *prepared) bool {
	return like.h.APIVersion == p.h.APIVersion && like.h.Kind == p.h.Kind && like.h.Namespace == p.h.Namespace &&
		like.known == p.known && like.namespaced == p.namespaced && like.apiVersion == p.apiVersion && like.ns == p.ns
}

// prepared returns the item's prepared form.
func (it *preparedItem) prepared() prepared {
	p := *it.like
	p.h.Name, p.obj, p.bad = it.name, it.obj, it.bad
	return p
}

// streamer prepares the items of a List on worker goroutines, batch by
// batch, as they are cut.
type streamer struct {
	yaml, duplicates bool
	batches          []*itemBatch
	cur              *itemBatch
	work             chan *itemBatch
	wg               sync.WaitGroup
	declined         atomic.Bool
	// lineStart is the line that starts an element of a JSON List
	// (cutJSONItems), set before the first loose item is handed over;
	// split is set once a worker has cut a loose item further.
	lineStart []byte
	split     atomic.Bool
	// pool is the buffers the file is read into.
	pool *chunks
}

// newStreamer starts workers, each preparing with a worker newWorker
// returns (Set.newWorker); they stop once ctx is done.
func newStreamer(ctx context.Context, workers int, yaml, duplicates bool, newWorker func() *worker) *streamer {
	st := &streamer{yaml: yaml, duplicates: duplicates, work: make(chan *itemBatch, 2*workers), pool: newChunks()}
	for range workers {
		st.wg.Go(func() {
			w := newWorker()
			for b := range st.work {
				if ctx.Err() != nil {
					st.declined.Store(true)
				}
				st.prepareBatch(b, w)
			}
		})
	}
	return st
}

// setLineStart records the line that starts an element of the List.
func (st *streamer) setLineStart(next []byte) { st.lineStart = next }

// prepareBatch converts (YAML) and prepares every item of b with w, a
// worker of the fast path, whose memo (if any) reads a loose YAML item of
// a pod of a shape it knows without converting all of it (fast_yamlmemo.go).
// A JSON item the fast path does not prepare is prepared by the general
// path and checked to be JSON as the decoder of the whole List would
// check it (validJSON): what is not declines the List, for the general
// path to word its error.
func (st *streamer) prepareBatch(b *itemBatch, w *worker) {
	scratch, memo := &w.fast.scratch, w.fast.memo
	b.preps = make([]preparedItem, len(b.raw))
	var last *prepared // the like of the item before
	for i := 0; i < len(b.raw); i++ {
		raw := b.raw[i]
		if st.declined.Load() {
			return
		}
		var item []byte // a loose YAML item the fast converter read
		if st.yaml {
			if b.loose[i] && memo != nil {
				if p, ok := memo.prepareYAMLItem(raw, scratch); ok {
					b.preps[i], b.raw[i] = keep(p, last), nil
					last = b.preps[i].like
					b.done(i, true)
					continue
				}
			}
			var ok, fast bool
			if b.loose[i] {
				item = raw
				raw, fast, ok = convertLooseYAMLItem(raw, st.duplicates, scratch)
				if !fast {
					item = nil
				}
			} else {
				raw, ok = convertYAMLItem(raw, st.duplicates, scratch)
			}
			if !ok {
				st.declined.Store(true)
				return
			}
		}
		p, fast := w.fast.prepare(raw)
		if !fast {
			p = prepare(raw, w.lean)
		}
		if !st.yaml && b.loose[i] && !p.decoded() && !oneValue(raw) {
			// Several elements (a decoded object is one value), of
			// which all but the first start otherwise than the first
			// element of the List: cut at each line that starts one,
			// they are prepared in turn. Else cut wrongly: the file is
			// read whole instead, which reads it right or words the
			// error.
			pieces, ok := splitLoose(raw, st.lineStart)
			if !ok || len(pieces) < 2 {
				st.declined.Store(true)
				return
			}
			st.split.Store(true)
			b.split(i, pieces)
			i--
			continue
		}
		if !st.yaml && !fast && !validJSON(raw) {
			st.declined.Store(true)
			return
		}
		b.preps[i] = keep(p, last)
		last = b.preps[i].like
		if item != nil && memo != nil {
			memo.noteYAMLItem(item)
		}
		if p.decoded() {
			// commit needs the JSON only to word an error; the decoded
			// object holds none of it.
			if st.yaml {
				scratch.recycle(raw)
			}
			raw = nil
		}
		b.raw[i] = raw
		b.done(i, st.yaml)
	}
}

// split replaces item i, loose, by the pieces it is cut into (loose too,
// slices of its chunk, which each holds).
func (b *itemBatch) split(i int, pieces [][]byte) {
	more := len(pieces) - 1
	c := b.chunks[i]
	if c != nil {
		for range more {
			c.hold()
		}
	}
	b.raw[i] = pieces[0]
	b.raw = slices.Insert(b.raw, i+1, pieces[1:]...)
	b.loose = slices.Insert(b.loose, i+1, slices.Repeat([]bool{true}, more)...)
	b.chunks = slices.Insert(b.chunks, i+1, slices.Repeat([]*chunk{c}, more)...)
	b.preps = slices.Insert(b.preps, i+1, make([]preparedItem, more)...)
}

// done releases item i's chunk, once the item is prepared: commit reads
// the item again only to word an error, from a copy (a YAML item's JSON
// is one already).
func (b *itemBatch) done(i int, yaml bool) {
	if c := b.chunks[i]; c != nil {
		if b.raw[i] != nil && !yaml {
			b.raw[i] = bytes.Clone(b.raw[i])
		}
		b.chunks[i] = nil
		c.release()
	}
}

// add hands an item to the workers (data is the streamer's from now on);
// loose says it was cut by its lines and may not be one value.
func (st *streamer) add(data []byte, loose bool) {
	if st.cur == nil {
		st.cur = &itemBatch{raw: make([][]byte, 0, streamBatch), loose: make([]bool, 0, streamBatch), chunks: make([]*chunk, 0, streamBatch)}
	}
	// The item is a slice of the chunk read into now, if any (the YAML
	// List cutter's first items are copies).
	c := st.pool.cur
	if c != nil {
		c.hold()
	}
	st.cur.raw = append(st.cur.raw, data)
	st.cur.loose = append(st.cur.loose, loose)
	st.cur.chunks = append(st.cur.chunks, c)
	if len(st.cur.raw) == streamBatch {
		st.flush()
	}
}

func (st *streamer) flush() {
	if st.cur != nil {
		st.batches = append(st.batches, st.cur)
		st.work <- st.cur
		st.cur = nil
	}
}

// wait waits for the workers and reports whether every item converted.
func (st *streamer) wait() bool {
	st.flush()
	close(st.work)
	st.wg.Wait()
	return !st.declined.Load()
}

// convertYAMLItem converts an item of a YAML List (or the List without
// its items) to JSON, by fastYAMLToJSONWith or else the YAML library
// (strictly with duplicates), or returns false when neither converts it
// to an object: the JSON the general path's conversion of the whole List
// gives the item.
func convertYAMLItem(doc []byte, duplicates bool, scratch *yamlScratch) ([]byte, bool) {
	raw, ok := fastYAMLToJSONWith(doc, scratch)
	if !ok {
		toJSON := yaml.YAMLToJSON
		if duplicates {
			toJSON = yaml.YAMLToJSONStrict
		}
		var err error
		if raw, err = toJSON(doc); err != nil {
			return nil, false
		}
	}
	return raw, bytes.HasPrefix(raw, []byte("{"))
}

// streamList reads the List r holds (named name) into the set as the
// general path would read it whole (addData), and reports done; it
// declines (done false) having changed nothing when r holds anything
// else, or a List it does not cut or convert as the general path would.
func (s *Set) streamList(ctx context.Context, name string, r io.Reader) (done bool, err error) {
	br := bufio.NewReaderSize(r, streamChunk)
	peek, err := br.Peek(4 << 10)
	if err != nil && !errors.Is(err, io.EOF) {
		return true, readFailure(name, err)
	}
	t := bytes.TrimLeftFunc(peek, unicode.IsSpace)
	if len(t) == 0 {
		return false, nil
	}
	isJSON := t[0] == '{'
	st := newStreamer(ctx, s.workers(), !isJSON, s.opts.Validation != ValidateIgnore, s.newWorker)
	var rest []byte
	if isJSON {
		rest, err = cutJSONList(ctx, br, st.pool, st.add, st.setLineStart, st.split.Load)
	} else {
		rest, err = cutYAMLList(ctx, br, st.pool, st.add)
	}
	st.pool.done()
	converted := st.wait()
	if err := ctx.Err(); err != nil {
		return true, err
	}
	var readErr *readError
	switch {
	case errors.As(err, &readErr):
		return true, readFailure(name, readErr.err)
	case err != nil || !converted:
		return false, nil
	}
	if isJSON && !validJSON(rest) {
		return false, nil
	}
	if !isJSON {
		var ok bool
		if rest, ok = convertYAMLItem(rest, st.duplicates, nil); !ok {
			return false, nil
		}
	}
	h, herr := readHeader(rest)
	if herr != nil || h.Kind != "List" || h.APIVersion == "" {
		return false, nil
	}
	// As the general path adds a List read whole (addList).
	if _, err := s.checkList(name, rest, h, 0); err != nil {
		return true, err
	}
	n := 0
	for _, b := range st.batches {
		n += len(b.raw)
	}
	s.reserve(n)
	i := 0
	for k, b := range st.batches {
		if err := ctx.Err(); err != nil {
			return true, err
		}
		for j := range b.raw {
			if err := s.commitItem(ctx, name, i, b.raw[j], b.preps[j].prepared(), 0); err != nil {
				return true, err
			}
			i++
		}
		st.batches[k] = nil
	}
	return true, nil
}

// readFailure is the error of a failure to read name: the bound's own
// (read.go), or one naming the file or standard input.
func readFailure(name string, err error) error {
	var ie *InputError
	switch {
	case errors.As(err, &ie):
		return err
	case name == StdinName:
		return &InputError{Source: name, Detail: "cannot read: " + err.Error(), Err: err}
	}
	return fileError(name, err)
}

// validJSON reports whether data is one JSON value and space, as
// encoding/json would accept it (validValue).
func validJSON(data []byte) bool { return onlySpaceAfter(data, validValue(data, 0)) }

// readError is a failure to read the file (not a decline).
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }

// window is the part of a file read and not yet consumed.
type window struct {
	ctx context.Context
	r   io.Reader
	buf []byte
	eof bool
	// pool gives the buffers and tracks which is read into (nil: buffers
	// of the window's own, not reused).
	pool *chunks
}

// newWindow returns a window on r holding first, reading into pool's
// buffers.
func newWindow(ctx context.Context, r io.Reader, pool *chunks, first []byte) *window {
	w := &window{ctx: ctx, r: r, pool: pool}
	w.buf = append(pool.get(0, max(streamChunk, len(first))), first...)
	pool.use(w.buf)
	return w
}

// more reads the next chunk, keeping buf[keep:] (which moves to the front
// of a new buf: the items cut from the old one are slices of it, handed
// over without a copy); it returns how far positions moved, or an error
// at the end of the input (or once its context is done).
func (w *window) more(keep int) (int, error) {
	if w.eof {
		return 0, io.EOF
	}
	if err := w.ctx.Err(); err != nil {
		return 0, &readError{err}
	}
	n := len(w.buf) - keep
	next := w.pool.get(n, max(n+streamChunk, 2*n))
	copy(next, w.buf[keep:])
	w.buf = next
	w.pool.use(next)
	m, err := io.ReadFull(w.r, w.buf[n:cap(w.buf)])
	w.buf = w.buf[:n+m]
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		w.eof = true
	case err != nil:
		return 0, &readError{err}
	}
	return keep, nil
}

// cutJSONList reads a JSON document that is one object, handing each
// element of its top-level "items" array to item as soon as it is read,
// and returns the object with "null" for the items, byte for byte as
// addList cuts it. It returns errDecline for anything else: another
// shape, a second document, a structure the scanner does not walk. lines
// and firstMissed are cutJSONItems'.
func cutJSONList(ctx context.Context, r io.Reader, pool *chunks, item func(data []byte, loose bool), lines func(next []byte), firstMissed func() bool) ([]byte, error) {
	w := newWindow(ctx, r, pool, nil)
	var rest []byte
	i := 0    // the next byte to read
	mark := 0 // the first byte not yet copied to rest
	// value returns the end of the value (skip) starting at i, reading
	// more as needed; -1 if there is none.
	value := func(skip func(data []byte, i int) int) (int, error) {
		for {
			end := skip(w.buf, i)
			if end >= 0 && (end < len(w.buf) || w.eof) {
				return end, nil
			}
			if w.eof {
				return -1, errDecline
			}
			if mark >= 0 {
				rest = append(rest, w.buf[mark:i]...)
				mark = 0
			}
			shift, err := w.more(i)
			if err != nil {
				if errors.Is(err, io.EOF) {
					return -1, errDecline
				}
				return -1, err
			}
			i -= shift
		}
	}
	space := func() error {
		_, err := value(func(data []byte, at int) int {
			if j := skipSpace(data, at); j < len(data) {
				i = j
				return j
			}
			i = len(data)
			return -1
		})
		return err
	}
	if err := space(); err != nil {
		return nil, err
	}
	if w.buf[i] != '{' {
		return nil, errDecline
	}
	// The List starts here.
	rest, mark = rest[:0], i
	i++
	seenItems := false
	first := true
	for {
		if err := space(); err != nil {
			return nil, err
		}
		if first && w.buf[i] == '}' {
			return nil, errDecline // no items
		}
		first = false
		if w.buf[i] != '"' {
			return nil, errDecline
		}
		end, err := value(skipString)
		if err != nil {
			return nil, err
		}
		key := string(w.buf[i+1 : end-1])
		i = end
		if err := space(); err != nil {
			return nil, err
		}
		if w.buf[i] != ':' {
			return nil, errDecline
		}
		i++
		if err := space(); err != nil {
			return nil, err
		}
		if key == "items" {
			if seenItems {
				return nil, errDecline
			}
			seenItems = true
			rest = append(rest, w.buf[mark:i]...)
			rest = append(rest, "null"...)
			mark = -1
			if err := cutJSONItems(w, &i, value, space, item, lines, firstMissed); err != nil {
				return nil, err
			}
			mark = i
		} else {
			if end, err = value(skipValue); err != nil {
				return nil, err
			}
			if end < 0 {
				return nil, errDecline
			}
			i = end
		}
		if err := space(); err != nil {
			return nil, err
		}
		switch w.buf[i] {
		case ',':
			i++
			continue
		case '}':
			i++
		default:
			return nil, errDecline
		}
		break
	}
	rest = append(rest, w.buf[mark:i]...)
	// Only space may follow, to the end of the file.
	for {
		if j := skipSpace(w.buf, i); j < len(w.buf) {
			return nil, errDecline
		}
		if w.eof {
			break
		}
		if _, err := w.more(len(w.buf)); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		i = 0
	}
	if !seenItems {
		return nil, errDecline
	}
	return rest, nil
}

// cutJSONItems reads the array at *i, handing each element to item, as
// arrayElements cuts it, and leaves *i just past it.
//
// When the first element is an object that starts a line, as kubectl
// writes a List (indented, or an item per line), the next elements are
// cut by their lines instead of scanned: each runs to the next line that
// starts with the first element's indentation and "{", less the comma and
// space before it. Raw line breaks are never inside a JSON string, so each
// such line starts an element unless an element holds an object at that
// same indentation; an element so cut is handed over loose, and the
// worker that finds it is not one value (oneValue) declines the file. The
// last element, with no such line after it, is scanned.
//
// Such lines are found by what follows them too: the first element's first
// key (toNextLine). A loose item may then hold several elements, which the
// worker cuts apart at those lines (splitLoose) as this would have.
// kubectl writes every object's keys in order, so each of its elements
// starts with "apiVersion", and its managed fields, most of its bytes, hold
// a "{" on most lines but rarely a "V": looking for the lines by their
// "V" took 40 ms for 1.9 GB of them, and by their "{" 180 ms (one goroutine).
//
// lines is given the line start once it is known, before the first loose
// element; firstMissed reports whether a worker has cut a loose item
// apart, after which each line that starts an element is found.
func cutJSONItems(w *window, i *int, value func(func([]byte, int) int) (int, error), space func() error, item func([]byte, bool),
	lines func(next []byte), firstMissed func() bool) error {
	if w.buf[*i] != '[' {
		return errDecline
	}
	*i++
	if err := space(); err != nil {
		return err
	}
	if w.buf[*i] == ']' {
		*i++
		return nil
	}
	// next is "\n", the first element's indentation and "{".
	next := lineStart(w.buf, *i)
	if next != nil {
		lines(next)
	}
	// first is next and the first element's first key, with the byte of
	// it to look for (firstLine).
	first, rare := firstLine(w.buf, *i, next)
	loose := false
	// toNextLine cuts an element to the next line that starts one, or
	// else (at the end of the input) to the end of the value scanned.
	// Elements that start as the first one did are found by that start
	// (looking for its rare byte, not each "{" of the elements' managed
	// fields): the cut may then hold several elements, of which all but
	// the first start otherwise, and the worker cuts it further. Once
	// firstReach bytes hold no such start, or a worker has cut an item
	// further, each line that starts an element is found instead.
	toNextLine := func(data []byte, at int) int {
		if first != nil {
			if j := indexAnchored(data[at+1:], first, rare); j >= 0 {
				loose = true
				return at + 1 + j
			}
			if len(data)-at < firstReach && !w.eof {
				return -1
			}
			first = nil
		}
		if j := indexLineStart(data[at+1:], next); j >= 0 {
			loose = true
			return at + 1 + j
		}
		if !w.eof {
			return -1
		}
		loose = false
		return skipValue(data, at)
	}
	for start := true; ; start = false {
		var end int
		var err error
		loose = false
		if first != nil && firstMissed() {
			first = nil
		}
		if start || next == nil {
			end, err = value(skipValue)
		} else {
			end, err = value(toNextLine)
		}
		if err != nil {
			return err
		}
		if loose {
			elem, ok := looseElement(w.buf[*i:end])
			if !ok {
				return errDecline
			}
			item(elem, true)
			*i = end + len(next) - 1
			continue
		}
		item(w.buf[*i:end:end], false)
		*i = end
		if err := space(); err != nil {
			return err
		}
		switch w.buf[*i] {
		case ',':
			*i++
			if err := space(); err != nil {
				return err
			}
		case ']':
			*i++
			return nil
		default:
			return errDecline
		}
	}
}

// lineStart returns "\n", the indentation and "{" when the object at
// data[i] starts a line (only spaces and tabs before it on its line), or
// nil.
func lineStart(data []byte, i int) []byte {
	if data[i] != '{' {
		return nil
	}
	j := i
	for j > 0 && (data[j-1] == ' ' || data[j-1] == '\t') {
		j--
	}
	if j == 0 || data[j-1] != '\n' {
		return nil
	}
	return bytes.Clone(data[j-1 : i+1])
}

// indexLineStart is bytes.Index(data, line) for a line start (lineStart)
// in a file written as kubectl writes it: it looks for line's last byte,
// "{", rarer there than its first, "\n" (finding kubectl's items in 64 MB
// of its JSON took 5.7 ms against bytes.Index's 20 ms, and 10 against 19
// ms with managed fields, where most lines hold a "{").
func indexLineStart(data, line []byte) int { return indexAnchored(data, line, len(line)-1) }

// firstReach is how far toNextLine looks for an element that starts as
// the first one did before it looks for any line that starts one.
const firstReach = 1 << 20

// looseElement returns the element at the start of cut, bytes of a List
// up to a line that starts an element: the element, then space, a comma
// and space. It returns false without the comma.
func looseElement(cut []byte) ([]byte, bool) {
	cut = bytes.TrimRight(cut, " \t\r\n")
	if len(cut) == 0 || cut[len(cut)-1] != ',' {
		return nil, false
	}
	elem := bytes.TrimRight(cut[:len(cut)-1], " \t\r\n")
	return elem[:len(elem):len(elem)], true
}

// splitLoose cuts a loose item at the lines in it that start an element
// (next), as cutJSONItems cuts elements by their lines; it returns false
// when a piece is not followed by a comma, where cutJSONItems declines.
func splitLoose(raw, next []byte) ([][]byte, bool) {
	var pieces [][]byte
	start := 0
	for {
		j := indexLineStart(raw[start+1:], next)
		if j < 0 {
			break
		}
		end := start + 1 + j
		elem, ok := looseElement(raw[start:end])
		if !ok {
			return nil, false
		}
		pieces = append(pieces, elem)
		start = end + len(next) - 1
	}
	return append(pieces, raw[start:]), true
}

// firstLine returns the line start next and what follows it in the first
// element, at data[i], up to the end of its first key (kubectl writes the
// keys of each object in order, so each of its elements starts so), and
// the place in it of its byte that is rarest in data. It returns nil when
// next is nil or the element does not start with a key.
func firstLine(data []byte, i int, next []byte) ([]byte, int) {
	if next == nil {
		return nil, 0
	}
	k := skipSpace(data, i+1)
	if k >= len(data) || data[k] != '"' {
		return nil, 0
	}
	end := bytes.IndexByte(data[k+1:], '"')
	if end < 0 || bytes.IndexByte(data[k+1:k+1+end], '\\') >= 0 {
		return nil, 0
	}
	line := append(slices.Clone(next), data[i+1:k+2+end]...)
	var counts [256]int
	for _, c := range data[:min(len(data), 256<<10)] {
		counts[c]++
	}
	rare := len(next) - 1
	for j, c := range line {
		if counts[c] < counts[line[rare]] {
			rare = j
		}
	}
	return line, rare
}

// indexAnchored is bytes.Index(data, line): it looks for line[rare], and
// compares line around it.
func indexAnchored(data, line []byte, rare int) int {
	for at := rare; at < len(data); {
		j := bytes.IndexByte(data[at:], line[rare])
		if j < 0 {
			return -1
		}
		at += j
		if start := at - rare; start+len(line) <= len(data) && string(data[start:start+len(line)]) == string(line) {
			return start
		}
		at++
	}
	return -1
}

// oneValue reports whether data is one JSON value and space.
func oneValue(data []byte) bool { return onlySpaceAfter(data, skipValue(data, 0)) }

// cutYAMLList reads a YAML document line by line through the List cutter,
// handing each item to item as soon as it is complete, and returns the
// List without its items. It returns errDecline for what splitDocuments
// would not cut the same way: a document separator, a carriage return, a
// document the cutter declines.
//
// From the second item on, the items are cut in bulk instead: each runs
// to the next line that starts with "- " (as the cutter cuts them: such a
// line starts an item, or the cutter declines) and is handed over loose,
// for the worker to check its lines as the cutter would (yamlItemLines);
// the last, with no such line after it, goes through the cutter.
func cutYAMLList(ctx context.Context, r *bufio.Reader, pool *chunks, item func([]byte, bool)) ([]byte, error) {
	c := yamlListCutter{item: func(b []byte) { item(b, false) }}
	items := 0
	var long []byte
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, line...)
			continue
		}
		if long != nil {
			line = append(long, line...)
			long = nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, &readError{err}
		}
		if len(line) > 0 {
			if !cutterLine(&c, line) {
				return nil, errDecline
			}
			if c.inItems && bytes.HasPrefix(line, []byte("- ")) {
				if items++; items == 2 && err == nil {
					// The second item has begun: the rest in bulk.
					c.cur = nil
					return cutYAMLItems(ctx, &c, r, pool, bytes.Clone(line), item)
				}
			}
		}
		if err != nil {
			break
		}
	}
	rest, ok := c.end()
	if !ok {
		return nil, errDecline
	}
	return rest, nil
}

// cutterLine gives the cutter a line as cutYAMLList reads it, and reports
// whether the cutter takes it.
func cutterLine(c *yamlListCutter, line []byte) bool {
	if bytes.IndexByte(line, '\r') >= 0 || bytes.HasPrefix(line, []byte("---")) {
		return false
	}
	if line[len(line)-1] != '\n' {
		if len(line) >= yamlReaderBuffer {
			return false // the YAML reader may drop it (cutYAMLDocuments)
		}
		// As the YAML reader ends a document's last line.
		line = append(line, '\n')
	}
	return c.line(line)
}

// cutYAMLItems cuts the items of a List from the one starting with first
// (its first line, read already), each to the next line starting with
// "- ", and gives the rest from the last item on to the cutter c.
func cutYAMLItems(ctx context.Context, c *yamlListCutter, r io.Reader, pool *chunks, first []byte, item func([]byte, bool)) ([]byte, error) {
	w := newWindow(ctx, r, pool, first)
	start := 0 // the item being cut
	for {
		if j := bytes.Index(w.buf[start+1:], []byte("\n- ")); j >= 0 {
			end := start + 1 + j + 1
			item(w.buf[start:end:end], true)
			start = end
			continue
		}
		if w.eof {
			break
		}
		if _, err := w.more(start); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		start = 0
	}
	for tail := w.buf[start:]; len(tail) > 0; {
		n := bytes.IndexByte(tail, '\n') + 1
		if n == 0 {
			n = len(tail)
		}
		if !cutterLine(c, tail[:n]) {
			return nil, errDecline
		}
		tail = tail[n:]
	}
	rest, ok := c.end()
	if !ok {
		return nil, errDecline
	}
	return rest, nil
}

// convertLooseYAMLItem is convertYAMLItem of yamlItemLines(piece): it
// converts the item of a YAML List that piece holds, cut by cutYAMLItems,
// or returns false when the List cutter would not have taken piece's lines
// as one item or it does not convert to an object; fast says the fast
// converter converted it. The fast converter
// reads the item as it lies (fastLooseYAMLItem); anything it does not read
// goes the way of yamlItemLines and convertYAMLItem.
func convertLooseYAMLItem(piece []byte, duplicates bool, scratch *yamlScratch) (raw []byte, fast, ok bool) {
	raw, refused, ok := fastLooseYAMLItem(piece, scratch)
	if refused {
		return nil, false, false
	}
	if ok {
		return raw, true, bytes.HasPrefix(raw, []byte("{"))
	}
	item, ok := yamlItemLines(piece)
	if !ok {
		return nil, false, false
	}
	raw, ok = convertYAMLItem(item, duplicates, scratch)
	return raw, false, ok
}

// fastLooseYAMLItem converts a loose item of a YAML List with the fast
// converter, reading its lines once for the cutter's check and the
// conversion both, and without copying it: the "- " of its first line is
// read as the indentation of its first key, as the converter reads any
// "- key: value" entry. It reports refused when yamlItemLines would
// refuse piece for its first line or its line breaks, and false when the
// fast converter does not read it.
func fastLooseYAMLItem(piece []byte, scratch *yamlScratch) (raw []byte, refused, ok bool) {
	if !bytes.HasPrefix(piece, []byte("- ")) || !startsWithKey(piece[2:]) ||
		bytes.IndexByte(piece, '\r') >= 0 || piece[len(piece)-1] != '\n' {
		return nil, true, false
	}
	lines := scratch.split(piece)
	if lines == nil {
		return nil, false, false
	}
	// The first line holds no spaces after "- " (a key follows). A later
	// line the cutter refuses (one with less than two spaces of
	// indentation) ends the item's mapping there, so the converter refuses
	// it too, and yamlItemLines then says so.
	lines[0] = yamlLine{indent: 2, content: lines[0].content[2:], raw: lines[0].raw}
	raw, ok = convertYAMLLines(lines, len(piece), scratch)
	return raw, false, ok
}

// yamlItemLines returns the item of a YAML List that piece holds, cut by
// cutYAMLItems, as the List cutter would have cut it (its "- " made two
// spaces), or false when the cutter would not have taken piece's lines as
// one item: then it would have declined the file.
func yamlItemLines(piece []byte) ([]byte, bool) {
	if !bytes.HasPrefix(piece, []byte("- ")) || !startsWithKey(piece[2:]) || !printable(piece) ||
		bytes.IndexByte(piece, '\r') >= 0 || piece[len(piece)-1] != '\n' {
		return nil, false
	}
	for rest := piece[bytes.IndexByte(piece, '\n')+1:]; len(rest) > 0; {
		n := bytes.IndexByte(rest, '\n') + 1
		line := rest[:n]
		rest = rest[n:]
		// A blank line, or one indented by two spaces or more: any other
		// line the cutter refuses, or ends the items at, which it then
		// refuses the "- " line after.
		if len(bytes.TrimRight(line, " \n")) > 0 && !bytes.HasPrefix(line, []byte("  ")) {
			return nil, false
		}
	}
	out := make([]byte, len(piece))
	copy(out, "  ")
	copy(out[2:], piece[2:])
	return out, true
}
