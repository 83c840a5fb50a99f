package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/reprieve/reprieve/internal/cli"
)

// BenchmarkWhatifEndToEnd times `reprieve whatif --snapshot FILE -f POD`
// as a user runs it — a fresh process, built like the release binary, with
// its defaults — on a snapshot of REPRIEVE_E2E_NODES nodes (default 5,000)
// with 30 pods each, written as `kubectl get nodes,pods -A -o json|yaml`
// writes it (a running pod's status as its kubelet writes it, with five
// conditions and its container's status; owner references, labels,
// annotations), with managed
// fields stripped as kubectl shows them ("managed=no") and kept as
// --show-managed-fields shows them ("managed=yes"), and with no two pods
// alike ("distinct": the pods of one workload share nothing the loader
// could decode once), and as a script writes a cluster by hand
// ("minimal": each object with its name, labels, the pods' priority, node
// and requests, the nodes' capacity; YAML as one document per object, JSON
// as one List). It reports wall time per
// run, the process's CPU time and its peak RSS. REPRIEVE_E2E_BINARY=PATH
// times that binary instead of a fresh build; REPRIEVE_E2E_DIR=DIR writes
// the snapshots there, and reuses those already there, instead of in a
// temporary directory (to run the binary on them by hand, under a profiler).
//
//	go test -run NONE -bench WhatifEndToEnd -benchtime 3x ./cmd/reprieve/
func BenchmarkWhatifEndToEnd(b *testing.B) {
	e := newEndToEnd(b)
	pod := e.podFile(b, 1)
	for _, c := range []struct {
		format  string
		managed bool
		pods    string // "", "tokens" or "distinct"
	}{{"json", false, ""}, {"yaml", false, ""}, {"json", true, ""}, {"yaml", true, ""},
		{"json", false, "tokens"}, {"yaml", false, "tokens"}, {"json", false, "distinct"}, {"yaml", false, "distinct"},
		{"json", false, "minimal"}, {"yaml", false, "minimal"}} {
		format, managed := c.format, c.managed
		name := fmt.Sprintf("snapshot-%d-managed=%s.%s", e.nodes, yesNo(managed), format)
		sub := fmt.Sprintf("%s/managed=%s/nodes=%d", format, yesNo(managed), e.nodes)
		if c.pods != "" {
			name = fmt.Sprintf("snapshot-%d-%s.%s", e.nodes, c.pods, format)
			sub = fmt.Sprintf("%s/managed=no/%s/nodes=%d", format, c.pods, e.nodes)
		}
		path := filepath.Join(e.files, name)
		b.Run(sub, func(b *testing.B) {
			// Written here, not before b.Run, so that -bench picking one
			// variant writes one file; b.Loop starts the timer afterwards.
			if c.pods == "minimal" {
				b.SetBytes(writeMinimalSnapshot(b, path, format, e.nodes, 30))
			} else {
				b.SetBytes(writeKubectlSnapshot(b, path, format, e.nodes, 30, managed, c.pods))
			}
			e.time(b, path, pod, "-o", "json")
		})
	}
}

// BenchmarkWhatifManyPods times `reprieve whatif --snapshot FILE -f PODS`
// as BenchmarkWhatifEndToEnd does, on its kubectl JSON file (managed fields
// stripped), with one pod and with 100 pods of different sizes and
// priorities in one multi-document file, printed as the default table: the
// snapshot is loaded once and each pod evaluated on it, so the 100 cost one
// load and 100 evaluations. (With -o json each decision also writes every
// candidate and every node's verdict: about 1 MB a pod at 5,000 nodes.)
// It reports, besides the run's figures, the wall time each pod beyond the
// first adds (extra-ms/pod: the difference of the two runs' medians over
// 99; 0 for the run of one pod).
//
//	go test -run NONE -bench WhatifManyPods -benchtime 3x ./cmd/reprieve/
func BenchmarkWhatifManyPods(b *testing.B) {
	e := newEndToEnd(b)
	path := filepath.Join(e.files, fmt.Sprintf("snapshot-%d-managed=no.json", e.nodes))
	var one float64
	for _, n := range []int{1, 100} {
		pod := e.podFile(b, n)
		b.Run(fmt.Sprintf("pods=%d/nodes=%d", n, e.nodes), func(b *testing.B) {
			b.SetBytes(writeKubectlSnapshot(b, path, "json", e.nodes, 30, false, ""))
			wall := e.time(b, path, pod)
			if n == 1 {
				one = wall
			} else if one > 0 {
				b.ReportMetric(1000*(wall-one)/float64(n-1), "extra-ms/pod")
			}
		})
	}
}

// endToEnd is what the end-to-end benchmarks share: the cluster's size,
// the binary they time and where their files go.
type endToEnd struct {
	nodes int
	// dir is the benchmark's own temporary directory; files is where the
	// snapshots are written (REPRIEVE_E2E_DIR, else dir).
	dir, files string
	bin        string
}

// newEndToEnd reads the benchmarks' environment (REPRIEVE_E2E_NODES,
// REPRIEVE_E2E_DIR, REPRIEVE_E2E_BINARY) and builds the binary unless
// another is given.
func newEndToEnd(b *testing.B) *endToEnd {
	e := &endToEnd{nodes: 5000, dir: b.TempDir()}
	if s := os.Getenv("REPRIEVE_E2E_NODES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("REPRIEVE_E2E_NODES: %v", err)
		}
		e.nodes = n
	}
	e.files = e.dir
	if d := os.Getenv("REPRIEVE_E2E_DIR"); d != "" {
		e.files = d
	}
	// REPRIEVE_E2E_BINARY runs another build (an older commit's, to
	// compare) on the same files.
	e.bin = os.Getenv("REPRIEVE_E2E_BINARY")
	if e.bin == "" {
		e.bin = filepath.Join(e.dir, "reprieve")
		if out, err := exec.Command("go", "build", "-o", e.bin, ".").CombinedOutput(); err != nil {
			b.Fatalf("go build: %v\n%s", err, out)
		}
	}
	return e
}

// podFile writes the pods to evaluate, n of them, and returns the file's
// path: benchPod alone, or n pods of one to four CPUs and priorities 100
// to 1,000 as one multi-document file.
func (e *endToEnd) podFile(b *testing.B, n int) string {
	path := filepath.Join(e.dir, fmt.Sprintf("pods-%d.yaml", n))
	text := benchPod
	if n > 1 {
		var w strings.Builder
		for i := range n {
			fmt.Fprintf(&w, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: want-%03d, namespace: default}\nspec:\n  priority: %d\n  containers:\n  - name: c\n    image: x\n    resources: {requests: {cpu: %dm, memory: 1Gi}}\n",
				i, 100+i%10*100, 1000+i%4*900)
		}
		text = w.String()
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// time runs `reprieve whatif --snapshot path -f pod` with args b.N times
// and reports the runs' CPU time (mean and median), wall time (median) and
// peak RSS; it returns the median wall time in seconds.
func (e *endToEnd) time(b *testing.B, path, pod string, args ...string) float64 {
	var cpu time.Duration
	var peak int64
	var walls, cpus []float64
	for b.Loop() {
		cmd := exec.Command(e.bin, append([]string{"whatif", "--snapshot", path, "-f", pod}, args...)...)
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("reprieve whatif: %v", err)
		}
		walls = append(walls, time.Since(start).Seconds())
		u := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		c := time.Duration(u.Utime.Nano() + u.Stime.Nano())
		cpu += c
		cpus = append(cpus, c.Seconds())
		peak = max(peak, u.Maxrss) // KiB on Linux
	}
	wall := median(walls)
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(wall, "median-s")
	b.ReportMetric(median(cpus), "median-cpu-s")
	b.ReportMetric(float64(peak)/1024, "peak-MiB")
	return wall
}

// BenchmarkWhatifInProcess runs `reprieve whatif` as
// BenchmarkWhatifEndToEnd does, but in the test process, for -cpuprofile
// and -memprofile: on the file REPRIEVE_E2E_SNAPSHOT (one the end-to-end
// benchmark left in REPRIEVE_E2E_DIR). It is skipped without one.
func BenchmarkWhatifInProcess(b *testing.B) {
	path := os.Getenv("REPRIEVE_E2E_SNAPSHOT")
	if path == "" {
		b.Skip("REPRIEVE_E2E_SNAPSHOT not set")
	}
	pod := filepath.Join(b.TempDir(), "pod.yaml")
	if err := os.WriteFile(pod, []byte(benchPod), 0o644); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		var stderr bytes.Buffer
		if code := cli.Execute(context.Background(), []string{"whatif", "--snapshot", path, "-f", pod, "-o", "json"}, cli.Streams{In: strings.NewReader(""), Out: io.Discard, Err: &stderr}); code != 0 {
			b.Fatalf("reprieve whatif: exit code %d: %s", code, stderr.String())
		}
	}
}

// median returns the median of xs (which it sorts).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	if n := len(xs); n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[len(xs)/2]
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// benchPod is the pod the benchmarks evaluate: it fits no node as they are.
const benchPod = "apiVersion: v1\nkind: Pod\nmetadata: {name: big, namespace: default}\nspec:\n  priority: 100\n  containers:\n  - name: c\n    image: x\n    resources: {requests: {cpu: 3900m, memory: 1Gi}}\n"

// writeKubectlSnapshot writes nodes × pods objects as one List in format,
// shaped as kubectl writes them (with their managed fields if managed;
// with pods "tokens", each pod with the service account token volume of
// its own that the API server gives it, mounted in its container; with
// pods "distinct", no two pods alike: each container's environment holds
// the pod's resource version), and returns the file's size. A file
// already at path (REPRIEVE_E2E_DIR) is kept.
func writeKubectlSnapshot(b *testing.B, path, format string, nodes, pods int, managed bool, kind string) int64 {
	b.Helper()
	if st, err := os.Stat(path); err == nil && os.Getenv("REPRIEVE_E2E_DIR") != "" {
		return st.Size()
	}
	nodeTemplate, podTemplate := nodeTemplates[format], podTemplates[format]
	if managed {
		nodeTemplate = withManagedFields(nodeTemplate, format, nodeManagedFields)
		podTemplate = withManagedFields(podTemplate, format, podManagedFields)
	}
	podTemplate = withOwnTimesAndIP(b, podTemplate)
	switch kind {
	case "distinct":
		podTemplate = strings.Replace(strings.Replace(podTemplate, `"value": "info"`, `"value": "info-%[5]d"`, 1), "value: info\n", "value: info-%[5]d\n", 1)
		if !strings.Contains(podTemplate, "info-%[5]d") {
			b.Fatal("no environment in the pod template")
		}
	case "tokens":
		podTemplate = withTokenVolume(b, podTemplate, format)
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if format == "json" {
		fmt.Fprint(w, "{\n    \"apiVersion\": \"v1\",\n    \"items\": [")
	} else {
		fmt.Fprint(w, "apiVersion: v1\nitems:\n")
	}
	first := true
	sep := func() {
		if format == "json" && !first {
			fmt.Fprint(w, ",")
		}
		first = false
	}
	for n := range nodes {
		node := fmt.Sprintf("node-%05d", n)
		sep()
		fmt.Fprintf(w, nodeTemplate, node, n, 1000+n, n%3)
		for p := range pods {
			sep()
			i := n*pods + p
			ip := fmt.Sprintf("10.%d.%d.%d", 128+i>>16, i>>8&255, i&255)
			created := podTimeBase.Add(time.Duration(i) * time.Second).Format(time.RFC3339)
			container := fmt.Sprintf("%016x%016x%016x%016x", uint64(i)*0x9e3779b97f4a7c15, uint64(i)*0xbf58476d1ce4e5b9, uint64(i)*0x94d049bb133111eb, uint64(i)+0x2545f4914f6cdd1d)
			fmt.Fprintf(w, podTemplate, p, fmt.Sprintf("app-%05d-%02d", n, p), n, p, 5000+i, p, node, ip, created, container)
		}
	}
	if format == "json" {
		fmt.Fprint(w, "\n    ],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n")
	} else {
		fmt.Fprint(w, "kind: List\nmetadata:\n  resourceVersion: \"\"\n")
	}
	return closeSnapshot(b, f, w)
}

// Arguments: name, index, resourceVersion, zone.
var nodeTemplates = map[string]string{
	"yaml": `- apiVersion: v1
  kind: Node
  metadata:
    annotations:
      node.alpha.kubernetes.io/ttl: "0"
      volumes.kubernetes.io/controller-managed-attach-detach: "true"
    creationTimestamp: "2026-01-01T00:00:00Z"
    labels:
      kubernetes.io/hostname: %[1]s
      kubernetes.io/os: linux
      node.kubernetes.io/instance-type: m5.xlarge
      topology.kubernetes.io/zone: zone-%[4]d
    name: %[1]s
    resourceVersion: "%[3]d"
    uid: 6f1e0c2a-0000-4000-8000-%012[2]d
  spec:
    podCIDR: 10.244.0.0/24
    podCIDRs:
    - 10.244.0.0/24
  status:
    addresses:
    - address: 10.0.0.1
      type: InternalIP
    - address: %[1]s
      type: Hostname
    allocatable:
      cpu: "4"
      ephemeral-storage: 100Gi
      memory: 32Gi
      pods: "110"
    capacity:
      cpu: "4"
      ephemeral-storage: 100Gi
      memory: 32Gi
      pods: "110"
    conditions:
    - lastHeartbeatTime: "2026-01-01T00:00:00Z"
      lastTransitionTime: "2026-01-01T00:00:00Z"
      message: kubelet is posting ready status
      reason: KubeletReady
      status: "True"
      type: Ready
    nodeInfo:
      architecture: amd64
      bootID: 0b1c2d3e
      containerRuntimeVersion: containerd://2.0.0
      kernelVersion: 6.1.0
      kubeProxyVersion: ""
      kubeletVersion: v1.37.2
      machineID: 4f5e6d7c
      operatingSystem: linux
      osImage: Debian GNU/Linux 13
      systemUUID: 8a9b0c1d
`,
	"json": `
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "annotations": {
                    "node.alpha.kubernetes.io/ttl": "0",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true"
                },
                "creationTimestamp": "2026-01-01T00:00:00Z",
                "labels": {
                    "kubernetes.io/hostname": "%[1]s",
                    "kubernetes.io/os": "linux",
                    "node.kubernetes.io/instance-type": "m5.xlarge",
                    "topology.kubernetes.io/zone": "zone-%[4]d"
                },
                "name": "%[1]s",
                "resourceVersion": "%[3]d",
                "uid": "6f1e0c2a-0000-4000-8000-%012[2]d"
            },
            "spec": {
                "podCIDR": "10.244.0.0/24",
                "podCIDRs": ["10.244.0.0/24"]
            },
            "status": {
                "addresses": [
                    {"address": "10.0.0.1", "type": "InternalIP"},
                    {"address": "%[1]s", "type": "Hostname"}
                ],
                "allocatable": {"cpu": "4", "ephemeral-storage": "100Gi", "memory": "32Gi", "pods": "110"},
                "capacity": {"cpu": "4", "ephemeral-storage": "100Gi", "memory": "32Gi", "pods": "110"},
                "conditions": [
                    {
                        "lastHeartbeatTime": "2026-01-01T00:00:00Z",
                        "lastTransitionTime": "2026-01-01T00:00:00Z",
                        "message": "kubelet is posting ready status",
                        "reason": "KubeletReady",
                        "status": "True",
                        "type": "Ready"
                    }
                ],
                "nodeInfo": {
                    "architecture": "amd64",
                    "bootID": "0b1c2d3e",
                    "containerRuntimeVersion": "containerd://2.0.0",
                    "kernelVersion": "6.1.0",
                    "kubeProxyVersion": "",
                    "kubeletVersion": "v1.37.2",
                    "machineID": "4f5e6d7c",
                    "operatingSystem": "linux",
                    "osImage": "Debian GNU/Linux 13",
                    "systemUUID": "8a9b0c1d"
                }
            }
        }`,
}

// Arguments: app, name, node index, pod index, resourceVersion, app, node
// (and, given by withOwnTimesAndIP, the pod IP and creation time), container
// ID.
var podTemplates = map[string]string{
	"yaml": `- apiVersion: v1
  kind: Pod
  metadata:
    annotations:
      kubectl.kubernetes.io/restartedAt: "2026-01-01T00:00:00Z"
    creationTimestamp: "2026-01-01T00:00:00Z"
    generateName: app-%[1]d-5d8f7b9c4-
    generation: 1
    labels:
      app: app-%[1]d
      pod-template-hash: 5d8f7b9c4
    name: %[2]s
    namespace: default
    ownerReferences:
    - apiVersion: apps/v1
      blockOwnerDeletion: true
      controller: true
      kind: ReplicaSet
      name: app-%[1]d-5d8f7b9c4
      uid: 1a2b3c4d-0000-4000-8000-%012[1]d
    resourceVersion: "%[5]d"
    uid: 9e8d7c6b-%04[3]d-4000-8000-%012[4]d
  spec:
    containers:
    - env:
      - name: LOG_LEVEL
        value: info
      image: registry.example.com/app:1.2.3
      imagePullPolicy: IfNotPresent
      name: app
      ports:
      - containerPort: 8080
        name: http
        protocol: TCP
      resources:
        limits:
          memory: 512Mi
        requests:
          cpu: 100m
          memory: 256Mi
      terminationMessagePath: /dev/termination-log
      terminationMessagePolicy: File
    dnsPolicy: ClusterFirst
    enableServiceLinks: true
    nodeName: %[7]s
    preemptionPolicy: PreemptLowerPriority
    priority: 0
    restartPolicy: Always
    schedulerName: default-scheduler
    securityContext: {}
    serviceAccount: default
    serviceAccountName: default
    terminationGracePeriodSeconds: 30
    tolerations:
    - effect: NoExecute
      key: node.kubernetes.io/not-ready
      operator: Exists
      tolerationSeconds: 300
    - effect: NoExecute
      key: node.kubernetes.io/unreachable
      operator: Exists
      tolerationSeconds: 300
  status:
    conditions:
    - lastProbeTime: null
      lastTransitionTime: "2026-01-01T00:00:00Z"
      observedGeneration: 1
      status: "True"
      type: PodReadyToStartContainers
    - lastProbeTime: null
      lastTransitionTime: "2026-01-01T00:00:00Z"
      observedGeneration: 1
      status: "True"
      type: Initialized
    - lastProbeTime: null
      lastTransitionTime: "2026-01-01T00:00:00Z"
      observedGeneration: 1
      status: "True"
      type: Ready
    - lastProbeTime: null
      lastTransitionTime: "2026-01-01T00:00:00Z"
      observedGeneration: 1
      status: "True"
      type: ContainersReady
    - lastProbeTime: null
      lastTransitionTime: "2026-01-01T00:00:00Z"
      observedGeneration: 1
      status: "True"
      type: PodScheduled
    containerStatuses:
    - allocatedResources:
        cpu: 100m
        memory: 256Mi
      containerID: containerd://%[10]s
      image: registry.example.com/app:1.2.3
      imageID: registry.example.com/app@sha256:4f1c7d9e2b3a5c6d8e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d
      lastState: {}
      name: app
      ready: true
      resources:
        limits:
          memory: 512Mi
        requests:
          cpu: 100m
          memory: 256Mi
      restartCount: 0
      started: true
      state:
        running:
          startedAt: "2026-01-01T00:00:00Z"
      user:
        linux:
          gid: 0
          supplementalGroups:
          - 0
          uid: 0
    hostIP: 10.0.0.1
    hostIPs:
    - ip: 10.0.0.1
    observedGeneration: 1
    phase: Running
    podIP: 10.244.0.7
    podIPs:
    - ip: 10.244.0.7
    qosClass: Burstable
    startTime: "2026-01-01T00:00:00Z"
`,
	"json": `
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"},
                "creationTimestamp": "2026-01-01T00:00:00Z",
                "generateName": "app-%[1]d-5d8f7b9c4-",
                "generation": 1,
                "labels": {"app": "app-%[1]d", "pod-template-hash": "5d8f7b9c4"},
                "name": "%[2]s",
                "namespace": "default",
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "blockOwnerDeletion": true,
                        "controller": true,
                        "kind": "ReplicaSet",
                        "name": "app-%[1]d-5d8f7b9c4",
                        "uid": "1a2b3c4d-0000-4000-8000-%012[1]d"
                    }
                ],
                "resourceVersion": "%[5]d",
                "uid": "9e8d7c6b-%04[3]d-4000-8000-%012[4]d"
            },
            "spec": {
                "containers": [
                    {
                        "env": [{"name": "LOG_LEVEL", "value": "info"}],
                        "image": "registry.example.com/app:1.2.3",
                        "imagePullPolicy": "IfNotPresent",
                        "name": "app",
                        "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                        "resources": {"limits": {"memory": "512Mi"}, "requests": {"cpu": "100m", "memory": "256Mi"}},
                        "terminationMessagePath": "/dev/termination-log",
                        "terminationMessagePolicy": "File"
                    }
                ],
                "dnsPolicy": "ClusterFirst",
                "enableServiceLinks": true,
                "nodeName": "%[7]s",
                "preemptionPolicy": "PreemptLowerPriority",
                "priority": 0,
                "restartPolicy": "Always",
                "schedulerName": "default-scheduler",
                "securityContext": {},
                "serviceAccount": "default",
                "serviceAccountName": "default",
                "terminationGracePeriodSeconds": 30,
                "tolerations": [
                    {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
                    {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300}
                ]
            },
            "status": {
                "conditions": [
                    {
                        "lastProbeTime": null,
                        "lastTransitionTime": "2026-01-01T00:00:00Z",
                        "observedGeneration": 1,
                        "status": "True",
                        "type": "PodReadyToStartContainers"
                    },
                    {
                        "lastProbeTime": null,
                        "lastTransitionTime": "2026-01-01T00:00:00Z",
                        "observedGeneration": 1,
                        "status": "True",
                        "type": "Initialized"
                    },
                    {
                        "lastProbeTime": null,
                        "lastTransitionTime": "2026-01-01T00:00:00Z",
                        "observedGeneration": 1,
                        "status": "True",
                        "type": "Ready"
                    },
                    {
                        "lastProbeTime": null,
                        "lastTransitionTime": "2026-01-01T00:00:00Z",
                        "observedGeneration": 1,
                        "status": "True",
                        "type": "ContainersReady"
                    },
                    {
                        "lastProbeTime": null,
                        "lastTransitionTime": "2026-01-01T00:00:00Z",
                        "observedGeneration": 1,
                        "status": "True",
                        "type": "PodScheduled"
                    }
                ],
                "containerStatuses": [
                    {
                        "allocatedResources": {"cpu": "100m", "memory": "256Mi"},
                        "containerID": "containerd://%[10]s",
                        "image": "registry.example.com/app:1.2.3",
                        "imageID": "registry.example.com/app@sha256:4f1c7d9e2b3a5c6d8e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d",
                        "lastState": {},
                        "name": "app",
                        "ready": true,
                        "resources": {"limits": {"memory": "512Mi"}, "requests": {"cpu": "100m", "memory": "256Mi"}},
                        "restartCount": 0,
                        "started": true,
                        "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}},
                        "user": {"linux": {"gid": 0, "supplementalGroups": [0], "uid": 0}}
                    }
                ],
                "hostIP": "10.0.0.1",
                "hostIPs": [{"ip": "10.0.0.1"}],
                "observedGeneration": 1,
                "phase": "Running",
                "podIP": "10.244.0.7",
                "podIPs": [{"ip": "10.244.0.7"}],
                "qosClass": "Burstable",
                "startTime": "2026-01-01T00:00:00Z"
            }
        }`,
}

// podTimeBase is when the first pod of a kubectl snapshot was created.
var podTimeBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// withOwnTimesAndIP makes a pod template (YAML or JSON, with its managed
// fields or not) give each pod its own IP (argument 8) and creation time
// (argument 9), in its status and its managed fields, as a cluster's pods
// have: none of a workload's pods have the same status or managed fields.
func withOwnTimesAndIP(b *testing.B, template string) string {
	b.Helper()
	const fixed = `"2026-01-01T00:00:00Z"`
	for _, key := range []string{"creationTimestamp", "lastTransitionTime", "startTime", "startedAt", "time"} {
		template = strings.ReplaceAll(template, " "+key+": "+fixed, " "+key+`: "%[9]s"`) // not restartedAt
		template = strings.ReplaceAll(template, `"`+key+`": `+fixed, `"`+key+`": "%[9]s"`)
	}
	template = strings.ReplaceAll(template, "10.244.0.7", "%[8]s")
	if strings.Count(template, "%[9]s") < 3 || !strings.Contains(template, `podIP": "%[8]s"`) && !strings.Contains(template, "podIP: %[8]s") {
		b.Fatal("no pod times or IP in the pod template")
	}
	return template
}

// withTokenVolume gives a pod template (YAML or JSON) the service
// account token volume the API server gives a pod, named after the pod's
// resource version, and mounts it in its container (which the container's
// status lists, as the kubelet writes it).
func withTokenVolume(b *testing.B, template, format string) string {
	b.Helper()
	if format == "yaml" {
		mount := "      terminationMessagePolicy: File\n      volumeMounts:\n      - mountPath: /var/run/secrets/kubernetes.io/serviceaccount\n        name: kube-api-access-%[5]d\n        readOnly: true\n"
		volume := "    volumes:\n    - name: kube-api-access-%[5]d\n      projected:\n        defaultMode: 420\n        sources:\n        - serviceAccountToken:\n            expirationSeconds: 3607\n            path: token\n" +
			"        - configMap:\n            items:\n            - key: ca.crt\n              path: ca.crt\n            name: kube-root-ca.crt\n" +
			"        - downwardAPI:\n            items:\n            - fieldRef:\n                apiVersion: v1\n                fieldPath: metadata.namespace\n              path: namespace\n  status:\n"
		template = strings.Replace(template, "      terminationMessagePolicy: File\n", mount, 1)
		template = strings.Replace(template, "  status:\n", volume, 1)
		template = strings.Replace(template, "          uid: 0\n", "          uid: 0\n      volumeMounts:\n      - mountPath: /var/run/secrets/kubernetes.io/serviceaccount\n        name: kube-api-access-%[5]d\n        readOnly: true\n        recursiveReadOnly: Disabled\n", 1)
	} else {
		mount := `"terminationMessagePolicy": "File", "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": "kube-api-access-%[5]d", "readOnly": true}]`
		volume := `"terminationGracePeriodSeconds": 30, "volumes": [{"name": "kube-api-access-%[5]d", "projected": {"defaultMode": 420, "sources": [` +
			`{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}, {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}}, ` +
			`{"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}, "path": "namespace"}]}}]}}],`
		template = strings.Replace(template, `"terminationMessagePolicy": "File"`, mount, 1)
		template = strings.Replace(template, `"terminationGracePeriodSeconds": 30,`, volume, 1)
		template = strings.Replace(template, `"user": {"linux": {"gid": 0, "supplementalGroups": [0], "uid": 0}}`, `"user": {"linux": {"gid": 0, "supplementalGroups": [0], "uid": 0}}, "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": "kube-api-access-%[5]d", "readOnly": true, "recursiveReadOnly": "Disabled"}]`, 1)
	}
	if strings.Count(template, "kube-api-access-") != 3 {
		b.Fatal("no token volume in the pod template")
	}
	return template
}

// withManagedFields inserts managed fields (YAML, indented for an item's
// metadata) into an object template before its metadata's name, where
// kubectl sorts them.
func withManagedFields(template, format, managed string) string {
	if format == "yaml" {
		at := strings.Index(template, "\n    name: ")
		return template[:at+1] + "    managedFields:\n" + managed + template[at+1:]
	}
	j, err := yaml.YAMLToJSON([]byte(strings.ReplaceAll(managed, "\n    ", "\n")[4:]))
	if err != nil {
		panic(err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, j, "                ", "    "); err != nil {
		panic(err)
	}
	at := strings.Index(template, "\n                \"name\": ")
	return template[:at+1] + "                \"managedFields\": " + out.String() + ",\n" + template[at+1:]
}

// The managed fields of a node as kubelet and kube-controller-manager
// leave them, and of a ReplicaSet's pod, for an item's metadata.
var (
	nodeManagedFields = `    - apiVersion: v1
      fieldsType: FieldsV1
      fieldsV1:
        f:metadata:
          f:annotations:
            .: {}
            f:volumes.kubernetes.io/controller-managed-attach-detach: {}
          f:labels:
            .: {}
            f:kubernetes.io/hostname: {}
            f:kubernetes.io/os: {}
            f:node.kubernetes.io/instance-type: {}
            f:topology.kubernetes.io/zone: {}
      manager: kubelet
      operation: Update
      time: "2026-01-01T00:00:00Z"
    - apiVersion: v1
      fieldsType: FieldsV1
      fieldsV1:
        f:metadata:
          f:annotations:
            f:node.alpha.kubernetes.io/ttl: {}
        f:spec:
          f:podCIDR: {}
          f:podCIDRs:
            .: {}
            v:"10.244.0.0/24": {}
      manager: kube-controller-manager
      operation: Update
      time: "2026-01-01T00:00:00Z"
    - apiVersion: v1
      fieldsType: FieldsV1
      fieldsV1:
        f:status:
          f:allocatable:
            f:ephemeral-storage: {}
          f:conditions:
            k:{"type":"Ready"}:
              f:lastHeartbeatTime: {}
              f:lastTransitionTime: {}
              f:message: {}
              f:reason: {}
              f:status: {}
          f:nodeInfo:
            f:bootID: {}
            f:containerRuntimeVersion: {}
            f:kernelVersion: {}
            f:kubeletVersion: {}
            f:machineID: {}
            f:osImage: {}
            f:systemUUID: {}
      manager: kubelet
      operation: Update
      subresource: status
      time: "2026-01-01T00:00:00Z"
`
	podManagedFields = `    - apiVersion: v1
      fieldsType: FieldsV1
      fieldsV1:
        f:metadata:
          f:annotations:
            .: {}
            f:kubectl.kubernetes.io/restartedAt: {}
          f:generateName: {}
          f:labels:
            .: {}
            f:app: {}
            f:pod-template-hash: {}
          f:ownerReferences:
            .: {}
            k:{"uid":"1a2b3c4d-0000-4000-8000-%012[1]d"}: {}
        f:spec:
          f:containers:
            k:{"name":"app"}:
              .: {}
              f:env:
                .: {}
                k:{"name":"LOG_LEVEL"}:
                  .: {}
                  f:name: {}
                  f:value: {}
              f:image: {}
              f:imagePullPolicy: {}
              f:name: {}
              f:ports:
                .: {}
                k:{"containerPort":8080,"protocol":"TCP"}:
                  .: {}
                  f:containerPort: {}
                  f:name: {}
                  f:protocol: {}
              f:resources:
                .: {}
                f:limits:
                  .: {}
                  f:memory: {}
                f:requests:
                  .: {}
                  f:cpu: {}
                  f:memory: {}
              f:terminationMessagePath: {}
              f:terminationMessagePolicy: {}
          f:dnsPolicy: {}
          f:enableServiceLinks: {}
          f:restartPolicy: {}
          f:schedulerName: {}
          f:securityContext: {}
          f:terminationGracePeriodSeconds: {}
      manager: kube-controller-manager
      operation: Update
      time: "2026-01-01T00:00:00Z"
    - apiVersion: v1
      fieldsType: FieldsV1
      fieldsV1:
        f:status:
          f:conditions:
            k:{"type":"ContainersReady"}:
              .: {}
              f:lastProbeTime: {}
              f:lastTransitionTime: {}
              f:observedGeneration: {}
              f:status: {}
              f:type: {}
            k:{"type":"Initialized"}:
              .: {}
              f:lastProbeTime: {}
              f:lastTransitionTime: {}
              f:observedGeneration: {}
              f:status: {}
              f:type: {}
            k:{"type":"PodReadyToStartContainers"}:
              .: {}
              f:lastProbeTime: {}
              f:lastTransitionTime: {}
              f:observedGeneration: {}
              f:status: {}
              f:type: {}
            k:{"type":"Ready"}:
              .: {}
              f:lastProbeTime: {}
              f:lastTransitionTime: {}
              f:observedGeneration: {}
              f:status: {}
              f:type: {}
          f:containerStatuses: {}
          f:hostIP: {}
          f:hostIPs: {}
          f:observedGeneration: {}
          f:phase: {}
          f:podIP: {}
          f:podIPs:
            .: {}
            k:{"ip":"10.244.0.7"}:
              .: {}
              f:ip: {}
          f:startTime: {}
      manager: kubelet
      operation: Update
      subresource: status
      time: "2026-01-01T00:00:00Z"
`
)

// writeMinimalSnapshot writes nodes nodes with pods pods each as a script
// would (see BenchmarkWhatifEndToEnd) to path, unless REPRIEVE_E2E_DIR
// keeps one there, and returns its size.
func writeMinimalSnapshot(b *testing.B, path, format string, nodes, pods int) int64 {
	b.Helper()
	if st, err := os.Stat(path); err == nil && os.Getenv("REPRIEVE_E2E_DIR") != "" {
		return st.Size()
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if format == "json" {
		fmt.Fprint(w, `{"apiVersion": "v1", "kind": "List", "items": [`)
	}
	for n := range nodes {
		node := fmt.Sprintf("node-%05d", n)
		if format == "json" {
			if n > 0 {
				fmt.Fprint(w, ",")
			}
			fmt.Fprintf(w, `
{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "%[1]s", "labels": {"kubernetes.io/hostname": "%[1]s", "topology.kubernetes.io/zone": "zone-%[2]d"}},
 "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}, "capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"}}}`, node, n%3)
		} else {
			fmt.Fprintf(w, `---
apiVersion: v1
kind: Node
metadata:
  name: %[1]s
  labels:
    kubernetes.io/hostname: %[1]s
    topology.kubernetes.io/zone: zone-%[2]d
status:
  allocatable: {cpu: "4", memory: 32Gi, pods: "110"}
  capacity: {cpu: "4", memory: 32Gi, pods: "110"}
`, node, n%3)
		}
		for p := range pods {
			if format == "json" {
				fmt.Fprintf(w, `,
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "app-%05[1]d-%02[2]d", "namespace": "default", "labels": {"app": "app-%[3]d"}},
 "spec": {"nodeName": "%[4]s", "priority": %[5]d, "containers": [{"name": "app", "image": "registry.example/app:1", "resources": {"requests": {"cpu": "100m", "memory": "1Gi"}}}]}}`, n, p, p%10, node, p%5*100)
			} else {
				fmt.Fprintf(w, `---
apiVersion: v1
kind: Pod
metadata:
  name: app-%05[1]d-%02[2]d
  namespace: default
  labels: {app: app-%[3]d}
spec:
  nodeName: %[4]s
  priority: %[5]d
  containers:
  - name: app
    image: registry.example/app:1
    resources:
      requests: {cpu: 100m, memory: 1Gi}
`, n, p, p%10, node, p%5*100)
			}
		}
	}
	if format == "json" {
		fmt.Fprint(w, "\n]}\n")
	}
	return closeSnapshot(b, f, w)
}

// closeSnapshot flushes w, closes f (w's file) and returns its size.
func closeSnapshot(b *testing.B, f *os.File, w *bufio.Writer) int64 {
	b.Helper()
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return st.Size()
}
