package manifest

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// LoadPod reads a file that must hold exactly one Pod. A pod without a
// namespace gets "default"; namespaced reports whether the file named one.
func LoadPod(path string) (pod *v1.Pod, namespaced bool, err error) {
	p, s, err := loadPod(Options{}, path)
	if err != nil {
		return nil, false, err
	}
	return p, s.NamespaceGiven(p), nil
}

// LoadPodSet reads, with opts, a file that must hold exactly one Pod; the
// path "-" reads standard input. It returns the set the pod was read into,
// for its Warnings and NamespaceGiven.
func LoadPodSet(opts Options, path string) (*v1.Pod, *Set, error) { return loadPod(opts, path) }

// LoadPodsSet reads, with opts, the pods to evaluate from paths, each a
// file of one or many documents, a directory of such files, or "-" for
// standard input, holding Pods only, none bound yet. It returns them in
// the order of paths and files with the set they were read into, for its
// Warnings and NamespaceGiven.
func LoadPodsSet(opts Options, paths ...string) ([]*v1.Pod, *Set, error) {
	opts.Lean = false // pods to evaluate are kept whole
	s := NewSetWith(opts)
	for _, path := range paths {
		if err := s.AddPath(path); err != nil {
			return nil, nil, err
		}
	}
	path := strings.Join(paths, ", ")
	o := s.Objects
	others := len(o.Nodes) + len(o.PDBs) + len(o.PriorityClasses) + len(o.Namespaces) + len(s.Skipped) +
		len(o.PodGroups) + len(o.CompositePodGroups) +
		len(s.Deployments) + len(s.ReplicaSets) + len(s.Jobs) + len(s.StatefulSets) + len(s.Simulations) +
		numDRAObjects(&o) + len(s.ResourceClaimTemplates)
	name := path
	if path == "-" {
		name = StdinName
	}
	switch {
	case len(o.Pods) == 0:
		return nil, nil, &InputError{Source: name, Detail: "no Pod found; -f must hold pods to evaluate"}
	case others > 0:
		return nil, nil, &InputError{Source: name, Detail: "-f must hold Pods and nothing else (the cluster goes in --snapshot)"}
	}
	for _, p := range o.Pods {
		if p.Spec.NodeName != "" {
			return nil, nil, &InputError{Source: s.Origin(p), Object: objectName("Pod", p.Namespace, p.Name), Field: "spec.nodeName", Detail: "the pod is already bound; whatif needs a pod to schedule"}
		}
	}
	return o.Pods, s, nil
}

// NamespaceGiven reports whether obj's document named its namespace.
func (s *Set) NamespaceGiven(obj any) bool { return !s.defaulted[obj] }

func loadPod(opts Options, path string) (*v1.Pod, *Set, error) {
	opts.Lean = false // a pod to evaluate is kept whole
	s := NewSetWith(opts)
	name := path
	var data []byte
	var err error
	if path == "-" {
		name = StdinName
		data, err = readStdin(opts.Stdin)
	} else {
		data, err = readFile(path)
	}
	if err != nil {
		return nil, nil, err
	}
	return parsePodInto(s, name, data)
}

// ParsePod parses data that must hold exactly one Pod (see LoadPod).
func ParsePod(name string, data []byte) (*v1.Pod, bool, error) {
	p, s, err := parsePodInto(NewSet(), name, data)
	if err != nil {
		return nil, false, err
	}
	return p, !s.defaulted[p], nil
}

func parsePodInto(s *Set, name string, data []byte) (*v1.Pod, *Set, error) {
	if err := s.AddBytes(name, data); err != nil {
		return nil, nil, err
	}
	o := s.Objects
	others := len(o.Nodes) + len(o.PDBs) + len(o.PriorityClasses) + len(o.Namespaces) + len(s.Skipped) +
		len(o.PodGroups) + len(o.CompositePodGroups) + numDRAObjects(&o) +
		len(s.Deployments) + len(s.ReplicaSets) + len(s.Jobs) + len(s.Simulations)
	switch {
	case len(o.Pods) == 0:
		return nil, nil, &InputError{Source: name, Detail: "no Pod found; the file must hold exactly one Pod"}
	case len(o.Pods) > 1:
		return nil, nil, &InputError{Source: name, Detail: fmt.Sprintf("%d Pods found; the file must hold exactly one Pod", len(o.Pods))}
	case others > 0:
		return nil, nil, &InputError{Source: name, Detail: "the file must hold exactly one Pod and nothing else"}
	}
	p := o.Pods[0]
	if p.Spec.NodeName != "" {
		return nil, nil, &InputError{Source: s.Origin(p), Object: objectName("Pod", p.Namespace, p.Name), Field: "spec.nodeName", Detail: "the pod is already bound; whatif needs a pod to schedule"}
	}
	return p, s, nil
}
