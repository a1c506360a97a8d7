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
