package reprieve_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/reprievetest"
	"github.com/reprieve/reprieve/pkg/reprieve"
)

// cluster is one 4-CPU node running a low-priority pod, with a pending
// pod of the snapshot besides.
func cluster() reprieve.Objects {
	return reprieve.Objects{
		Nodes: []*v1.Node{reprievetest.Node("node-a").CPU("4").Memory("16Gi").Obj()},
		Pods: []*v1.Pod{
			reprievetest.Pod("batch", "report").Priority(10).Req("3", "1Gi").On("node-a").StartedAt(0).Obj(),
			reprievetest.Pod("shop", "pending").Priority(500).Req("2", "1Gi").Obj(),
		},
		PriorityClasses: []*schedulingv1.PriorityClass{reprievetest.PriorityClass("high", 1000, false, false)},
	}
}

// checkout is a pod that only preemption makes room for.
func checkout() *v1.Pod {
	return reprievetest.Pod("shop", "checkout").PriorityClass("high").Req("2", "1Gi").Obj()
}

// TestEvaluate: decisions and errors of Evaluate and EvaluatePending.
func TestEvaluate(t *testing.T) {
	reprieveOnly, err := reprieve.ParseConfig([]byte(configHeader + "profiles:\n- schedulerName: reprieve\n"))
	if err != nil {
		t.Fatal(err)
	}
	noPreemption, err := reprieve.ParseConfig([]byte(configHeader + "profiles:\n- plugins:\n    postFilter:\n      disabled: [{name: DefaultPreemption}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	bound := checkout()
	bound.Spec.NodeName = "node-a"
	invalid := checkout()
	invalid.Spec.Containers = nil
	named := checkout()
	named.Spec.SchedulerName = "reprieve"

	tests := map[string]struct {
		pod        *v1.Pod
		pending    string // evaluates this pending pod instead of pod
		opts       reprieve.Options
		wantErr    error
		wantNode   string
		wantVictim []string
		wantReason string
	}{
		"preempts":                      {pod: checkout(), opts: reprieve.Options{Now: now}, wantNode: "node-a", wantVictim: []string{"batch/report"}},
		"a pending pod of the snapshot": {pending: "shop/pending", opts: reprieve.Options{Now: now}, wantNode: "node-a", wantVictim: []string{"batch/report"}},
		"minimal, one goroutine":        {pod: checkout(), opts: reprieve.Options{Now: now, Policy: reprieve.PolicyMinimal, Parallelism: 1}, wantNode: "node-a", wantVictim: []string{"batch/report"}},
		"profile by schedulerName":      {pod: named, opts: reprieve.Options{Now: now, Config: reprieveOnly}, wantNode: "node-a", wantVictim: []string{"batch/report"}},
		"profile without preemption": {pod: checkout(), opts: reprieve.Options{Now: now, Config: noPreemption},
			wantReason: "the profile does not enable DefaultPreemption at postFilter"},
		"no clock":               {pod: checkout(), wantErr: reprieve.ErrNoClock},
		"nil pod":                {opts: reprieve.Options{Now: now}, wantErr: reprieve.ErrInput},
		"bound pod":              {pod: bound, opts: reprieve.Options{Now: now}, wantErr: reprieve.ErrInput},
		"invalid pod":            {pod: invalid, opts: reprieve.Options{Now: now}, wantErr: reprieve.ErrInput},
		"unknown policy":         {pod: checkout(), opts: reprieve.Options{Now: now, Policy: "cheapest"}, wantErr: reprieve.ErrInput},
		"no profile of the name": {pod: checkout(), opts: reprieve.Options{Now: now, Config: reprieveOnly}, wantErr: reprieve.ErrNoProfile},
		"no such pending pod":    {pending: "shop/nope", opts: reprieve.Options{Now: now}, wantErr: reprieve.ErrInput},
		"pending pod is bound":   {pending: "batch/report", opts: reprieve.Options{Now: now}, wantErr: reprieve.ErrInput},
	}
	snap, err := reprieve.NewSnapshot(cluster())
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var d *reprieve.Decision
			var err error
			if tc.pending != "" {
				d, err = reprieve.EvaluatePending(snap, tc.pending, tc.opts)
			} else {
				d, err = reprieve.Evaluate(snap, tc.pod, tc.opts)
			}
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				t.Log(err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var victims []string
			for _, v := range d.Victims {
				victims = append(victims, v.Pod)
			}
			got := struct {
				Node, Reason string
				Victims      []string
			}{d.NominatedNode, d.IneligibleReason, victims}
			want := struct {
				Node, Reason string
				Victims      []string
			}{tc.wantNode, tc.wantReason, tc.wantVictim}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("decision (-want,+got):\n%s", diff)
			}
		})
	}
}

const configHeader = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

// TestNewSnapshot: objects are admitted as the loader admits manifests,
// errors name the object by its field, and the caller's objects are left
// as they were.
func TestNewSnapshot(t *testing.T) {
	noName := reprievetest.Node("").CPU("1").Obj()
	badPod := reprievetest.Pod("shop", "bad").Req("1", "1Gi").Obj()
	badPod.Spec.Containers[0].Name = ""
	unknownClass := reprievetest.Pod("shop", "odd").PriorityClass("nope").Req("1", "1Gi").On("node-a").Obj()
	tests := map[string]struct {
		objs        reprieve.Objects
		wantErr     error
		wantMessage string // a part of the error
		wantPending []string
	}{
		"cluster":         {objs: cluster(), wantPending: []string{"shop/pending"}},
		"empty: no nodes": {objs: reprieve.Objects{}},
		"nil node":        {objs: reprieve.Objects{Nodes: []*v1.Node{nil}}, wantErr: reprieve.ErrInput, wantMessage: "Objects.Nodes[0]"},
		"nameless node":   {objs: reprieve.Objects{Nodes: []*v1.Node{noName}}, wantErr: reprieve.ErrInput, wantMessage: "Objects.Nodes[0]: Node: metadata.name"},
		"invalid pod": {objs: reprieve.Objects{Nodes: cluster().Nodes, Pods: []*v1.Pod{badPod}}, wantErr: reprieve.ErrInput,
			wantMessage: "Objects.Pods[0]: Pod shop/bad: spec.containers[0].name"},
		"duplicate node": {objs: reprieve.Objects{Nodes: append(cluster().Nodes, cluster().Nodes...)}, wantErr: reprieve.ErrInput,
			wantMessage: "duplicate"},
		"unknown priority class": {objs: reprieve.Objects{Nodes: cluster().Nodes, Pods: []*v1.Pod{unknownClass}}, wantErr: reprieve.ErrInput,
			wantMessage: "Objects.Pods[0]"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before, err := json.Marshal(tc.objs)
			if err != nil {
				t.Fatal(err)
			}
			snap, err := reprieve.NewSnapshot(tc.objs)
			after, _ := json.Marshal(tc.objs)
			if diff := cmp.Diff(string(before), string(after)); diff != "" {
				t.Errorf("NewSnapshot changed its objects (-before,+after):\n%s", diff)
			}
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.wantMessage) {
					t.Fatalf("err = %v, want %v naming %q", err, tc.wantErr, tc.wantMessage)
				}
				t.Log(err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantPending, snap.PendingPods()); diff != "" {
				t.Errorf("PendingPods (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestLoad: manifests, pods and configurations from files.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unknownField := write("unknown.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: node-x}\nspec: {colour: blue}\n")
	service := write("service.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n")
	badConfig := write("config.yaml", configHeader+"profiles:\n- schedulerName: a\n  colour: blue\n")
	tests := map[string]struct {
		load         func() error
		wantErr      error
		wantWarnings int
	}{
		"the example cluster":        {load: func() error { _, err := reprieve.LoadSnapshot("../../examples/cluster"); return err }},
		"no path":                    {load: func() error { _, err := reprieve.LoadSnapshot(); return err }, wantErr: reprieve.ErrInput},
		"unknown field":              {load: func() error { _, err := reprieve.LoadSnapshot(unknownField); return err }, wantErr: reprieve.ErrInput},
		"a missing file":             {load: func() error { _, err := reprieve.LoadSnapshot(filepath.Join(dir, "nope")); return err }, wantErr: os.ErrNotExist},
		"pods of a cluster":          {load: func() error { _, err := reprieve.LoadPods("../../examples/cluster/pods.yaml"); return err }, wantErr: reprieve.ErrInput},
		"a configuration":            {load: func() error { _, err := reprieve.LoadConfig(badConfig); return err }, wantErr: reprieve.ErrInput},
		"a missing configuration":    {load: func() error { _, err := reprieve.LoadConfig(filepath.Join(dir, "nope")); return err }, wantErr: os.ErrNotExist},
		"skipped kinds are warnings": {load: func() error { return warnings(reprieve.LoadSnapshot(service)) }, wantErr: errWarnings},
		"an example has no warnings": {load: func() error { return warnings(reprieve.LoadSnapshot("../../examples/cluster")) }},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := tc.load()
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				t.Log(err)
			}
		})
	}
}

var errWarnings = errors.New("warnings")

// warnings turns a snapshot's warnings into errWarnings.
func warnings(s *reprieve.Snapshot, err error) error {
	if err != nil {
		return err
	}
	if w := s.Warnings(); len(w) > 0 {
		return errors.Join(errWarnings, errors.New(strings.Join(w, "; ")))
	}
	return nil
}

// TestParse: feature gates and policies, as the command line parses them.
func TestParse(t *testing.T) {
	tests := map[string]struct {
		parse   func() (any, error)
		want    any
		wantErr error
	}{
		"no gates":        {parse: func() (any, error) { return reprieve.ParseFeatureGates("") }, want: reprieve.Features{}},
		"GenericWorkload": {parse: func() (any, error) { return reprieve.ParseFeatureGates("GenericWorkload=true") }, want: reprieve.Features{GenericWorkload: true}},
		"all gates": {parse: func() (any, error) {
			return reprieve.ParseFeatureGates("GenericWorkload=true,CompositePodGroup=true,DRAPreemption=true")
		}, want: reprieve.Features{GenericWorkload: true, CompositePodGroup: true, DRAPreemption: true}},
		"unmet dependency":     {parse: func() (any, error) { return reprieve.ParseFeatureGates("CompositePodGroup=true") }, want: reprieve.Features{}, wantErr: reprieve.ErrInput},
		"unknown gate":         {parse: func() (any, error) { return reprieve.ParseFeatureGates("Nope=true") }, want: reprieve.Features{}, wantErr: reprieve.ErrInput},
		"empty policy":         {parse: func() (any, error) { return reprieve.ParsePolicy("") }, want: reprieve.PolicyUpstream},
		"strict-pdb":           {parse: func() (any, error) { return reprieve.ParsePolicy("strict-pdb") }, want: reprieve.PolicyStrictPDB},
		"unknown policy":       {parse: func() (any, error) { return reprieve.ParsePolicy("cheapest") }, want: reprieve.Policy(""), wantErr: reprieve.ErrInput},
		"policies, in order":   {parse: func() (any, error) { return reprieve.Policies(), nil }, want: []reprieve.Policy{"upstream", "minimal", "reschedulable", "strict-pdb"}},
		"the engine's, alike":  {parse: func() (any, error) { return profile.Policies(), nil }, want: []profile.Policy{"upstream", "minimal", "reschedulable", "strict-pdb"}},
		"the mirrored release": {parse: func() (any, error) { return reprieve.KubeVersion, nil }, want: profile.Release137.Upstream()},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := tc.parse()
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}
}

// TestConcurrentEvaluate: goroutines evaluating on one snapshot at once
// decide as one alone does (run with -race).
func TestConcurrentEvaluate(t *testing.T) {
	snap, err := reprieve.LoadSnapshot("../../examples/cluster")
	if err != nil {
		t.Fatal(err)
	}
	pods, err := reprieve.LoadPods("../../examples/pods")
	if err != nil {
		t.Fatal(err)
	}
	opts := reprieve.Options{Now: now, Seed: 7}
	want := make([]*reprieve.Decision, len(pods))
	for i, p := range pods {
		if want[i], err = reprieve.Evaluate(snap, p, opts); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i, p := range pods {
				got, err := reprieve.Evaluate(snap, p, opts)
				if err != nil {
					t.Error(err)
					return
				}
				if diff := cmp.Diff(want[i], got); diff != "" {
					t.Errorf("%s (-alone,+concurrent):\n%s", p.Name, diff)
				}
			}
		})
	}
	wg.Wait()
}

// TestDefaultSpreading: Objects' Services, ReplicationControllers,
// ReplicaSets and StatefulSets give PodTopologySpread's default constraints
// their selector: the pod goes to the node without its peers, where
// resources alone would send it to theirs; none is reported as skipped.
func TestDefaultSpreading(t *testing.T) {
	web := map[string]string{"app": "web"}
	rs := reprievetest.ReplicaSet("shop", "web-1", web)
	ss := reprievetest.StatefulSet("shop", "web", web)
	rc := reprievetest.ReplicationController("shop", "web", web)
	rs.Spec.Template.Labels, ss.Spec.Template.Labels = web, web
	rs.Spec.Template.Spec.Containers = []v1.Container{{Name: "c", Image: "i"}}
	ss.Spec.Template.Spec.Containers = []v1.Container{{Name: "c", Image: "i"}}
	rc.Spec.Template = &v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: web}, Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "i"}}}}
	pod := func() *reprievetest.PodBuilder {
		return reprievetest.Pod("shop", "web-3").Label("app", "web").Req("500m", "")
	}
	tests := map[string]struct {
		add      func(o *reprieve.Objects)
		pod      *v1.Pod
		wantNode string
	}{
		"nothing selects the pod": {add: func(*reprieve.Objects) {}, pod: pod().Obj(), wantNode: "a"},
		"a Service": {add: func(o *reprieve.Objects) { o.Services = []*v1.Service{reprievetest.Service("shop", "web", web)} },
			pod: pod().Obj(), wantNode: "b"},
		"its ReplicaSet":             {add: func(o *reprieve.Objects) { o.ReplicaSets = []*appsv1.ReplicaSet{rs} }, pod: pod().ControlledBy(rs).Obj(), wantNode: "b"},
		"its StatefulSet":            {add: func(o *reprieve.Objects) { o.StatefulSets = []*appsv1.StatefulSet{ss} }, pod: pod().ControlledBy(ss).Obj(), wantNode: "b"},
		"its ReplicationController":  {add: func(o *reprieve.Objects) { o.ReplicationControllers = []*v1.ReplicationController{rc} }, pod: pod().ControlledBy(rc).Obj(), wantNode: "b"},
		"a ReplicaSet not its owner": {add: func(o *reprieve.Objects) { o.ReplicaSets = []*appsv1.ReplicaSet{rs} }, pod: pod().Obj(), wantNode: "a"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			objs := reprieve.Objects{
				Nodes: []*v1.Node{reprievetest.Node("a").CPU("4").Memory("8Gi").Zone("za").Obj(), reprievetest.Node("b").CPU("4").Memory("8Gi").Zone("zb").Obj()},
				Pods: []*v1.Pod{
					reprievetest.Pod("shop", "web-1").Label("app", "web").Req("100m", "").On("a").Obj(),
					reprievetest.Pod("shop", "web-2").Label("app", "web").Req("100m", "").On("a").Obj(),
					reprievetest.Pod("shop", "batch").Req("1", "").On("b").Obj(),
				},
			}
			tc.add(&objs)
			snap, err := reprieve.NewSnapshot(objs)
			if err != nil {
				t.Fatal(err)
			}
			if w := snap.Warnings(); len(w) > 0 {
				t.Errorf("warnings %q", w)
			}
			d, err := reprieve.Evaluate(snap, tc.pod, reprieve.Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if d.Placement == nil || d.Placement.Node != tc.wantNode {
				t.Errorf("placement %+v, want node %s", d.Placement, tc.wantNode)
			}
		})
	}
}
