#!/usr/bin/env bash
# bench-flow.sh - the local lifecycle through the harness against the same steps typed by hand
# (scripts/lifecycle-by-hand.sh: kind, clusterctl, kubectl), back to back in one session on this machine,
# same images and cluster sizes (management 1+1, workload 1+1). Prints each side's per-step times, both
# totals, and last, alone, the line `ratio: <by-hand seconds / harness seconds>` (issue 12 asks the
# harness for at most 0.90 x by hand: ratio >= 1.11).
#
# The harness side is `make e2e FOCUS=workload` (bootstrap -> management -> move -> workload, with its
# checks, sample packages and the suite's own cleanup and leak checks); the by-hand side also cleans up.
#   ORDER=hand-first   run the by-hand flow first (default: harness first)
# Needs the kit's environment (. /var/cache/testbed/out/env.sh) and a Docker host with nothing else running.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
for v in KIND_NODE_IMAGE CLUSTERCTL_CONFIG CNI_MANIFEST KAPP_CONTROLLER_MANIFEST; do
  [ -n "${!v:-}" ] || { echo "missing \$$v: run '. /var/cache/testbed/out/env.sh' first" >&2; exit 2; }
done
work=$(mktemp -d /tmp/bench-flow.XXXX)
make -s "$root/bin/harness" "$root/bin/ginkgo" "$root/e2e/e2e.test" >/dev/null

harness() {
  local s; s=$(date +%s.%N)
  make e2e FOCUS=workload ARTIFACTS="$work/harness" >"$work/harness.log" 2>&1 ||
    { echo "bench-flow: the harness run failed (see $work/harness.log)" >&2; exit 1; }
  h=$(echo "$(date +%s.%N) - $s" | bc)
}
by_hand() {
  local s; s=$(date +%s.%N)
  WL_WORKERS=1 bash scripts/lifecycle-by-hand.sh >"$work/by-hand.log" 2>&1 ||
    { echo "bench-flow: the by-hand run failed (see $work/by-hand.log)" >&2; exit 1; }
  b=$(echo "$(date +%s.%N) - $s" | bc)
}
if [ "${ORDER:-}" = hand-first ]; then by_hand; harness; else harness; by_hand; fi

echo "harness (make e2e FOCUS=workload), per stage:"
jq -r '.stages[] | "  \(.stage)\t\(.seconds)s"' "$work/harness/timings.json" | column -t
jq -r '.collectionSeconds | to_entries[] | "  collect \(.key)\t\(.value)s"' "$work/harness/timings.json" | column -t
# what is neither a stage nor collection: setup (validate, plan, BeforeSuite) and the suite's own cleanup,
# which removes the self-hosted management cluster's containers by ID as the by-hand side does
# (cleanup.selfHosted and cleanup.managed: removeContainers; CLEANUP_SELF_HOSTED=moveBack times the throw-away
# kind cluster instead, CLEANUP_MANAGED=delete the workload cluster's delete through its management cluster)
grep -E '^\s*\[cleanup\] (cleanup: |leak check)' "$work/harness.log" | sed 's/^ */  /' | cut -c1-160 || true
echo "by hand (lifecycle-by-hand.sh), per step:"
sed -n '/per-step times/,$p' "$work/by-hand.log" | tail -n +2
printf 'harness: %.1fs\nby hand: %.1fs\n' "$h" "$b"
printf 'ratio: %.2f\n' "$(echo "$b / $h" | bc -l)"
rm -rf "$work"
