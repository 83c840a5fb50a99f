#!/usr/bin/env bash
# Runs every test of the project:
#   1. the engine's unit tests (go vet + go test ./...) and golangci-lint,
#      installed from the Go module proxy at a pinned version;
#   2. the conformance suite (test/conformance), which compares reprieve with
#      kube-scheduler v1.37.2 on random clusters and on upstream's own cases;
#   3. the integration suite (test/integration), which runs reprieve's
#      scheduler against a real kube-apiserver and etcd started in-process.
# Suites 2 and 3 import k8s.io/kubernetes, built from the Go module proxy: the
# first run compiles it (20-35 minutes on 2 cores); Go's build cache keeps it.
# SCENARIOS=N changes the number of random scenarios per profile (default 500).
set -euo pipefail
cd "$(dirname "$0")"
export GOFLAGS="${GOFLAGS:-} -mod=mod"

echo "== unit tests"
unformatted="$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
go vet ./...
go test ./...

echo "== lint (golangci-lint, .golangci.yml)"
lint_version=2.15.0
lint="$(go env GOPATH)/bin/golangci-lint"
if ! "$lint" version 2>/dev/null | grep -q "version $lint_version "; then
  GOBIN="$(go env GOPATH)/bin" go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v$lint_version"
fi
"$lint" run ./...

echo "== conformance against kube-scheduler v1.37.2"
(cd test/conformance && go vet ./... && REPRIEVE_SCENARIOS="${SCENARIOS:-500}" go test -timeout 50m ./...)

echo "== integration against a real kube-apiserver"
(cd test/integration && go vet ./... && go test -timeout 30m ./...)
