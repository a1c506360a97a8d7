#!/usr/bin/env bash
# Measures how fast a bad config is rejected: writes a copy of
# config/local.yaml with three mistakes (an unknown key, a malformed
# duration, a missing file), runs `harness validate` on it N times and
# prints the exit code, the problems it named and the slowest wall time.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
n=${N:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/config"
cp -r "$root/config/placement" "$root/config/packages" "$root/config/conformance" "$tmp/config/"
sed -e '0,/^    workerMachineCount: 1$/s//    workers: 1/' \
    -e 's|default/settle-after: \["20s", "2s"\]|default/settle-after: ["20", "2s"]|' \
    -e 's|matrix: placement/local.yaml|matrix: placement/nowhere.yaml|' \
    "$root/config/local.yaml" > "$tmp/config/bad.yaml"
(cd "$root" && go build -o "$tmp/harness" ./e2e/cmd/harness)
set +e
"$tmp/harness" validate -config "$tmp/config/bad.yaml" 2> "$tmp/err"; code=$?
set -e
echo "exit code: $code"; cat "$tmp/err"
max=0
for _ in $(seq "$n"); do
  s=$(date +%s%N)
  "$tmp/harness" validate -config "$tmp/config/bad.yaml" 2>/dev/null || true
  d=$(( ($(date +%s%N) - s) / 1000 ))
  [ "$d" -gt "$max" ] && max=$d
done
echo "validation of a config with 3 mistakes: slowest of $n runs ${max} µs (goal: under 2 s)"
