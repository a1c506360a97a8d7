#!/usr/bin/env bash
# A container labelled exactly like a run's kind cluster, that the run did not
# make, must survive the run's cleanup and `make clean-run`, and be reported
# as "not this run's ... left alone" (issue 10). Needs Docker and the testbed
# (busybox:1.35.0 is one of its images); takes two `make e2e FOCUS=bootstrap`
# runs (about 2 x 5 minutes on the CI machines).
#
#   1. run A (SKIP_CLEANUP=1): once its kind cluster exists (the run recorded
#      its container IDs in state.json), a decoy
#      `docker run -d --label io.x-k8s.kind.cluster=<A's kind cluster>
#      --name <A's kind cluster>-decoy busybox:1.35.0 sleep 3600` is started;
#      after the run the decoy is there; then `make clean-run ARTIFACTS=<A>`
#      removes A's node, leaves the decoy, says so, and passes its leak check.
#   2. run B (normal cleanup), with a decoy started the same way: after the
#      run the decoy is there, B's node is gone, the state says "done: nothing left".
#
# The cluster names are predictable without an overrides file: the run folder
# is named like a run ID (<UTC time>-<short>), so the run's short ID is <short>
# and the default names are tkg-e2e-kind-<short> (clusters.uniqueNames).
#
# Usage: scripts/test-decoy.sh            (exit 0: all passed)
#   ONLY=a|b         run one part only
#   RUN_TIMEOUT=40m  bound on each make e2e
#   ARTIFACTS_ROOT   where the run folders go (default artifacts/)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
RUN_TIMEOUT=${RUN_TIMEOUT:-40m}
ARTIFACTS_ROOT=${ARTIFACTS_ROOT:-$repo/artifacts}
ONLY=${ONLY:-}
IMAGE=busybox:1.35.0
LABEL=io.x-k8s.kind.cluster
# The profile's names come from these when set: the test needs the defaults.
unset KIND_CLUSTER_NAME MANAGEMENT_CLUSTER_NAME WORKLOAD_CLUSTER_NAME UNIQUE_CLUSTER_NAMES

fails=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
log() { echo "[$(date -u +%H:%M:%S)] $*"; }

decoys=() runpid= folders=()
cleanup() {
  local rc=$?
  if [ -n "$runpid" ] && kill -0 "$runpid" 2>/dev/null; then
    log "stopping the run (pid $runpid)"
    kill -INT -- "-$runpid" 2>/dev/null || kill -INT "$runpid" 2>/dev/null || true
    wait "$runpid" 2>/dev/null || true
  fi
  for d in "${decoys[@]}"; do docker rm -f "$d" >/dev/null 2>&1 || true; done
  # Anything a failed check left of the test's own runs.
  for f in "${folders[@]}"; do
    if [ -f "$f/state.json" ] && grep -q '"state": "\(ready\|creating\)"' "$f/state.json"; then
      log "cleaning what run $f left"
      timeout 10m make -s clean-run ARTIFACTS="$f" || true
    fi
  done
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

command -v docker >/dev/null || { echo "docker is required"; exit 2; }
docker info >/dev/null 2>&1 || { echo "docker does not answer"; exit 2; }
docker image inspect "$IMAGE" >/dev/null 2>&1 || { echo "$IMAGE is not present locally (make testbed)"; exit 2; }

new_folder() { # a run folder named like a run ID, with a short ID of our own
  local short
  short=d$(LC_ALL=C tr -dc 'a-z0-9' </dev/urandom | head -c4)
  echo "$ARTIFACTS_ROOT/$(date -u +%Y%m%d-%H%M%S)-$short"
}

# node_ids <cluster>: IDs of the kind/CAPD containers (role label) of a cluster
node_ids() { docker ps -aq --no-trunc --filter "label=$LABEL=$1" --filter "label=io.x-k8s.kind.role"; }

# start_run <folder> <log> [make args...]: make e2e FOCUS=bootstrap in the background
start_run() {
  local folder=$1 out=$2
  shift 2
  folders+=("$folder")
  # setsid: the run and its children are one process group the trap can stop.
  setsid timeout -s INT -k 2m "$RUN_TIMEOUT" \
    make -s e2e FOCUS=bootstrap ARTIFACTS="$folder" "$@" >"$out" 2>&1 &
  runpid=$!
}

# plant_decoy <folder> <kind cluster>: once the run has created its kind
# cluster and recorded its containers, start the decoy beside them. (Not
# earlier: kind itself lists a cluster's nodes by label while it creates it,
# and would take the decoy for a node.)
plant_decoy() {
  local folder=$1 cluster=$2 i
  for i in $(seq 1 300); do # up to 10 minutes
    if grep -q "\"containers\": \"$cluster-control-plane=" "$folder/state.json" 2>/dev/null; then
      docker run -d --label "$LABEL=$cluster" --name "$cluster-decoy" "$IMAGE" sleep 3600 >/dev/null
      decoys+=("$cluster-decoy")
      log "decoy $cluster-decoy started beside the run's node ($(docker ps -a --filter "label=$LABEL=$cluster" --format '{{.Names}}' | tr '\n' ' '))"
      return 0
    fi
    kill -0 "$runpid" 2>/dev/null || { log "the run ended before its kind cluster was recorded"; return 1; }
    sleep 2
  done
  log "kind cluster $cluster not recorded after 10 minutes"
  return 1
}

decoy_alive() { [ "$(docker inspect -f '{{.State.Running}}' "$1-decoy" 2>/dev/null)" = true ]; }

part_a() {
  local folder out short cluster rc
  folder=$(new_folder)
  short=${folder##*-}
  cluster=tkg-e2e-kind-$short
  out=$(mktemp)
  log "part A: run $folder (SKIP_CLEANUP=1), kind cluster $cluster"
  start_run "$folder" "$out" SKIP_CLEANUP=1
  plant_decoy "$folder" "$cluster" || fail "could not plant the decoy"
  rc=0
  wait "$runpid" || rc=$?
  runpid=
  [ $rc -eq 0 ] && pass "A: make e2e FOCUS=bootstrap SKIP_CLEANUP=1 passed" || { fail "A: make e2e exited $rc"; tail -40 "$out"; }
  grep -q "\"name\": \"$cluster\"" "$folder/state.json" && pass "A: the run's kind cluster is named $cluster (its short ID)" ||
    fail "A: state.json has no kind cluster $cluster"
  grep -q '"containers": "' "$folder/state.json" && pass "A: the kind cluster's container IDs are recorded" ||
    fail "A: no container IDs recorded in state.json"
  decoy_alive "$cluster" && pass "A: the decoy survived the kept run" || fail "A: the decoy is gone after the kept run"

  local cout crc=0
  cout=$(timeout 15m make -s clean-run ARTIFACTS="$folder" 2>&1) || crc=$?
  echo "$cout" | sed 's/^/  clean-run: /'
  [ $crc -eq 0 ] && pass "A: make clean-run passed (its leak check counts no decoy)" || fail "A: make clean-run exited $crc"
  decoy_alive "$cluster" && pass "A: the decoy survived make clean-run" || fail "A: make clean-run removed the decoy"
  [ -z "$(node_ids "$cluster")" ] && pass "A: make clean-run removed the run's node" || fail "A: the run's node is still there: $(node_ids "$cluster")"
  grep -q "$cluster-decoy.*not this run's.*left alone" <<<"$cout" && pass "A: make clean-run reported the decoy as not the run's" ||
    fail "A: make clean-run did not report the decoy"
  docker rm -f "$cluster-decoy" >/dev/null
  rm -f "$out"
}

part_b() {
  local folder out short cluster rc
  folder=$(new_folder)
  short=${folder##*-}
  cluster=tkg-e2e-kind-$short
  out=$(mktemp)
  log "part B: run $folder (normal cleanup), kind cluster $cluster"
  start_run "$folder" "$out"
  plant_decoy "$folder" "$cluster" || fail "could not plant the decoy"
  rc=0
  wait "$runpid" || rc=$?
  runpid=
  [ $rc -eq 0 ] && pass "B: make e2e FOCUS=bootstrap passed with the decoy beside its cluster" || { fail "B: make e2e exited $rc"; tail -40 "$out"; }
  decoy_alive "$cluster" && pass "B: the decoy survived the run's cleanup" || fail "B: the run's cleanup removed the decoy"
  [ -z "$(node_ids "$cluster")" ] && pass "B: the run's cleanup removed its node" || fail "B: the run's node is still there"
  grep -q '"cleanup": "done: nothing left"' "$folder/state.json" && pass "B: state.json says done: nothing left" ||
    fail "B: cleanup outcome: $(grep '"cleanup"' "$folder/state.json" || echo none)"
  grep -q "$cluster-decoy.*left alone" "$folder/console.log" && pass "B: the run reported the decoy as left alone" ||
    fail "B: the run's console.log does not report the decoy"
  local cout crc=0
  cout=$(timeout 10m make -s clean-run ARTIFACTS="$folder" 2>&1) || crc=$?
  [ $crc -eq 0 ] && decoy_alive "$cluster" && pass "B: make clean-run afterwards passes and leaves the decoy" ||
    { fail "B: make clean-run afterwards exited $crc or removed the decoy"; echo "$cout"; }
  docker rm -f "$cluster-decoy" >/dev/null
  rm -f "$out"
}

[ "$ONLY" = b ] || part_a
[ "$ONLY" = a ] || part_b
echo "$fails check(s) failed"
[ $fails -eq 0 ]
