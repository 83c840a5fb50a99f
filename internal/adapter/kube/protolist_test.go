package kube

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protowire"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// listServer is an API server's list endpoints for nodes and pods, paged
// (limit, continue = the next index) and encoded as protobuf or JSON;
// every other list is empty.
type listServer struct {
	listConfig

	mu       sync.Mutex
	requests []string // pods requests: "limit=L continue=C"
}

// listConfig is what a listServer serves.
type listConfig struct {
	nodes []v1.Node
	pods  []v1.Pod
	// json answers in JSON rather than protobuf.
	json bool
	// expireAt expires a pods continue token once, at that index.
	expireAt int
	// corruptAt truncates the pods page starting at that index.
	corruptAt int
	// metaLastAt writes the pods page starting at that index with the
	// list's metadata after its items (protobuf allows any order).
	metaLastAt int
	// holdFirst, when set, sends the first pods page's first half, then
	// waits for the request of the second page (or a timeout) before the
	// rest; second is closed when that request comes.
	holdFirst bool
	second    chan struct{}
	held      bool // the second page was asked for while the first was held
}

func (s *listServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	switch r.URL.Path {
	case "/api/v1/nodes":
		s.page(w, q.Get("limit"), q.Get("continue"), &v1.NodeList{TypeMeta: metav1.TypeMeta{Kind: "NodeList", APIVersion: "v1"}}, len(s.nodes), func(l runtime.Object, from, to int) {
			l.(*v1.NodeList).Items = s.nodes[from:to]
		})
	case "/api/v1/pods":
		s.mu.Lock()
		s.requests = append(s.requests, fmt.Sprintf("limit=%s continue=%s", q.Get("limit"), q.Get("continue")))
		if s.second != nil && q.Get("continue") != "" && q.Get("continue") == q.Get("limit") {
			close(s.second)
		}
		expire := s.expireAt > 0 && q.Get("continue") == strconv.Itoa(s.expireAt)
		if expire {
			s.expireAt = 0
		}
		s.mu.Unlock()
		if expire {
			status := apierrors.NewResourceExpired("continue token expired").ErrStatus
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusGone)
			_ = writeJSON(w, &status)
			return
		}
		s.page(w, q.Get("limit"), q.Get("continue"), &v1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}}, len(s.pods), func(l runtime.Object, from, to int) {
			l.(*v1.PodList).Items = s.pods[from:to]
		})
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"metadata":{},"items":[]}`))
	}
}

// page writes the list l of items [from, to) of n, as limit and cont say.
func (s *listServer) page(w http.ResponseWriter, limit, cont string, l runtime.Object, n int, set func(l runtime.Object, from, to int)) {
	from, _ := strconv.Atoi(cont)
	to := n
	if lim, _ := strconv.Atoi(limit); lim > 0 {
		to = min(from+lim, n)
	}
	set(l, from, to)
	if to < n {
		l.(metav1.ListInterface).SetContinue(strconv.Itoa(to))
	}
	if s.json {
		w.Header().Set("Content-Type", "application/json")
		_ = writeJSON(w, l)
		return
	}
	var b bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(l, &b); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	body := b.Bytes()
	if s.corruptAt > 0 && from == s.corruptAt {
		body = body[:len(body)-7]
	}
	if s.metaLastAt > 0 && from == s.metaLastAt {
		body = metadataLast(body)
	}
	w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf")
	if s.holdFirst && from == 0 && s.second != nil && len(s.pods) == n {
		_, _ = w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		select {
		case <-s.second:
			s.held = true
		case <-time.After(10 * time.Second):
		}
		body = body[len(body)/2:]
	}
	_, _ = w.Write(body)
}

// metadataLast rewrites a protobuf list response with the list's metadata
// after its items.
func metadataLast(body []byte) []byte {
	out := append([]byte(nil), protoMagic...)
	_ = walkRaw(body[len(protoMagic):], func(num protowire.Number, typ protowire.Type, field []byte) {
		if num != unknownRaw {
			out = append(out, field...)
			return
		}
		_, _, n := protowire.ConsumeTag(field)
		list, _ := protowire.ConsumeBytes(field[n:])
		var items, meta []byte
		_ = walkRaw(list, func(num protowire.Number, _ protowire.Type, f []byte) {
			if num == listMetadata {
				meta = append(meta, f...)
			} else {
				items = append(items, f...)
			}
		})
		out = protowire.AppendTag(out, unknownRaw, protowire.BytesType)
		out = protowire.AppendBytes(out, append(items, meta...))
	})
	return out
}

func writeJSON(w http.ResponseWriter, obj runtime.Object) error {
	return scheme.Codecs.LegacyCodec(v1.SchemeGroupVersion).Encode(obj, w)
}

// clientFor returns a client of srv with whatif's settings (protobuf
// preferred, JSON accepted).
func clientFor(t *testing.T, srv *httptest.Server) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL, QPS: -1,
		ContentConfig: rest.ContentConfig{ContentType: runtime.ContentTypeProtobuf, AcceptContentTypes: runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// benchLikePods are pods as the API server returns a Deployment's: labels,
// annotations, an owner, requests, a status and managed fields (but for
// every seventh pod, which has none).
func benchLikePods(n, nodes int) []v1.Pod {
	pods := make([]v1.Pod, n)
	now := metav1.Unix(1_700_000_000, 0)
	for i := range pods {
		p := v1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: fmt.Sprintf("p%05d", i), Namespace: fmt.Sprintf("ns-%d", i%3), UID: types.UID(fmt.Sprintf("uid-%d", i)), ResourceVersion: strconv.Itoa(100 + i),
				CreationTimestamp: now, Labels: map[string]string{"app": fmt.Sprintf("a%d", i/10), "tier": "web"},
				Annotations:     map[string]string{"note": strings.Repeat("x", i%50)},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: fmt.Sprintf("rs-%d", i/10), UID: "rs"}},
			},
			Spec: v1.PodSpec{
				NodeName: fmt.Sprintf("n%d", i%(nodes+1)), PriorityClassName: "low", Priority: new(int32(i % 3)),
				Containers: []v1.Container{{Name: "main", Image: "img:v1", Resources: v1.ResourceRequirements{
					Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m"), v1.ResourceMemory: resource.MustParse("1Gi")},
				}}},
				Tolerations: []v1.Toleration{{Key: "k", Operator: v1.TolerationOpExists}},
			},
			Status: v1.PodStatus{Phase: v1.PodRunning, StartTime: &now, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}},
				ContainerStatuses: []v1.ContainerStatus{{Name: "main", Ready: true, Image: "img:v1"}}},
		}
		if i%7 != 0 {
			p.ManagedFields = []metav1.ManagedFieldsEntry{
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &now, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{}}}`)}},
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &now, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{}}`)}, Subresource: "status"},
			}
		}
		pods[i] = p
	}
	return pods
}

func benchLikeNodes(n int) []v1.Node {
	nodes := make([]v1.Node, n)
	for i := range nodes {
		nodes[i] = v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i), Labels: map[string]string{"zone": strconv.Itoa(i % 4)},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}}},
			Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("16"), v1.ResourcePods: resource.MustParse("110")}}}
	}
	return nodes
}

// TestRawPagesMatchTyped lists the same server with rawPages and with the
// typed clients and wants the same objects, warnings, errors and pods
// requests, whatever the encoding, the page size, an expired continue token
// or a corrupt page.
func TestRawPagesMatchTyped(t *testing.T) {
	nodes, pods := benchLikeNodes(7), benchLikePods(1234, 7)
	tests := map[string]struct {
		srv          listConfig
		chunk        int64
		wantRequests []string
		wantErr      bool
	}{
		"protobuf, kubectl's chunk": {chunk: 500, wantRequests: []string{"limit=500 continue=", "limit=500 continue=500", "limit=500 continue=1000"}},
		"protobuf, small chunks":    {chunk: 100},
		"protobuf, one response":    {chunk: 0, wantRequests: []string{"limit= continue="}},
		"JSON":                      {srv: listConfig{json: true}, chunk: 500},
		"continue token expires": {srv: listConfig{expireAt: 1000}, chunk: 500,
			wantRequests: []string{"limit=500 continue=", "limit=500 continue=500", "limit=500 continue=1000", "limit= continue="}},
		"corrupt page": {srv: listConfig{corruptAt: 500}, chunk: 500, wantErr: true},
		"a page with its metadata after its items": {srv: listConfig{metaLastAt: 500}, chunk: 500,
			wantRequests: []string{"limit=500 continue=", "limit=500 continue=500", "limit=500 continue=1000"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			type result struct {
				Objs     []*v1.Pod
				Nodes    []*v1.Node
				Warnings []string
				Requests []string
				Err      string
			}
			var results [2]result
			for i, typed := range []bool{false, true} {
				srv := &listServer{listConfig: tc.srv}
				srv.nodes, srv.pods = nodes, pods
				hs := httptest.NewServer(srv)
				objs, warnings, err := ListWith(context.Background(), clientFor(t, hs), ListOptions{ChunkSize: tc.chunk, typed: typed})
				hs.Close()
				results[i] = result{objs.Pods, objs.Nodes, warnings, srv.requests, fmt.Sprint(err)}
				if tc.wantErr {
					// rawPages has asked for the next page before this one
					// failed to decode.
					results[i].Requests = nil
				}
			}
			if diff := cmp.Diff(results[1], results[0]); diff != "" {
				t.Errorf("rawPages vs typed List (-typed +raw):\n%s", diff)
			}
			raw := results[0]
			if (raw.Err != "<nil>") != tc.wantErr {
				t.Fatalf("error: %v, want one: %v", raw.Err, tc.wantErr)
			}
			if tc.wantRequests != nil {
				if diff := cmp.Diff(tc.wantRequests, raw.Requests); diff != "" {
					t.Errorf("pods requests (-want +got):\n%s", diff)
				}
			}
			if tc.wantErr {
				return
			}
			// Pods on node n7 (which does not exist) are left out.
			if want := 1234 - 1234/8; len(raw.Objs) != want || len(raw.Nodes) != 7 {
				t.Errorf("%d pods and %d nodes, want %d and 7", len(raw.Objs), len(raw.Nodes), want)
			}
			for _, p := range raw.Objs {
				if p.ManagedFields != nil || p.Labels["tier"] != "web" {
					t.Fatalf("pod %s: managed fields %v, labels %v", p.Name, p.ManagedFields, p.Labels)
				}
			}
		})
	}
}

// encodePodList is the protobuf response of a page of pods with continue
// token cont.
func encodePodList(t *testing.T, pods []v1.Pod, cont string) []byte {
	t.Helper()
	l := &v1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, ListMeta: metav1.ListMeta{Continue: cont, ResourceVersion: "42"}, Items: pods}
	var b bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(l, &b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestPeekHead(t *testing.T) {
	body := encodePodList(t, benchLikePods(3, 1), "next-page")
	found := -1
	for n := range len(body) + 1 {
		cont, st := peekHead(body[:n], "PodList")
		switch {
		case st == headFound && cont != "next-page":
			t.Fatalf("after %d bytes: token %q, want next-page", n, cont)
		case st == headFound && found < 0:
			found = n
		case st == headNone:
			t.Fatalf("after %d bytes: not a head", n)
		case st == headIncomplete && found >= 0:
			t.Fatalf("after %d bytes: incomplete again", n)
		}
	}
	if found < 0 || found > len(body)/2 {
		t.Errorf("token found after %d of %d bytes, want it before the items", found, len(body))
	}
	for name, b := range map[string][]byte{
		"JSON":       []byte(`{"kind":"PodList"`),
		"other kind": body,
		"bad prefix": []byte("k9s\x00"),
	} {
		kind := "PodList"
		if name == "other kind" {
			kind = "NodeList"
		}
		if _, st := peekHead(b, kind); st != headNone {
			t.Errorf("%s: state %d, want headNone", name, st)
		}
	}
}

// TestDecodeItemsWithoutManagedFields decodes pages' items with rawPages and
// wants what the generated decoder makes of the whole list, managed fields
// dropped; and that the objects share nothing with the response's bytes.
func TestDecodeItemsWithoutManagedFields(t *testing.T) {
	pods := benchLikePods(50, 3)
	body := encodePodList(t, pods, "")
	want, err := runtime.Decode(scheme.Codecs.UniversalDeserializer(), body)
	if err != nil {
		t.Fatal(err)
	}
	wantItems := want.(*v1.PodList).Items
	for i := range wantItems {
		wantItems[i].ManagedFields = nil
	}
	r := newRawPages[v1.Pod](nil, "pods", "PodList", func() runtime.Object { return &v1.PodList{} }, func(l runtime.Object) []v1.Pod { return l.(*v1.PodList).Items })
	var scratch []byte
	got, cont, err := r.decode(body, &scratch)
	if err != nil || cont != "" {
		t.Fatalf("decode: %q, %v", cont, err)
	}
	if diff := cmp.Diff(wantItems, got); diff != "" {
		t.Fatalf("decoded items (-want +got):\n%s", diff)
	}
	// The response's buffer is reused for the next page.
	for i := range body {
		body[i] = 'Z'
	}
	for i := range scratch {
		scratch[i] = 'Z'
	}
	if diff := cmp.Diff(wantItems, got); diff != "" {
		t.Errorf("items changed with the buffers (-want +got):\n%s", diff)
	}
}

func TestWithoutManagedFields(t *testing.T) {
	withMF := benchLikePods(2, 1)[1]
	noMF := benchLikePods(1, 1)[0]
	for name, p := range map[string]v1.Pod{"managed fields": withMF, "none": noMF} {
		t.Run(name, func(t *testing.T) {
			item, err := p.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			stripped, ok := withoutManagedFields(nil, item)
			if ok != (p.ManagedFields != nil) {
				t.Fatalf("stripped %v, want %v", ok, p.ManagedFields != nil)
			}
			if !ok {
				stripped = item
			}
			var got v1.Pod
			if err := got.Unmarshal(stripped); err != nil {
				t.Fatal(err)
			}
			want := *p.DeepCopy()
			want.ManagedFields = nil
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestRawPagesAsksBeforeThePageHasArrived holds the first page's second
// half until the second page is asked for: rawPages asks for it as soon as
// the first page's continue token has arrived.
func TestRawPagesAsksBeforeThePageHasArrived(t *testing.T) {
	srv := &listServer{listConfig: listConfig{nodes: benchLikeNodes(2), pods: benchLikePods(1000, 2), holdFirst: true, second: make(chan struct{})}}
	hs := httptest.NewServer(srv)
	objs, _, err := ListWith(context.Background(), clientFor(t, hs), ListOptions{ChunkSize: 400})
	hs.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !srv.held || len(srv.requests) != 3 || len(objs.Pods) != 1000-1000/3 {
		t.Errorf("second page asked for while the first arrived: %v; requests %v; %d pods", srv.held, srv.requests, len(objs.Pods))
	}
}
