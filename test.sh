#!/usr/bin/env bash
# Runs every test of the project: the engine's unit tests, then the
# conformance suite that compares reprieve with kube-scheduler v1.37.2 on
# random clusters. The conformance module imports k8s.io/kubernetes; its first
# build takes 10-20 minutes on 2 cores and is cached by Go afterwards.
# Pass SCENARIOS=N to change the number of random scenarios per profile.
set -euo pipefail
cd "$(dirname "$0")"

echo "== unit tests"
go vet ./...
go test ./...

if [ -d test/conformance ]; then
  echo "== conformance against kube-scheduler v1.37.2"
  (cd test/conformance && go vet ./... && REPRIEVE_SCENARIOS="${SCENARIOS:-500}" go test -timeout 50m ./...)
fi
