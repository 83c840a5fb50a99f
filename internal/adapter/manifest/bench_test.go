package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// kubectlSnapshot returns nodes × pods objects shaped as `kubectl get -o
// json` writes them (status, owner references, labels, annotations, the
// fields defaulting fills in), as one List.
func kubectlSnapshot(nodes, pods int) map[string]any {
	var items []any
	for n := range nodes {
		name := fmt.Sprintf("node-%05d", n)
		items = append(items, map[string]any{"apiVersion": "v1", "kind": "Node",
			"metadata": map[string]any{"name": name, "uid": fmt.Sprintf("uid-node-%d", n), "resourceVersion": fmt.Sprint(1000 + n), "creationTimestamp": "2026-01-01T00:00:00Z",
				"labels":      map[string]any{"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": fmt.Sprintf("zone-%d", n%3), "node.kubernetes.io/instance-type": "m5.xlarge"},
				"annotations": map[string]any{"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
			"spec": map[string]any{"podCIDR": "10.0.0.0/24"},
			"status": map[string]any{
				"capacity":    map[string]any{"cpu": "4", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"},
				"allocatable": map[string]any{"cpu": "4", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"},
				"conditions":  []any{map[string]any{"type": "Ready", "status": "True", "lastHeartbeatTime": "2026-01-01T00:00:00Z", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "KubeletReady", "message": "kubelet is posting ready status"}},
				"nodeInfo":    map[string]any{"kubeletVersion": "v1.37.2", "osImage": "Ubuntu", "architecture": "amd64", "operatingSystem": "linux", "containerRuntimeVersion": "containerd://2.0", "kernelVersion": "6.1", "kubeProxyVersion": "", "machineID": "x", "systemUUID": "y", "bootID": "z"}}})
		for p := range pods {
			items = append(items, map[string]any{"apiVersion": "v1", "kind": "Pod",
				"metadata": map[string]any{"name": fmt.Sprintf("app-%05d-%02d", n, p), "namespace": "default", "uid": fmt.Sprintf("uid-%d-%d", n, p), "resourceVersion": fmt.Sprint(5000 + n*pods + p), "creationTimestamp": "2026-01-01T00:00:00Z",
					"labels":          map[string]any{"app": fmt.Sprintf("app-%d", p), "pod-template-hash": "abcdef"},
					"annotations":     map[string]any{"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"},
					"ownerReferences": []any{map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": fmt.Sprintf("app-%d-abcdef", p), "uid": fmt.Sprintf("rs-%d", p), "controller": true, "blockOwnerDeletion": true}}},
				"spec": map[string]any{"nodeName": name, "priority": 0, "schedulerName": "default-scheduler", "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst", "serviceAccountName": "default",
					"containers": []any{map[string]any{"name": "app", "image": "registry.example.com/app:1.2.3", "imagePullPolicy": "IfNotPresent",
						"resources":                map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "256Mi"}, "limits": map[string]any{"memory": "512Mi"}},
						"ports":                    []any{map[string]any{"containerPort": 8080, "protocol": "TCP"}},
						"env":                      []any{map[string]any{"name": "A", "value": "b"}},
						"terminationMessagePath":   "/dev/termination-log",
						"terminationMessagePolicy": "File"}},
					"tolerations": []any{map[string]any{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}}},
				"status": map[string]any{"phase": "Running", "podIP": "10.0.0.1", "hostIP": "10.1.0.1", "startTime": "2026-01-01T00:00:00Z", "qosClass": "Burstable",
					"conditions": []any{map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}}}})
		}
	}
	return map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}, "items": items}
}

// BenchmarkLoad reads a 1,000-node × 30-pod snapshot file as `kubectl get
// -o json|yaml` writes it, and builds the snapshot, with the loader's
// defaults (Parallelism: GOMAXPROCS).
func BenchmarkLoad(b *testing.B) {
	snap := kubectlSnapshot(1000, 30)
	dir := b.TempDir()
	files := map[string][]byte{"json": mustJSON(b, snap, true), "yaml": mustYAML(b, snap)}
	for _, format := range []string{"json", "yaml"} {
		path := filepath.Join(dir, "snapshot."+format)
		if err := os.WriteFile(path, files[format], 0o644); err != nil {
			b.Fatal(err)
		}
		b.Run(format, func(b *testing.B) {
			b.SetBytes(int64(len(files[format])))
			b.ReportAllocs()
			for b.Loop() {
				s, err := LoadWith(Options{}, path)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Build(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
