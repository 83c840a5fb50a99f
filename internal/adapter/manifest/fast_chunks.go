package manifest

import "sync/atomic"

// A streamed file is read a chunk at a time, and its items are handed to
// the workers as slices of the chunk they were cut from. Once every item
// of a chunk has been prepared (and what commit still needs of it copied
// out), nothing refers to the chunk, and the next read reuses it: the
// reader allocates a few chunks, not one per megabyte of the file, which
// would double what a load allocates and the collections it needs.

// maxFreeChunks bounds the chunks kept for reuse.
const maxFreeChunks = 8

// chunks are the buffers of one streamed file.
type chunks struct {
	free chan []byte
	// cur is the chunk the window reads into now (the reading
	// goroutine's).
	cur *chunk
}

func newChunks() *chunks { return &chunks{free: make(chan []byte, maxFreeChunks)} }

// chunk is a buffer of a streamed file, with how many hold it: the window
// while it reads into it, and each item cut from it until it is prepared.
type chunk struct {
	buf  []byte
	refs atomic.Int32
	free chan []byte
}

// hold adds a holder of c.
func (c *chunk) hold() { c.refs.Add(1) }

// release drops a holder of c; the last one hands its buffer back.
func (c *chunk) release() {
	if c.refs.Add(-1) == 0 {
		select {
		case c.free <- c.buf[:0]:
		default:
		}
	}
}

// get returns a buffer of length n and capacity size or more: one handed
// back, else a new one, with room for the part of an item a read keeps
// (so that it serves the next reads too). Nil chunks hand out new buffers
// only, which nothing reuses: what is cut from them stays as it was read.
func (cs *chunks) get(n, size int) []byte {
	if cs != nil {
		select {
		case b := <-cs.free:
			if cap(b) >= size {
				return b[:n]
			}
		default:
		}
	}
	return make([]byte, n, max(size, streamChunk+chunkSlack))
}

// chunkSlack is the room a new chunk has beyond a read's.
const chunkSlack = streamChunk / 8

// use makes buf the chunk read into, releasing the one before; nil chunks
// track nothing.
func (cs *chunks) use(buf []byte) {
	if cs == nil {
		return
	}
	c := &chunk{buf: buf, free: cs.free}
	c.refs.Store(1)
	if cs.cur != nil {
		cs.cur.release()
	}
	cs.cur = c
}

// done releases the window's hold on the last chunk: the file is read.
func (cs *chunks) done() {
	if cs.cur != nil {
		cs.cur.release()
		cs.cur = nil
	}
}
