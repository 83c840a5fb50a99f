package integration

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/reprieve/reprieve/internal/adapter/kube"
	"github.com/reprieve/reprieve/internal/adapter/manifest"
	"github.com/reprieve/reprieve/internal/cli"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	"github.com/reprieve/reprieve/internal/whatif"
)

const (
	exampleCluster = "../../examples/cluster"
	examplePods    = "../../examples/pods"
)

// TestWhatifKubeconfig builds the bundled example cluster in the API server
// and checks that `whatif --kubeconfig` (kube.List, then the engine)
// decides exactly as whatif over a YAML dump of the same objects, for every
// example pod, both through the library and through the command line; and
// that both agree with the README on the example outcomes.
func TestWhatifKubeconfig(t *testing.T) {
	e := newEnv(t, envOptions{noPriorityClasses: true})
	w := e.world(t)
	ctx := context.Background()

	files, err := manifest.Load(exampleCluster)
	if err != nil {
		t.Fatal(err)
	}
	objs := files.Objects
	for _, pc := range objs.PriorityClasses {
		pc = pc.DeepCopy()
		pc.ResourceVersion, pc.UID = "", ""
		if _, err := e.Admin.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating PriorityClass %s: %v", pc.Name, err)
		}
	}
	namespaces := map[string]bool{}
	for _, p := range objs.Pods {
		namespaces[p.Namespace] = true
	}
	for _, pdb := range objs.PDBs {
		namespaces[pdb.Namespace] = true
	}
	for ns := range namespaces {
		if _, err := e.Admin.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating namespace %s: %v", ns, err)
		}
	}
	for _, n := range objs.Nodes {
		w.createNode(n)
	}
	for _, p := range objs.Pods {
		p = p.DeepCopy()
		p.ResourceVersion, p.UID = "", ""
		p.Annotations = map[string]string{startedAtAnnotation: p.Status.StartTime.UTC().Format(time.RFC3339)}
		p.Status = v1.PodStatus{}
		if _, err := e.Admin.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating pod %s/%s: %v", p.Namespace, p.Name, err)
		}
	}
	for _, pdb := range objs.PDBs {
		w.pdbWithStatus(pdb)
	}
	waitUntil(t, "the example pods to run", func() bool {
		for _, p := range objs.Pods {
			got, err := e.Admin.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
			if err != nil || got.Status.Phase != v1.PodRunning {
				return false
			}
		}
		return true
	})
	// A pending pod of the cluster, for --pod NAMESPACE/NAME.
	pending, _, err := manifest.LoadPod(filepath.Join(examplePods, "urgent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pending.Spec.SchedulerName = "nobody"
	if _, err := e.Admin.CoreV1().Pods(pending.Namespace).Create(ctx, pending, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	live, warnings, err := kube.List(ctx, e.Admin)
	if err != nil {
		t.Fatalf("kube.List: %v", err)
	}
	if len(warnings) > 0 {
		t.Errorf("kube.List warnings: %v", warnings)
	}
	dumpFile := filepath.Join(t.TempDir(), "cluster.yaml")
	writeFile(t, dumpFile, listYAML(t, live))
	dump, err := manifest.Load(dumpFile)
	if err != nil {
		t.Fatalf("loading the dump: %v", err)
	}
	if got, want := len(dump.Objects.Pods), len(live.Pods); got != want {
		t.Fatalf("dump has %d pods, the cluster %d", got, want)
	}

	opts := whatif.Options{Seed: 7, Now: time.Now()}
	build := func(o snapshot.Objects) *snapshot.Snapshot {
		s, err := snapshot.New(o)
		if err != nil {
			t.Fatalf("building a snapshot: %v", err)
		}
		return s
	}
	type outcome struct {
		fits, eligible bool
		node           string
		victims        []string
		pdbViolations  int
	}
	wantOutcome := map[string]outcome{
		"fits.yaml":          {fits: true},
		"urgent.yaml":        {eligible: true, node: "node-a", victims: []string{"jobs/batch-1", "jobs/batch-2"}},
		"prefer-no-pdb.yaml": {eligible: true, node: "node-c", victims: []string{"shop/cache-1"}},
		"breaks-pdb.yaml":    {eligible: true, node: "node-b", victims: []string{"finance/ledger-1", "finance/report-1"}, pdbViolations: 1},
		"gpu-job.yaml":       {eligible: true},
		"never.yaml":         {},
	}
	entries, _ := os.ReadDir(examplePods)
	for _, ent := range entries {
		name := ent.Name()
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(examplePods, name)
			pod, _, err := manifest.LoadPod(path)
			if err != nil {
				t.Fatal(err)
			}
			eval := func(s *snapshot.Snapshot) *whatif.Decision {
				p, err := s.NewPod(pod.DeepCopy())
				if err != nil {
					t.Fatal(err)
				}
				d, err := whatif.Evaluate(s, p, opts)
				if err != nil {
					t.Fatal(err)
				}
				return d
			}
			fromLive := eval(build(live))
			fromDump := eval(mustBuild(t, dump))
			if diff := cmp.Diff(fromDump, fromLive); diff != "" {
				t.Errorf("kube.List vs YAML dump (-dump +live):\n%s", diff)
			}
			t.Logf("%s: %s", name, fromLive.Summary)
			want, ok := wantOutcome[name]
			if !ok {
				t.Fatalf("no expected outcome for %s", name)
			}
			var victims []string
			for _, v := range fromLive.Victims {
				victims = append(victims, v.Pod)
			}
			slices.Sort(victims)
			got := outcome{fits: fromLive.Fits, eligible: fromLive.Eligible, node: fromLive.NominatedNode, victims: victims, pdbViolations: fromLive.NumPDBViolations}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(outcome{})); diff != "" {
				t.Errorf("decision (-want +got):\n%s\nsummary: %s", diff, fromLive.Summary)
			}

			// The command line, both ways.
			kubeconfig := writeKubeconfig(t, e)
			outLive := runCLI(t, "whatif", "--kubeconfig", kubeconfig, "-f", path, "-o", "json", "--seed", "7")
			outDump := runCLI(t, "whatif", "--snapshot", dumpFile, "-f", path, "-o", "json", "--seed", "7")
			if diff := cmp.Diff(outDump, outLive); diff != "" {
				t.Errorf("reprieve whatif --kubeconfig vs --snapshot dump (-dump +live):\n%s", diff)
			}
			if !strings.Contains(outLive, `"summary"`) {
				t.Errorf("reprieve whatif -o json printed no decision:\n%s", outLive)
			}
		})
	}

	t.Run("pending-pod", func(t *testing.T) {
		key := pending.Namespace + "/" + pending.Name
		decide := func(s *snapshot.Snapshot) *whatif.Decision {
			p := s.Pod(key)
			if p == nil {
				t.Fatalf("%s not in the snapshot", key)
			}
			d, err := whatif.Evaluate(s, p, opts)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
		fromLive, fromDump := decide(build(live)), decide(mustBuild(t, dump))
		if diff := cmp.Diff(fromDump, fromLive); diff != "" {
			t.Errorf("kube.List vs YAML dump (-dump +live):\n%s", diff)
		}
		if fromLive.NominatedNode != "node-a" || len(fromLive.Victims) != 2 {
			t.Errorf("decision: %s", fromLive.Summary)
		}
		kubeconfig := writeKubeconfig(t, e)
		outLive := runCLI(t, "whatif", "--kubeconfig", kubeconfig, "--pod", key, "-o", "json", "--seed", "7")
		outDump := runCLI(t, "whatif", "--snapshot", dumpFile, "--pod", key, "-o", "json", "--seed", "7")
		if diff := cmp.Diff(outDump, outLive); diff != "" {
			t.Errorf("reprieve whatif --kubeconfig vs --snapshot dump (-dump +live):\n%s", diff)
		}
	})
}

func mustBuild(t *testing.T, s *manifest.Set) *snapshot.Snapshot {
	t.Helper()
	snap, err := s.Build()
	if err != nil {
		t.Fatalf("building the dump's snapshot: %v", err)
	}
	return snap
}

// listYAML writes objects as one kind: List document, as `kubectl get -o
// yaml` would (items carry their apiVersion and kind).
func listYAML(t *testing.T, o snapshot.Objects) []byte {
	t.Helper()
	var items []any
	for _, n := range o.Nodes {
		n = n.DeepCopy()
		n.APIVersion, n.Kind = "v1", "Node"
		items = append(items, n)
	}
	for _, p := range o.Pods {
		p = p.DeepCopy()
		p.APIVersion, p.Kind = "v1", "Pod"
		items = append(items, p)
	}
	for _, p := range o.PDBs {
		p = p.DeepCopy()
		p.APIVersion, p.Kind = "policy/v1", "PodDisruptionBudget"
		items = append(items, p)
	}
	for _, p := range o.PriorityClasses {
		p = p.DeepCopy()
		p.APIVersion, p.Kind = "scheduling.k8s.io/v1", "PriorityClass"
		items = append(items, p)
	}
	for _, n := range o.Namespaces {
		n = n.DeepCopy()
		n.APIVersion, n.Kind = "v1", "Namespace"
		items = append(items, n)
	}
	out, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// writeKubeconfig writes a kubeconfig for the env's admin.
func writeKubeconfig(t *testing.T, e *env) string {
	t.Helper()
	return kubeconfigFile(t, clientcmdapi.Cluster{Server: "https://" + e.proxy.addr(), CertificateAuthorityData: e.caData},
		clientcmdapi.AuthInfo{Token: e.adminToken})
}

// kubeconfigFile writes a kubeconfig whose current context is cluster with
// user, and returns its path.
func kubeconfigFile(t *testing.T, cluster clientcmdapi.Cluster, user clientcmdapi.AuthInfo) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["integration"] = &cluster
	cfg.AuthInfos["integration"] = &user
	cfg.Contexts["integration"] = &clientcmdapi.Context{Cluster: "integration", AuthInfo: "integration"}
	cfg.CurrentContext = "integration"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// runCLI runs reprieve's command line in-process and returns its output.
func runCLI(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := cli.Execute(context.Background(), args, cli.Streams{In: bytes.NewReader(nil), Out: &out, Err: &errOut}); code != 0 {
		t.Fatalf("reprieve %v: exit %d: %s", args, code, errOut.String())
	}
	return out.String()
}
