package integration

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/reprieve/reprieve/internal/adapter/kube"
)

// TestRBAC runs the scheduler as the ServiceAccount of deploy/rbac.yaml on
// an API server that authorizes with Node,RBAC: a full preemption (with
// leader election in reprieve-system) must work without a single refused
// call, and writes outside the role must be refused.
func TestRBAC(t *testing.T) {
	e := newEnv(t, envOptions{rbac: true})
	ctx := context.Background()
	admin := e.Admin
	saConfig := e.deployServiceAccount(t)
	sa := kubernetes.NewForConfigOrDie(saConfig)
	// RBAC is read from the API server's informers: wait until it applies.
	waitUntil(t, "the role to apply", func() bool {
		_, err := sa.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		return err == nil
	})

	w := e.world(t)
	w.node(smallNode("node-1"))
	w.running(mkPod("victim", low, "400m").Obj(), "node-1", at(0))
	w.waitRunning("victim")
	s := w.startScheduler(schedOpts{config: saConfig, le: &kube.LeaderElection{
		Namespace: "reprieve-system", Name: "reprieve", Identity: "rbac-test",
		LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond, ReleaseOnCancel: true,
	}})
	hist := w.watchPod("victim")
	w.pod(mkPod("preemptor", high, "400m").Obj())
	if got := w.waitBound("preemptor"); got != "node-1" {
		t.Fatalf("preemptor bound to %q", got)
	}
	w.waitGone("victim")
	checkConditionBeforeDeletion(t, hist.snapshot(), w.sched)
	w.waitEvent("victim", "Preempted")
	w.waitEvent("preemptor", "FailedScheduling")
	w.waitEvent("preemptor", "Scheduled")
	// Let the events' series updates and a few lease renewals go through.
	time.Sleep(2 * time.Second)
	for _, c := range s.tap.All() {
		if c.Code == 401 || c.Code == 403 {
			t.Errorf("refused: %v", c)
		}
	}
	if n := len(s.tap.Calls("PUT", "/leases/reprieve")); n == 0 {
		t.Errorf("no lease renewals recorded")
	}
	if err := s.stop(); err != nil {
		t.Errorf("scheduler: %v", err)
	}
	// ReleaseOnCancel gave the lease up.
	l, err := admin.CoordinationV1().Leases("reprieve-system").Get(ctx, "reprieve", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" {
		t.Errorf("lease still held by %q after a graceful stop", *l.Spec.HolderIdentity)
	}

	// `whatif --kubeconfig` needs only list calls: it works as the SA.
	if _, _, err := kube.List(ctx, sa); err != nil {
		t.Errorf("kube.List as the ServiceAccount: %v", err)
	}

	// Writes outside the role are refused.
	refused := map[string]error{}
	_, refused["create a pod"] = sa.CoreV1().Pods(w.ns).Create(ctx, w.podSpec(mkPod("intruder", low, "1m").Obj()), metav1.CreateOptions{})
	refused["delete a node"] = sa.CoreV1().Nodes().Delete(ctx, "node-1", metav1.DeleteOptions{})
	_, refused["patch a pod's spec"] = sa.CoreV1().Pods(w.ns).Patch(ctx, "preemptor", types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{})
	_, refused["update a node's status"] = sa.CoreV1().Nodes().Patch(ctx, "node-1", types.MergePatchType, []byte(`{"status":{"allocatable":{"cpu":"64"}}}`), metav1.PatchOptions{}, "status")
	_, refused["create a lease in kube-system"] = sa.CoordinationV1().Leases("kube-system").Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "reprieve"}}, metav1.CreateOptions{})
	_, refused["read secrets"] = sa.CoreV1().Secrets("reprieve-system").List(ctx, metav1.ListOptions{})
	for what, err := range refused {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s as the ServiceAccount: got %v, want Forbidden", what, err)
		}
	}
}

// applyRBAC creates the RBAC objects of a manifest file.
func applyRBAC(t *testing.T, c kubernetes.Interface, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	n := 0
	for {
		var raw runtimeRaw
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("%s: %v", path, err)
		}
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(raw, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		switch o := obj.(type) {
		case *rbacv1.ClusterRole:
			_, err = c.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRoleBinding:
			_, err = c.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.Role:
			_, err = c.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			_, err = c.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		default:
			t.Fatalf("%s: unexpected %T", path, obj)
		}
		if err != nil {
			t.Fatalf("%s: creating %T: %v", path, obj, err)
		}
		n++
	}
	if n != 4 {
		t.Fatalf("%s: %d objects, want 4", path, n)
	}
}

// runtimeRaw is one decoded document, as JSON.
type runtimeRaw []byte

func (r *runtimeRaw) UnmarshalJSON(b []byte) error {
	*r = append((*r)[:0], b...)
	return nil
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(poll)
	}
}

// deployServiceAccount creates deploy/'s ServiceAccount reprieve-system/reprieve
// with the roles of deploy/rbac.yaml and returns a client configuration
// with a token for it.
func (e *env) deployServiceAccount(t *testing.T) *rest.Config {
	t.Helper()
	ctx := context.Background()
	admin := e.Admin
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "reprieve-system"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().ServiceAccounts("reprieve-system").Create(ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "reprieve"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	applyRBAC(t, admin, "../../deploy/rbac.yaml")
	expiry := int64(3600)
	tr, err := admin.CoreV1().ServiceAccounts("reprieve-system").CreateToken(ctx, "reprieve",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("requesting a token for reprieve-system/reprieve: %v", err)
	}
	return e.configFor(tr.Status.Token)
}
