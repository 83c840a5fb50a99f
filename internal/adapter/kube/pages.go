package kube

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fetchPage requests one page of a list. It returns the page and its
// continue token ("" on the last page) as soon as the token is known,
// which may be before the whole response has arrived: listPages then asks
// for the next page while this one is read and decoded.
type fetchPage[T any] func(ctx context.Context, opts metav1.ListOptions) (p page[T], cont string, err error)

// page is a fetched page. listPages calls exactly one of its functions,
// once, on a goroutine of its own.
type page[T any] struct {
	// decode makes the page's items (reading what is left of the
	// response first).
	decode func() ([]T, error)
	// drop releases the page without decoding it; nil when there is
	// nothing to release.
	drop func()
}

// listPages lists a kind in pages of chunk objects (all at once when chunk
// is 0) and hands each page's items to keep, in the server's order, one
// page at a time. The request for a page goes out as soon as the page
// before has arrived, before that one is decoded: the API server prepares
// the next page while this side decodes. When a continue token expires
// while paging (410 Gone), reset is called (after the pages already read
// have been kept) to drop what was kept, and the kind is listed again in one
// response, as client-go's pager falls back to a full list.
func listPages[T any](ctx context.Context, chunk int64, fetch fetchPage[T], keep func([]T), reset func()) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// A step is a fetched page to decode, or a reset. One waits in the
	// channel while one is decoded and the fetcher asks for a third.
	type step struct {
		page  page[T]
		reset bool
	}
	steps := make(chan step, 1)
	fetchErr := make(chan error, 1)
	go func() {
		defer close(steps)
		fetchErr <- fetchAll(ctx, chunk, fetch, func(p page[T], reset bool) bool {
			select {
			case steps <- step{page: p, reset: reset}:
				return true
			case <-ctx.Done():
				if p.drop != nil {
					p.drop()
				}
				return false
			}
		})
	}()
	var decodeErr error
	for s := range steps {
		if decodeErr != nil {
			// Drain until the fetcher has stopped.
			if s.page.drop != nil {
				s.page.drop()
			}
			continue
		}
		if s.reset {
			reset()
			continue
		}
		items, err := s.page.decode()
		if err != nil {
			decodeErr = err
			cancel()
			continue
		}
		keep(items)
	}
	if decodeErr != nil {
		return decodeErr
	}
	return <-fetchErr
}

// fetchAll fetches the pages of a list one after the other and sends each
// (or a reset, after an expired continue token) until the last page has
// been sent, a fetch fails, or send reports that nobody receives any more.
func fetchAll[T any](ctx context.Context, chunk int64, fetch fetchPage[T], send func(p page[T], reset bool) bool) error {
	opts := metav1.ListOptions{Limit: chunk}
	for {
		p, cont, err := fetch(ctx, opts)
		if err != nil && opts.Continue != "" && apierrors.IsResourceExpired(err) {
			if !send(page[T]{}, true) {
				return ctx.Err()
			}
			opts = metav1.ListOptions{}
			continue
		}
		if err != nil {
			return err
		}
		if !send(p, false) {
			return ctx.Err()
		}
		if cont == "" {
			return nil
		}
		opts.Continue = cont
	}
}

// typedPages is a fetchPage over a typed client's List: the page is decoded
// as it is fetched (by client-go), and decode only hands out its items. It
// serves clients that are not backed by a REST client (fakes).
func typedPages[T any, L metav1.ListInterface](list func(context.Context, metav1.ListOptions) (L, error), items func(L) []T) fetchPage[T] {
	return func(ctx context.Context, opts metav1.ListOptions) (page[T], string, error) {
		l, err := list(ctx, opts)
		if err != nil {
			return page[T]{}, "", err
		}
		return page[T]{decode: func() ([]T, error) { return items(l), nil }}, l.GetContinue(), nil
	}
}
