#!/usr/bin/env bash
# Runs every test of the project:
#   1. the engine's unit tests (go vet + go test ./...) and golangci-lint,
#      installed from the Go module proxy at a pinned version;
#   2. the conformance suite (test/conformance), which compares reprieve with
#      kube-scheduler v1.37.2 on random clusters and on upstream's own cases;
#   3. the integration suite (test/integration), which runs reprieve's
#      scheduler against a real kube-apiserver and etcd started in-process;
#   4. the conformance suite's differential tests again with reprieve set to
#      v1.38 against kube-scheduler v1.38.0-beta.0 (test/conformance138's
#      runner) and set to v1.36 against v1.36.3 (test/conformance136's,
#      SCENARIOS_136=150), each skipped, saying so, when it would start too
#      late for an hour in all (REPRIEVE_ALL_RELEASES=1 runs them anyway).
# Suites 2 and 3 import k8s.io/kubernetes, built from the Go module proxy: the
# first run compiles it (20-35 minutes on 2 cores), and each other release's
# runner once more (about 16 minutes each); Go's build cache keeps them.
# SCENARIOS=N changes the number of random scenarios per profile (default 500).
set -euo pipefail
cd "$(dirname "$0")"
export GOFLAGS="${GOFLAGS:-} -mod=mod"

# gotest DIR ARGS...: go test ARGS in DIR. When it fails, the failed tests'
# reports are repeated at the end, so that the tail of a long log names them.
gotest() {
  local dir=$1 log status=0
  shift
  log="$(mktemp)"
  (cd "$dir" && go test "$@") 2>&1 | tee "$log" || status=$?
  if [ "$status" -ne 0 ]; then
    echo "== go test failed in $dir; the failures again:"
    grep -E -A12 -- '^[[:space:]]*--- FAIL|^panic:|^FAIL|build failed|cannot|undefined:' "$log" |
      grep -vE '^[IWE][0-9]{4} [0-9:.]+ ' | head -300
  fi
  rm -f "$log"
  return "$status"
}

echo "== unit tests"
unformatted="$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
go vet ./...
gotest . ./...

echo "== lint (golangci-lint, .golangci.yml)"
lint_version=2.15.0
lint="$(go env GOPATH)/bin/golangci-lint"
if ! "$lint" version 2>/dev/null | grep -q "version $lint_version "; then
  GOBIN="$(go env GOPATH)/bin" go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v$lint_version"
fi
"$lint" run ./...

# The differential tests every mirrored release runs (the others need
# pod-group machinery only v1.37's runner builds).
release_tests='^TestDifferential(|DefaultSpreading|DRA|Profiles)$'

echo "== conformance against kube-scheduler v1.37.2"
(cd test/conformance && go vet ./...)
REPRIEVE_SCENARIOS="${SCENARIOS:-500}" gotest test/conformance -timeout 50m ./...

echo "== integration against a real kube-apiserver"
(cd test/integration && go vet ./...)
# The in-process API server reports v1.37.2, as a released one would (the
# version is only linked in): reprieve then decides as that release.
stamp="-X k8s.io/component-base/version.gitVersion=v1.37.2 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37"
gotest test/integration -timeout 30m -ldflags="$stamp" ./...

# Other releases: a runner process built from the release's own module
# (its k8s.io/api cannot share a binary with this one) answers for
# upstream, and reprieve decides as --kube-version of that release would.
# Go 1.27 for 1.38 comes from the Go module proxy (the module's toolchain).
runners="$(mktemp -d)"
trap 'rm -rf "$runners"' EXIT
# A cold build of each older or newer release's runner takes 10-17 minutes on
# 2 cores: a release whose check would start too late for CI's hour is
# skipped with a line saying so (REPRIEVE_ALL_RELEASES=1 runs it anyway).
in_time() {
  if [ -z "${REPRIEVE_ALL_RELEASES:-}" ] && [ "$SECONDS" -gt $(($1 * 60)) ]; then
    echo "== SKIPPED: $2 ($((SECONDS / 60)) minutes gone; run it with REPRIEVE_ALL_RELEASES=1 ./test.sh)"
    return 1
  fi
}
if in_time 30 "conformance against kube-scheduler v1.38.0-beta.0"; then
echo "== conformance against kube-scheduler v1.38.0-beta.0 (test/conformance138)"
(cd test/conformance138 && export GOTOOLCHAIN=go1.27.0 && go vet ./... && go build -o "$runners/runner138" ./runner)
REPRIEVE_KUBE_VERSION=1.38 REPRIEVE_UPSTREAM_RUNNER="$runners/runner138" REPRIEVE_SCENARIOS="${SCENARIOS:-500}" \
  gotest test/conformance -timeout 20m -run "$release_tests" .
fi
if in_time 32 "conformance against kube-scheduler v1.36.3"; then
echo "== conformance against kube-scheduler v1.36.3 (test/conformance136)"
(cd test/conformance136 && go vet ./... && go build -o "$runners/runner136" ./runner)
# Fewer scenarios for the oldest release, and no DRA profile: v1.36's
# structured allocator is not modelled (docs/semantics.md).
REPRIEVE_KUBE_VERSION=1.36 REPRIEVE_UPSTREAM_RUNNER="$runners/runner136" REPRIEVE_SCENARIOS="${SCENARIOS_136:-150}" \
  gotest test/conformance -timeout 20m -run '^TestDifferential(|DefaultSpreading|Profiles)$' .
fi

