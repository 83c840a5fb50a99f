package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// errCut is what a cut client's requests fail with.
var errCut = errors.New("integration: client cut off")

// call is one request a client made, as the API server answered it.
type call struct {
	Method, Path string
	Code         int       // 0 when no response (cut, connection error)
	At           time.Time // when the request was sent
	// Body is the request's body for patches of a pod's status (the
	// scheduler's messages), empty otherwise.
	Body string
}

// tap wraps a client's transport: it records every request and its status
// code, and cut() severs the client from the API server at once — new
// requests fail and open ones (watches) are aborted — as if its process
// had been killed: nothing it does afterwards reaches the server.
type tap struct {
	mu    sync.Mutex
	calls []call
	cutCh chan struct{}
	once  sync.Once
}

func newTap() *tap { return &tap{cutCh: make(chan struct{})} }

// client returns a clientset for cfg whose requests go through the tap.
func (tp *tap) client(cfg *rest.Config) kubernetes.Interface {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &tapRT{tap: tp, base: rt} })
	return kubernetes.NewForConfigOrDie(cfg)
}

func (tp *tap) cut() { tp.once.Do(func() { close(tp.cutCh) }) }

func (tp *tap) isCut() bool {
	select {
	case <-tp.cutCh:
		return true
	default:
		return false
	}
}

func (tp *tap) record(c call) {
	tp.mu.Lock()
	tp.calls = append(tp.calls, c)
	tp.mu.Unlock()
}

// Calls returns the recorded calls matching method and a path suffix.
func (tp *tap) Calls(method, pathContains string) []call {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	var out []call
	for _, c := range tp.calls {
		if (method == "" || c.Method == method) && strings.Contains(c.Path, pathContains) {
			out = append(out, c)
		}
	}
	return out
}

// All returns every recorded call.
func (tp *tap) All() []call { return tp.Calls("", "") }

type tapRT struct {
	tap  *tap
	base http.RoundTripper
}

func (rt *tapRT) RoundTrip(req *http.Request) (*http.Response, error) {
	sent := time.Now()
	var body string
	if _, _, sub, ok := parsePodPath(req.URL.Path); ok && sub == "status" && req.Method == http.MethodPatch && req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = string(b)
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	if rt.tap.isCut() {
		rt.tap.record(call{Method: req.Method, Path: req.URL.Path, At: sent, Body: body})
		return nil, errCut
	}
	ctx, cancel := context.WithCancel(req.Context())
	stop := context.AfterFunc(ctxFromChan(rt.tap.cutCh), cancel)
	resp, err := rt.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		stop()
		cancel()
		rt.tap.record(call{Method: req.Method, Path: req.URL.Path, At: sent, Body: body})
		return nil, err
	}
	rt.tap.record(call{Method: req.Method, Path: req.URL.Path, Code: resp.StatusCode, At: sent, Body: body})
	resp.Body = &cancelBody{ReadCloser: resp.Body, done: func() { stop(); cancel() }}
	return resp, nil
}

type cancelBody struct {
	io.ReadCloser
	done func()
	once sync.Once
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.done)
	return err
}

// chanCtx is a context done when its channel closes.
type chanCtx struct {
	context.Context
	ch <-chan struct{}
}

func ctxFromChan(ch <-chan struct{}) context.Context {
	return chanCtx{Context: context.Background(), ch: ch}
}

func (c chanCtx) Done() <-chan struct{} { return c.ch }

func (c chanCtx) Err() error {
	select {
	case <-c.ch:
		return context.Canceled
	default:
		return nil
	}
}

// podCalls sums, per pod ("namespace/name"), the calls of the taps that
// match method and subresource ("" for the pod itself), counting only
// those the API server answered with a success code when okOnly.
func podCalls(method, subresource string, okOnly bool, taps ...*tap) map[string]int {
	out := map[string]int{}
	for _, tp := range taps {
		for _, c := range tp.All() {
			if c.Method != method || (okOnly && (c.Code < 200 || c.Code > 299)) {
				continue
			}
			ns, name, sub, ok := parsePodPath(c.Path)
			if !ok || sub != subresource {
				continue
			}
			out[ns+"/"+name]++
		}
	}
	return out
}

// parsePodPath splits /api/v1/namespaces/NS/pods/NAME[/SUB].
func parsePodPath(p string) (ns, name, sub string, ok bool) {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	if len(parts) < 6 || parts[0] != "api" || parts[1] != "v1" || parts[2] != "namespaces" || parts[4] != "pods" {
		return "", "", "", false
	}
	if len(parts) == 7 {
		sub = parts[6]
	} else if len(parts) > 7 {
		return "", "", "", false
	}
	return parts[3], parts[5], sub, true
}

func (c call) String() string { return fmt.Sprintf("%s %s -> %d", c.Method, c.Path, c.Code) }
