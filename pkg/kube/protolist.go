package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"

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
// a page costs no more than its items: the response is read into one of
// two buffers it owns (one being decoded, one being fetched) rather than a
// new one per page, the protobuf envelope and the list are walked in place
// rather than copied, and each item is decoded by its generated decoder
// without its managed fields (often most of an object as the API server
// returns it; nothing reads them). The items it makes are those client-go's
// typed List makes, managed fields aside (TestRawPagesMatchTyped): a
// response that is not a protobuf list of the kind (JSON, say), or that the
// walk cannot read, is given to client-go's decoder whole, which gives the
// same objects or the same error as the typed List.
type rawPages[T any, PT protoItem[T]] struct {
	client   rest.Interface
	resource string
	listKind string
	// newList and items make the list the fallback decodes into and
	// return its items.
	newList func() runtime.Object
	items   func(runtime.Object) []T
	free    chan *bytes.Buffer
	// scratch holds an item without its managed fields; only decode,
	// which runs on one goroutine at a time, writes it.
	scratch []byte
}

// newRawPages returns rawPages listing resource (a cluster-wide list of the
// core API) through client, whose responses are listKind lists.
func newRawPages[T any, PT protoItem[T]](client rest.Interface, resource, listKind string, newList func() runtime.Object, items func(runtime.Object) []T) *rawPages[T, PT] {
	r := &rawPages[T, PT]{client: client, resource: resource, listKind: listKind, newList: newList, items: items, free: make(chan *bytes.Buffer, 2)}
	r.free <- new(bytes.Buffer)
	r.free <- new(bytes.Buffer)
	return r
}

// fetch is a fetchPage.
func (r *rawPages[T, PT]) fetch(ctx context.Context, opts metav1.ListOptions) (func() ([]T, error), string, error) {
	var buf *bytes.Buffer
	select {
	case buf = <-r.free:
	case <-ctx.Done():
		return nil, "", ctx.Err()
	}
	if err := r.read(ctx, opts, buf); err != nil {
		r.free <- buf
		return nil, "", err
	}
	page, ok := splitList(buf.Bytes(), r.listKind)
	if !ok {
		// Not for the walk: client-go's decoder decodes it now.
		items, cont, err := r.decodeWhole(buf.Bytes())
		r.free <- buf
		if err != nil {
			return nil, "", err
		}
		return func() ([]T, error) { return items, nil }, cont, nil
	}
	return func() ([]T, error) {
		defer func() { r.free <- buf }()
		items, err := r.decodeItems(page.items)
		if err != nil {
			items, _, err = r.decodeWhole(buf.Bytes())
		}
		return items, err
	}, page.cont, nil
}

// read sends the list request, as the typed client sends it, and reads the
// response into buf.
func (r *rawPages[T, PT]) read(ctx context.Context, opts metav1.ListOptions, buf *bytes.Buffer) error {
	body, err := r.client.Get().UseProtobufAsDefault().Resource(r.resource).VersionedParams(&opts, scheme.ParameterCodec).Stream(ctx)
	if err != nil {
		return err
	}
	buf.Reset()
	_, err = buf.ReadFrom(body)
	if cerr := body.Close(); err == nil {
		err = cerr
	}
	return err
}

// decodeItems decodes each item of a page, without its managed fields.
func (r *rawPages[T, PT]) decodeItems(raw [][]byte) ([]T, error) {
	items := make([]T, len(raw))
	for i, b := range raw {
		var stripped bool
		r.scratch, stripped = withoutManagedFields(r.scratch[:0], b)
		if stripped {
			b = r.scratch
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
			return walk(v, func(num protowire.Number, v []byte) error {
				if num == typeMetaKind {
					kind = string(v)
				}
				return nil
			})
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
