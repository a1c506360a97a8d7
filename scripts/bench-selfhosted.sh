#!/usr/bin/env bash
# bench-selfhosted.sh - the harness's move flow against Cluster API's own SelfHostedSpec
# (sigs.k8s.io/cluster-api/test/e2e v1.14.0, run by the suite in bench/selfhosted), back to back in one
# session on this machine, with the same images, template and sizes: a kind bootstrap cluster, a CAPD
# management cluster of 1 control plane + 1 worker (Kubernetes v1.33.1, flavor development), `clusterctl
# move` into itself, and back. Prints each round's per-step times and totals, then the medians of
# the rounds: both totals, SelfHostedSpec's without its fixed 3-minute wait after the move, both
# move-backs (ours: the cleanup's move into a throw-away kind cluster and the delete there, from
# state.json; theirs: the AfterEach node, which moves back and deletes), and last, alone, the line
# `ratio: <SelfHostedSpec seconds / our seconds>` of the medians (issues 12 and 30).
#
# Our side is `make e2e FOCUS=move` (bootstrap -> management -> move, with its checks, kapp-controller and
# the sample packages, then the suite's own cleanup and leak checks) with cleanup.selfHosted moveBack
# (CLEANUP_SELF_HOSTED, default moveBack here: the management cluster is moved back into a throw-away kind
# cluster and deleted there, the work SelfHostedSpec's AfterEach does; removeContainers times the
# local profile's default instead, and no move-back is printed). Their side is SelfHostedSpec as Cluster API's e2e suite runs it (local clusterctl
# repository, kind + images, clusterctl init, the spec with its fixed 3-minute wait after the move and its
# move back to the bootstrap cluster, the log dumps, the deletes), on the kit: see bench/selfhosted/ for
# what differs (cert-manager entry, CNI applied when the control plane is initialized, images loaded into
# the new cluster's nodes before its clusterctl init, no Kubernetes upgrade).
#   ROUNDS=3           rounds of both sides, taking turns at going first (round 1 ours first unless
#                      ORDER=capi-first); the goals are on the medians
#   ORDER=capi-first   the first round runs SelfHostedSpec first (default: ours first)
#   KEEP=1             keep the work folder (logs, artifacts) after a successful run too
# Needs the kit's environment (. /var/cache/testbed/out/env.sh) and a Docker host with nothing else running.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
for v in KIND_NODE_IMAGE CLUSTERCTL_CONFIG CLUSTERCTL_REPOSITORY CAPD_TEMPLATE CNI_MANIFEST KAPP_CONTROLLER_MANIFEST; do
  [ -n "${!v:-}" ] || { echo "missing \$$v: run '. /var/cache/testbed/out/env.sh' first" >&2; exit 2; }
done
for tool in jq bc column; do
  command -v "$tool" >/dev/null || { echo "bench-selfhosted: $tool is needed" >&2; exit 2; }
done
. "$root/scripts/lib-bench.sh"
rounds=$(rounds_from "${ROUNDS:-3}")
export CLEANUP_SELF_HOSTED=${CLEANUP_SELF_HOSTED:-moveBack}
# SelfHostedSpec's fixed wait after the move (time.Sleep in self_hosted.go, v1.14.0): nothing of ours waits
# for a set time, so the ratio is printed without it too.
fixed_wait=180
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
ours() { # ROUND
  local s; s=$(date +%s.%N)
  make e2e FOCUS=move ARTIFACTS="$work/ours-$1" >"$work/ours-$1.log" 2>&1 || failed "round $1: our run (make e2e FOCUS=move)" "$work/ours-$1.log"
  o[$1]=$(echo "$(date +%s.%N) - $s" | bc)
  # the management cluster's delete, as the cleanup recorded it: "-" when it was not moved back
  ob[$1]=$(jq -r '[.resources[] | select(.kind == "capi-cluster" and .role == "management" and
      ((.deleted.how // "") | startswith("moved back")))][0].deleted.seconds // "-"' "$work/ours-$1/state.json")
}
capi() { # ROUND
  local s d=$work/capi-$1; s=$(date +%s.%N)
  mkdir -p "$d"
  "$root/bin/ginkgo" -v --no-color --fail-on-empty --timeout=60m --poll-progress-after=5m --poll-progress-interval=2m \
    --output-dir="$d" --json-report=ginkgo-report.json ./bench/selfhosted -- \
    -e2e.config="$root/bench/selfhosted/e2e-config.yaml" -e2e.artifacts-folder="$d" \
    >"$d.log" 2>&1 || failed "round $1: SelfHostedSpec (bench/selfhosted)" "$d.log"
  c[$1]=$(echo "$(date +%s.%N) - $s" | bc)
  cb[$1]=$(awk -F'\t' '$1 == "AfterEach" && $2 == "(total)" {print $3; exit}' "$d/steps.tsv" 2>/dev/null)
  cb[$1]=${cb[$1]:--}
}
report() { # ROUND FIRST: both sides' steps, as each round ends, so a long run shows its progress
  local r=$1
  echo "round $r of $rounds: ours (make e2e FOCUS=move, cleanup.selfHosted $CLEANUP_SELF_HOSTED), per stage:"
  jq -r '.stages[] | "  \(.stage)\t\(.seconds)s"' "$work/ours-$r/timings.json" | column -t -s $'\t'
  jq -r '.collectionSeconds | to_entries[] | "  collect \(.key)\t\(.value)s"' "$work/ours-$r/timings.json" | column -t -s $'\t'
  # what is neither a stage nor collection: setup (validate, plan, BeforeSuite) and the suite's own cleanup
  grep -E '^\s*\[cleanup\] (cleanup: |leak check)' "$work/ours-$r.log" | sed 's/^ */  /' | cut -c1-160 || true
  echo "round $r of $rounds: SelfHostedSpec (bench/selfhosted), per step (node, By() step, seconds until the next step):"
  if [ -s "$work/capi-$r/steps.tsv" ]; then
    sed 's/^/  /; s/\t\([0-9.]*\)$/\t\1s/' "$work/capi-$r/steps.tsv" | column -t -s $'\t'
  else
    echo "  (no steps.tsv in $work/capi-$r)"
  fi
  printf 'round %d: ours %.1fs, SelfHostedSpec %.1fs (%.1fs without its fixed wait), ratio %.2f (%.2f without the wait); move-back: ours %ss, theirs %ss (%s first)\n' \
    "$r" "${o[$r]}" "${c[$r]}" "$(echo "${c[$r]} - $fixed_wait" | bc)" "$(echo "${c[$r]} / ${o[$r]}" | bc -l)" \
    "$(echo "(${c[$r]} - $fixed_wait) / ${o[$r]}" | bc -l)" "${ob[$r]}" "${cb[$r]}" "$2"
}

declare -a o c ob cb
if [ "${ORDER:-}" = capi-first ]; then take_turns "$rounds" capi ours; else take_turns "$rounds" ours capi; fi

mo=$(median "${o[@]}") mc=$(median "${c[@]}")
times_line ours "${o[@]}"
times_line SelfHostedSpec "${c[@]}"
# "-": a round without a move-back (removeContainers) or without their steps.tsv
[[ " ${ob[*]} " == *" - "* ]] || times_line 'move-back, ours (throw-away kind cluster, clusterctl init, move, delete)' "${ob[@]}"
[[ " ${cb[*]} " == *" - "* ]] || times_line "move-back, SelfHostedSpec's AfterEach (move to its bootstrap cluster, delete)" "${cb[@]}"
printf 'ratio without the fixed %ss wait: %.2f\n' "$fixed_wait" "$(echo "($mc - $fixed_wait) / $mo" | bc -l)"
if [ "${KEEP:-}" = 1 ]; then echo "work folder: $work"; else rm -rf "$work"; fi
printf 'ratio: %.2f\n' "$(echo "$mc / $mo" | bc -l)"
