package sim

import (
	"fmt"
	"strings"
)

// The builders below write the YAML documents that the scenario tests
// repeat; each document ends with a newline, and documents are joined
// with docs.

// docs joins YAML documents with "---" separators.
func docs(ds ...string) string { return strings.Join(ds, "---\n") }

// nodeYAML is a Node with a hostname label, cpu, 8Gi of memory and 10 pod
// slots.
func nodeYAML(name, cpu string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: {kubernetes.io/hostname: %s}}\n"+
		"status: {allocatable: {cpu: %q, memory: 8Gi, pods: \"10\"}}\n", name, name, cpu)
}

// controllerYAML is a ReplicaSet, Deployment or other controller of kind
// named name with replicas copies of pods labelled app=name, whose spec is
// podSpec (YAML flow style).
func controllerYAML(kind, name string, replicas int, podSpec string) string {
	return fmt.Sprintf("apiVersion: apps/v1\nkind: %s\nmetadata: {name: %s}\nspec:\n  replicas: %d\n"+
		"  selector: {matchLabels: {app: %s}}\n  template:\n    metadata: {labels: {app: %s}}\n    spec: %s\n",
		kind, name, replicas, name, name, podSpec)
}

// simulationYAML is the Simulation name ending at end; the rest of its spec
// (actions, costs) follows it, indented by two spaces.
func simulationYAML(name, end string) string {
	return "apiVersion: reprieve.dev/v1alpha1\nkind: Simulation\nmetadata: {name: " + name + "}\nspec:\n  end: " + end + "\n"
}

// claimsCreated counts the claims the simulated StatefulSet controller
// created.
func claimsCreated(res *Result) int {
	n := 0
	for _, e := range res.Events {
		if e.Reason == "SuccessfulCreate" && strings.HasPrefix(e.Message, "create Claim") {
			n++
		}
	}
	return n
}

// statefulSetYAML is StatefulSet db: two replicas of one CPU with a 1Gi
// claim "data" each, under pod management policy (omitted when "") and of
// storage class class (the default class when "").
func statefulSetYAML(policy, class string) string {
	doc := "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  replicas: 2\n"
	if policy != "" {
		doc += "  podManagementPolicy: " + policy + "\n"
	}
	claim := "accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}"
	if class != "" {
		claim = "storageClassName: " + class + ", " + claim
	}
	return doc + `  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: c, image: db, resources: {requests: {cpu: "1"}}}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {` + claim + "}\n"
}

// boundAt is when each pod that was bound was bound, by "namespace/name".
func boundAt(res *Result) map[string]float64 {
	out := map[string]float64{}
	for _, p := range res.Pods {
		if p.Bound != nil {
			out[p.Pod] = *p.Bound
		}
	}
	return out
}
