package gen

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// ErrInvalid is wrapped by every error Parse returns for input that is not a
// scenario.
var ErrInvalid = errors.New("invalid scenario")

// YAML writes the scenario as one `kind: List` document: PriorityClasses,
// Namespaces, Nodes, PDBs, PodGroups, CompositePodGroups, ResourceSlices,
// DeviceClasses, ResourceClaims, the storage objects, Services,
// ReplicationControllers, ReplicaSets, StatefulSets, then Pods in load order, each with
// apiVersion and kind. The first line is a comment with the seed, the profile and the
// command that replays the scenario with reprieve. The preemptor carries
// PreemptorAnnotation (added on a copy if it lacks it).
func (s *Scenario) YAML() ([]byte, error) {
	if s.Preemptor == nil {
		return nil, fmt.Errorf("%w: no preemptor", ErrInvalid)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# seed=%d profile=%s replay: reprieve whatif --snapshot FILE --pod %s/%s\n",
		s.Seed, s.Profile, s.Preemptor.Namespace, s.Preemptor.Name)
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n")

	item := func(obj any) error {
		y, err := yaml.Marshal(obj)
		if err != nil {
			return err
		}
		for i, line := range strings.SplitAfter(strings.TrimSuffix(string(y), "\n"), "\n") {
			if i == 0 {
				b.WriteString("- ")
			} else {
				b.WriteString("  ")
			}
			b.WriteString(line)
		}
		b.WriteString("\n")
		return nil
	}
	var items []any
	for _, pc := range s.PriorityClasses {
		c := *pc
		c.TypeMeta = metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"}
		items = append(items, &c)
	}
	for _, ns := range s.Namespaces {
		c := *ns
		c.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}
		items = append(items, &c)
	}
	for _, n := range s.Nodes {
		c := *n
		c.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}
		items = append(items, &c)
	}
	for _, pdb := range s.PDBs {
		c := *pdb
		c.TypeMeta = metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"}
		items = append(items, &c)
	}
	for _, pg := range s.PodGroups {
		c := *pg
		c.TypeMeta = metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1beta1", Kind: "PodGroup"}
		items = append(items, &c)
	}
	for _, cpg := range s.CompositePodGroups {
		c := *cpg
		c.TypeMeta = metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1alpha3", Kind: "CompositePodGroup"}
		items = append(items, &c)
	}
	for _, rs := range s.ResourceSlices {
		c := *rs
		c.TypeMeta = metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceSlice"}
		items = append(items, &c)
	}
	for _, dc := range s.DeviceClasses {
		c := *dc
		c.TypeMeta = metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "DeviceClass"}
		items = append(items, &c)
	}
	for _, rc := range s.ResourceClaims {
		c := *rc
		c.TypeMeta = metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaim"}
		items = append(items, &c)
	}
	items = append(items, s.Storage.items()...)
	for _, o := range s.Selectors.Services {
		c := *o
		c.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}
		items = append(items, &c)
	}
	for _, o := range s.Selectors.ReplicationControllers {
		c := *o
		c.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "ReplicationController"}
		items = append(items, &c)
	}
	for _, o := range s.Selectors.ReplicaSets {
		c := *o
		c.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"}
		items = append(items, &c)
	}
	for _, o := range s.Selectors.StatefulSets {
		c := *o
		c.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"}
		items = append(items, &c)
	}
	for _, p := range s.Pods {
		c := *p
		c.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
		if p == s.Preemptor && c.Annotations[PreemptorAnnotation] != "true" {
			c.Annotations = map[string]string{PreemptorAnnotation: "true"}
			for k, v := range p.Annotations {
				if k != PreemptorAnnotation {
					c.Annotations[k] = v
				}
			}
		}
		items = append(items, &c)
	}
	for _, obj := range items {
		if err := item(obj); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

var headerRE = regexp.MustCompile(`^#\s*seed=(-?\d+)\s+profile=(\S+)`)

// Parse reads a scenario written by YAML, or a hand-written file of the same
// objects: one or more YAML or JSON documents, each an object or a List (or
// a typed list such as PodList, whose items may omit kind and apiVersion).
// Objects keep the order of the input. Exactly one pod must carry
// PreemptorAnnotation "true", and it must be pending. Seed and Profile come
// from the header comment when there is one.
func Parse(data []byte) (*Scenario, error) {
	s := &Scenario{}
	if first, _, _ := bytes.Cut(data, []byte("\n")); headerRE.Match(first) {
		m := headerRE.FindSubmatch(first)
		seed, err := strconv.ParseInt(string(m[1]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: header: %v", ErrInvalid, err)
		}
		s.Seed, s.Profile = seed, Profile(m[2])
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bufio.NewReader(bytes.NewReader(data)), 4096)
	for doc := 1; ; doc++ {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: document %d: %v", ErrInvalid, doc, err)
		}
		if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
			continue
		}
		if err := s.addObject(raw, 0, "", ""); err != nil {
			return nil, fmt.Errorf("%w: document %d: %v", ErrInvalid, doc, err)
		}
	}
	for _, p := range s.Pods {
		if p.Annotations[PreemptorAnnotation] != "true" {
			continue
		}
		if s.Preemptor != nil {
			return nil, fmt.Errorf("%w: pods %s/%s and %s/%s are both annotated %s", ErrInvalid,
				s.Preemptor.Namespace, s.Preemptor.Name, p.Namespace, p.Name, PreemptorAnnotation)
		}
		if p.Spec.NodeName != "" {
			return nil, fmt.Errorf("%w: preemptor %s/%s is bound to %s", ErrInvalid, p.Namespace, p.Name, p.Spec.NodeName)
		}
		s.Preemptor = p
	}
	if s.Preemptor == nil {
		return nil, fmt.Errorf("%w: no pod is annotated %s: \"true\"", ErrInvalid, PreemptorAnnotation)
	}
	return s, nil
}

// addObject decodes one object or list (depth 0 only). A typed list's
// items default to its item kind and apiVersion.
func (s *Scenario) addObject(raw []byte, depth int, defaultKind, defaultAPIVersion string) error {
	var tm metav1.TypeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return err
	}
	if tm.Kind == "" {
		tm.Kind = defaultKind
	}
	if tm.APIVersion == "" {
		tm.APIVersion = defaultAPIVersion
	}
	if strings.HasSuffix(tm.Kind, "List") {
		if depth > 0 {
			return fmt.Errorf("nested %s", tm.Kind)
		}
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(raw, &list); err != nil {
			return fmt.Errorf("%s: %v", tm.Kind, err)
		}
		itemKind := strings.TrimSuffix(tm.Kind, "List")
		for i, item := range list.Items {
			if err := s.addObject(item, depth+1, itemKind, tm.APIVersion); err != nil {
				return fmt.Errorf("items[%d]: %v", i, err)
			}
		}
		return nil
	}
	decode := func(obj any) error {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		if err := d.Decode(obj); err != nil {
			return fmt.Errorf("%s: %v", tm.Kind, err)
		}
		return nil
	}
	want := map[string]string{
		"PriorityClass":         "scheduling.k8s.io/v1",
		"Namespace":             "v1",
		"Node":                  "v1",
		"PodDisruptionBudget":   "policy/v1",
		"Pod":                   "v1",
		"PodGroup":              "scheduling.k8s.io/v1beta1",
		"CompositePodGroup":     "scheduling.k8s.io/v1alpha3",
		"ResourceSlice":         "resource.k8s.io/v1",
		"DeviceClass":           "resource.k8s.io/v1",
		"ResourceClaim":         "resource.k8s.io/v1",
		"Service":               "v1",
		"ReplicationController": "v1",
		"ReplicaSet":            "apps/v1",
		"StatefulSet":           "apps/v1",
	}[tm.Kind]
	if want == "" {
		want = storageAPIVersions[tm.Kind]
	}
	if want == "" {
		return fmt.Errorf("unsupported kind %q", tm.Kind)
	}
	if tm.APIVersion != want {
		return fmt.Errorf("%s: unsupported apiVersion %q (want %q)", tm.Kind, tm.APIVersion, want)
	}
	switch tm.Kind {
	case "PriorityClass":
		o := &schedulingv1.PriorityClass{}
		if err := decode(o); err != nil {
			return err
		}
		o.TypeMeta = tm
		s.PriorityClasses = append(s.PriorityClasses, o)
	case "Namespace":
		o := &v1.Namespace{}
		if err := decode(o); err != nil {
			return err
		}
		o.TypeMeta = tm
		s.Namespaces = append(s.Namespaces, o)
	case "Node":
		o := &v1.Node{}
		if err := decode(o); err != nil {
			return err
		}
		o.TypeMeta = tm
		s.Nodes = append(s.Nodes, o)
	case "PodDisruptionBudget":
		o := &policyv1.PodDisruptionBudget{}
		if err := decode(o); err != nil {
			return err
		}
		o.TypeMeta = tm
		s.PDBs = append(s.PDBs, o)
	case "Pod":
		o := &v1.Pod{}
		if err := decode(o); err != nil {
			return err
		}
		o.TypeMeta = tm
		s.Pods = append(s.Pods, o)
	case "PodGroup":
		o := &schedulingv1beta1.PodGroup{}
		if err := decode(o); err != nil {
			return err
		}
		o.TypeMeta = tm
		s.PodGroups = append(s.PodGroups, o)
	case "CompositePodGroup":
		o := &schedulingv1alpha3.CompositePodGroup{}
		if err := decode(o); err != nil {
			return err
		}
		o.TypeMeta = tm
		s.CompositePodGroups = append(s.CompositePodGroups, o)
	case "ResourceSlice":
		o := &resourceapi.ResourceSlice{}
		if err := decode(o); err != nil {
			return err
		}
		o.TypeMeta = tm
		s.ResourceSlices = append(s.ResourceSlices, o)
	case "DeviceClass":
		o := &resourceapi.DeviceClass{}
		if err := decode(o); err != nil {
			return err
		}
		o.TypeMeta = tm
		s.DeviceClasses = append(s.DeviceClasses, o)
	case "ResourceClaim":
		o := &resourceapi.ResourceClaim{}
		if err := decode(o); err != nil {
			return err
		}
		o.TypeMeta = tm
		s.ResourceClaims = append(s.ResourceClaims, o)
	case "Service":
		o := &v1.Service{}
		if err := decode(o); err != nil {
			return err
		}
		o.TypeMeta = tm
		s.Selectors.Services = append(s.Selectors.Services, o)
	case "ReplicationController":
		o := &v1.ReplicationController{}
		if err := decode(o); err != nil {
			return err
		}
		o.TypeMeta = tm
		s.Selectors.ReplicationControllers = append(s.Selectors.ReplicationControllers, o)
	case "ReplicaSet":
		o := &appsv1.ReplicaSet{}
		if err := decode(o); err != nil {
			return err
		}
		o.TypeMeta = tm
		s.Selectors.ReplicaSets = append(s.Selectors.ReplicaSets, o)
	case "StatefulSet":
		o := &appsv1.StatefulSet{}
		if err := decode(o); err != nil {
			return err
		}
		o.TypeMeta = tm
		s.Selectors.StatefulSets = append(s.Selectors.StatefulSets, o)
	default:
		return s.Storage.add(tm, decode)
	}
	return nil
}
