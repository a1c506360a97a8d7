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
