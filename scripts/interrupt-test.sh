#!/usr/bin/env bash
# Proves that Ctrl-C during management create leaves nothing behind.
#
# Starts `make e2e FOCUS=management` in its own process group, waits until the
# management cluster's CAPD containers exist (create is under way), sends
# SIGINT to the whole group as a terminal's Ctrl-C does, then checks that no
# container, docker network or kind cluster of the run remains and that the
# state file says cleanup is done. Prints each phase's time.
#
# Needs Docker and the testbed images (make testbed; . /var/cache/testbed/out/env.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
config=${CONFIG:-config/local.yaml}
kind_name=$(awk '/^  bootstrap:/{f=1} f&&/name:/{print $2; exit}' "$config")
mgmt_name=$(awk '/^  management:/{f=1} f&&/name:/{print $2; exit}' "$config")
prefix=${kind_name%%-kind}
artifacts=$root/artifacts/interrupt-$(date -u +%Y%m%d-%H%M%S)
log=$artifacts.log
t0=$(date +%s)
say() { echo "[interrupt-test +$(( $(date +%s) - t0 ))s] $*"; }

leftovers() {
  docker ps -a --format '{{.Names}}' | grep -E "^(${kind_name}|${mgmt_name})" || true
  docker network ls --format '{{.Name}}' | grep -E "^${prefix}" || true
  kind get clusters 2>/dev/null | grep -x "$kind_name" || true
}
if [ -n "$(leftovers)" ]; then
  echo "interrupt-test: something of a previous run exists already; clean it first:" >&2
  leftovers >&2
  exit 2
fi

say "starting make e2e FOCUS=management (log: $log)"
setsid make e2e FOCUS=management ARTIFACTS="$artifacts" >"$log" 2>&1 &
pid=$!
pgid=$(ps -o pgid= "$pid" | tr -d ' ')

say "waiting for the management cluster's containers (create under way)"
deadline=$(( $(date +%s) + 900 ))
# The load balancer comes first; wait for a node container too, so the
# interrupt lands while machines are being provisioned.
until [ "$(docker ps --format '{{.Names}}' | grep -c "^${mgmt_name}")" -ge 2 ]; do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "interrupt-test: the run ended before management create started; see $log" >&2
    exit 1
  fi
  [ "$(date +%s)" -lt "$deadline" ] || { echo "interrupt-test: timed out waiting for management create" >&2; kill -INT -- "-$pgid"; exit 1; }
  sleep 2
done
sleep "${INTERRUPT_AFTER:-5}"
say "management containers exist: $(docker ps --format '{{.Names}}' | grep "^${mgmt_name}" | tr '\n' ' ')"
say "state before Ctrl-C: $(jq -c '[.stages | to_entries[] | {(.key): .value.status}] | add' "$artifacts/state.json")"
say "sending SIGINT to process group $pgid (Ctrl-C)"
t_int=$(date +%s)
kill -INT -- "-$pgid"
wait "$pid" || true
say "run exited $(( $(date +%s) - t_int ))s after Ctrl-C"

left=$(leftovers)
cleanup_state=$(jq -r '.cleanup // "none"' "$artifacts/state.json")
say "state file cleanup: $cleanup_state"
say "management stage: $(jq -r '.stages.management.status + ": " + (.stages.management.message // "" | .[0:160])' "$artifacts/state.json")"
if [ -n "$left" ]; then
  echo "interrupt-test: FAILED, left behind:" >&2
  echo "$left" >&2
  exit 1
fi
case "$cleanup_state" in
  done*) ;;
  *) echo "interrupt-test: FAILED, the state file does not say cleanup is done" >&2; exit 1 ;;
esac
for f in SUMMARY.md junit.xml index.html; do
  [ -s "$artifacts/$f" ] || { echo "interrupt-test: FAILED, $f was not written" >&2; exit 1; }
done
say "PASSED: nothing left behind (no container, network or kind cluster of the run), reports written"
