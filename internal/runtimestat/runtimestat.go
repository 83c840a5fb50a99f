// Package runtimestat reads the Go runtime's figures that the command
// line tunes its memory by.
package runtimestat

import "runtime/metrics"

// Bytes returns the runtime/metrics sample name, a count of bytes; 0 if
// this runtime does not have it.
func Bytes(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
