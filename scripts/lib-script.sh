# lib-script.sh: the start every long script shares. Source it right after
# `set -euo pipefail`, with the name its progress lines carry:
#   . "$(dirname "$0")/lib-script.sh" leases
# It moves to the repository root ($root), keeps Go on the local toolchain
# (no download: there is no internet on testbeds), and gives say (a line
# with the seconds since the script started) and die (a message, exit 1).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
t0=$(date +%s)
script_tag=$1
say() { echo "[$script_tag +$(( $(date +%s) - t0 ))s] $*"; }
die() { echo "$script_tag: $*" >&2; exit 1; }

# ctrl_c PID: SIGINT to the process group PID leads (a run started with
# `setsid cmd &`), as a terminal's Ctrl-C does. The group is read when the
# signal is sent: setsid makes the run's own group only once it runs, and
# read right after `&` on a loaded machine it was still the script's, whose
# background jobs ignore SIGINT; the Ctrl-C was lost and the run went on to
# pass (CI, 2026-11-29). A PID that leads no group of its own fails loudly.
ctrl_c() {
  local pgid; pgid=$(ps -o pgid= "$1" | tr -d ' ')
  [ "$pgid" = "$1" ] || { echo "$script_tag: process $1 leads no process group of its own (its group: '$pgid'): start it with setsid" >&2; return 1; }
  kill -INT -- "-$pgid"
}

# derive_image BASE REF KEY HOST:CONTAINER...: REF is the image BASE with
# each CONTAINER path replaced by the HOST file, labelled tkg-e2e.key=KEY
# (how the previous releases' images are made from the kit's: same layout,
# same user, one binary different). Its scratch container is named after
# the script's process; call derive_cleanup on exit.
derive_image() {
  local base=$1 ref=$2 key=$3 pair c=tkg-e2e-derive-$$; shift 3
  docker rm -f -v "$c" >/dev/null 2>&1 || true
  docker create --name "$c" "$base" >/dev/null
  for pair in "$@"; do docker cp "${pair%%:*}" "$c:${pair#*:}"; done
  docker commit --change "LABEL tkg-e2e.key=$key" "$c" "$ref" >/dev/null
  docker rm -f -v "$c" >/dev/null
  say "derived $ref from $base"
}
derive_cleanup() { docker rm -f -v "tkg-e2e-derive-$$" >/dev/null 2>&1 || true; }

# lock_cache CACHE WHAT: one build into CACHE at a time (fd 9, held until
# the script exits). Two at once (make testbed beside a CI run, seen here)
# removed each other's source folders mid-copy and both failed; the second
# waits, then finds the first's outputs up to date.
lock_cache() {
  mkdir -p "$(dirname "$1")"
  exec 9>"$1.lock"
  flock -n 9 || { say "waiting for another build of $2 (lock $1.lock)"; flock 9; }
}
