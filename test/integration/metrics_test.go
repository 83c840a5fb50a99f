package integration

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/retry"
	compbasemetrics "k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	sm "k8s.io/kubernetes/pkg/scheduler/metrics"

	"github.com/reprieve/reprieve/internal/adapter/config"
	"github.com/reprieve/reprieve/internal/cli/schedulercmd"
	"github.com/reprieve/reprieve/internal/reprievetest"
)

// TestMetricsMatchUpstream runs a preemption and an unschedulable pod
// through reprieve's scheduler, scrapes its /metrics, and checks every
// scheduler_ family against kube-scheduler v1.37.2's own definition: each
// of reprieve's series is fed, with its label values, to upstream's metric
// (which refuses label names it does not have), then name, help (with its
// stability annotation), type, label sets and buckets of the two
// registries' output are compared. Label values are checked against
// upstream's vocabularies (extension points, status codes, queues, events).
func TestMetricsMatchUpstream(t *testing.T) {
	e := newEnv(t, envOptions{})
	w := e.world(t)
	w.node(smallNode("node-1"))
	s := w.startScheduler(schedOpts{})
	w.pod(mkPod("victim", low, "400m").Obj())
	if got := w.waitBound("victim"); got != "node-1" {
		t.Fatalf("victim bound to %q, want node-1", got)
	}
	w.waitRunning("victim")
	w.pod(mkPod("preemptor", high, "400m").Obj())
	if got := w.waitBound("preemptor"); got != "node-1" {
		t.Fatalf("preemptor bound to %q, want node-1", got)
	}
	w.pod(mkPod("stuck", low, "100m").NodeSelector("disk", "none").Obj())
	w.waitDecided("stuck")

	ours := scrape(t, "http://"+s.metrics+"/metrics")

	// Metrics the scenario must have produced: upstream's STABLE set and
	// the BETA and preemption metrics it exercises.
	required := []string{
		"scheduler_schedule_attempts_total",
		"scheduler_scheduling_attempt_duration_seconds",
		"scheduler_preemption_victims",
		"scheduler_preemption_attempts_total",
		"scheduler_pending_pods",
		"scheduler_pod_scheduling_attempts",
		"scheduler_framework_extension_point_duration_seconds",
		"scheduler_queue_incoming_pods_total",
		"scheduler_scheduling_algorithm_duration_seconds",
		"scheduler_pod_scheduling_sli_duration_seconds",
		"scheduler_unschedulable_pods",
		"scheduler_goroutines",
		"scheduler_preemption_evaluation_duration_seconds",
		"scheduler_preemption_execution_duration_seconds",
		"scheduler_preemption_goroutines_execution_total",
	}
	for _, name := range required {
		if ours[name] == nil {
			t.Errorf("%s missing from /metrics", name)
		}
	}
	// An alpha metric deprecated in 1.37.0: kube-scheduler v1.37.2 hides it.
	if ours["scheduler_preemption_goroutines_duration_seconds"] != nil {
		t.Errorf("scheduler_preemption_goroutines_duration_seconds served; kube-scheduler v1.37.2 hides it")
	}

	sm.Register()
	// Registered by upstream only with the GenericWorkload gate.
	for _, c := range []compbasemetrics.Registerable{sm.PreemptionEvaluationDuration, sm.PreemptionExecutionDuration, sm.PreemptionPDBViolations} {
		_ = legacyregistry.Register(c)
	}

	feeders := upstreamFeeders(t)
	checkValues := labelVocabulary(w.sched)
	for name, fam := range ours {
		if !strings.HasPrefix(name, "scheduler_") {
			continue
		}
		feed, ok := feeders[name]
		if !ok {
			t.Errorf("%s: no upstream metric of that name is checked", name)
			continue
		}
		for _, m := range fam.GetMetric() {
			labels := labelMap(m)
			for k, v := range labels {
				if check := checkValues[k]; check != nil {
					if err := check(name, v); err != nil {
						t.Errorf("%s{%s}: %v", name, labelKey(m), err)
					}
				}
			}
			if err := feedSafely(feed, labels); err != nil {
				t.Errorf("%s{%s}: upstream refuses the labels: %v", name, labelKey(m), err)
			}
		}
	}

	upstream, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*dto.MetricFamily{}
	for _, f := range upstream {
		byName[f.GetName()] = f
	}
	for name, fam := range ours {
		if _, ok := feeders[name]; !ok {
			continue
		}
		up := byName[name]
		if up == nil {
			t.Errorf("%s: upstream produced no family after being fed", name)
			continue
		}
		wantHelp := up.GetHelp()
		if fam.GetHelp() != wantHelp {
			t.Errorf("%s: help\n  ours     %q\n  upstream %q", name, fam.GetHelp(), wantHelp)
		}
		if fam.GetType() != up.GetType() {
			t.Errorf("%s: type %v, upstream %v", name, fam.GetType(), up.GetType())
		}
		upSeries := map[string]*dto.Metric{}
		for _, m := range up.GetMetric() {
			upSeries[labelKey(m)] = m
		}
		for _, m := range fam.GetMetric() {
			um := upSeries[labelKey(m)]
			if um == nil {
				t.Errorf("%s{%s}: upstream has no such series; it has %v", name, labelKey(m), keys(upSeries))
				continue
			}
			if fam.GetType() == dto.MetricType_HISTOGRAM {
				if got, want := bounds(m), bounds(um); !slices.Equal(got, want) {
					t.Errorf("%s: buckets %v, upstream %v", name, got, want)
				}
			}
		}
	}
	if t.Failed() {
		var names []string
		for _, n := range keys(ours) {
			if strings.HasPrefix(n, "scheduler_") {
				names = append(names, n)
			}
		}
		t.Logf("reprieve's scheduler_ families: %v", names)
	}
}

// feedSafely runs feed, turning a panic (a label upstream does not have)
// into an error.
func feedSafely(feed func(map[string]string) error, labels map[string]string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return feed(labels)
}

// upstreamFeeders records one observation on upstream's metric of each name
// with the given labels.
func upstreamFeeders(t *testing.T) map[string]func(map[string]string) error {
	t.Helper()
	attempts := func(l map[string]string) error {
		switch l["result"] {
		case "scheduled":
			sm.PodScheduled(l["profile"], 0.01)
		case "unschedulable":
			sm.PodUnschedulable(l["profile"], 0.01)
		case "error":
			sm.PodScheduleError(l["profile"], 0.01)
		default:
			return fmt.Errorf("result %q is none of upstream's", l["result"])
		}
		if len(l) != 2 {
			return fmt.Errorf("labels %v, upstream has result and profile", l)
		}
		return nil
	}
	none := func(n int, l map[string]string) error {
		if len(l) != n {
			return fmt.Errorf("labels %v", l)
		}
		return nil
	}
	return map[string]func(map[string]string) error{
		"scheduler_schedule_attempts_total":             attempts,
		"scheduler_scheduling_attempt_duration_seconds": attempts,
		"scheduler_scheduling_algorithm_duration_seconds": func(l map[string]string) error {
			sm.SchedulingAlgorithmLatency.Observe(0.01)
			return none(0, l)
		},
		"scheduler_preemption_victims": func(l map[string]string) error {
			sm.PreemptionVictims.Observe(1)
			return none(0, l)
		},
		"scheduler_preemption_attempts_total": func(l map[string]string) error {
			sm.PreemptionAttempts.Inc()
			return none(0, l)
		},
		"scheduler_pending_pods": func(l map[string]string) error {
			switch l["queue"] {
			case "active":
				sm.ActivePods().Set(0)
			case "backoff":
				sm.BackoffPods().Set(0)
			case "unschedulable":
				sm.UnschedulablePods().Set(0)
			case "gated":
				sm.GatedPods().Set(0)
			default:
				return fmt.Errorf("queue %q is none of upstream's", l["queue"])
			}
			return none(1, l)
		},
		"scheduler_pod_scheduling_attempts": func(l map[string]string) error {
			sm.PodSchedulingAttempts.Observe(1)
			return none(0, l)
		},
		"scheduler_pod_scheduling_sli_duration_seconds": func(l map[string]string) error {
			sm.PodSchedulingSLIDuration.With(l).Observe(0.1)
			return nil
		},
		"scheduler_framework_extension_point_duration_seconds": func(l map[string]string) error {
			sm.FrameworkExtensionPointDuration.With(l).Observe(0.001)
			return nil
		},
		"scheduler_plugin_execution_duration_seconds": func(l map[string]string) error {
			sm.PluginExecutionDuration.With(l).Observe(0.001)
			return nil
		},
		"scheduler_queue_incoming_pods_total": func(l map[string]string) error {
			sm.SchedulerQueueIncomingPods.With(l).Inc()
			return nil
		},
		"scheduler_goroutines": func(l map[string]string) error {
			sm.Goroutines.With(l).Set(0)
			return nil
		},
		"scheduler_unschedulable_pods": func(l map[string]string) error {
			sm.UnschedulableReason(l["plugin"], l["profile"]).Set(0)
			return none(2, l)
		},
		"scheduler_plugin_evaluation_total": func(l map[string]string) error {
			sm.PluginEvaluationTotal.With(l).Inc()
			return nil
		},
		"scheduler_permit_wait_duration_seconds": func(l map[string]string) error {
			sm.PermitWaitDuration.With(l).Observe(0.001)
			return nil
		},
		"scheduler_preemption_evaluation_duration_seconds": func(l map[string]string) error {
			sm.PreemptionEvaluationDuration.With(l).Observe(0.001)
			return nil
		},
		"scheduler_preemption_execution_duration_seconds": func(l map[string]string) error {
			sm.PreemptionExecutionDuration.With(l).Observe(0.001)
			return nil
		},
		"scheduler_preemption_pdb_violations_total": func(l map[string]string) error {
			sm.PreemptionPDBViolations.With(l).Inc()
			return nil
		},
		"scheduler_preemption_goroutines_execution_total": func(l map[string]string) error {
			sm.PreemptionGoroutinesExecutionTotal.With(l).Inc()
			return nil
		},
	}
}

// nodeUpdate is upstream's event label of a node update that changed what
// action names.
func nodeUpdate(action fwk.ActionType) string {
	return fwk.ClusterEvent{Resource: fwk.Node, ActionType: action}.Label()
}

// labelVocabulary checks label values against upstream's.
func labelVocabulary(profile string) map[string]func(metric, v string) error {
	oneOf := func(allowed ...string) func(string, string) error {
		return func(_, v string) error {
			if !slices.Contains(allowed, v) {
				return fmt.Errorf("value %q is none of %q", v, allowed)
			}
			return nil
		}
	}
	codes := []string{fwk.Success.String(), fwk.Error.String(), fwk.Unschedulable.String(),
		fwk.UnschedulableAndUnresolvable.String(), fwk.Wait.String(), fwk.Skip.String(), fwk.Pending.String()}
	statusOrGoroutine := func(metric, v string) error {
		if strings.HasPrefix(metric, "scheduler_preemption_goroutines") || metric == "scheduler_preemption_execution_duration_seconds" {
			return oneOf(sm.GoroutineResultSuccess, sm.GoroutineResultError)(metric, v)
		}
		if metric == "scheduler_preemption_evaluation_duration_seconds" {
			return oneOf(codes...)(metric, v)
		}
		return nil // schedule_attempts: checked by its feeder
	}
	queue := func(metric, v string) error {
		if metric == "scheduler_queue_incoming_pods_total" {
			return oneOf("Active", "Backoff", "Unschedulable")(metric, v)
		}
		return nil // pending_pods: checked by its feeder
	}
	return map[string]func(string, string) error{
		"profile":         oneOf(profile),
		"extension_point": oneOf(sm.ExtensionPoints...),
		"status":          oneOf(codes...),
		"result":          statusOrGoroutine,
		"queue":           queue,
		"event": oneOf(framework.EventUnscheduledPodAdd.Label(), framework.ScheduleAttemptFailure,
			framework.EventAssignedPodDelete.Label(), fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}.Label(),
			nodeUpdate(fwk.UpdateNodeAllocatable), nodeUpdate(fwk.UpdateNodeLabel), nodeUpdate(fwk.UpdateNodeTaint),
			nodeUpdate(fwk.UpdateNodeCondition), nodeUpdate(fwk.UpdateNodeAnnotation), nodeUpdate(fwk.UpdateNodePreemptionPolicy)),
		"operation": oneOf(sm.Binding),
		"preemptor": oneOf("pod"),
	}
}

func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing %s: %v", url, err)
	}
	return families
}

func labelMap(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func labelKey(m *dto.Metric) string {
	var parts []string
	for _, l := range m.GetLabel() {
		parts = append(parts, l.GetName()+"="+l.GetValue())
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

func bounds(m *dto.Metric) []float64 {
	var out []float64
	for _, b := range m.GetHistogram().GetBucket() {
		// The text format lists +Inf, a gathered histogram leaves it implicit.
		if !math.IsInf(b.GetUpperBound(), 1) {
			out = append(out, b.GetUpperBound())
		}
	}
	return out
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestSecureServing runs `reprieve scheduler` as the ServiceAccount of
// deploy/rbac.yaml and deploy/serving-rbac.yaml under RBAC and checks its
// secure port as kube-scheduler's behaves: TLS with a self-signed
// certificate, health paths open to anonymous requests, /metrics only for
// a token or a client certificate the API server authorizes (TokenReview,
// SubjectAccessReview) or one in system:masters.
//
// Three schedulers run: one with kube-scheduler's defaults, which trusts
// the client CA the API server publishes in the ConfigMap
// kube-system/extension-apiserver-authentication; one with
// --client-ca-file, which trusts only that CA; one with
// --authorization-always-allow-paths=/healthz,/metrics.
func TestSecureServing(t *testing.T) {
	dir := t.TempDir()
	clusterCA, flagCA := newTestCA(t, "cluster-client-ca"), newTestCA(t, "flag-client-ca")
	clusterCAFile, flagCAFile := filepath.Join(dir, "cluster-ca.crt"), filepath.Join(dir, "flag-ca.crt")
	writeFile(t, clusterCAFile, clusterCA.pem())
	writeFile(t, flagCAFile, flagCA.pem())

	e := newEnv(t, envOptions{rbac: true, clientCAFile: clusterCAFile})
	ctx := context.Background()
	admin := e.Admin
	for _, ns := range []string{"reprieve-system", "monitoring"} {
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	token := func(ns, name string) string {
		t.Helper()
		if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		expiry := int64(3600)
		tr, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	schedToken := token("reprieve-system", "reprieve")
	applyRBAC(t, admin, "../../deploy/rbac.yaml")
	applyServingRBAC(t, admin, "../../deploy/serving-rbac.yaml")
	readerToken := token("monitoring", "prometheus")
	nobodyToken := token("monitoring", "nobody")
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus-reads-reprieve"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "reprieve-metrics-reader"},
		Subjects: []rbacv1.Subject{
			{Kind: rbacv1.ServiceAccountKind, Name: "prometheus", Namespace: "monitoring"},
			{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "cert-scraper"},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sa := kubernetes.NewForConfigOrDie(e.configFor(schedToken))
	waitUntil(t, "the scheduler's roles to apply", func() bool {
		_, err := sa.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		return err == nil
	})
	// serving-rbac.yaml lets the scheduler read the client CA as
	// kube-scheduler does.
	waitUntil(t, "the scheduler to read the extension-apiserver-authentication ConfigMap", func() bool {
		cm, err := sa.CoreV1().ConfigMaps("kube-system").Get(ctx, "extension-apiserver-authentication", metav1.GetOptions{})
		return err == nil && cm.Data["client-ca-file"] != ""
	})

	cfg := e.configFor(schedToken)
	kc := kubeconfigFile(t, clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}, clientcmdapi.AuthInfo{Token: schedToken})

	// Client certificates: CN the user, O the groups.
	clusterMaster := clusterCA.client(t, "cluster-admin", "system:masters")
	clusterScraper := clusterCA.client(t, "cert-scraper")
	clusterStranger := clusterCA.client(t, "stranger", "viewers")
	flagMaster := flagCA.client(t, "flag-admin", "system:masters")
	flagScraper := flagCA.client(t, "cert-scraper")
	flagStranger := flagCA.client(t, "stranger")

	defaults := startSecureScheduler(t, kc, "secure-defaults")
	withCAFile := startSecureScheduler(t, kc, "secure-ca-file", "--client-ca-file="+flagCAFile)
	openMetrics := startSecureScheduler(t, kc, "secure-open-metrics", "--authorization-always-allow-paths=/healthz,/metrics")
	// The ConfigMap's CA is loaded by an informer once serving started.
	waitUntil(t, "the ConfigMap's client CA to be trusted", func() bool {
		code, _ := secureGet(defaults, "/metrics", "", clusterMaster)
		return code == http.StatusOK
	})

	forbidden := func(user string) string { return `forbidden: User \"` + user + `\" cannot get path \"/metrics\"` }
	tests := []struct {
		name, base, path, token string
		cert                    *tls.Certificate
		want                    int
		body                    string
	}{
		{"anonymous healthz", defaults, "/healthz", "", nil, http.StatusOK, "ok"},
		{"anonymous livez", defaults, "/livez", "", nil, http.StatusOK, "ok"},
		{"anonymous readyz", defaults, "/readyz", "", nil, http.StatusOK, "ok"},
		{"anonymous metrics refused", defaults, "/metrics", "", nil, http.StatusForbidden, forbidden("system:anonymous")},
		{"unknown token refused", defaults, "/metrics", "not-a-token", nil, http.StatusUnauthorized, "Unauthorized"},
		{"token without the role refused", defaults, "/metrics", nobodyToken, nil, http.StatusForbidden, forbidden("system:serviceaccount:monitoring:nobody")},
		{"metrics reader", defaults, "/metrics", readerToken, nil, http.StatusOK, "scheduler_pending_pods"},
		{"ConfigMap CA: system:masters", defaults, "/metrics", "", clusterMaster, http.StatusOK, "scheduler_pending_pods"},
		{"ConfigMap CA: user bound to the reader role", defaults, "/metrics", "", clusterScraper, http.StatusOK, "scheduler_pending_pods"},
		{"ConfigMap CA: user without the role refused", defaults, "/metrics", "", clusterStranger, http.StatusForbidden, forbidden("stranger")},
		{"ConfigMap CA: healthz", defaults, "/healthz", "", clusterStranger, http.StatusOK, "ok"},
		{"ConfigMap CA: another CA's certificate refused", defaults, "/metrics", "", flagMaster, http.StatusUnauthorized, "Unauthorized"},

		{"--client-ca-file: system:masters", withCAFile, "/metrics", "", flagMaster, http.StatusOK, "scheduler_pending_pods"},
		{"--client-ca-file: user bound to the reader role", withCAFile, "/metrics", "", flagScraper, http.StatusOK, "scheduler_pending_pods"},
		{"--client-ca-file: user without the role refused", withCAFile, "/metrics", "", flagStranger, http.StatusForbidden, forbidden("stranger")},
		{"--client-ca-file: the ConfigMap's CA no longer trusted", withCAFile, "/metrics", "", clusterMaster, http.StatusUnauthorized, "Unauthorized"},
		{"--client-ca-file: anonymous metrics refused", withCAFile, "/metrics", "", nil, http.StatusForbidden, forbidden("system:anonymous")},
		{"--client-ca-file: anonymous healthz", withCAFile, "/healthz", "", nil, http.StatusOK, "ok"},
		{"--client-ca-file: tokens still reviewed", withCAFile, "/metrics", readerToken, nil, http.StatusOK, "scheduler_pending_pods"},

		{"always-allowed /metrics: anonymous", openMetrics, "/metrics", "", nil, http.StatusOK, "scheduler_pending_pods"},
		{"always-allowed /metrics: healthz", openMetrics, "/healthz", "", nil, http.StatusOK, "ok"},
		// Not always allowed any more, but RBAC's system:public-info-viewer
		// grants it to anyone through the SubjectAccessReview.
		{"always-allowed /metrics: readyz by SubjectAccessReview", openMetrics, "/readyz", "", nil, http.StatusOK, "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := secureGet(tt.base, tt.path, tt.token, tt.cert)
			if code != tt.want || !strings.Contains(body, tt.body) {
				t.Errorf("GET %s: %d %.300q, want %d containing %q", tt.path, code, body, tt.want, tt.body)
			}
		})
	}
	t.Run("plain HTTP refused", func(t *testing.T) {
		resp, err := http.Get("http://" + strings.TrimPrefix(defaults, "https://") + "/metrics")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("plain HTTP: %s, want 400 (HTTP to an HTTPS server)", resp.Status)
			}
		}
	})
}

// startSecureScheduler runs `reprieve scheduler --kubeconfig kc` for
// scheduler name with its secure port on a free port of 127.0.0.1 and the
// extra flags, waits until /readyz answers and returns the port's base
// URL. The scheduler stops when t ends.
func startSecureScheduler(t *testing.T, kc, name string, extra ...string) string {
	t.Helper()
	port := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var errOut bytes.Buffer
	cmd := schedulercmd.NewCommand(&errOut)
	cmd.SetArgs(append([]string{"--kubeconfig", kc, "--leader-elect=false", "--scheduler-name=" + name,
		"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port), "--api-wait-attempts=3", "--api-wait-interval=1s"}, extra...))
	cmd.SetOut(io.Discard)
	cmd.SetErr(&errOut)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		defer restoreKlog()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("scheduler %s: %v", name, err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("scheduler %s did not stop within 30s", name)
		}
	})
	base := fmt.Sprintf("https://127.0.0.1:%d", port)
	waitUntil(t, "the secure port of "+name+" to be ready", func() bool {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("scheduler %s exited: %v\n%s", name, err, errOut.String())
		default:
		}
		code, _ := secureGet(base, "/readyz", "", nil)
		return code == http.StatusOK
	})
	return base
}

// secureGet GETs base+path with a bearer token and a client certificate
// (each optional), and returns the status code and body (0 and the error
// when the request fails). The certificate is presented even when the
// server names other authorities, as a client that insists would.
func secureGet(base, path, bearer string, cert *tls.Certificate) (int, string) {
	tlsConfig := &tls.Config{InsecureSkipVerify: true} // self-signed, as kube-scheduler's default
	if cert != nil {
		tlsConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig}}
	defer client.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		return 0, err.Error()
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// testCA is a client certificate authority minted for a test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// newTestCA returns a self-signed CA named name.
func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key}
}

// pem returns the CA's certificate in PEM.
func (ca *testCA) pem() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})
}

// client returns a client certificate for user in groups (CN and O, as
// the API server reads them), signed by ca.
func (ca *testCA) client(t *testing.T, user string, groups ...string) *tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: user, Organization: groups},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// applyServingRBAC creates the ClusterRoles, ClusterRoleBindings and
// RoleBindings of a manifest.
func applyServingRBAC(t *testing.T, c kubernetes.Interface, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var raw runtimeRaw
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return
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
		case *rbacv1.RoleBinding:
			_, err = c.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		default:
			t.Fatalf("%s: unexpected %T", path, obj)
		}
		if err != nil {
			t.Fatalf("%s: creating %T: %v", path, obj, err)
		}
	}
}

// TestPluginEvaluationsMatchUpstream runs the same pods, one at a time,
// through kube-scheduler v1.37.2 and through reprieve's scheduler, each on
// its own copy of the same four nodes, and compares
// scheduler_plugin_evaluation_total plugin by plugin and extension point by
// extension point: a pod that fits on two nodes (PreScore and Score), one
// a node selector admits on one node only (NodeAffinity, TaintToleration
// rejections), one with a host port (NodePorts' PreFilter and Filter), a
// preemption (the dry run's Filter calls and the nominated node's), a
// preemption whose dry run reprieves budget-breaking victims first, and a
// pod no node admits. Placements that scoring leaves to chance (a tie
// between two equal nodes) do not change which nodes are feasible later.
//
// The second preemption is on node e: "old" (200m, started first) and two
// newer 100m pods a PodDisruptionBudget forbids disrupting; the preemptor
// (300m) has a topology spread constraint that never rejects, so that
// PodTopologySpread's Filter runs after NodeResourcesFit only on the calls
// that pass. Upstream reprieves the guarded pods first (both fit back,
// "old" does not): three passing calls after the one with every victim
// removed. Reprieving in importance order alone ("old" first) passes one.
func TestPluginEvaluationsMatchUpstream(t *testing.T) {
	e := newEnv(t, envOptions{})
	scenario := func(w *world) {
		w.node(smallNode(w.ns+"-a").Label("disk", "ssd"))
		w.node(smallNode(w.ns+"-b").Taint("k", "v", v1.TaintEffectNoSchedule))
		w.node(smallNode(w.ns + "-c"))
		w.node(smallNode(w.ns+"-d").Label("role", "victim").Taint("role", "victim", v1.TaintEffectNoSchedule))
		nodeE := w.ns + "-e"
		w.node(smallNode(nodeE).Label("role", "pdb").Taint("role", "pdb", v1.TaintEffectNoSchedule))
		guarded := map[string]string{"app": "guarded"}
		onE := func(name, pc, cpu string) *reprievetest.PodBuilder {
			return mkPod(name, pc, cpu).Toleration("role", "pdb", v1.TaintEffectNoSchedule)
		}
		w.running(onE("old", low, "200m").Obj(), nodeE, at(0))
		w.running(onE("guarded-1", low, "100m").Label("app", "guarded").Obj(), nodeE, at(1))
		w.running(onE("guarded-2", low, "100m").Label("app", "guarded").Obj(), nodeE, at(2))
		minAvailable := intstr.FromInt32(2)
		w.pdb(&policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: "guarded"},
			Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable, Selector: &metav1.LabelSelector{MatchLabels: guarded}},
		}, 0, 2, 2)
		w.waitRunning("old", "guarded-1", "guarded-2")
		steps := []*v1.Pod{
			mkPod("fits", low, "100m").Obj(),
			mkPod("ssd", low, "100m").NodeSelector("disk", "ssd").Obj(),
			mkPod("port", low, "100m").HostPort(8080, v1.ProtocolTCP, "").Obj(),
			mkPod("victim", low, "400m").NodeSelector("role", "victim").Toleration("role", "victim", v1.TaintEffectNoSchedule).Obj(),
		}
		for _, p := range steps {
			w.pod(p)
			w.waitBound(p.Name)
		}
		w.waitRunning("victim")
		w.pod(mkPod("preemptor", high, "400m").NodeSelector("role", "victim").Toleration("role", "victim", v1.TaintEffectNoSchedule).Obj())
		if got := w.waitBound("preemptor"); got != w.ns+"-d" {
			t.Fatalf("preemptor bound to %q, want %s-d", got, w.ns)
		}
		w.pod(onE("guarded-preemptor", high, "300m").NodeSelector("role", "pdb").Spread(10, "node", map[string]string{"app": "spread"}).Obj())
		if got := w.waitBound("guarded-preemptor"); got != nodeE {
			t.Fatalf("guarded-preemptor bound to %q, want %s", got, nodeE)
		}
		if _, err := w.get("old"); err == nil {
			t.Fatalf("old still exists; upstream's dry run evicts it and reprieves the guarded pods")
		}
		w.pod(mkPod("stuck", low, "100m").NodeSelector("disk", "none").Obj())
		w.waitDecided("stuck")
	}

	up := e.world(t)
	u := up.startUpstream(t, config.DefaultConnection().ClientConnection)
	scenario(up)
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "scheduler_plugin_evaluation_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if l := labelMap(m); l["profile"] == up.sched {
				want[l["extension_point"]+"/"+l["plugin"]] = m.GetCounter().GetValue()
			}
		}
	}
	// For a failure: which pods took how many cycles (their events).
	upstreamWorld := up.describe()
	u.stop()
	up.cleanup()

	ours := e.world(t)
	s := ours.startScheduler(schedOpts{})
	scenario(ours)
	got := map[string]float64{}
	if fam := scrape(t, "http://"+s.metrics+"/metrics")["scheduler_plugin_evaluation_total"]; fam != nil {
		for _, m := range fam.GetMetric() {
			l := labelMap(m)
			if l["profile"] != ours.sched {
				t.Errorf("series %s: profile %q, want %q", labelKey(m), l["profile"], ours.sched)
			}
			got[l["extension_point"]+"/"+l["plugin"]] = m.GetCounter().GetValue()
		}
	}
	if len(want) == 0 {
		t.Fatal("kube-scheduler counted no plugin evaluations")
	}
	t.Logf("kube-scheduler's plugin_evaluation_total: %v", want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scheduler_plugin_evaluation_total, kube-scheduler's (-) and reprieve's (+):\n%s", diff)
		t.Logf("kube-scheduler's world:\n%s\nreprieve's world:\n%s", upstreamWorld, ours.describe())
	}
}

// TestNodeUpdateArrivalsMatchUpstream fails two pods on one node (one
// rejected by NodeResourcesFit, one by NodeAffinity), then updates the
// node four times, through kube-scheduler v1.37.2 and through reprieve's
// scheduler: an annotation and an unrelated label move neither pod, the
// label the selector wants moves one (NodeUpdateNodeLabel), more CPU the
// other (NodeUpdateNodeAllocatable). scheduler_queue_incoming_pods_total's
// node-update series, summed over queues (whether a pod lands in Active or
// Backoff depends on how long after its failure the update comes), must be
// equal.
func TestNodeUpdateArrivalsMatchUpstream(t *testing.T) {
	e := newEnv(t, envOptions{})
	scenario := func(w *world) {
		name := w.ns + "-a"
		w.node(smallNode(name))
		w.pod(mkPod("big", low, "1").Obj())
		w.pod(mkPod("ssd", low, "100m").NodeSelector("disk", "ssd").Obj())
		w.waitDecided("big")
		w.waitDecided("ssd")
		update := func(status bool, change func(n *v1.Node)) {
			t.Helper()
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				n, err := w.Admin.CoreV1().Nodes().Get(w.ctx, name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				change(n)
				if status {
					_, err = w.Admin.CoreV1().Nodes().UpdateStatus(w.ctx, n, metav1.UpdateOptions{})
				} else {
					_, err = w.Admin.CoreV1().Nodes().Update(w.ctx, n, metav1.UpdateOptions{})
				}
				return err
			})
			if err != nil {
				t.Fatalf("updating node %s: %v", name, err)
			}
		}
		update(false, func(n *v1.Node) { metav1.SetMetaDataAnnotation(&n.ObjectMeta, "example.com/note", "x") })
		update(false, func(n *v1.Node) { n.Labels["rack"] = "r1" })
		// Give both schedulers time to (not) move the pods.
		time.Sleep(2 * time.Second)
		update(false, func(n *v1.Node) { n.Labels["disk"] = "ssd" })
		if got := w.waitBound("ssd"); got != name {
			t.Fatalf("ssd bound to %q, want %s", got, name)
		}
		update(true, func(n *v1.Node) {
			n.Status.Allocatable[v1.ResourceCPU] = resource.MustParse("2")
			n.Status.Capacity[v1.ResourceCPU] = resource.MustParse("2")
		})
		if got := w.waitBound("big"); got != name {
			t.Fatalf("big bound to %q, want %s", got, name)
		}
	}
	nodeEvents := func(fam *dto.MetricFamily, profile func(map[string]string) bool) map[string]float64 {
		out := map[string]float64{}
		if fam == nil {
			return out
		}
		for _, m := range fam.GetMetric() {
			if l := labelMap(m); strings.HasPrefix(l["event"], "NodeUpdate") && profile(l) {
				out[l["event"]] += m.GetCounter().GetValue()
			}
		}
		return out
	}

	up := e.world(t)
	u := up.startUpstream(t, config.DefaultConnection().ClientConnection)
	before, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	scenario(up)
	after, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	family := func(fams []*dto.MetricFamily) *dto.MetricFamily {
		for _, f := range fams {
			if f.GetName() == "scheduler_queue_incoming_pods_total" {
				return f
			}
		}
		return nil
	}
	// The upstream series have no profile label and are shared by every
	// kube-scheduler of this process: count what this run added.
	all := func(map[string]string) bool { return true }
	want := nodeEvents(family(after), all)
	for k, v := range nodeEvents(family(before), all) {
		want[k] -= v
	}
	for k, v := range want {
		if v == 0 {
			delete(want, k)
		}
	}
	u.stop()
	up.cleanup()

	ours := e.world(t)
	s := ours.startScheduler(schedOpts{})
	scenario(ours)
	got := nodeEvents(scrape(t, "http://"+s.metrics+"/metrics")["scheduler_queue_incoming_pods_total"], all)
	t.Logf("node-update arrivals: kube-scheduler %v, reprieve %v", want, got)
	if len(want) == 0 {
		t.Fatal("kube-scheduler moved no pod on a node update")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("node-update arrivals, kube-scheduler's (-) and reprieve's (+):\n%s", diff)
	}
}
