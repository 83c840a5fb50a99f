// Package archtest holds the tests that keep reprieve's layout: one small
// public package, a pure engine that imports nothing of the adapters,
// drivers or command line, adapters that do not import the command line.
// It has no code of its own.
package archtest
