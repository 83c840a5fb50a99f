package score

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// BenchmarkScore scores a pod with the system default spreading and a
// preferred anti-affinity term over every node of a cluster of 4-CPU nodes
// in three zones with 30 pods each, one in ten of them with preferred
// anti-affinity.
func BenchmarkScore(b *testing.B) {
	for _, numNodes := range []int{500, 5000} {
		b.Run(fmt.Sprintf("%d nodes", numNodes), func(b *testing.B) {
			var objs snapshot.Objects
			for i := range numNodes {
				name := fmt.Sprintf("n%d", i)
				objs.Nodes = append(objs.Nodes, rt.Node(name).CPU("4").Memory("16Gi").Zone(fmt.Sprintf("z%d", i%3)).Obj())
				for j := range 30 {
					p := rt.Pod("default", fmt.Sprintf("p%d-%d", i, j)).Label("app", fmt.Sprintf("a%d", j%5)).Req("100m", "256Mi").On(name).Obj()
					if j%10 == 0 {
						withPreferredPodAntiAffinity(p, podTerm(10, v1.LabelHostname, map[string]string{"app": "web"}))
					}
					objs.Pods = append(objs.Pods, p)
				}
			}
			objs.Selectors.Services = []*v1.Service{rt.Service("default", "web", map[string]string{"app": "web"})}
			snap, err := snapshot.New(objs)
			if err != nil {
				b.Fatal(err)
			}
			pod, err := snap.NewPod(withPreferredPodAntiAffinity(rt.Pod("default", "web").Label("app", "web").Req("500m", "1Gi").Obj(),
				podTerm(50, v1.LabelTopologyZone, map[string]string{"app": "a1"})))
			if err != nil {
				b.Fatal(err)
			}
			var opts Options
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				Score(snap, pod, snap.Nodes, opts)
			}
		})
	}
}
