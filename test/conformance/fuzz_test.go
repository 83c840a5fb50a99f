package conformance

import (
	"fmt"
	"testing"

	"github.com/reprieve/reprieve/test/conformance/gen"
)

// FuzzDifferential feeds generated scenarios, chosen by the fuzzer's seed
// and profile, to both engines: they must agree and neither may panic; and
// every victim policy must keep checkPolicies' promises on them (never
// worse than upstream under upstream's own order, strict-pdb never breaking
// a budget).
//
//	go test -run XXX -fuzz FuzzDifferential -fuzztime 10m .
func FuzzDifferential(f *testing.F) {
	for i := range int64(4) {
		f.Add(i, uint8(i))
	}
	profiles := gen.Profiles()
	f.Fuzz(func(t *testing.T, seed int64, profile uint8) {
		p := profiles[int(profile)%len(profiles)]
		sc, name := gen.Generate(seed, p), fmt.Sprintf("fuzz-%s-%d", p, seed)
		compareScenario(t, sc, name)
		checkPolicies(t, sc, seed, name)
	})
}
