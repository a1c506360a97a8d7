#!/usr/bin/env bash
# Faults a bad release would carry, injected into the clusters of a kept run
# (make e2e ... SKIP_CLEANUP=1), each of which `make verify` must fail with
# the cause named, and the same clusters clean again must pass (issue 15):
#   1. an APIService whose Service does not exist, on the
#      workload cluster                                       -> health
#   2. nothing injected: health and placement pass on both   (no false alarm)
# What only this script shows is `make verify` itself against the two
# clusters a full run left (the CLI, both kubeconfigs, SUMMARY.md naming the
# cause) and no false alarm on them. The faults the checks find are each
# proven on a real cluster by the Go tests of scripts/test-assertions-real.sh
# (a crashlooping unlisted DaemonSet: placement's
# TestRealUnlistedCrashLoopingDaemonSetFails; a stopped kubelet: health's
# TestRealNodeNotReadyFails; an APIService without its Service: health's
# TestRealUnavailableAPIServiceFails), so they are not injected twice here.
# Each fault is removed before the next; the run's clusters are left as found
# (delete them with make clean-run ARTIFACTS=<run>).
#
# Usage: scripts/test-faults.sh <run folder of a kept run with a workload cluster>
# The verify runs use config/faults.overrides.yaml: shorter waits, since a
# fault does not heal (a real run waits the profile's intervals).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
run=${1:?usage: scripts/test-faults.sh <run folder of a kept run>}
state=$run/state.json
[ -f "$state" ] || { echo "no state.json in $run: pass the ARTIFACTS folder of a kept run (SKIP_CLEANUP=1)"; exit 2; }
kc() { jq -r --arg k capi-cluster --arg role "$1" '[.resources[] | select(.kind == $k and .state != "deleted" and (.name | test($role)))][0].kubeconfig // empty' "$state"; }
mgmt=$(kc mgmt) wl=$(kc wl)
[ -f "$mgmt" ] && [ -f "$wl" ] || { echo "the run in $run has no live management and workload cluster with kubeconfigs ($mgmt, $wl)"; exit 2; }
wlname=$(jq -r '[.resources[] | select(.kind == "capi-cluster" and (.name | test("wl")))][0].name' "$state")

fails=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
log() { echo "[test-faults +${SECONDS}s] $*"; }
k() { local c=$1; shift; kubectl --kubeconfig "$c" "$@"; }

out=$(mktemp -d)
cleanup() {
  local rc=$?
  set +e
  k "$wl" delete apiservice v1.tkg-e2e-fault.example.com --ignore-not-found >/dev/null 2>&1
  rm -rf "$out"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# verify NAME FOCUS: make verify on both clusters into its own artifacts folder.
verify() {
  local name=$1 focus=$2 rc=0
  make -s verify FOCUS="$focus" CONFIG_OVERRIDES="$root/config/faults.overrides.yaml" ARTIFACTS="$out/$name" \
    MANAGEMENT_KUBECONFIG="$mgmt" WORKLOAD_KUBECONFIG="$wl" WORKLOAD_CLUSTER_NAME="$wlname" >"$out/$name.log" 2>&1 || rc=$?
  echo $rc
}
# expect_failure NAME FOCUS WANT...: the verify fails and its SUMMARY.md names every WANT.
expect_failure() {
  local name=$1 focus=$2; shift 2
  local rc; rc=$(verify "$name" "$focus")
  if [ "$rc" = 0 ]; then
    fail "$name: make verify FOCUS=$focus passed with the fault in place"; tail -30 "$out/$name.log"; return
  fi
  local w missing=""
  for w in "$@"; do grep -qF -- "$w" "$out/$name/SUMMARY.md" || missing="$missing '$w'"; done
  if [ -z "$missing" ]; then
    pass "$name: make verify FOCUS=$focus failed (exit $rc) and SUMMARY.md names:$(printf " '%s'" "$@")"
  else
    fail "$name: SUMMARY.md lacks$missing"; sed -n 1,60p "$out/$name/SUMMARY.md"
  fi
}

log "1. an APIService without its Service on the workload cluster"
k "$wl" apply -f - >/dev/null <<'EOF'
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1.tkg-e2e-fault.example.com}
spec:
  group: tkg-e2e-fault.example.com
  version: v1
  groupPriorityMinimum: 1000
  versionPriority: 15
  insecureSkipTLSVerify: true
  service: {namespace: default, name: tkg-e2e-no-such-service, port: 443}
EOF
expect_failure apiservice health "v1.tkg-e2e-fault.example.com" "ServiceNotFound"
k "$wl" delete apiservice v1.tkg-e2e-fault.example.com >/dev/null

log "2. nothing injected: health and placement must pass on both clusters"
rc=$(verify clean "health placement")
if [ "$rc" = 0 ]; then
  pass "clean clusters: make verify FOCUS='health placement' passed (no false alarm)"
else
  fail "clean clusters: make verify failed (exit $rc)"; sed -n 1,60p "$out/clean/SUMMARY.md"
fi
log "$fails check(s) failed"
[ $fails -eq 0 ]
