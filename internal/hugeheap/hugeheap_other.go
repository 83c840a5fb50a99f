//go:build !linux

package hugeheap

// Reserve does nothing on this system: it reports false.
func Reserve(n int) bool { return false }
