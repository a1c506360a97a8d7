#!/usr/bin/env bash
# Benchmark the ova stage's OVA import (framework/vsphere) against the way the
# TKG runs script it: in ONE run, start vcsim, generate COUNT OVAs of SIZE_MIB
# each, import them with the library (CONCURRENCY at a time, SHA256 manifest
# verified, marked as templates), then with COUNT sequential
# `govc import.ova` runs against the same simulator, ROUNDS times, the two
# sides taking turns at going first, and print each round, the medians of
# both sides' times and CPU, the library's client CPU per GiB, and last,
# alone, the line `ratio: <govc median time / library median time>`. One
# round moves by +-0.09 from run to run on 2 CPUs; the median of 5 does not
# hang on one.
#
# govc runs without -m: its manifest check is server-side, knows only SHA1,
# and vcsim refuses the SHA256 manifests node OVAs ship ("manifest checksum
# type SHA256 mismatch"), so the baseline verifies nothing.
#
#   COUNT=4 SIZE_MIB=200 CONCURRENCY=4   what to measure
#   ROUNDS=5                             rounds of both sides (1: one import each, as before)
#   LOCALBIN=bin                         where govc and the benchmark binary go (the Makefile's BIN)
#   BEFORE=<git rev>                     also run that revision's bench (built from `git archive`)
#                                        just before, and print the client CPU per GiB before and now
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

count=${COUNT:-4} size_mib=${SIZE_MIB:-200} concurrency=${CONCURRENCY:-4} rounds=${ROUNDS:-5}
before=()
if [[ -n "${BEFORE:-}" ]]; then
  # The earlier revision runs on the same machine minutes apart, because the
  # machine's load moves the numbers more than most changes do.
  rev=$(git -C "$root" rev-parse --short "$BEFORE")
  old=$localbin/bench-ova-$rev
  if [[ ! -x $old ]]; then
    echo "bench-ova: building $rev's e2e/cmd/bench-ova"
    src=$(mktemp -d)
    git -C "$root" archive "$rev" | tar -x -C "$src"
    (cd "$src" && go build -o "$old" ./e2e/cmd/bench-ova) || { rm -rf "$src"; exit 1; }
    rm -rf "$src"
  fi
  echo "bench-ova: measuring $rev's library import (its bench prints its rows only with the govc baseline)"
  out=$("$old" -govc "$govc" -count "$count" -size-mib "$size_mib" -concurrency "$concurrency" -progress-every 0)
  grep -E '^(library|govc|ratio)' <<<"$out" | sed "s/^/  $rev: /"
  line=$(grep '^library, concurrency' <<<"$out")
  cpu=$(sed -E 's/.*CPU client +([0-9.]+)s.*/\1/' <<<"$line")
  before=(-before-cpu-per-gib "$(awk -v c="$cpu" -v n="$count" -v m="$size_mib" 'BEGIN { printf "%.3f", c / (n * m / 1024) }')"
    -before-label "$rev, measured just before")
fi

exec "$localbin/bench-ova" -govc "$govc" -count "$count" -size-mib "$size_mib" \
  -concurrency "$concurrency" -rounds "$rounds" "${before[@]}" "$@"
