#!/usr/bin/env bash
# bench-selfhosted.sh - the harness's move flow against Cluster API's own SelfHostedSpec
# (sigs.k8s.io/cluster-api/test/e2e v1.14.0, run by the suite in bench/selfhosted), back to back in one
# session on this machine, with the same images, template and sizes: a kind bootstrap cluster, a CAPD
# management cluster of 1 control plane + 1 worker (Kubernetes v1.33.1, flavor development), `clusterctl
# move` into itself. Prints each side's per-step times, both totals, and last, alone, the line
# `ratio: <SelfHostedSpec seconds / our seconds>` (issue 12).
#
# Our side is `make e2e FOCUS=move` (bootstrap -> management -> move, with its checks, kapp-controller and
# the sample packages, then the suite's own cleanup and leak checks: cleanup.selfHosted, removeContainers
# by default; CLEANUP_SELF_HOSTED=moveBack moves the cluster back into a throw-away kind cluster first, as
# SelfHostedSpec does). Their side is SelfHostedSpec as Cluster API's e2e suite runs it (local clusterctl
# repository, kind + images, clusterctl init, the spec with its fixed 3-minute wait after the move and its
# move back to the bootstrap cluster, the log dumps, the deletes), on the kit: see bench/selfhosted/ for
# what differs (cert-manager entry, CNI applied when the control plane is initialized, images loaded into
# the new cluster's nodes before its clusterctl init, no Kubernetes upgrade).
#   ORDER=capi-first   run SelfHostedSpec first (default: ours first)
#   KEEP=1             keep the work folder (logs, artifacts) after a successful run too
# Needs the kit's environment (. /var/cache/testbed/out/env.sh) and a Docker host with nothing else running.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
for v in KIND_NODE_IMAGE CLUSTERCTL_CONFIG CLUSTERCTL_REPOSITORY CAPD_TEMPLATE CNI_MANIFEST KAPP_CONTROLLER_MANIFEST; do
  [ -n "${!v:-}" ] || { echo "missing \$$v: run '. /var/cache/testbed/out/env.sh' first" >&2; exit 2; }
done
for c in jq bc column; do
  command -v "$c" >/dev/null || { echo "bench-selfhosted: $c is needed" >&2; exit 2; }
done
work=$(mktemp -d /tmp/bench-selfhosted.XXXX)
make -s "$root/bin/harness" "$root/bin/ginkgo" "$root/e2e/e2e.test" >/dev/null
# compile both suites once before timing, so neither side pays for it (ginkgo then finds them in the build cache)
(cd bench/selfhosted && go test -c -o "$work/selfhosted.test" . >/dev/null)
rm -f "$work/e2e.test" "$work/selfhosted.test"

failed() { # side, log
  echo "bench-selfhosted: $1 failed (see $2; work folder $work kept). Last lines:" >&2
  tail -n 40 "$2" | sed 's/^/  | /' >&2
  echo "bench-selfhosted: anything left over: kind get clusters; docker ps -a --filter label=io.x-k8s.kind.cluster" >&2
  exit 1
}
ours() {
  local s; s=$(date +%s.%N)
  make e2e FOCUS=move ARTIFACTS="$work/ours" >"$work/ours.log" 2>&1 || failed "our run (make e2e FOCUS=move)" "$work/ours.log"
  o=$(echo "$(date +%s.%N) - $s" | bc)
}
capi() {
  local s; s=$(date +%s.%N)
  mkdir -p "$work/capi"
  "$root/bin/ginkgo" -v --no-color --fail-on-empty --timeout=60m --poll-progress-after=5m --poll-progress-interval=2m \
    --output-dir="$work/capi" --json-report=ginkgo-report.json ./bench/selfhosted -- \
    -e2e.config="$root/bench/selfhosted/e2e-config.yaml" -e2e.artifacts-folder="$work/capi" \
    >"$work/capi.log" 2>&1 || failed "SelfHostedSpec (bench/selfhosted)" "$work/capi.log"
  c=$(echo "$(date +%s.%N) - $s" | bc)
}
if [ "${ORDER:-}" = capi-first ]; then capi; ours; else ours; capi; fi

echo "ours (make e2e FOCUS=move), per stage:"
jq -r '.stages[] | "  \(.stage)\t\(.seconds)s"' "$work/ours/timings.json" | column -t -s $'\t'
jq -r '.collectionSeconds | to_entries[] | "  collect \(.key)\t\(.value)s"' "$work/ours/timings.json" | column -t -s $'\t'
# what is neither a stage nor collection: setup (validate, plan, BeforeSuite) and the suite's own cleanup
grep -E '^\s*\[cleanup\] (cleanup: |leak check)' "$work/ours.log" | sed 's/^ */  /' | cut -c1-160 || true
echo "SelfHostedSpec (bench/selfhosted), per step (node, By() step, seconds until the next step):"
if [ -s "$work/capi/steps.tsv" ]; then
  sed 's/^/  /; s/\t\([0-9.]*\)$/\t\1s/' "$work/capi/steps.tsv" | column -t -s $'\t'
else
  echo "  (no steps.tsv in $work/capi)"
fi
echo "  (includes the spec's fixed 180 s wait after the move; without it: $(printf '%.1f' "$(echo "$c - 180" | bc -l)")s)"
if [ "${KEEP:-}" = 1 ]; then echo "work folder: $work"; else rm -rf "$work"; fi
printf 'ours: %.1fs\nSelfHostedSpec: %.1fs\n' "$o" "$c"
printf 'ratio: %.2f\n' "$(echo "$c / $o" | bc -l)"
