#!/usr/bin/env bash
# Shared Docker hosts (issue 10): two `make e2e FOCUS=bootstrap` runs at once,
# each with its own ARTIFACTS folder, and beside each run's kind cluster a
# decoy container labelled exactly like one of its nodes, which the run did
# not make. Run A cleans up as a run does; run B starts STAGGER seconds later,
# keeps its cluster (SKIP_CLEANUP=1) and is then cleaned by `make clean-run`.
# One pair of runs proves what used to take four (this script and
# test-decoy.sh); every check of both is here. Needs Docker and the testbed
# (busybox:1.35.0 is one of its images).
#
# Checks:
#   - the two runs get different cluster names (tkg-e2e-kind-<short>: the run
#     folders are named like run IDs, so the short IDs are known in advance)
#   - while run A holds its folder, `bin/harness cleanup -artifacts <A>`
#     exits non-zero with "is in use by pid" and A's node is still there
#   - when run A ends (its cleanup done), B's containers (recorded in its
#     state, or labelled with its kind cluster) all still exist: B keeps its
#     cluster, so it is never cleaning up at that moment
#   - both runs pass; neither run's console mentions the other's cluster
#   - A: state.json says "done: nothing left", its node is gone, its decoy
#     survived and its console says the decoy was left alone; a `make
#     clean-run` afterwards passes and leaves the decoy
#   - B: its kind cluster is named after its short ID and its container IDs
#     are recorded; the decoy survived the kept run; `make clean-run` passes
#     (its leak check counts no decoy), removes B's node, leaves the decoy
#     and reports it as "not this run's ... left alone"
#   - nothing of either run is left; the wall time of each run is printed
#
# Usage: scripts/test-concurrent-runs.sh   (exit 0: all passed)
#   RUN_TIMEOUT=45m  bound on each make e2e;  STAGGER=20  seconds between the starts
#   (short enough that B's node exists before A, a bootstrap of 60-110 s,
#   cleans up: with 60 A once ended first beside another section, and the
#   check of B's containers had nothing to check)
#   ARTIFACTS_ROOT   where the run folders go (default artifacts/)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
RUN_TIMEOUT=${RUN_TIMEOUT:-45m}
STAGGER=${STAGGER:-20}
IMAGE=busybox:1.35.0
ARTIFACTS_ROOT=${ARTIFACTS_ROOT:-$repo/artifacts}
LABEL=io.x-k8s.kind.cluster
unset KIND_CLUSTER_NAME MANAGEMENT_CLUSTER_NAME WORKLOAD_CLUSTER_NAME UNIQUE_CLUSTER_NAMES

fails=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
log() { echo "[$(date -u +%H:%M:%S)] $*"; }

declare -A pid folder cluster out start end rc decoy
cleanup() {
  local code=$? r
  for r in a b; do
    if [ -n "${pid[$r]:-}" ] && kill -0 "${pid[$r]}" 2>/dev/null; then
      log "stopping run $r (pid ${pid[$r]})"
      kill -INT -- "-${pid[$r]}" 2>/dev/null || kill -INT "${pid[$r]}" 2>/dev/null || true
    fi
  done
  for r in a b; do
    [ -n "${pid[$r]:-}" ] && wait "${pid[$r]}" 2>/dev/null || true
  done
  for r in a b; do
    [ -z "${cluster[$r]:-}" ] || docker rm -f "${cluster[$r]}-decoy" >/dev/null 2>&1 || true
  done
  for r in a b; do
    local f=${folder[$r]:-}
    if [ -n "$f" ] && [ -f "$f/state.json" ] && grep -q '"state": "\(ready\|creating\)"' "$f/state.json"; then
      log "cleaning what run $r left ($f)"
      timeout 10m make -s clean-run ARTIFACTS="$f" || true
    fi
  done
  exit $code
}
trap cleanup EXIT
trap 'exit 130' INT TERM

command -v docker >/dev/null || { echo "docker is required"; exit 2; }
docker info >/dev/null 2>&1 || { echo "docker does not answer"; exit 2; }
docker image inspect "$IMAGE" >/dev/null 2>&1 || { echo "$IMAGE is not present locally (make testbed)"; exit 2; }
go build -o bin/harness ./e2e/cmd/harness # the third process; make e2e builds the same binary

new_folder() {
  local short
  short=c$(LC_ALL=C tr -dc 'a-z0-9' </dev/urandom | head -c4)
  echo "$ARTIFACTS_ROOT/$(date -u +%Y%m%d-%H%M%S)-$short"
}
node_ids() { docker ps -aq --no-trunc --filter "label=$LABEL=$1" --filter "label=io.x-k8s.kind.role" | sort; }
# recorded <folder>: the container IDs the run recorded in its state
recorded() { { grep -o '"containers": "[^"]*"' "$1/state.json" 2>/dev/null | grep -o '=[0-9a-f]\{64\}' | tr -d = | sort -u; } || true; }
alive() { kill -0 "$1" 2>/dev/null; }
decoy_alive() { [ "$(docker inspect -f '{{.State.Running}}' "$1-decoy" 2>/dev/null)" = true ]; }
# plant_decoys: beside each run's kind cluster, once the run has recorded its
# node (not earlier: kind lists a cluster's nodes by label while it creates
# it, and would take the decoy for a node), a container labelled like the
# node that the run did not make.
plant_decoys() {
  local r
  for r in a b; do
    [ -z "${decoy[$r]:-}" ] || continue
    grep -q "\"containers\": \"${cluster[$r]}-control-plane=" "${folder[$r]}/state.json" 2>/dev/null || continue
    docker run -d --label "$LABEL=${cluster[$r]}" --name "${cluster[$r]}-decoy" "$IMAGE" sleep 3600 >/dev/null
    decoy[$r]=1
    log "decoy ${cluster[$r]}-decoy started beside run $r's node"
  done
}

for r in a b; do
  folder[$r]=$(new_folder)
  while [ "$r" = b ] && [ "${folder[b]##*-}" = "${folder[a]##*-}" ]; do folder[b]=$(new_folder); done
  cluster[$r]=tkg-e2e-kind-${folder[$r]##*-}
  out[$r]=$(mktemp)
done
[ "${cluster[a]}" != "${cluster[b]}" ] && pass "the runs' kind clusters differ: ${cluster[a]}, ${cluster[b]}" || fail "same cluster name"

# A cleans up as a run does; B keeps its cluster for make clean-run.
for r in a b; do
  [ "$r" = b ] && [ "$STAGGER" -gt 0 ] && sleep "$STAGGER"
  keep=()
  [ "$r" = b ] && keep=(SKIP_CLEANUP=1)
  log "starting run $r: ${folder[$r]} (kind cluster ${cluster[$r]}${keep:+, kept})"
  start[$r]=$(date +%s)
  setsid timeout -s INT -k 2m "$RUN_TIMEOUT" make -s e2e FOCUS=bootstrap ARTIFACTS="${folder[$r]}" "${keep[@]}" >"${out[$r]}" 2>&1 &
  pid[$r]=$!
  plant_decoys
done

# The lock: once A has recorded its kind cluster, a third process must be refused.
locked=
for _ in $(seq 1 300); do
  plant_decoys
  if [ -n "$(recorded "${folder[a]}")" ]; then
    before=$(node_ids "${cluster[a]}")
    lrc=0
    lout=$(timeout 2m bin/harness cleanup -artifacts "${folder[a]}" 2>&1) || lrc=$?
    if alive "${pid[a]}"; then
      locked=1
      if [ $lrc -ne 0 ] && grep -q "is in use by pid" <<<"$lout"; then
        pass "harness cleanup refused run A's folder while A runs: $(head -1 <<<"$lout")"
      else
        fail "harness cleanup on run A's folder while A runs exited $lrc: $lout"
      fi
      [ "$(node_ids "${cluster[a]}")" = "$before" ] && pass "run A's node is untouched by the refused cleanup" ||
        fail "run A's containers changed under the refused cleanup"
    fi
    break
  fi
  alive "${pid[a]}" || break
  sleep 2
done
[ -n "$locked" ] || fail "could not try the lock: run A ended or never recorded its cluster"

# Sample B's recorded IDs while both run; when A ends (its cleanup done),
# every one of them must still be there.
seen=
while alive "${pid[a]}"; do
  plant_decoys
  # What B recorded, and its kind node by label: B, started STAGGER seconds
  # later, may still be inside kind create (its node container exists, its
  # state file does not name it yet).
  ids=$( { recorded "${folder[b]}"; node_ids "${cluster[b]}"; } | sort -u | sed '/^$/d')
  [ -z "$ids" ] || seen=$(sort -u <(echo "$seen") <(echo "$ids") | sed '/^$/d')
  sleep 2
done
rc[a]=0
wait "${pid[a]}" || rc[a]=$?
end[a]=$(date +%s)
if alive "${pid[b]}" || [ -n "$seen" ]; then
  missing=$(comm -23 <(echo "$seen" | sed '/^$/d') <(docker ps -aq --no-trunc | sort))
  if [ -n "$seen" ] && [ -z "$missing" ]; then
    pass "after run A's cleanup, run B's recorded containers are all there ($(echo "$seen" | wc -l))"
  else
    fail "after run A's cleanup, run B lost containers: ${missing:-none recorded or labelled yet}"
  fi
fi
# B, started later, may record its node only now.
while alive "${pid[b]}"; do plant_decoys; sleep 2; done
rc[b]=0
wait "${pid[b]}" || rc[b]=$?
end[b]=$(date +%s)
pid[a]= pid[b]=

for r in a b; do
  o=b
  [ "$r" = b ] && o=a
  secs=$((end[$r] - start[$r]))
  printf 'run %s: %s, exit %s, wall time %dm%02ds\n' "$r" "${folder[$r]}" "${rc[$r]}" $((secs / 60)) $((secs % 60))
  [ "${rc[$r]}" -eq 0 ] && pass "run $r passed" || { fail "run $r exited ${rc[$r]}"; tail -40 "${out[$r]}"; }
  ! grep -q "${cluster[$o]}" "${folder[$r]}/console.log" && pass "run $r never mentions run $o's cluster" ||
    fail "run $r's console mentions ${cluster[$o]}: $(grep -m3 "${cluster[$o]}" "${folder[$r]}/console.log")"
  [ -n "${decoy[$r]:-}" ] || fail "run $r: no decoy was planted (its node was never recorded)"
  decoy_alive "${cluster[$r]}" && pass "run $r: the decoy survived the run" || fail "run $r: the decoy is gone after the run"
  rm -f "${out[$r]}"
done

# A: cleaned up by the run itself, the decoy left alone.
grep -q '"cleanup": "done: nothing left"' "${folder[a]}/state.json" && pass "A: state.json says done: nothing left" ||
  fail "A: cleanup outcome: $(grep '"cleanup"' "${folder[a]}/state.json" || echo none)"
[ -z "$(node_ids "${cluster[a]}")" ] && pass "A: the run's cleanup removed its node" || fail "A: the run's node is still there"
grep -q "${cluster[a]}-decoy.*left alone" "${folder[a]}/console.log" && pass "A: the run reported the decoy as left alone" ||
  fail "A: the run's console.log does not report the decoy"
crc=0
cout=$(timeout 10m make -s clean-run ARTIFACTS="${folder[a]}" 2>&1) || crc=$?
[ $crc -eq 0 ] && decoy_alive "${cluster[a]}" && pass "A: make clean-run afterwards passes and leaves the decoy" ||
  { fail "A: make clean-run afterwards exited $crc or removed the decoy"; echo "$cout"; }

# B: kept, then cleaned by make clean-run, the decoy left alone.
grep -q "\"name\": \"${cluster[b]}\"" "${folder[b]}/state.json" && pass "B: the run's kind cluster is named ${cluster[b]} (its short ID)" ||
  fail "B: state.json has no kind cluster ${cluster[b]}"
grep -q '"containers": "' "${folder[b]}/state.json" && pass "B: the kind cluster's container IDs are recorded" ||
  fail "B: no container IDs recorded in state.json"
[ -n "$(node_ids "${cluster[b]}")" ] && pass "B: the kept run's node is still there" || fail "B: the kept run's node is gone"
crc=0
cout=$(timeout 15m make -s clean-run ARTIFACTS="${folder[b]}" 2>&1) || crc=$?
echo "$cout" | sed 's/^/  clean-run B: /'
[ $crc -eq 0 ] && pass "B: make clean-run passed (its leak check counts no decoy)" || fail "B: make clean-run exited $crc"
decoy_alive "${cluster[b]}" && pass "B: the decoy survived make clean-run" || fail "B: make clean-run removed the decoy"
[ -z "$(node_ids "${cluster[b]}")" ] && pass "B: make clean-run removed the run's node" || fail "B: the run's node is still there: $(node_ids "${cluster[b]}")"
grep -q "${cluster[b]}-decoy.*not this run's.*left alone" <<<"$cout" && pass "B: make clean-run reported the decoy as not the run's" ||
  fail "B: make clean-run did not report the decoy"

for r in a b; do
  docker rm -f "${cluster[$r]}-decoy" >/dev/null 2>&1 || true
  [ -z "$(docker ps -aq --filter "label=$LABEL=${cluster[$r]}")" ] && pass "nothing of run $r is left on the docker host" ||
    fail "run $r left: $(docker ps -a --filter "label=$LABEL=${cluster[$r]}" --format '{{.Names}}')"
done
echo "$fails check(s) failed"
[ $fails -eq 0 ]
