# lib-bench.sh: what the benchmark scripts share. Source it after
# `set -euo pipefail`. Goals are set on medians of several rounds: one
# round of either side moved by 5-8 % from run to run here.
#
# median N...: the median of the numbers (the mean of the middle two for
# an even count).
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
# rounds_from ROUNDS: ROUNDS checked as a whole number >= 1, or exit 2.
rounds_from() {
  [[ "$1" =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS=$1: want a whole number of rounds >= 1" >&2; exit 2; }
  echo "$1"
}
# take_turns ROUNDS A B: ROUNDS rounds of both sides, each round's first
# the other side than the round before (A in round 1): `A r`, `B r`, then
# `report r FIRST`, which the script defines, so a long run shows each
# round as it ends. Whichever goes first finds a quieter Docker host.
# Its locals start with _: bash scopes dynamically, so a local b here was
# the array bench-flow's by_hand fills (b[round]=...), and the global one
# stayed empty: its medians read 0 (2026-11-29).
take_turns() {
  local _n=$1 _a=$2 _b=$3 _r _t
  for ((_r = 1; _r <= _n; _r++)); do
    "$_a" "$_r"; "$_b" "$_r"; report "$_r" "$_a"
    _t=$_a _a=$_b _b=$_t
  done
}
# times_line LABEL N...: "LABEL: 1.0s 3.0s 2.0s (median 2.0s)"
times_line() { local l=$1; shift; printf '%s: %s(median %.1fs)\n' "$l" "$(printf '%.1fs ' "$@")" "$(median "$@")"; }
