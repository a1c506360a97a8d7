#!/usr/bin/env bash
# Two `make e2e FOCUS=bootstrap` runs at once on one Docker host, each with its
# own ARTIFACTS folder (issue 10): both pass, each one's cleanup leaves the
# other's cluster untouched, and a third process cannot clean a run folder
# while its run holds the lock. Needs Docker and the testbed; about as long
# as one bootstrap run plus the slowdown of two at once.
#
# Checks:
#   - the two runs get different cluster names (tkg-e2e-kind-<short>: the run
#     folders are named like run IDs, so the short IDs are known in advance)
#   - while run A holds its folder, `bin/harness cleanup -artifacts <A>`
#     exits non-zero with "is in use by pid" and A's node is still there
#   - when the first run ends (its cleanup done), the other run's containers
#     (recorded in its state, or labelled with its kind cluster) all still exist, if that run is not cleaning up yet (STAGGER
#     makes this certain: B starts STAGGER seconds after A; default 0, the
#     runs start together and the check is skipped when they end together)
#   - both runs pass; each state.json says "done: nothing left"; neither
#     run's console mentions the other's cluster; nothing of either is left
#   - the wall time of each run is printed
#
# Usage: scripts/test-concurrent-runs.sh   (exit 0: all passed)
#   RUN_TIMEOUT=45m  bound on each make e2e;  STAGGER=0  seconds between the starts
#   ARTIFACTS_ROOT   where the run folders go (default artifacts/)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
RUN_TIMEOUT=${RUN_TIMEOUT:-45m}
STAGGER=${STAGGER:-0}
ARTIFACTS_ROOT=${ARTIFACTS_ROOT:-$repo/artifacts}
LABEL=io.x-k8s.kind.cluster
unset KIND_CLUSTER_NAME MANAGEMENT_CLUSTER_NAME WORKLOAD_CLUSTER_NAME UNIQUE_CLUSTER_NAMES

fails=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
log() { echo "[$(date -u +%H:%M:%S)] $*"; }

declare -A pid folder cluster out start end rc
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

for r in a b; do
  folder[$r]=$(new_folder)
  while [ "$r" = b ] && [ "${folder[b]##*-}" = "${folder[a]##*-}" ]; do folder[b]=$(new_folder); done
  cluster[$r]=tkg-e2e-kind-${folder[$r]##*-}
  out[$r]=$(mktemp)
done
[ "${cluster[a]}" != "${cluster[b]}" ] && pass "the runs' kind clusters differ: ${cluster[a]}, ${cluster[b]}" || fail "same cluster name"

for r in a b; do
  [ "$r" = b ] && [ "$STAGGER" -gt 0 ] && sleep "$STAGGER"
  log "starting run $r: ${folder[$r]} (kind cluster ${cluster[$r]})"
  start[$r]=$(date +%s)
  setsid timeout -s INT -k 2m "$RUN_TIMEOUT" make -s e2e FOCUS=bootstrap ARTIFACTS="${folder[$r]}" >"${out[$r]}" 2>&1 &
  pid[$r]=$!
done

# The lock: once A has recorded its kind cluster, a third process must be refused.
locked=
for _ in $(seq 1 300); do
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

# Whichever ends first: the other's recorded containers must all still be there.
# Sample the other's recorded IDs while both run.
declare -A seen
first=
while [ -z "$first" ]; do
  # What the run recorded, and its kind node by label: a run that started
  # STAGGER seconds later may still be inside kind create (its node container
  # exists, its state file does not name it yet) when the first one ends.
  for r in a b; do
    ids=$( { recorded "${folder[$r]}"; node_ids "${cluster[$r]}"; } | sort -u | sed '/^$/d')
    [ -n "$ids" ] && seen[$r]=$(sort -u <(echo "${seen[$r]:-}") <(echo "$ids") | sed '/^$/d')
  done
  for r in a b; do
    if ! alive "${pid[$r]}"; then first=$r; break; fi
  done
  [ -n "$first" ] || sleep 2
done
other=a
[ "$first" = a ] && other=b
rc[$first]=0
wait "${pid[$first]}" || rc[$first]=$?
end[$first]=$(date +%s)
# The other run must not have begun its own teardown: its AfterSuite starts
# before its state file says anything was deleted.
if alive "${pid[$other]}" && ! grep -q '"cleanup": "' "${folder[$other]}/state.json" 2>/dev/null &&
  ! grep -q '"state": "deleted"' "${folder[$other]}/state.json" && ! grep -q '\[AfterSuite\]' "${out[$other]}" 2>/dev/null; then
  missing=$(comm -23 <(echo "${seen[$other]:-}" | sed '/^$/d') <(docker ps -aq --no-trunc | sort))
  if [ -n "${seen[$other]:-}" ] && [ -z "$missing" ]; then
    pass "after run $first ended, run $other's recorded containers are all there ($(echo "${seen[$other]}" | wc -l))"
  else
    fail "after run $first ended, run $other lost containers: ${missing:-none recorded or labelled yet}"
  fi
else
  echo "SKIP the between check: run $other was already cleaning up or done when run $first ended (STAGGER=120 makes it certain)"
fi
rc[$other]=0
wait "${pid[$other]}" || rc[$other]=$?
end[$other]=$(date +%s)
pid[a]= pid[b]=

for r in a b; do
  o=b
  [ "$r" = b ] && o=a
  secs=$((end[$r] - start[$r]))
  printf 'run %s: %s, exit %s, wall time %dm%02ds\n' "$r" "${folder[$r]}" "${rc[$r]}" $((secs / 60)) $((secs % 60))
  [ "${rc[$r]}" -eq 0 ] && pass "run $r passed" || { fail "run $r exited ${rc[$r]}"; tail -40 "${out[$r]}"; }
  grep -q '"cleanup": "done: nothing left"' "${folder[$r]}/state.json" && pass "run $r: done: nothing left" ||
    fail "run $r cleanup: $(grep '"cleanup"' "${folder[$r]}/state.json" || echo none)"
  ! grep -q "${cluster[$o]}" "${folder[$r]}/console.log" && pass "run $r never mentions run $o's cluster" ||
    fail "run $r's console mentions ${cluster[$o]}: $(grep -m3 "${cluster[$o]}" "${folder[$r]}/console.log")"
  [ -z "$(docker ps -aq --filter "label=$LABEL=${cluster[$r]}")" ] && pass "nothing of run $r is left on the docker host" ||
    fail "run $r left: $(docker ps -a --filter "label=$LABEL=${cluster[$r]}" --format '{{.Names}}')"
  rm -f "${out[$r]}"
done
echo "$fails check(s) failed"
[ $fails -eq 0 ]
