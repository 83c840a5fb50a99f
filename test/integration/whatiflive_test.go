package integration

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/google/go-cmp/cmp"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes/scheme"
	corev1defaults "k8s.io/kubernetes/pkg/apis/core/v1"

	"github.com/reprieve/reprieve/internal/adapter/kube"
	"github.com/reprieve/reprieve/internal/adapter/manifest"
	"github.com/reprieve/reprieve/internal/whatif"
)

// TestBenchWhatifLive times `reprieve whatif --kubeconfig … --pod NS/NAME`
// as a process, end to end, against an API server holding
// REPRIEVE_BENCH_NODES nodes (1,000) with REPRIEVE_BENCH_PODS_PER_NODE
// running pods each (30), and beside it `kubectl get pods -A -o json` on
// the same server (kubectl from PATH, or REPRIEVE_BENCH_KUBECTL). The pods
// look like a Deployment's: labels, annotations, a ReplicaSet owner,
// requests and limits, a probe, a Running status with container statuses,
// managed fields as the API server writes them. One pending pod needs
// preemption. Each command runs once to warm up, then
// REPRIEVE_BENCH_ROUNDS times (3), interleaved, reprieve also with a
// kubeconfig that sets disable-compression; the log has every run,
// the medians and the peak RSS of each process, and a breakdown of
// reprieve's time measured in-process (list, build, evaluate). Both
// processes talk to the API server directly (not through the harness's
// proxy); the API server and etcd run in this test's process, on the same
// cores. REPRIEVE_BENCH_KUBECTL=none leaves kubectl out;
// REPRIEVE_BENCH_BASELINE=PATH times another reprieve binary beside (a
// build of an earlier commit, say). Opt-in: REPRIEVE_BENCH=1 or -run
// naming it.
func TestBenchWhatifLive(t *testing.T) {
	if os.Getenv("REPRIEVE_BENCH") == "" && !runNames("TestBenchWhatifLive") {
		t.Skip("benchmark: set REPRIEVE_BENCH=1 or use -run TestBenchWhatifLive")
	}
	numNodes := envInt(t, "REPRIEVE_BENCH_NODES", 1000)
	perNode := envInt(t, "REPRIEVE_BENCH_PODS_PER_NODE", 30)
	rounds := envInt(t, "REPRIEVE_BENCH_ROUNDS", 3)
	kubectl := os.Getenv("REPRIEVE_BENCH_KUBECTL")
	switch kubectl {
	case "":
		kubectl, _ = exec.LookPath("kubectl")
	case "none":
		kubectl = ""
	}
	baseline := os.Getenv("REPRIEVE_BENCH_BASELINE")

	bin := buildReprieve(t)
	e := newEnv(t, envOptions{noKubelet: true})
	direct := e.directConfig()
	pending := fillCluster(t, direct, e.etcd, numNodes, perNode)
	kubeconfig := kubeconfigFile(t, clientcmdapi.Cluster{Server: direct.Host, CertificateAuthorityData: e.caData},
		clientcmdapi.AuthInfo{Token: e.adminToken})
	// The same with disable-compression: true, as one would set it for an
	// API server close by (kube-scheduler's clients never ask for gzip).
	plainKubeconfig := kubeconfigFile(t, clientcmdapi.Cluster{Server: direct.Host, CertificateAuthorityData: e.caData, DisableCompression: true},
		clientcmdapi.AuthInfo{Token: e.adminToken})

	// The decision, checked once (untimed): the pending pod preempts.
	out, _ := runProcess(t, bin, "whatif", "--kubeconfig", kubeconfig, "--pod", pending, "-o", "json")
	var d whatif.Decision
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatalf("reprieve whatif -o json: %v\n%.2000s", err, out)
	}
	if d.Fits || d.NominatedNode == "" || len(d.Victims) == 0 {
		t.Fatalf("want a preemption decision for %s, got: %s", pending, d.Summary)
	}
	t.Logf("decision: %s", d.Summary)
	wantPods := numNodes*perNode + 1
	if kubectl != "" {
		out, _ := runProcess(t, kubectl, "--kubeconfig", kubeconfig, "get", "pods", "-A", "-o", "json")
		var l struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(out, &l); err != nil {
			t.Fatalf("kubectl get pods -A -o json: %v", err)
		}
		if len(l.Items) != wantPods {
			t.Fatalf("kubectl listed %d pods, want %d", len(l.Items), wantPods)
		}
		t.Logf("kubectl get pods -A -o json: %d pods, %d MB of JSON", len(l.Items), len(out)>>20)
	} else {
		t.Log("no kubectl on PATH (or REPRIEVE_BENCH_KUBECTL): kubectl's figure is left out")
	}

	type run struct {
		wall time.Duration
		usage
	}
	var reprieveRuns, plainRuns, kubectlRuns, baselineRuns []run
	timed := func(name string, args ...string) run {
		start := time.Now()
		_, u := runProcess(t, name, args...)
		return run{time.Since(start), u}
	}
	for round := range rounds + 1 {
		r := timed(bin, "whatif", "--kubeconfig", kubeconfig, "--pod", pending)
		t.Logf("round %d: reprieve whatif --kubeconfig %v (CPU %v), peak RSS %d MiB", round, r.wall.Round(time.Millisecond), r.cpu.Round(time.Millisecond), r.rss>>10)
		if round > 0 {
			reprieveRuns = append(reprieveRuns, r)
		}
		p := timed(bin, "whatif", "--kubeconfig", plainKubeconfig, "--pod", pending)
		t.Logf("round %d: reprieve whatif --kubeconfig (disable-compression) %v (CPU %v), peak RSS %d MiB", round, p.wall.Round(time.Millisecond), p.cpu.Round(time.Millisecond), p.rss>>10)
		if round > 0 {
			plainRuns = append(plainRuns, p)
		}
		if baseline != "" {
			b := timed(baseline, "whatif", "--kubeconfig", kubeconfig, "--pod", pending)
			t.Logf("round %d: baseline %s %v (CPU %v), peak RSS %d MiB", round, baseline, b.wall.Round(time.Millisecond), b.cpu.Round(time.Millisecond), b.rss>>10)
			if round > 0 {
				baselineRuns = append(baselineRuns, b)
			}
		}
		if kubectl != "" {
			k := timed(kubectl, "--kubeconfig", kubeconfig, "get", "pods", "-A", "-o", "json")
			t.Logf("round %d: kubectl get pods -A -o json %v (CPU %v), peak RSS %d MiB", round, k.wall.Round(time.Millisecond), k.cpu.Round(time.Millisecond), k.rss>>10)
			if round > 0 {
				kubectlRuns = append(kubectlRuns, k)
			}
		}
	}

	// Where reprieve's time goes, in-process with whatif's client settings.
	var lists, builds, evals []time.Duration
	cfg := rest.CopyConfig(direct)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.QPS, cfg.Burst = 50, 300
	client := kubernetes.NewForConfigOrDie(cfg)
	if path := os.Getenv("REPRIEVE_BENCH_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			t.Fatal(err)
		}
		defer func() {
			pprof.StopCPUProfile()
			_ = f.Close()
		}()
	}
	plainCfg := rest.CopyConfig(cfg)
	plainCfg.DisableCompression = true
	plain := kubernetes.NewForConfigOrDie(plainCfg)
	// fetch reads the pods' pages as bytes only: the API server's and the
	// network's share of the list.
	fetch := func(c kubernetes.Interface) time.Duration {
		start := time.Now()
		var cont string
		for {
			req := c.CoreV1().RESTClient().Get().Resource("pods").Param("limit", "500")
			if cont != "" {
				req = req.Param("continue", cont)
			}
			raw, err := req.DoRaw(context.Background())
			if err != nil {
				t.Fatalf("listing pods raw: %v", err)
			}
			if cont, err = continueOf(raw); err != nil {
				t.Fatal(err)
			}
			if cont == "" {
				return time.Since(start)
			}
		}
	}
	var fetches, plainFetches, plainLists []time.Duration
	for range rounds {
		ctx := context.Background()
		fetches, plainFetches = append(fetches, fetch(client)), append(plainFetches, fetch(plain))
		tp := time.Now()
		if _, _, err := kube.ListWith(ctx, plain, kube.ListOptions{ChunkSize: 500}); err != nil {
			t.Fatalf("kube.ListWith: %v", err)
		}
		plainLists = append(plainLists, time.Since(tp))
		t0 := time.Now()
		objs, _, err := kube.ListWith(ctx, client, kube.ListOptions{ChunkSize: 500})
		if err != nil {
			t.Fatalf("kube.ListWith: %v", err)
		}
		t1 := time.Now()
		set := manifest.NewSet()
		set.Objects = objs
		snap, err := set.Build()
		if err != nil {
			t.Fatalf("building the snapshot: %v", err)
		}
		t2 := time.Now()
		p := snap.Pod(pending)
		if p == nil {
			t.Fatalf("%s not in the snapshot", pending)
		}
		if _, err := whatif.Evaluate(snap, p, whatif.Options{Now: t2}); err != nil {
			t.Fatalf("evaluating: %v", err)
		}
		lists, builds, evals = append(lists, t1.Sub(t0)), append(builds, t2.Sub(t1)), append(evals, time.Since(t2))
	}

	medRun := func(rs []run) run {
		w, c := make([]time.Duration, len(rs)), make([]time.Duration, len(rs))
		m := make([]int64, len(rs))
		for i, r := range rs {
			w[i], c[i], m[i] = r.wall, r.cpu, r.rss
		}
		return run{median(w), usage{medianOf(m), median(c)}}
	}
	t.Logf("BENCH TABLE (%d nodes × %d pods, median of %d runs after one warm-up)", numNodes, perNode, rounds)
	t.Logf("| command | end to end | CPU (user+sys) | peak RSS |")
	r := medRun(reprieveRuns)
	t.Logf("| reprieve whatif --kubeconfig --pod %s | %v | %v | %d MiB |", pending, r.wall.Round(time.Millisecond), r.cpu.Round(time.Millisecond), r.rss>>10)
	p := medRun(plainRuns)
	t.Logf("| the same, kubeconfig with disable-compression: true | %v | %v | %d MiB |", p.wall.Round(time.Millisecond), p.cpu.Round(time.Millisecond), p.rss>>10)
	if baseline != "" {
		b := medRun(baselineRuns)
		t.Logf("| baseline %s | %v | %v | %d MiB |", baseline, b.wall.Round(time.Millisecond), b.cpu.Round(time.Millisecond), b.rss>>10)
	}
	if kubectl != "" {
		k := medRun(kubectlRuns)
		t.Logf("| kubectl get pods -A -o json (%s) | %v | %v | %d MiB |", kubectlVersion(kubectl), k.wall.Round(time.Millisecond), k.cpu.Round(time.Millisecond), k.rss>>10)
	}
	t.Logf("in-process (whatif's client: protobuf, pages of 500, kinds concurrently): pods' pages fetched without decoding %v (uncompressed %v); kube.ListWith %v (uncompressed %v), build %v, evaluate %v",
		median(fetches).Round(time.Millisecond), median(plainFetches).Round(time.Millisecond), median(lists).Round(time.Millisecond), median(plainLists).Round(time.Millisecond), median(builds).Round(time.Millisecond), median(evals).Round(time.Millisecond))
}

// continueOf returns the continue token of a protobuf-encoded list
// without decoding its items: the list's first field is its ListMeta.
func continueOf(raw []byte) (string, error) {
	body, ok := bytes.CutPrefix(raw, []byte("k8s\x00"))
	if !ok {
		return "", fmt.Errorf("not a protobuf response: %.40q", raw)
	}
	var u runtime.Unknown
	if err := u.Unmarshal(body); err != nil {
		return "", fmt.Errorf("decoding a page's envelope: %w", err)
	}
	b := u.Raw
	if len(b) < 2 || b[0] != 0x0a { // field 1, length-delimited
		return "", fmt.Errorf("a list without metadata first")
	}
	n, k := binary.Uvarint(b[1:])
	if k <= 0 || uint64(len(b)-1-k) < n {
		return "", fmt.Errorf("a truncated list metadata")
	}
	var m metav1.ListMeta
	if err := m.Unmarshal(b[1+k : 1+k+int(n)]); err != nil {
		return "", fmt.Errorf("decoding a list's metadata: %w", err)
	}
	return m.Continue, nil
}

// directConfig is e's admin configuration pointed at the API server
// itself rather than the proxy, with no client-side rate limit.
func (e *env) directConfig() *rest.Config {
	e.mu.Lock()
	host := e.server.ClientConfig.Host
	e.mu.Unlock()
	cfg := rest.CopyConfig(e.AdminConfig)
	cfg.Host = host
	cfg.QPS, cfg.Burst = -1, 0
	return cfg
}

// runProcess runs name with args and returns its standard output, its
// peak RSS and CPU time (zero if unknown); it fails t if the process
// fails. They come from GNU time (/usr/bin/time) when there is one: the rusage
// of a child this process starts directly would count this process's own
// memory, which the child's high-water mark inherits at exec.
func runProcess(t *testing.T, name string, args ...string) ([]byte, usage) {
	t.Helper()
	var out, errOut bytes.Buffer
	rssFile := ""
	cmd := exec.Command(name, args...)
	if _, err := os.Stat("/usr/bin/time"); err == nil {
		rssFile = filepath.Join(t.TempDir(), "rss")
		cmd = exec.Command("/usr/bin/time", append([]string{"-f", "%M %U %S", "-o", rssFile, name}, args...)...)
	}
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, errOut.String())
	}
	var u usage
	if rssFile != "" {
		if b, err := os.ReadFile(rssFile); err == nil {
			var user, sys float64
			if _, err := fmt.Sscanf(strings.TrimSpace(string(b)), "%d %f %f", &u.rss, &user, &sys); err == nil {
				u.cpu = time.Duration((user + sys) * float64(time.Second))
			}
		}
	}
	return out.Bytes(), u
}

// usage is what GNU time says of a process.
type usage struct {
	rss int64         // peak RSS, KiB
	cpu time.Duration // user + system
}

func kubectlVersion(kubectl string) string {
	out, err := exec.Command(kubectl, "version", "--client", "-o", "json").Output()
	if err != nil {
		return "kubectl"
	}
	var v struct {
		ClientVersion struct {
			GitVersion string `json:"gitVersion"`
		} `json:"clientVersion"`
	}
	if json.Unmarshal(out, &v) != nil {
		return "kubectl"
	}
	return "kubectl " + v.ClientVersion.GitVersion
}

func median(ds []time.Duration) time.Duration {
	return medianOf(ds)
}

func medianOf[T int64 | time.Duration](v []T) T {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// fillCluster creates, through cfg with many concurrent requests, numNodes
// ready nodes of 16 CPU / 64Gi / 110 pods in four zones and perNode running
// pods on each: Deployments of 30 replicas (one ReplicaSet owner each) in
// 20 namespaces, 500m / 1Gi each, priority class low or medium, a budget
// for every tenth Deployment. Then one pending pod of priority high asking
// for 4 CPU, which fits nowhere without preemption, and returns its key.
func fillCluster(t *testing.T, cfg *rest.Config, etcd *embed.Etcd, numNodes, perNode int) string {
	t.Helper()
	start := time.Now()
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	const namespaces, replicas, workers = 20, 30, 24
	nsName := func(i int) string { return fmt.Sprintf("team-%02d", i%namespaces) }
	for i := range namespaces {
		ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsName(i), Labels: map[string]string{"team": nsName(i)}}}
		if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating namespace: %v", err)
		}
	}
	// parallel runs f(0..n-1) on workers goroutines and fails t on the
	// first error.
	parallel := func(what string, n int, f func(i int) error) {
		t.Helper()
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			first error
			next  = make(chan int)
		)
		for range workers {
			wg.Go(func() {
				for i := range next {
					if err := f(i); err != nil {
						mu.Lock()
						if first == nil {
							first = fmt.Errorf("%s %d: %w", what, i, err)
						}
						mu.Unlock()
					}
				}
			})
		}
		for i := range n {
			next <- i
		}
		close(next)
		wg.Wait()
		if first != nil {
			t.Fatal(first)
		}
	}
	now := metav1.Now()
	parallel("node", numNodes, func(i int) error {
		n := benchNode(i, now)
		created, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		// Admission adds the not-ready taint; a node controller would lift it.
		created.Spec.Taints = slices.DeleteFunc(created.Spec.Taints, func(t v1.Taint) bool { return t.Key == v1.TaintNodeNotReady })
		_, err = client.CoreV1().Nodes().Update(ctx, created, metav1.UpdateOptions{})
		return err
	})
	t.Logf("fill: %d nodes in %v", numNodes, time.Since(start).Round(time.Millisecond))
	numPods := numNodes * perNode
	numDeploys := (numPods + replicas - 1) / replicas
	podStart := time.Now()
	parallel("pdb", numDeploys/10, func(i int) error {
		d := i * 10
		minAvailable := intstr.FromInt32(replicas - 2)
		pdb := &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: nsName(d), Name: benchApp(d)},
			Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": benchApp(d)}}},
		}
		created, err := client.PolicyV1().PodDisruptionBudgets(pdb.Namespace).Create(ctx, pdb, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		created.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: created.Generation, DisruptionsAllowed: 2, CurrentHealthy: replicas, DesiredHealthy: replicas - 2, ExpectedPods: replicas}
		_, err = client.PolicyV1().PodDisruptionBudgets(pdb.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{})
		return err
	})
	// Pod 0 through the API, to check that the others, written straight
	// to etcd, are stored as the API server stores them; those get its
	// managed fields (their manager and field set are alike).
	template := benchPod(0, numNodes, replicas, nsName(0))
	status := template.Status
	created, err := client.CoreV1().Pods(template.Namespace).Create(ctx, template, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod 0: %v", err)
	}
	created.Status = status
	if created, err = client.CoreV1().Pods(template.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("setting the status of pod 0: %v", err)
	}
	store := newPodStore(t, etcd)
	store.check(created)
	parallel("pod", (numPods-1+podsPerTxn-1)/podsPerTxn, func(batch int) error {
		var pods []*v1.Pod
		for i := 1 + batch*podsPerTxn; i < min(numPods, 1+(batch+1)*podsPerTxn); i++ {
			p := benchPod(i, numNodes, replicas, nsName(i/replicas))
			admitLike(p, created)
			pods = append(pods, p)
		}
		return store.put(ctx, pods)
	})
	t.Logf("fill: %d running pods and %d budgets in %v (%.0f pods/s)", numPods, numDeploys/10, time.Since(podStart).Round(time.Millisecond), float64(numPods)/time.Since(podStart).Seconds())
	pending := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: nsName(0), Name: "urgent", Labels: map[string]string{"app": "urgent"}},
		Spec: v1.PodSpec{
			SchedulerName:     "nobody",
			PriorityClassName: high,
			Containers: []v1.Container{{Name: "main", Image: "registry.example.com/urgent:v1", Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("4Gi")},
			}}},
		},
	}
	if _, err := client.CoreV1().Pods(pending.Namespace).Create(ctx, pending, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the pending pod: %v", err)
	}
	t.Logf("fill: the cluster is ready after %v", time.Since(start).Round(time.Millisecond))
	return pending.Namespace + "/" + pending.Name
}

func benchZone(node int) string { return fmt.Sprintf("zone-%c", 'a'+node%4) }

func benchApp(d int) string { return fmt.Sprintf("svc-%04d", d) }

// benchNode is node i of the benchmark, with a kubelet's labels and status.
func benchNode(i int, now metav1.Time) *v1.Node {
	name := fmt.Sprintf("node-%04d", i)
	zone := benchZone(i)
	res := v1.ResourceList{
		v1.ResourceCPU:              resource.MustParse("16"),
		v1.ResourceMemory:           resource.MustParse("64Gi"),
		v1.ResourcePods:             resource.MustParse("110"),
		v1.ResourceEphemeralStorage: resource.MustParse("200Gi"),
	}
	cond := func(typ v1.NodeConditionType, status v1.ConditionStatus, reason string) v1.NodeCondition {
		return v1.NodeCondition{Type: typ, Status: status, Reason: reason, Message: "kubelet reports " + reason, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				v1.LabelHostname: name, v1.LabelOSStable: "linux", v1.LabelArchStable: "amd64",
				v1.LabelTopologyZone: zone, v1.LabelTopologyRegion: "region-1", v1.LabelInstanceTypeStable: "m6i.4xlarge",
				"node.kubernetes.io/pool": fmt.Sprintf("pool-%d", i%3),
			},
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
		},
		Spec: v1.NodeSpec{PodCIDR: fmt.Sprintf("10.%d.%d.0/24", i/256, i%256), ProviderID: "cloud:///" + zone + "/" + name},
		Status: v1.NodeStatus{
			Capacity: res, Allocatable: res, Phase: v1.NodeRunning,
			Conditions: []v1.NodeCondition{
				cond(v1.NodeMemoryPressure, v1.ConditionFalse, "KubeletHasSufficientMemory"),
				cond(v1.NodeDiskPressure, v1.ConditionFalse, "KubeletHasNoDiskPressure"),
				cond(v1.NodePIDPressure, v1.ConditionFalse, "KubeletHasSufficientPID"),
				cond(v1.NodeReady, v1.ConditionTrue, "KubeletReady"),
			},
			Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: fmt.Sprintf("10.0.%d.%d", i/256, i%256)}, {Type: v1.NodeHostName, Address: name}},
			NodeInfo:  v1.NodeSystemInfo{KubeletVersion: "v1.37.2", ContainerRuntimeVersion: "containerd://2.1.0", OperatingSystem: "linux", Architecture: "amd64", OSImage: "Debian GNU/Linux 13", KernelVersion: "6.12.0"},
		},
	}
}

// benchPod is pod i: replica i%replicas of Deployment i/replicas, on node
// i%numNodes, Running with a kubelet's status.
func benchPod(i, numNodes, replicas int, ns string) *v1.Pod {
	d := i / replicas
	app := benchApp(d)
	hash := fmt.Sprintf("%08x", d*2654435761%(1<<32))[:8]
	rs := app + "-" + hash
	name := fmt.Sprintf("%s-%05d", rs, i%replicas)
	node := fmt.Sprintf("node-%04d", i%numNodes)
	prio := low
	if d%4 == 0 {
		prio = medium
	}
	started := metav1.NewTime(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second))
	image := fmt.Sprintf("registry.example.com/%s/%s:v1.%d.0", ns, app, d%7)
	yes, grace := true, int64(30)
	ip := fmt.Sprintf("10.%d.%d.%d", 100+i/65536, i/256%256, i%256)
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name,
			Labels:      map[string]string{"app": app, "pod-template-hash": hash, "team": ns, "tier": []string{"web", "api", "worker"}[d%3]},
			Annotations: map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "9090", "kubectl.kubernetes.io/restartedAt": "2026-10-30T12:00:00Z"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs,
				UID: types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", d)), Controller: &yes, BlockOwnerDeletion: &yes}},
		},
		Spec: v1.PodSpec{
			NodeName:                      node,
			PriorityClassName:             prio,
			TerminationGracePeriodSeconds: &grace,
			Containers: []v1.Container{{
				Name: "main", Image: image,
				Ports: []v1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: v1.ProtocolTCP}, {Name: "metrics", ContainerPort: 9090, Protocol: v1.ProtocolTCP}},
				Env:   []v1.EnvVar{{Name: "APP", Value: app}, {Name: "LOG_LEVEL", Value: "info"}, {Name: "POD_NAME", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
				Resources: v1.ResourceRequirements{
					Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m"), v1.ResourceMemory: resource.MustParse("1Gi")},
					Limits:   v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi")},
				},
				ReadinessProbe: &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}}, PeriodSeconds: 10},
			}},
		},
		Status: v1.PodStatus{
			Phase: v1.PodRunning, HostIP: fmt.Sprintf("10.0.%d.%d", i%numNodes/256, i%numNodes%256), PodIP: ip, StartTime: &started, QOSClass: v1.PodQOSBurstable,
			Conditions: []v1.PodCondition{
				{Type: v1.PodReadyToStartContainers, Status: v1.ConditionTrue, LastTransitionTime: started},
				{Type: v1.PodInitialized, Status: v1.ConditionTrue, LastTransitionTime: started},
				{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: started},
				{Type: v1.ContainersReady, Status: v1.ConditionTrue, LastTransitionTime: started},
				{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: started},
			},
			ContainerStatuses: []v1.ContainerStatus{{
				Name: "main", Ready: true, Started: &yes, Image: image, ImageID: image + "@sha256:" + strings.Repeat("ab", 32),
				ContainerID: fmt.Sprintf("containerd://%064x", i),
				State:       v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: started}},
			}},
		},
	}
}

// podsPerTxn is how many pods one etcd transaction writes (etcd allows
// 128 operations per transaction).
const podsPerTxn = 100

// podStore writes pods straight into the API server's etcd, encoded as
// the API server stores them (protobuf, storage version v1, under
// /registry/pods/NAMESPACE/NAME); its watch cache picks them up from
// etcd's watch like any other write.
type podStore struct {
	t      *testing.T
	client *clientv3.Client
	codec  runtime.Codec
}

func newPodStore(t *testing.T, etcd *embed.Etcd) *podStore {
	return &podStore{t: t, client: v3client.New(etcd.Server),
		codec: scheme.Codecs.CodecForVersions(protobuf.NewSerializer(scheme.Scheme, scheme.Scheme), scheme.Codecs.UniversalDeserializer(), v1.SchemeGroupVersion, nil)}
}

func podKey(p *v1.Pod) string { return "/registry/pods/" + p.Namespace + "/" + p.Name }

// check fails the test unless stored, a pod created through the API, is
// in etcd where put writes pods and decodes to what admitLike makes of
// its spec: then the written pods are what the API server would store.
func (s *podStore) check(stored *v1.Pod) {
	s.t.Helper()
	resp, err := s.client.Get(context.Background(), podKey(stored))
	if err != nil || len(resp.Kvs) != 1 {
		s.t.Fatalf("reading %s from etcd: %v (%d keys)", podKey(stored), err, len(resp.Kvs))
	}
	got := &v1.Pod{}
	if _, _, err := s.codec.Decode(resp.Kvs[0].Value, nil, got); err != nil {
		s.t.Fatalf("decoding %s: %v", podKey(stored), err)
	}
	want := &v1.Pod{}
	if _, _, err := s.codec.Decode(s.encode(s.admitted(stored)), nil, want); err != nil {
		s.t.Fatalf("decoding our own encoding: %v", err)
	}
	got.ResourceVersion, want.ResourceVersion = "", ""
	if diff := cmp.Diff(got, want); diff != "" {
		s.t.Fatalf("a pod written to etcd would differ from the API server's (-api +ours):\n%s", diff)
	}
}

// admitted is benchPod's pod 0 as admitLike makes it, with stored's
// UID and creation time.
func (s *podStore) admitted(stored *v1.Pod) *v1.Pod {
	p := benchPod(0, 1, 1, stored.Namespace)
	admitLike(p, stored)
	p.UID, p.CreationTimestamp = stored.UID, stored.CreationTimestamp
	return p
}

func (s *podStore) encode(p *v1.Pod) []byte {
	var buf bytes.Buffer
	if err := s.codec.Encode(p, &buf); err != nil {
		s.t.Fatalf("encoding pod %s/%s: %v", p.Namespace, p.Name, err)
	}
	return buf.Bytes()
}

// put writes pods in one transaction, each only if its key is new.
func (s *podStore) put(ctx context.Context, pods []*v1.Pod) error {
	var conds []clientv3.Cmp
	var ops []clientv3.Op
	for _, p := range pods {
		conds = append(conds, clientv3.Compare(clientv3.ModRevision(podKey(p)), "=", 0))
		ops = append(ops, clientv3.OpPut(podKey(p), string(s.encode(p))))
	}
	resp, err := s.client.Txn(ctx).If(conds...).Then(ops...).Commit()
	if err != nil {
		return err
	}
	if !resp.Succeeded {
		return fmt.Errorf("some of %d pods exist already", len(pods))
	}
	return nil
}

// admitLike sets what the API server's create path would add to p, taking
// the request-independent parts from template (a pod of the same shape
// created through the API): a UID and creation time, the generation, the
// defaults, the priority the Priority admission plugin resolves, the
// tolerations DefaultTolerationSeconds adds, the node's topology labels
// PodTopologyLabelsAdmission copies and the managed fields.
func admitLike(p, template *v1.Pod) {
	var node int
	if _, err := fmt.Sscanf(p.Spec.NodeName, "node-%d", &node); err == nil {
		p.Labels[v1.LabelTopologyZone], p.Labels[v1.LabelTopologyRegion] = benchZone(node), "region-1"
	}
	p.UID = uuid.NewUUID()
	p.CreationTimestamp = template.CreationTimestamp
	p.Generation = template.Generation
	p.ManagedFields = template.ManagedFields
	corev1defaults.SetObjectDefaults_Pod(p)
	prio := map[string]int32{low: 100, medium: 1000}[p.Spec.PriorityClassName]
	p.Spec.Priority = &prio
	p.Spec.PreemptionPolicy = template.Spec.PreemptionPolicy
	p.Spec.Tolerations = template.Spec.Tolerations
}

// TestListPagedLive lists a real API server's nodes and pods with
// kube.ListWith in small pages (protobuf, the next page asked for while one
// is read and decoded, managed fields dropped before decoding) and wants
// the objects client-go's typed List returns in one response, without their
// managed fields; and the same when the API server's continue token expires
// midway (410 Gone, here from a proxy in front of it), after which the pods
// are listed again in one response.
func TestListPagedLive(t *testing.T) {
	e := newEnv(t, envOptions{noKubelet: true})
	direct := e.directConfig()
	const numNodes, numPods, chunk = 3, 130, 40
	client := kubernetes.NewForConfigOrDie(direct)
	ctx := context.Background()
	now := metav1.Now()
	for i := range numNodes {
		if _, err := client.CoreV1().Nodes().Create(ctx, benchNode(i, now), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-00"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	parallel(t, numPods, 8, func(i int) error {
		p := benchPod(i, numNodes, 30, "team-00")
		status := p.Status
		created, err := client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		created.Status = status
		_, err = client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{})
		return err
	})
	typedPods, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	typedNodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var wantPods []*v1.Pod
	for i := range typedPods.Items {
		if typedPods.Items[i].ManagedFields == nil {
			t.Fatalf("pod %s has no managed fields: the test would not see them dropped", typedPods.Items[i].Name)
		}
		typedPods.Items[i].ManagedFields = nil
		wantPods = append(wantPods, &typedPods.Items[i])
	}
	var wantNodes []*v1.Node
	for i := range typedNodes.Items {
		typedNodes.Items[i].ManagedFields = nil
		wantNodes = append(wantNodes, &typedNodes.Items[i])
	}

	expiring := &expireOnce{}
	proxy := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(mustParseURL(t, direct.Host)) },
		Transport: &expireOnceRT{expire: expiring, base: mustTransport(t, direct)},
	})
	defer proxy.Close()
	tests := map[string]struct {
		cfg          *rest.Config
		wantRequests []string
	}{
		"straight to the API server": {cfg: direct},
		"a continue token expires": {cfg: &rest.Config{Host: proxy.URL},
			wantRequests: []string{"limit=40 continue=false", "limit=40 continue=true", "limit= continue=false"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := rest.CopyConfig(tc.cfg)
			cfg.ContentType = runtime.ContentTypeProtobuf
			cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
			cfg.QPS = -1
			objs, warnings, err := kube.ListWith(ctx, kubernetes.NewForConfigOrDie(cfg), kube.ListOptions{ChunkSize: chunk})
			if err != nil {
				t.Fatal(err)
			}
			if len(warnings) != 0 {
				t.Errorf("warnings: %v", warnings)
			}
			if diff := cmp.Diff(wantPods, objs.Pods); diff != "" {
				t.Errorf("pods: typed List vs kube.ListWith (-typed +paged):\n%s", diff)
			}
			if diff := cmp.Diff(wantNodes, objs.Nodes); diff != "" {
				t.Errorf("nodes: typed List vs kube.ListWith (-typed +paged):\n%s", diff)
			}
			if tc.wantRequests != nil {
				if diff := cmp.Diff(tc.wantRequests, expiring.requests()); diff != "" {
					t.Errorf("pods requests through the proxy (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// expireOnce answers the first pods list request with a continue token
// with 410 Gone, as an API server whose token has expired, and records
// every pods list request ("limit=L continue=whether one was given").
type expireOnce struct {
	mu      sync.Mutex
	expired bool
	log     []string
}

func (e *expireOnce) requests() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.log)
}

// expireOnceRT is the proxy's transport.
type expireOnceRT struct {
	expire *expireOnce
	base   http.RoundTripper
}

func (rt *expireOnceRT) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Path != "/api/v1/pods" {
		return rt.base.RoundTrip(req)
	}
	q := req.URL.Query()
	hasContinue := q.Get("continue") != ""
	e := rt.expire
	e.mu.Lock()
	e.log = append(e.log, fmt.Sprintf("limit=%s continue=%v", q.Get("limit"), hasContinue))
	expire := hasContinue && !e.expired
	e.expired = e.expired || expire
	e.mu.Unlock()
	if !expire {
		return rt.base.RoundTrip(req)
	}
	status := apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result.").ErrStatus
	status.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	body, err := json.Marshal(&status)
	if err != nil {
		return nil, err
	}
	return &http.Response{StatusCode: http.StatusGone, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: req}, nil
}

func mustParseURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func mustTransport(t *testing.T, cfg *rest.Config) http.RoundTripper {
	t.Helper()
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}
