package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// protoItem is an item type of a list: a Kubernetes object with its
// generated protobuf decoder, whose first field is its ObjectMeta.
type protoItem[T any] interface {
	*T
	Unmarshal([]byte) error
}

// Field numbers of the protobuf messages rawPages reads.
const (
	unknownTypeMeta        = 1 // runtime.Unknown: typeMeta
	unknownRaw             = 2 // runtime.Unknown: raw
	unknownContentEncoding = 3 // runtime.Unknown: contentEncoding
	typeMetaKind           = 2 // runtime.TypeMeta: kind
	listMetadata           = 1 // every List: metadata (ListMeta)
	listItems              = 2 // every List: items
	objectMetadata         = 1 // every object: metadata (ObjectMeta)
	metaManagedFields      = 17
)

// protoMagic starts every protobuf-encoded response of the API server.
var protoMagic = []byte("k8s\x00")

// rawPages fetches a kind's pages as bytes and decodes them itself, so that
// a page costs no more than its items and the next page is asked for
// early: the continue token is read from the first bytes of a response
// (the API server writes a list's metadata before its items), so that the
// API server prepares the next page while this one is still arriving and
// being decoded; responses are read into buffers it owns (three: one page
// being decoded, one waiting, one arriving) rather than a new one per page;
// the protobuf envelope and the list are walked in place rather than
// copied; and each item is decoded by its generated decoder without its
// managed fields (often most of an object as the API server returns it;
// nothing reads them). The items it makes are those client-go's typed List
// makes, managed fields aside (TestRawPagesMatchTyped): a response that is
// not a protobuf list of the kind (JSON, say), or that the walk cannot
// read, is given to client-go's decoder whole, which gives the same
// objects or the same error as the typed List.
type rawPages[T any, PT protoItem[T]] struct {
	client   rest.Interface
	resource string
	listKind string
	// newList and items make the list the fallback decodes into and
	// return its items.
	newList func() runtime.Object
	items   func(runtime.Object) []T
	free    chan *pageBuf
	// scratch holds an item without its managed fields while it is
	// decoded: pageScratch for the pages decoded by listPages' consumer,
	// wholeScratch for those decoded as they are fetched (fetch), which
	// runs on the fetcher's goroutine.
	pageScratch, wholeScratch []byte
}

// pageBuffers is how many responses a rawPages holds at once.
const pageBuffers = 3

// newRawPages returns rawPages listing resource (a cluster-wide list of the
// core API) through client, whose responses are listKind lists.
func newRawPages[T any, PT protoItem[T]](client rest.Interface, resource, listKind string, newList func() runtime.Object, items func(runtime.Object) []T) *rawPages[T, PT] {
	r := &rawPages[T, PT]{client: client, resource: resource, listKind: listKind, newList: newList, items: items, free: make(chan *pageBuf, pageBuffers)}
	for range pageBuffers {
		r.free <- new(pageBuf)
	}
	return r
}

// fetch is a fetchPage: it returns once the response's continue token has
// arrived, and the page reads the rest.
func (r *rawPages[T, PT]) fetch(ctx context.Context, opts metav1.ListOptions) (page[T], string, error) {
	var buf *pageBuf
	select {
	case buf = <-r.free:
	case <-ctx.Done():
		return page[T]{}, "", ctx.Err()
	}
	release := func() { r.free <- buf }
	body, err := r.client.Get().UseProtobufAsDefault().Resource(r.resource).VersionedParams(&opts, scheme.ParameterCodec).Stream(ctx)
	if err != nil {
		release()
		return page[T]{}, "", err
	}
	buf.b = buf.b[:0]
	for {
		cont, st := peekHead(buf.b, r.listKind)
		if st == headFound {
			return page[T]{
				decode: func() ([]T, error) {
					defer release()
					err := buf.readAll(body)
					if cerr := body.Close(); err == nil {
						err = cerr
					}
					if err != nil {
						return nil, err
					}
					items, _, err := r.decode(buf.b, &r.pageScratch)
					return items, err
				},
				drop: func() {
					_ = body.Close()
					release()
				},
			}, cont, nil
		}
		if st == headNone {
			break
		}
		if err := buf.readSome(body); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			_ = body.Close()
			release()
			return page[T]{}, "", err
		}
	}
	// No token ahead of the items: the page is read and decoded whole.
	err = buf.readAll(body)
	if cerr := body.Close(); err == nil {
		err = cerr
	}
	var items []T
	var cont string
	if err == nil {
		items, cont, err = r.decode(buf.b, &r.wholeScratch)
	}
	release()
	if err != nil {
		return page[T]{}, "", err
	}
	return page[T]{decode: func() ([]T, error) { return items, nil }}, cont, nil
}

// decode decodes a whole response: by walking it when it is a protobuf
// list of the kind, else (or if the walk or an item fails) with
// client-go's decoder. It returns the items and the continue token;
// scratch is the buffer it may use.
func (r *rawPages[T, PT]) decode(body []byte, scratch *[]byte) ([]T, string, error) {
	if l, ok := splitList(body, r.listKind); ok {
		if items, err := decodeItems[T, PT](l.items, scratch); err == nil {
			return items, l.cont, nil
		}
	}
	return r.decodeWhole(body)
}

// pageBuf holds a response's bytes.
type pageBuf struct{ b []byte }

// readSome appends what one Read of body gives (growing b when full).
func (p *pageBuf) readSome(body io.Reader) error {
	if len(p.b) == cap(p.b) {
		p.b = slices.Grow(p.b, max(cap(p.b), 64<<10))
	}
	n, err := body.Read(p.b[len(p.b):cap(p.b)])
	p.b = p.b[:len(p.b)+n]
	return err
}

// readAll appends the rest of body.
func (p *pageBuf) readAll(body io.Reader) error {
	for {
		if err := p.readSome(body); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// headState is what the first bytes of a response say of its continue
// token.
type headState int

const (
	// headIncomplete: more bytes are needed.
	headIncomplete headState = iota
	// headFound: the token is known.
	headFound
	// headNone: the response is not a protobuf list of the kind with
	// its metadata ahead of its items; only the whole says.
	headNone
)

// peekHead reads the continue token from the start b of a protobuf
// response holding a list of kind listKind: the envelope's type, then the
// list's metadata, which the API server writes before the items.
func peekHead(b []byte, listKind string) (string, headState) {
	if len(b) < len(protoMagic) {
		if bytes.HasPrefix(protoMagic, b) {
			return "", headIncomplete
		}
		return "", headNone
	}
	b, ok := bytes.CutPrefix(b, protoMagic)
	if !ok {
		return "", headNone
	}
	kindSeen := false
	for {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", truncatedOrNone(n)
		}
		if typ != protowire.BytesType {
			return "", headNone
		}
		switch {
		case num == unknownTypeMeta:
			v, m := protowire.ConsumeBytes(b[n:])
			if m < 0 {
				return "", truncatedOrNone(m)
			}
			if kindOf(v) != listKind {
				return "", headNone
			}
			kindSeen = true
			b = b[n+m:]
		case num == unknownRaw && kindSeen:
			_, m := protowire.ConsumeVarint(b[n:])
			if m < 0 {
				return "", truncatedOrNone(m)
			}
			list := b[n+m:]
			num, typ, k := protowire.ConsumeTag(list)
			if k < 0 {
				return "", truncatedOrNone(k)
			}
			if num != listMetadata || typ != protowire.BytesType {
				return "", headNone
			}
			v, j := protowire.ConsumeBytes(list[k:])
			if j < 0 {
				return "", truncatedOrNone(j)
			}
			var lm metav1.ListMeta
			if lm.Unmarshal(v) != nil {
				return "", headNone
			}
			return lm.Continue, headFound
		default:
			return "", headNone
		}
	}
}

// truncatedOrNone is the headState of a protowire error code n: more bytes
// may complete a truncated field; anything else is not for the walk.
func truncatedOrNone(n int) headState {
	if errors.Is(protowire.ParseError(n), io.ErrUnexpectedEOF) {
		return headIncomplete
	}
	return headNone
}

// kindOf returns the kind of a protobuf runtime.TypeMeta ("" when it has
// none or cannot be walked).
func kindOf(typeMeta []byte) string {
	var kind string
	if walk(typeMeta, func(num protowire.Number, v []byte) error {
		if num == typeMetaKind {
			kind = string(v)
		}
		return nil
	}) != nil {
		return ""
	}
	return kind
}

// decodeItems decodes each item of a page, without its managed fields,
// using scratch.
func decodeItems[T any, PT protoItem[T]](raw [][]byte, scratch *[]byte) ([]T, error) {
	items := make([]T, len(raw))
	for i, b := range raw {
		var stripped bool
		*scratch, stripped = withoutManagedFields((*scratch)[:0], b)
		if stripped {
			b = *scratch
		}
		if err := PT(&items[i]).Unmarshal(b); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// decodeWhole decodes a response as client-go's typed List does, and
// returns its items and continue token.
func (r *rawPages[T, PT]) decodeWhole(body []byte) ([]T, string, error) {
	list := r.newList()
	out, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, list)
	if err != nil {
		return nil, "", err
	}
	if out != list {
		if status, ok := out.(*metav1.Status); ok && status.Status != metav1.StatusSuccess {
			return nil, "", apierrors.FromObject(status)
		}
		return nil, "", fmt.Errorf("listing %s: the server sent a %T, not a %s", r.resource, out, r.listKind)
	}
	lm, ok := list.(metav1.ListInterface)
	if !ok {
		return nil, "", fmt.Errorf("listing %s: %T is not a list", r.resource, list)
	}
	return r.items(list), lm.GetContinue(), nil
}

// rawList is a protobuf list response, walked in place: its continue
// token and its items' bytes.
type rawList struct {
	cont  string
	items [][]byte
}

// splitList walks a protobuf response holding a list of kind listKind. It
// reports false when body is anything else (another encoding, another
// kind, an encoded envelope) or cannot be walked.
func splitList(body []byte, listKind string) (rawList, bool) {
	b, ok := bytes.CutPrefix(body, protoMagic)
	if !ok {
		return rawList{}, false
	}
	var list []byte
	var kind string
	err := walk(b, func(num protowire.Number, v []byte) error {
		switch num {
		case unknownTypeMeta:
			kind = kindOf(v)
		case unknownRaw:
			list = v
		case unknownContentEncoding:
			if len(v) > 0 {
				return errors.New("encoded")
			}
		}
		return nil
	})
	if err != nil || kind != listKind {
		return rawList{}, false
	}
	var out rawList
	err = walk(list, func(num protowire.Number, v []byte) error {
		switch num {
		case listMetadata:
			var m metav1.ListMeta
			if err := m.Unmarshal(v); err != nil {
				return err
			}
			out.cont = m.Continue
		case listItems:
			out.items = append(out.items, v)
		}
		return nil
	})
	return out, err == nil
}

// walk calls f with the number and bytes of each length-delimited field of
// the protobuf message b, in order, skipping the fields of other wire
// types.
func walk(b []byte, f func(num protowire.Number, v []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		if typ != protowire.BytesType {
			m := protowire.ConsumeFieldValue(num, typ, b[n:])
			if m < 0 {
				return protowire.ParseError(m)
			}
			b = b[n+m:]
			continue
		}
		v, m := protowire.ConsumeBytes(b[n:])
		if m < 0 {
			return protowire.ParseError(m)
		}
		if err := f(num, v); err != nil {
			return err
		}
		b = b[n+m:]
	}
	return nil
}

// withoutManagedFields appends to dst the protobuf object item without the
// managed fields of its metadata and reports true, or reports false (and
// dst unchanged) when item has none or cannot be walked; decoding either
// gives the object that decoding item and then dropping its managed fields
// gives.
func withoutManagedFields(dst, item []byte) ([]byte, bool) {
	if !hasManagedFields(item) {
		return dst, false
	}
	start := len(dst)
	b := item
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return dst[:start], false
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return dst[:start], false
		}
		if num != objectMetadata || typ != protowire.BytesType {
			dst = append(dst, b[:n+m]...)
			b = b[n+m:]
			continue
		}
		meta, _ := protowire.ConsumeBytes(b[n:])
		dst = append(dst, b[:n]...)
		dst = protowire.AppendVarint(dst, uint64(sizeWithoutManagedFields(meta)))
		if err := walkRaw(meta, func(num protowire.Number, typ protowire.Type, field []byte) {
			if num != metaManagedFields || typ != protowire.BytesType {
				dst = append(dst, field...)
			}
		}); err != nil {
			return dst[:start], false
		}
		b = b[n+m:]
	}
	return dst, true
}

// hasManagedFields reports whether the metadata of the protobuf object item
// has managed fields (false too when item cannot be walked).
func hasManagedFields(item []byte) bool {
	found := false
	_ = walk(item, func(num protowire.Number, v []byte) error {
		if num == objectMetadata && !found {
			_ = walk(v, func(num protowire.Number, _ []byte) error {
				found = found || num == metaManagedFields
				return nil
			})
		}
		return nil
	})
	return found
}

// sizeWithoutManagedFields is the size of the protobuf ObjectMeta meta
// without its managed fields.
func sizeWithoutManagedFields(meta []byte) int {
	size := 0
	_ = walkRaw(meta, func(num protowire.Number, typ protowire.Type, field []byte) {
		if num != metaManagedFields || typ != protowire.BytesType {
			size += len(field)
		}
	})
	return size
}

// walkRaw calls f with the number, wire type and whole bytes (tag
// included) of each field of the protobuf message b, in order.
func walkRaw(b []byte, f func(num protowire.Number, typ protowire.Type, field []byte)) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return protowire.ParseError(m)
		}
		f(num, typ, b[:n+m])
		b = b[n+m:]
	}
	return nil
}
