#!/usr/bin/env bash
# Proves that Ctrl-C during a stage leaves nothing behind, in time.
#
#   INTERRUPT_STAGE=management (default): Ctrl-C while the management
#     cluster's machines are being provisioned (`make e2e FOCUS=management`).
#   INTERRUPT_STAGE=move: Ctrl-C during `clusterctl move` (`make e2e
#     FOCUS=move`), which leaves the source Cluster paused and objects on both
#     sides; the run must still end within MAX_EXIT_SECONDS (default 90) of the
#     signal, plus the deletes themselves.
#   INTERRUPT_PROFILE=vsphere-sim: the same Ctrl-C during management create
#     on the vSphere rehearsal (`make e2e-vsphere-sim FOCUS=management`: a
#     vcsim server, real CAPV, VMs booting as nodes): the harness deletes the
#     cluster through CAPV, and the rehearsal script's check from outside
#     (no VM, folder or pool in vcsim, no VM container, no network of the
#     run: outside-leak-check.txt in the run folder) must find nothing.
#     MAX_EXIT_SECONDS defaults to 600 there (CAPV deletes the VMs).
#
# Starts the run in its own process group, waits for the stage, sends SIGINT
# to the whole group as a terminal's Ctrl-C does, then checks that no
# container, docker network or kind cluster of the run remains (names from the
# run's state.json) and that the state file says cleanup is done.
#
# Needs Docker and the testbed images (make testbed; . /var/cache/testbed/out/env.sh).
set -euo pipefail
. "$(dirname "$0")/lib-script.sh" interrupt-test
stage=${INTERRUPT_STAGE:-management}
profile=${INTERRUPT_PROFILE:-local}
case $profile in
  local) max_exit=${MAX_EXIT_SECONDS:-90} ;;
  vsphere-sim) max_exit=${MAX_EXIT_SECONDS:-600}; [ "$stage" = management ] || { echo "interrupt-test: INTERRUPT_PROFILE=vsphere-sim takes INTERRUPT_STAGE=management" >&2; exit 2; } ;;
  *) echo "interrupt-test: INTERRUPT_PROFILE must be local or vsphere-sim" >&2; exit 2 ;;
esac
artifacts=$root/artifacts/interrupt-$profile-$stage-$(date -u +%Y%m%d-%H%M%S)
log=$artifacts.log

# The run's cluster names, from its state file (they may carry a run ID).
names() { jq -r '.resources[]? | select(.kind=="kind-cluster" or .kind=="capi-cluster") | .name' "$artifacts/state.json" 2>/dev/null | sort -u; }
leftovers() {
  local n
  for n in $(names); do
    docker ps -a --format '{{.Names}}' | grep -E "^${n}(-|$)" || true
    docker network ls --format '{{.Name}}' | grep -x "$n" || true
    kind get clusters 2>/dev/null | grep -x "$n" || true
  done
}

say "starting make e2e FOCUS=$stage (log: $log)"
if [ "$profile" = vsphere-sim ]; then
  FOCUS=$stage ARTIFACTS=$artifacts setsid make e2e-vsphere-sim >"$log" 2>&1 &
else
  setsid make e2e FOCUS="$stage" ARTIFACTS="$artifacts" >"$log" 2>&1 &
fi
pid=$!

deadline=$(( $(date +%s) + 1200 ))
wait_for() { # what, condition...
  local what=$1; shift
  say "waiting for $what"
  until "$@"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "interrupt-test: the run ended before $what; see $log" >&2
      exit 1
    fi
    [ "$(date +%s)" -lt "$deadline" ] || { echo "interrupt-test: timed out waiting for $what" >&2; ctrl_c "$pid"; exit 1; }
    sleep 2
  done
}
mgmt_containers() {
  local m; m=$(jq -r '.resources[]? | select(.kind=="capi-cluster" and .role=="management") | .name' "$artifacts/state.json" 2>/dev/null)
  [ -n "$m" ] || return 1
  if [ "$profile" = vsphere-sim ]; then # a VM of it powered on: vcsim runs a node container for it
    [ "$(docker ps --filter label=tkg-e2e.vcsim --format '{{.Names}}' | grep -c -- "$m")" -ge 1 ]
  else
    [ "$(docker ps --format '{{.Names}}' | grep -c "^${m}-")" -ge 2 ]
  fi
}
stage_running() { [ "$(jq -r ".stages.\"$stage\".status // empty" "$artifacts/state.json" 2>/dev/null)" = running ]; }
# The state records a started move (attributes.moving on the moved cluster,
# set just before clusterctl move, replaced by managedBy when it is done).
move_under_way() {
  stage_running && jq -e '[.resources[]? | select(.kind=="capi-cluster" and .role=="management") | .attributes.moving // empty] | length > 0' \
    "$artifacts/state.json" >/dev/null 2>&1
}
case "$stage" in
  # The load balancer comes first; wait for a node container too, so the
  # interrupt lands while machines are being provisioned.
  management) wait_for "the management cluster's containers (create under way)" mgmt_containers ;;
  # Inside `clusterctl move` itself: the source Cluster is paused by then.
  move) wait_for "clusterctl move to start" move_under_way ;;
  *) echo "interrupt-test: INTERRUPT_STAGE must be management or move" >&2; exit 2 ;;
esac
sleep "${INTERRUPT_AFTER:-3}"
say "run clusters: $(names | tr '\n' ' ')"
say "state before Ctrl-C: $(jq -c '[.stages | to_entries[] | {(.key): .value.status}] | add' "$artifacts/state.json")"
say "sending SIGINT to process group $pid (Ctrl-C)"
t_int=$(date +%s)
ctrl_c "$pid"
wait "$pid" || true
exit_secs=$(( $(date +%s) - t_int ))
say "run exited ${exit_secs}s after Ctrl-C"

left=$(leftovers)
if [ "$profile" = vsphere-sim ]; then
  if [ ! -f "$artifacts/outside-leak-check.txt" ]; then
    left+=$'\n'"the rehearsal script's check from outside did not run (no $artifacts/outside-leak-check.txt)"
  else
    left+=$'\n'$(cat "$artifacts/outside-leak-check.txt")
  fi
  left=$(echo "$left" | sed '/^$/d')
fi
cleanup_state=$(jq -r '.cleanup // "none"' "$artifacts/state.json")
say "state file cleanup: $cleanup_state"
say "$stage stage: $(jq -r ".stages.\"$stage\".status + \": \" + (.stages.\"$stage\".message // \"\" | .[0:160])" "$artifacts/state.json")"
grep -E '^\s*\[cleanup\] cleanup: ' "$log" | sed 's/^ */  /' || true
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
if [ "$exit_secs" -gt "$max_exit" ]; then
  echo "interrupt-test: FAILED, the run took ${exit_secs}s to exit after Ctrl-C (bound: ${max_exit}s)" >&2
  exit 1
fi
say "PASSED: Ctrl-C during $stage ($profile): exited in ${exit_secs}s (bound ${max_exit}s), nothing left behind (no container, network or kind cluster of the run), reports written"
