#!/usr/bin/env bash
# bench-flow.sh - the local lifecycle through the harness against the same steps typed by hand
# (scripts/lifecycle-by-hand.sh: kind, clusterctl, kubectl), back to back in one session on this machine,
# same images and cluster sizes (management 1+1, workload 1+1). Prints each side's per-step times, both
# totals, and last, alone, the line `ratio: <by-hand seconds / harness seconds>` (issue 12 asks the
# harness for at most 0.90 x by hand: ratio >= 1.11).
#
# The harness side is `make e2e FOCUS=workload` (bootstrap -> management -> move -> workload, with its
# checks, sample packages and the suite's own cleanup and leak checks); the by-hand side also cleans up.
#   ROUNDS=3           rounds of both sides, taking turns at going first (round 1 harness first unless
#                      ORDER=hand-first); prints each round, the medians and, last, the ratio of the medians.
#                      One round's by-hand side moved between 458 s and 488 s from run to run here, ratio
#                      1.10-1.16 with the harness steady at 416-422 s, so one round cannot settle a 1.11 goal.
#   ORDER=hand-first   the first round runs the by-hand flow first (default: harness first)
# Needs the kit's environment (. /var/cache/testbed/out/env.sh) and a Docker host with nothing else running.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
for v in KIND_NODE_IMAGE CLUSTERCTL_CONFIG CNI_MANIFEST KAPP_CONTROLLER_MANIFEST; do
  [ -n "${!v:-}" ] || { echo "missing \$$v: run '. /var/cache/testbed/out/env.sh' first" >&2; exit 2; }
done
. "$root/scripts/lib-bench.sh"
rounds=$(rounds_from "${ROUNDS:-3}")

work=$(mktemp -d /tmp/bench-flow.XXXX)
make -s "$root/bin/harness" "$root/bin/ginkgo" "$root/e2e/e2e.test" >/dev/null

harness() { # ROUND
  local s; s=$(date +%s.%N)
  make e2e FOCUS=workload ARTIFACTS="$work/harness-$1" >"$work/harness-$1.log" 2>&1 ||
    { echo "bench-flow: round $1: the harness run failed (see $work/harness-$1.log)" >&2; exit 1; }
  h[$1]=$(echo "$(date +%s.%N) - $s" | bc)
}
by_hand() { # ROUND
  local s; s=$(date +%s.%N)
  WL_WORKERS=1 bash scripts/lifecycle-by-hand.sh >"$work/by-hand-$1.log" 2>&1 ||
    { echo "bench-flow: round $1: the by-hand run failed (see $work/by-hand-$1.log)" >&2; exit 1; }
  b[$1]=$(echo "$(date +%s.%N) - $s" | bc)
}
report() { # ROUND : both sides' steps, as each round ends, so a long run shows its progress
  local r=$1
  echo "round $r of $rounds: harness (make e2e FOCUS=workload), per stage:"
  jq -r '.stages[] | "  \(.stage)\t\(.seconds)s"' "$work/harness-$r/timings.json" | column -t
  jq -r '.collectionSeconds | to_entries[] | "  collect \(.key)\t\(.value)s"' "$work/harness-$r/timings.json" | column -t
  # what is neither a stage nor collection: setup (validate, plan, BeforeSuite) and the suite's own cleanup,
  # which removes the self-hosted management cluster's containers by ID as the by-hand side does
  # (cleanup.selfHosted and cleanup.managed: removeContainers; CLEANUP_SELF_HOSTED=moveBack times the throw-away
  # kind cluster instead, CLEANUP_MANAGED=delete the workload cluster's delete through its management cluster)
  grep -E '^\s*\[cleanup\] (cleanup: |leak check)' "$work/harness-$r.log" | sed 's/^ */  /' | cut -c1-160 || true
  local steps; steps=$(sed -n '/per-step times/,$p' "$work/by-hand-$r.log" | tail -n +2)
  echo "round $r of $rounds: by hand (lifecycle-by-hand.sh), per step:"
  echo "$steps"
  printf 'round %d: harness %.1fs, by hand %.1fs, ratio %.2f (%s first)\n' "$r" "${h[$r]}" "${b[$r]}" \
    "$(echo "${b[$r]} / ${h[$r]}" | bc -l)" "$2"
  # Both sides install kapp-controller on the workload cluster (lifecycle-by-hand.sh does since a3101ea, as the
  # harness does); the same round without those steps on either side compares with rounds measured before that.
  hx[$r]=$(echo "${h[$r]} - $(steps_sum "$work/harness-$r.log" '^\s*\[workload\] step (load-images|kapp-controller) ' 4)" | bc)
  bx[$r]=$(echo "${b[$r]} - $(steps_sum - '^\s*workload-(load|kapp) ' 2 <<<"$steps")" | bc)
  printf 'round %d without the workload kapp-controller: harness %.1fs, by hand %.1fs, ratio %.2f\n' "$r" "${hx[$r]}" \
    "${bx[$r]}" "$(echo "${bx[$r]} / ${hx[$r]}" | bc -l)"
}
steps_sum() { # FILE REGEX FIELD : the seconds ("4.0s") in FIELD of the lines matching REGEX, summed
  { grep -E "$2" "$1" || true; } | awk -v f="$3" '{sub(/s$/, "", $f); t += $f} END {printf "%.1f", t + 0}'
}

declare -a h b hx bx
if [ "${ORDER:-}" = hand-first ]; then take_turns "$rounds" by_hand harness; else take_turns "$rounds" harness by_hand; fi

mh=$(median "${h[@]}") mb=$(median "${b[@]}")
times_line harness "${h[@]}"
times_line 'by hand' "${b[@]}"
mhx=$(median "${hx[@]}") mbx=$(median "${bx[@]}")
printf 'without the workload kapp-controller: harness median %.1fs, by hand median %.1fs, ratio %.2f\n' "$mhx" "$mbx" \
  "$(echo "$mbx / $mhx" | bc -l)"
printf 'ratio: %.2f\n' "$(echo "$mb / $mh" | bc -l)"
rm -rf "$work"
