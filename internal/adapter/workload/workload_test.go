package workload

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/reprieve/reprieve/internal/adapter/admission"
)

// template is a pod template labelled app=NAME whose container asks for
// cpu by its limit only.
func template(app string) v1.PodTemplateSpec {
	return v1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "i", Resources: v1.ResourceRequirements{
			Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m")},
		}}}},
	}
}

func meta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: "shop"} }

func selector(app string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
}

// admitted returns obj defaulted and validated as the loader admits it.
func admitted[T any](t *testing.T, obj T) T {
	t.Helper()
	if fe := admission.Admit(obj); fe != nil {
		t.Fatalf("admission: %v", fe)
	}
	return obj
}

func deploymentOf(name string, replicas int32) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: meta(name), Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To(replicas), Selector: selector(name), Template: template(name),
	}}
}

func statefulSetOf(name string, replicas int32, claims ...string) *appsv1.StatefulSet {
	s := &appsv1.StatefulSet{ObjectMeta: meta(name), Spec: appsv1.StatefulSetSpec{
		Replicas: ptr.To(replicas), Selector: selector(name), Template: template(name), ServiceName: name,
	}}
	for _, c := range claims {
		s.Spec.VolumeClaimTemplates = append(s.Spec.VolumeClaimTemplates, v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: c},
			Spec: v1.PersistentVolumeClaimSpec{
				AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		})
	}
	return s
}

func jobOf(name string, parallelism, completions *int32) *batchv1.Job {
	t := template(name)
	t.Spec.RestartPolicy = v1.RestartPolicyNever
	return &batchv1.Job{ObjectMeta: meta(name), Spec: batchv1.JobSpec{Parallelism: parallelism, Completions: completions, Template: t}}
}

func daemonSetOf(name string) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{ObjectMeta: meta(name), Spec: appsv1.DaemonSetSpec{Selector: selector(name), Template: template(name)}}
}

func node(name string, labels map[string]string, taints ...v1.Taint) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: v1.NodeSpec{Taints: taints}}
}

// shape is what a test reads of a pod.
type shape struct {
	Name   string
	Labels map[string]string
	Owner  string // KIND/NAME of its controller
}

func shapes(pods []*v1.Pod, labels ...string) []shape {
	var out []shape
	for _, p := range pods {
		s := shape{Name: p.Name, Labels: map[string]string{}}
		for _, k := range labels {
			if v, ok := p.Labels[k]; ok {
				s.Labels[k] = v
			}
		}
		if c := metav1.GetControllerOf(p); c != nil {
			s.Owner = c.Kind + "/" + c.Name
		}
		out = append(out, s)
	}
	return out
}

// generated matches a name made from generateName PREFIX: five
// characters of the API server's alphabet.
func generated(prefix string) *regexp.Regexp {
	return regexp.MustCompile("^" + regexp.QuoteMeta(prefix) + "[" + alphanums + "]{5}$")
}

func TestExpandReplicated(t *testing.T) {
	for name, tc := range map[string]struct {
		obj          any
		wantPods     int
		wantPrefix   string // of every pod's name
		wantOwner    string // KIND/NAME-prefix of every pod's controller
		wantLabels   []string
		wantNote     string
		wantReplicas []string // the ReplicaSets made or read
	}{
		"a Deployment's ReplicaSet and its pods": {
			obj: deploymentOf("web", 3), wantPods: 3, wantPrefix: "web-", wantOwner: "ReplicaSet/web-",
			wantLabels: []string{"app", appsv1.DefaultDeploymentUniqueLabelKey},
		},
		"a paused Deployment makes nothing": {obj: func() any { d := deploymentOf("web", 3); d.Spec.Paused = true; return d }(), wantNote: "paused"},
		"a Deployment of no replicas":       {obj: deploymentOf("web", 0), wantOwner: "ReplicaSet/web-"},
		"a ReplicaSet": {
			obj:      &appsv1.ReplicaSet{ObjectMeta: meta("api"), Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](2), Selector: selector("api"), Template: template("api")}},
			wantPods: 2, wantPrefix: "api-", wantOwner: "ReplicaSet/api", wantReplicas: []string{"api"},
		},
		"a ReplicationController": {
			obj: func() any {
				t := template("old")
				return &v1.ReplicationController{ObjectMeta: meta("old"), Spec: v1.ReplicationControllerSpec{Replicas: ptr.To[int32](2), Selector: map[string]string{"app": "old"}, Template: &t}}
			}(),
			wantPods: 2, wantPrefix: "old-", wantOwner: "ReplicationController/old",
		},
	} {
		t.Run(name, func(t *testing.T) {
			w, err := Expand(admitted(t, tc.obj), Cluster{}, NewNamer(1))
			if err != nil {
				t.Fatal(err)
			}
			if len(w.Pods) != tc.wantPods {
				t.Fatalf("%d pods, want %d", len(w.Pods), tc.wantPods)
			}
			if !strings.Contains(w.Note, tc.wantNote) || (tc.wantNote == "") != (w.Note == "") {
				t.Errorf("note %q, want one with %q", w.Note, tc.wantNote)
			}
			for _, s := range shapes(w.Pods, tc.wantLabels...) {
				if !strings.HasPrefix(s.Name, tc.wantPrefix) || !strings.HasPrefix(s.Owner, tc.wantOwner) {
					t.Errorf("pod %s of %s, want named %s… and controlled by %s…", s.Name, s.Owner, tc.wantPrefix, tc.wantOwner)
				}
				if len(s.Labels) != len(tc.wantLabels) {
					t.Errorf("pod %s has labels %v, want %v", s.Name, s.Labels, tc.wantLabels)
				}
			}
			if tc.wantReplicas != nil {
				var got []string
				for _, rs := range w.ReplicaSets {
					got = append(got, rs.Name)
				}
				if diff := cmp.Diff(tc.wantReplicas, got); diff != "" {
					t.Errorf("ReplicaSets (-want,+got):\n%s", diff)
				}
			}
		})
	}
}

// TestDeploymentAsItsController: the ReplicaSet is NAME-HASH, selects and
// labels its pods with the hash, is controlled by the Deployment, and its
// pods are NAME-HASH-xxxxx controlled by it (by name and UID), defaulted
// by admission (requests from limits).
func TestDeploymentAsItsController(t *testing.T) {
	d := admitted(t, deploymentOf("web", 2))
	w, err := Expand(d, Cluster{}, NewNamer(7))
	if err != nil {
		t.Fatal(err)
	}
	if len(w.ReplicaSets) != 1 || len(w.Deployments) != 1 {
		t.Fatalf("ReplicaSets %d, Deployments %d, want 1 each", len(w.ReplicaSets), len(w.Deployments))
	}
	rs := w.ReplicaSets[0]
	hash := podTemplateHash(&d.Spec.Template, nil)
	if rs.Name != "web-"+hash || rs.Spec.Template.Labels[appsv1.DefaultDeploymentUniqueLabelKey] != hash || rs.Spec.Selector.MatchLabels[appsv1.DefaultDeploymentUniqueLabelKey] != hash {
		t.Errorf("ReplicaSet %s labels %v selector %v, want web-%s with the hash in both", rs.Name, rs.Spec.Template.Labels, rs.Spec.Selector, hash)
	}
	if c := metav1.GetControllerOf(rs); c == nil || c.Kind != "Deployment" || c.Name != "web" || c.UID != w.Deployments[0].UID || c.UID == "" {
		t.Errorf("ReplicaSet's controller %+v, want the Deployment web with its UID", c)
	}
	if d.UID != "" {
		t.Error("Expand changed the object it was given")
	}
	for _, p := range w.Pods {
		if !generated(rs.Name + "-").MatchString(p.Name) {
			t.Errorf("pod %s, want %s-xxxxx", p.Name, rs.Name)
		}
		c := metav1.GetControllerOf(p)
		if c == nil || c.Name != rs.Name || c.UID != rs.UID || !*c.BlockOwnerDeletion {
			t.Errorf("pod %s controller %+v, want ReplicaSet %s (%s)", p.Name, c, rs.Name, rs.UID)
		}
		if got := p.Spec.Containers[0].Resources.Requests.Cpu().String(); got != "500m" {
			t.Errorf("pod %s requests %s cpu, want 500m from its limit (admission's defaulting)", p.Name, got)
		}
		if p.Namespace != "shop" || p.Status.Phase != v1.PodPending {
			t.Errorf("pod %s in %q phase %q, want shop, Pending", p.Name, p.Namespace, p.Status.Phase)
		}
	}
	if w.Pods[0].Name == w.Pods[1].Name {
		t.Error("two replicas have one name")
	}
	other := deploymentOf("web", 2)
	other.Spec.Template.Spec.Containers[0].Image = "j"
	if podTemplateHash(&admitted(t, other).Spec.Template, nil) == hash {
		t.Error("another template hashes the same")
	}
	if podTemplateHash(&d.Spec.Template, ptr.To[int32](1)) == hash {
		t.Error("a collision count changes nothing")
	}
}

func TestStatefulSet(t *testing.T) {
	set := statefulSetOf("db", 3, "data", "logs")
	set.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: 1}
	w, err := Expand(admitted(t, set), Cluster{}, NewNamer(1))
	if err != nil {
		t.Fatal(err)
	}
	hash, err := revisionHash(w.StatefulSets[0])
	if err != nil {
		t.Fatal(err)
	}
	revision := "db-" + hash
	var want []shape
	for _, i := range []string{"1", "2", "3"} {
		want = append(want, shape{Name: "db-" + i, Owner: "StatefulSet/db", Labels: map[string]string{
			"app": "db", appsv1.StatefulSetPodNameLabel: "db-" + i, appsv1.PodIndexLabel: i, appsv1.StatefulSetRevisionLabel: revision,
		}})
	}
	if diff := cmp.Diff(want, shapes(w.Pods, "app", appsv1.StatefulSetPodNameLabel, appsv1.PodIndexLabel, appsv1.StatefulSetRevisionLabel)); diff != "" {
		t.Errorf("pods (-want,+got):\n%s", diff)
	}
	var claims []string
	for _, c := range w.Claims {
		claims = append(claims, c.Namespace+"/"+c.Name)
		if c.Labels["app"] != "db" || c.Status.Phase != v1.ClaimPending {
			t.Errorf("claim %s labels %v phase %q, want the selector's labels, Pending", c.Name, c.Labels, c.Status.Phase)
		}
	}
	wantClaims := []string{"shop/data-db-1", "shop/logs-db-1", "shop/data-db-2", "shop/logs-db-2", "shop/data-db-3", "shop/logs-db-3"}
	if diff := cmp.Diff(wantClaims, claims); diff != "" {
		t.Errorf("claims (-want,+got):\n%s", diff)
	}
	p := w.Pods[0]
	if p.Spec.Hostname != "db-1" || p.Spec.Subdomain != "db" {
		t.Errorf("hostname %q subdomain %q, want db-1, db", p.Spec.Hostname, p.Spec.Subdomain)
	}
	var vols []string
	for _, v := range p.Spec.Volumes {
		vols = append(vols, v.Name+"="+v.PersistentVolumeClaim.ClaimName)
	}
	if diff := cmp.Diff([]string{"data=data-db-1", "logs=logs-db-1"}, vols); diff != "" {
		t.Errorf("volumes (-want,+got):\n%s", diff)
	}
}

func TestJobs(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 30, 42, 0, time.UTC)
	indexed := jobOf("train", ptr.To[int32](3), ptr.To[int32](5))
	indexed.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	suspended := jobOf("later", ptr.To[int32](3), nil)
	suspended.Spec.Suspend = ptr.To(true)
	cron := &batchv1.CronJob{ObjectMeta: meta("nightly"), Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *", JobTemplate: batchv1.JobTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "data"}},
		Spec:       jobOf("nightly", ptr.To[int32](2), nil).Spec,
	}}}
	minutes := "29539350" // now's Unix minutes
	for name, tc := range map[string]struct {
		obj         any
		wantPrefix  []string // generateName of each pod, in order
		wantOwner   string
		wantIndexes []string
		wantNote    string
	}{
		"parallelism within completions":         {obj: jobOf("batch", ptr.To[int32](3), ptr.To[int32](5)), wantPrefix: []string{"batch-", "batch-", "batch-"}, wantOwner: "Job/batch"},
		"completions cap parallelism":            {obj: jobOf("batch", ptr.To[int32](4), ptr.To[int32](2)), wantPrefix: []string{"batch-", "batch-"}, wantOwner: "Job/batch"},
		"neither: one pod":                       {obj: jobOf("batch", nil, nil), wantPrefix: []string{"batch-"}, wantOwner: "Job/batch"},
		"a work queue: parallelism":              {obj: jobOf("queue", ptr.To[int32](2), nil), wantPrefix: []string{"queue-", "queue-"}, wantOwner: "Job/queue"},
		"indexed: NAME-INDEX-":                   {obj: indexed, wantPrefix: []string{"train-0-", "train-1-", "train-2-"}, wantOwner: "Job/train", wantIndexes: []string{"0", "1", "2"}},
		"suspended: none":                        {obj: suspended, wantNote: "suspended"},
		"a CronJob's job, scheduled this minute": {obj: cron, wantPrefix: []string{"nightly-" + minutes + "-", "nightly-" + minutes + "-"}, wantOwner: "Job/nightly-" + minutes},
	} {
		t.Run(name, func(t *testing.T) {
			w, err := Expand(admitted(t, tc.obj), Cluster{Now: now}, NewNamer(1))
			if err != nil {
				t.Fatal(err)
			}
			if len(w.Pods) != len(tc.wantPrefix) {
				t.Fatalf("%d pods, want %d", len(w.Pods), len(tc.wantPrefix))
			}
			if !strings.Contains(w.Note, tc.wantNote) || (tc.wantNote == "") != (w.Note == "") {
				t.Errorf("note %q, want one with %q", w.Note, tc.wantNote)
			}
			var indexes []string
			for i, p := range w.Pods {
				if !generated(tc.wantPrefix[i]).MatchString(p.Name) {
					t.Errorf("pod %s, want %sxxxxx", p.Name, tc.wantPrefix[i])
				}
				c := metav1.GetControllerOf(p)
				if c == nil || c.Kind+"/"+c.Name != tc.wantOwner {
					t.Errorf("pod %s controlled by %+v, want %s", p.Name, c, tc.wantOwner)
				}
				if p.Labels[batchv1.JobNameLabel] != c.Name || p.Labels[batchv1.ControllerUidLabel] != string(c.UID) {
					t.Errorf("pod %s labels %v, want the job's name and UID", p.Name, p.Labels)
				}
				if !slices.Contains(p.Finalizers, jobTrackingFinalizer) {
					t.Errorf("pod %s finalizers %v, want the job tracking one", p.Name, p.Finalizers)
				}
				if ix, ok := p.Labels[batchv1.JobCompletionIndexAnnotation]; ok {
					indexes = append(indexes, ix)
				}
			}
			if diff := cmp.Diff(tc.wantIndexes, indexes); diff != "" {
				t.Errorf("completion indexes (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestDaemonSet: one pod per node the controller targets, each bound by
// node affinity to its node, tolerating what the controller adds.
func TestDaemonSet(t *testing.T) {
	nodes := []*v1.Node{
		node("d-cordoned", map[string]string{"disk": "ssd"}, v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}),
		node("a-plain", map[string]string{"disk": "ssd"}),
		node("b-tainted", map[string]string{"disk": "ssd"}, v1.Taint{Key: "gpu", Value: "yes", Effect: v1.TaintEffectNoSchedule}),
		node("c-hdd", map[string]string{"disk": "hdd"}),
		node("e-prefer", map[string]string{"disk": "ssd"}, v1.Taint{Key: "gpu", Effect: v1.TaintEffectPreferNoSchedule}),
	}
	withSelector := daemonSetOf("agent")
	withSelector.Spec.Template.Spec.NodeSelector = map[string]string{"disk": "ssd"}
	tolerant := daemonSetOf("agent")
	tolerant.Spec.Template.Spec.Tolerations = []v1.Toleration{{Key: "gpu", Operator: v1.TolerationOpExists}}
	pinned := daemonSetOf("agent")
	pinned.Spec.Template.Spec.NodeName = "c-hdd"
	for name, tc := range map[string]struct {
		ds        *appsv1.DaemonSet
		wantNodes []string
	}{
		"every node it tolerates": {ds: daemonSetOf("agent"), wantNodes: []string{"a-plain", "c-hdd", "d-cordoned", "e-prefer"}},
		"its nodeSelector's":      {ds: withSelector, wantNodes: []string{"a-plain", "d-cordoned", "e-prefer"}},
		"its own tolerations":     {ds: tolerant, wantNodes: []string{"a-plain", "b-tainted", "c-hdd", "d-cordoned", "e-prefer"}},
		"its nodeName":            {ds: pinned, wantNodes: []string{"c-hdd"}},
	} {
		t.Run(name, func(t *testing.T) {
			w, err := Expand(admitted(t, tc.ds), Cluster{Nodes: nodes}, NewNamer(1))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range w.Pods {
				terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
				got = append(got, terms[0].MatchFields[0].Values[0])
				if !generated("agent-").MatchString(p.Name) || metav1.GetControllerOf(p).Kind != "DaemonSet" {
					t.Errorf("pod %s of %+v, want agent-xxxxx of the DaemonSet", p.Name, metav1.GetControllerOf(p))
				}
				if p.Labels[templateGenerationLabel] != "1" || p.Labels[daemonRevisionLabel] == "" {
					t.Errorf("pod %s labels %v, want its template generation and revision hash", p.Name, p.Labels)
				}
				if !tolerates(p, v1.TaintNodeUnreachable, v1.TaintEffectNoExecute) || !tolerates(p, v1.TaintNodeUnschedulable, v1.TaintEffectNoSchedule) {
					t.Errorf("pod %s tolerations %v, want the controller's", p.Name, p.Spec.Tolerations)
				}
			}
			if diff := cmp.Diff(tc.wantNodes, got); diff != "" {
				t.Errorf("nodes (-want,+got):\n%s", diff)
			}
		})
	}
}

func tolerates(p *v1.Pod, key string, effect v1.TaintEffect) bool {
	return slices.ContainsFunc(p.Spec.Tolerations, func(t v1.Toleration) bool { return t.Key == key && t.Effect == effect })
}

func TestNamer(t *testing.T) {
	draw := func(seed uint64) []string {
		n := NewNamer(seed)
		return []string{n.GenerateName("shop", "web-"), n.GenerateName("shop", "web-"), n.GenerateName("shop", "api-"), string(n.UID("Pod", "shop", "x"))}
	}
	a, b := draw(1), draw(1)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("one seed, other names (-first,+second):\n%s", diff)
	}
	if c := draw(2); c[0] == a[0] {
		t.Errorf("seeds 1 and 2 both name %s", a[0])
	}
	if a[0] == a[1] {
		t.Errorf("two draws of web- are both %s", a[0])
	}
	n := NewNamer(1)
	n.GenerateName("shop", "web-") // a draw for another prefix does not move api-'s
	if got := n.GenerateName("shop", "api-"); got != a[2] {
		t.Errorf("api-'s first name %s after another prefix's draw, %s alone", got, a[2])
	}
	long := NewNamer(1).GenerateName("shop", strings.Repeat("x", 70))
	if len(long) != 63 {
		t.Errorf("a long prefix makes a name of %d characters, want 63", len(long))
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(a[3]) {
		t.Errorf("UID %s is no version 4 UUID", a[3])
	}
}

// TestPodRefused: a pod the API server would refuse is an *Error naming it.
func TestPodRefused(t *testing.T) {
	d := admitted(t, deploymentOf("web", 1))
	d.Spec.Template.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}
	_, err := Expand(d, Cluster{}, NewNamer(1))
	var we *Error
	if !errors.As(err, &we) || !strings.HasPrefix(we.Pod, "web-") || !strings.Contains(we.Field, "requests") {
		t.Fatalf("error %v, want an *Error for the pod's requests above its limits", err)
	}
}
