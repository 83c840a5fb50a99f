package kube

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// scriptedPages is a fetchPage over pages of one int each (page i holds i),
// numbered by their continue tokens, that records what listPages does.
type scriptedPages struct {
	pages int
	// expireAt fails the fetch of that page once with 410 Gone.
	expireAt int
	// failDecodeAt fails the decode of that page.
	failDecodeAt int
	// fetched is closed when the fetch of page 2 starts.
	fetched2 chan struct{}

	mu      sync.Mutex
	events  []string
	pending map[int]bool // fetched, neither decoded nor dropped
}

func (s *scriptedPages) log(e string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e)
}

func (s *scriptedPages) fetch(_ context.Context, opts metav1.ListOptions) (page[int], string, error) {
	i, _ := strconv.Atoi(opts.Continue)
	if opts.Limit == 0 {
		i = -1 // the full list
	}
	if i == 2 && s.fetched2 != nil {
		close(s.fetched2)
	}
	if i == s.expireAt && s.expireAt > 0 {
		s.expireAt = 0
		s.log("fetch " + strconv.Itoa(i) + ": expired")
		return page[int]{}, "", apierrors.NewResourceExpired("expired")
	}
	s.log("fetch " + strconv.Itoa(i))
	s.mu.Lock()
	s.pending[i] = true
	s.mu.Unlock()
	done := func(what string) {
		s.mu.Lock()
		delete(s.pending, i)
		s.mu.Unlock()
		s.log(what + " " + strconv.Itoa(i))
	}
	cont := ""
	if i >= 0 && i+1 < s.pages {
		cont = strconv.Itoa(i + 1)
	}
	return page[int]{
		decode: func() ([]int, error) {
			done("decode")
			if i == s.failDecodeAt {
				return nil, errors.New("corrupt")
			}
			if i < 0 {
				return []int{0, 1, 2, 3}, nil
			}
			return []int{i}, nil
		},
		drop: func() { done("drop") },
	}, cont, nil
}

func TestListPagesRequestsAhead(t *testing.T) {
	s := &scriptedPages{pages: 4, failDecodeAt: -2, fetched2: make(chan struct{}), pending: map[int]bool{}}
	var kept []int
	err := listPages(context.Background(), 1, s.fetch, func(items []int) {
		if items[0] == 1 {
			// Page 1 is kept only once page 2 has been asked for.
			select {
			case <-s.fetched2:
			case <-time.After(10 * time.Second):
				t.Error("page 2 was not asked for while page 1 was decoded")
			}
		}
		kept = append(kept, items...)
	}, func() { t.Error("reset") })
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{0, 1, 2, 3}, kept); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
}

func TestListPagesExpiredAndFailed(t *testing.T) {
	tests := map[string]struct {
		pages, expireAt, failDecodeAt int
		wantKept                      []int
		wantErr                       bool
		// wantResetAfter is how many items were kept when reset came.
		wantResetAfter int
	}{
		"expired token: the pages before are kept, then reset, then the full list": {
			pages: 4, expireAt: 2, failDecodeAt: -2, wantKept: []int{0, 1, 2, 3}, wantResetAfter: 2,
		},
		"a page that fails to decode stops the list; pages ahead are dropped": {
			pages: 6, failDecodeAt: 1, wantKept: []int{0}, wantErr: true, wantResetAfter: -1,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := &scriptedPages{pages: tc.pages, expireAt: tc.expireAt, failDecodeAt: tc.failDecodeAt, pending: map[int]bool{}}
			var kept []int
			resetAfter := -1
			err := listPages(context.Background(), 1, s.fetch, func(items []int) { kept = append(kept, items...) }, func() {
				resetAfter = len(kept)
				kept = nil
			})
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want one: %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantKept, kept); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
			if resetAfter != tc.wantResetAfter {
				t.Errorf("reset after %d items, want %d", resetAfter, tc.wantResetAfter)
			}
			if len(s.pending) != 0 {
				t.Errorf("pages neither decoded nor dropped: %v (events %v)", s.pending, s.events)
			}
		})
	}
}
