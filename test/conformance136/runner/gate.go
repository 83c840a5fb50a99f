package main

import "github.com/reprieve/reprieve/test/conformance136/upstream"

// unsupported says why this runner cannot serve in, or "".
func unsupported(in upstream.Input) string {
	if in.FeatureGates["GenericWorkload"] {
		return "the v1.36 runner does not build the pod-group machinery GenericWorkload needs"
	}
	return ""
}
