#!/usr/bin/env bash
# Each stage's time on the vSphere rehearsal (vcsim server + real CAPV, VMs
# booting as nodes) beside the local profile's (kind + CAPD), from one
# machine: both runs back to back with the same FOCUS, then a table from
# their state.json files (stages, and how long cleanup took for each
# cluster, from .resources[].deleted).
#
#   scripts/bench-profiles.sh                 run both, then print
#   scripts/bench-profiles.sh LOCAL VSPHERE   print from two run folders
#
#   FOCUS   default 'health|smoke|placement|packages' (conformance needs
#           its images in the VM node image; the local run has them)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if [ $# -eq 2 ]; then
  local_run=$1 sim_run=$2
elif [ $# -eq 0 ]; then
  focus=${FOCUS:-health|smoke|placement|packages}
  stamp=$(date -u +%Y%m%d-%H%M%S)
  local_run=$root/artifacts/bench-local-$stamp sim_run=$root/artifacts/bench-vsphere-sim-$stamp
  echo "bench-profiles: make e2e FOCUS='$focus' (local), then make e2e-vsphere-sim with the same FOCUS"
  make e2e FOCUS="$focus" ARTIFACTS="$local_run"
  ARTIFACTS=$sim_run FOCUS="$focus" make e2e-vsphere-sim
else
  echo "usage: $0 [LOCAL_RUN VSPHERE_RUN]" >&2; exit 2
fi
for r in "$local_run" "$sim_run"; do
  [ -f "$r/state.json" ] || { echo "bench-profiles: no state.json in $r" >&2; exit 2; }
done

# rows RUN: "<row>\t<seconds>" for every stage, each cluster's cleanup, and the wall time.
rows() {
  jq -r '
    (.stages | to_entries[] | select(.value.seconds != null and .value.status != "reused") | "\(.key)\t\(.value.seconds)"),
    (.resources[] | select(.deleted != null and (.kind == "capi-cluster" or .kind == "kind-cluster"))
       | "cleanup: \(.kind) \(.role // .createdBy)\(if (.name | test("-teardown$")) then " (move-back throw-away)" else "" end)\t\(.deleted.seconds)"),
    "wall time (started to last update)\t\((.updated | sub("\\.[0-9]+"; "") | fromdateiso8601) - (.started | sub("\\.[0-9]+"; "") | fromdateiso8601))"
  ' "$1/state.json"
}
order="ova bootstrap management move workload health smoke placement packages conformance"
join -t $'\t' -a1 -a2 -e - -o 0,1.2,2.2 <(rows "$local_run" | sort -t $'\t' -k1,1) <(rows "$sim_run" | sort -t $'\t' -k1,1) |
  awk -F'\t' -v order="$order" '
    BEGIN { n = split(order, o, " "); for (i = 1; i <= n; i++) rank[o[i]] = i }
    { r = ($1 in rank) ? rank[$1] : ($1 ~ /^cleanup/ ? 50 : 99); print r "\t" $0 }' |
  sort -t $'\t' -k1,1n -k2,2 | cut -f2- |
  awk -F'\t' -v l="$(basename "$local_run")" -v s="$(basename "$sim_run")" '
    BEGIN { printf "%-58s %10s %12s %7s\n", "stage", "local (s)", "vsphere (s)", "ratio"; printf "%-58s %10s %12s\n", "", l, s }
    { ratio = ($2 != "-" && $3 != "-" && $2 > 0.5) ? sprintf("%.2f", $3 / $2) : "";
      printf "%-58s %10s %12s %7s\n", $1, ($2 == "-" ? "-" : sprintf("%.1f", $2)), ($3 == "-" ? "-" : sprintf("%.1f", $3)), ratio }'
