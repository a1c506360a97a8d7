#!/usr/bin/env bash
# Benchmark the ova stage's OVA import (framework/vsphere) against the way the
# TKG runs script it: in ONE run, start vcsim, generate COUNT OVAs of SIZE_MIB
# each, import them with the library (CONCURRENCY at a time, SHA256 manifest
# verified, marked as templates), then with COUNT sequential
# `govc import.ova` runs against the same simulator, and print both times,
# the CPU each side used, the library's client CPU per GiB, and last, alone,
# the line `ratio: <govc time / library time>`.
#
# govc runs without -m: its manifest check is server-side, knows only SHA1,
# and vcsim refuses the SHA256 manifests node OVAs ship ("manifest checksum
# type SHA256 mismatch"), so the baseline verifies nothing.
#
#   COUNT=4 SIZE_MIB=200 CONCURRENCY=4   what to measure
#   LOCALBIN=bin                         where govc and the benchmark binary go (the Makefile's BIN)
#   extra arguments are passed to bench-ova (e.g. -sequential-too, -format stream-optimized)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
localbin=${LOCALBIN:-$root/bin}
govc_version=v0.46.0 # pinned: govc is its own module after v0.46.0
mkdir -p "$localbin"

govc=$localbin/govc
if ! go version -m "$govc" 2>/dev/null | grep -q "github.com/vmware/govmomi[[:space:]]*$govc_version"; then
  echo "bench-ova: installing govc $govc_version into $localbin (about 2 minutes on 2 CPUs)"
  GOBIN=$localbin go install "github.com/vmware/govmomi/govc@$govc_version"
fi

echo "bench-ova: building e2e/cmd/bench-ova"
(cd "$root" && go build -o "$localbin/bench-ova" ./e2e/cmd/bench-ova)

exec "$localbin/bench-ova" -govc "$govc" -count "${COUNT:-4}" -size-mib "${SIZE_MIB:-200}" \
  -concurrency "${CONCURRENCY:-4}" "$@"
