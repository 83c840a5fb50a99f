package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchmarkWhatifEndToEnd times `reprieve whatif --snapshot FILE -f POD`
// as a user runs it — a fresh process, built like the release binary, with
// its defaults — on a snapshot of REPRIEVE_E2E_NODES nodes (default 5,000)
// with 30 pods each, written as `kubectl get nodes,pods -A -o json|yaml`
// writes it (status, owner references, labels, annotations; managed fields
// stripped, as kubectl shows them). It reports wall time per run, the
// process's CPU time and its peak RSS. REPRIEVE_E2E_BINARY=PATH times that
// binary instead of a fresh build.
//
//	go test -run NONE -bench WhatifEndToEnd -benchtime 3x ./cmd/reprieve/
func BenchmarkWhatifEndToEnd(b *testing.B) {
	nodes := 5000
	if s := os.Getenv("REPRIEVE_E2E_NODES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("REPRIEVE_E2E_NODES: %v", err)
		}
		nodes = n
	}
	dir := b.TempDir()
	// REPRIEVE_E2E_BINARY runs another build (an older commit's, to
	// compare) on the same files.
	bin := os.Getenv("REPRIEVE_E2E_BINARY")
	if bin == "" {
		bin = filepath.Join(dir, "reprieve")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			b.Fatalf("go build: %v\n%s", err, out)
		}
	}
	pod := filepath.Join(dir, "pod.yaml")
	if err := os.WriteFile(pod, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: big, namespace: default}\nspec:\n  priority: 100\n  containers:\n  - name: c\n    image: x\n    resources: {requests: {cpu: 3900m, memory: 1Gi}}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, format := range []string{"json", "yaml"} {
		path := filepath.Join(dir, "snapshot."+format)
		size := writeKubectlSnapshot(b, path, format, nodes, 30)
		b.Run(fmt.Sprintf("%s/nodes=%d", format, nodes), func(b *testing.B) {
			b.SetBytes(size)
			var cpu time.Duration
			var peak int64
			for b.Loop() {
				cmd := exec.Command(bin, "whatif", "--snapshot", path, "-f", pod, "-o", "json")
				cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
				if err := cmd.Run(); err != nil {
					b.Fatalf("reprieve whatif: %v", err)
				}
				u := cmd.ProcessState.SysUsage().(*syscall.Rusage)
				cpu += time.Duration(u.Utime.Nano() + u.Stime.Nano())
				peak = max(peak, u.Maxrss) // KiB on Linux
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(peak)/1024, "peak-MiB")
		})
	}
}

// writeKubectlSnapshot writes nodes × pods objects as one List in format,
// shaped as kubectl writes them, and returns the file's size.
func writeKubectlSnapshot(b *testing.B, path, format string, nodes, pods int) int64 {
	b.Helper()
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
		fmt.Fprintf(w, nodeTemplates[format], node, n, 1000+n, n%3)
		for p := range pods {
			sep()
			fmt.Fprintf(w, podTemplates[format], p, fmt.Sprintf("app-%05d-%02d", n, p), n, p, 5000+n*pods+p, p, node)
		}
	}
	if format == "json" {
		fmt.Fprint(w, "\n    ],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n")
	} else {
		fmt.Fprint(w, "kind: List\nmetadata:\n  resourceVersion: \"\"\n")
	}
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

// Arguments: app, name, node index, pod index, resourceVersion, app, node.
var podTemplates = map[string]string{
	"yaml": `- apiVersion: v1
  kind: Pod
  metadata:
    annotations:
      kubectl.kubernetes.io/restartedAt: "2026-01-01T00:00:00Z"
    creationTimestamp: "2026-01-01T00:00:00Z"
    generateName: app-%[1]d-5d8f7b9c4-
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
      status: "True"
      type: Ready
    hostIP: 10.0.0.1
    phase: Running
    podIP: 10.244.0.7
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
                "conditions": [{"lastProbeTime": null, "lastTransitionTime": "2026-01-01T00:00:00Z", "status": "True", "type": "Ready"}],
                "hostIP": "10.0.0.1",
                "phase": "Running",
                "podIP": "10.244.0.7",
                "qosClass": "Burstable",
                "startTime": "2026-01-01T00:00:00Z"
            }
        }`,
}
