package runtimestat

import "testing"

func TestBytes(t *testing.T) {
	if got := Bytes("/memory/classes/total:bytes"); got == 0 {
		t.Error("the runtime holds no memory")
	}
	if got := Bytes("/no/such/metric:bytes"); got != 0 {
		t.Errorf("an unknown metric: %d, want 0", got)
	}
}
