#!/usr/bin/env bash
# test-tanzu.sh - the tanzu driver end to end (issue 13), with the stand-in tanzu CLI
# (framework/tanzu/standin) replaying seed 000 and doing the work for real through
# scripts/tanzu-standin-backend.sh (kind, clusterctl, kubectl on the kit's images):
#   clean               make e2e FOCUS='placement|packages': bootstrap -> management -> move -> workload ->
#                       placement -> packages pass, the CLI's phases in timings.json and JUnit, nothing left
#   provider-timeout    the CLI times out waiting for providers on the management cluster it made
#   pkg-reconcile-fail  tkg-pkg does not reconcile on the kind cluster
#   hang                the CLI stops answering; the interval's timeout kills its process group
#   interrupt           Ctrl-C during tanzu management-cluster create
#   echo-password       the CLI prints the vCenter password (vSphere profile, vcsim server)
# Each failure case must end classified, with the CLI's lines quoted in SUMMARY.md, and leave nothing
# behind (the run's cleanup "done: nothing left", no container or kind cluster of it in Docker).
# CASES="clean hang" runs some; PARALLEL=3 runs the failure cases three at a time. Needs the kit's environment (. /var/cache/testbed/out/env.sh).
set -euo pipefail
. "$(dirname "$0")/lib-script.sh" tanzu
for v in KIND_NODE_IMAGE CLUSTERCTL_CONFIG CAPI_IMAGES KAPP_CONTROLLER_IMAGE; do
  [ -n "${!v:-}" ] || { echo "missing \$$v: run '. /var/cache/testbed/out/env.sh' first" >&2; exit 2; }
done
cases=${CASES:-clean provider-timeout pkg-reconcile-fail hang interrupt echo-password}
work=$(mktemp -d /tmp/test-tanzu.XXXX)
make -s "$root/bin/harness" "$root/bin/ginkgo" >/dev/null
go build -o "$work/bin/tanzu" ./framework/tanzu/standin
export TANZU_CLI=$work/bin/tanzu TANZU_STANDIN_BACKEND=$root/scripts/tanzu-standin-backend.sh
export TANZU_STANDIN_SPEED=${TANZU_STANDIN_SPEED:-100}
overrides=$root/config/tanzu-standin.overrides.yaml
fails=0
fail() { echo "FAIL $*"; fails=$((fails+1)); }

# start NAME SCENARIO: the case's folder, and the stand-in's environment for it
start() {
  name=$1 dir=$work/$1 art=$work/$1/art log=$work/$1/run.log
  mkdir -p "$dir"
  export TANZU_STANDIN_SCENARIO=$2 TANZU_STANDIN_KUBECONFIG=$dir/bootstrap.kubeconfig \
    TANZU_STANDIN_MANAGEMENT_KUBECONFIG=$dir/management.kubeconfig
  say "== $name (scenario $2)"
  cs=$(date +%s)
}
# nothing_left: cleanup recorded nothing left, and Docker has no container or kind cluster of the run
nothing_left() {
  jq -e '.cleanup | startswith("done")' "$art/state.json" >/dev/null ||
    fail "$name: cleanup did not finish: $(jq -r .cleanup "$art/state.json")"
  local n left=""
  for n in $(jq -r '.resources[] | select(.kind == "kind-cluster" or (.kind | startswith("tanzu-"))) | .name' "$art/state.json"); do
    left+=$(docker ps -a --filter "label=io.x-k8s.kind.cluster=$n" --format ' {{.Names}}')
  done
  [ -z "$left" ] || fail "$name: containers left:$left"
}
# classified KIND REGEX: SUMMARY.md names the classification and quotes a line matching REGEX
classified() {
  grep -q "$1" "$art/SUMMARY.md" || fail "$name: SUMMARY.md does not say \"$1\""
  grep -Eq "$2" "$art/SUMMARY.md" || fail "$name: SUMMARY.md quotes no line matching /$2/"
}
finished() { say "   $name: exit $1 in $(( $(date +%s) - cs ))s"; }

# run_case C: one case, in the globals above (run it in a subshell to run
# cases side by side: each has its own folder, kind cluster names and
# stand-in environment).
run_case() {
  local c=$1
  case $c in
  clean)
    start clean clean; rc=0
    make e2e FOCUS='placement|packages' CONFIG_OVERRIDES="$overrides" ARTIFACTS="$art" >"$log" 2>&1 || rc=$?
    finished $rc
    [ $rc -eq 0 ] || { fail "clean: exit $rc"; grep -E 'FAIL|\[FAILED\]' "$log" | head -10; }
    for s in bootstrap management move workload placement packages; do
      jq -e --arg s "$s" '.stages[$s].status == "passed"' "$art/state.json" >/dev/null || fail "clean: stage $s did not pass"
    done
    for p in bootstrap-create management-create move bootstrap-delete workload-create; do
      jq -e --arg p "tanzu/$p" '[.. | objects | select(.name? == $p)] | length > 0' "$art/timings.json" >/dev/null ||
        fail "clean: timings.json has no step tanzu/$p"
      grep -q "tanzu/$p" "$art/junit.xml" || fail "clean: junit.xml has no tanzu/$p"
    done
    nothing_left ;;
  provider-timeout|pkg-reconcile-fail)
    start "$c" "$c"; rc=0
    make e2e FOCUS=management CONFIG_OVERRIDES="$overrides" ARTIFACTS="$art" >"$log" 2>&1 || rc=$?
    finished $rc
    [ $rc -ne 0 ] || fail "$c: the run passed"
    if [ "$c" = provider-timeout ]; then classified "provider wait timeout" "timed out waiting for provider infrastructure-vsphere"
    else classified "package reconcile failure" "usefulErrorMessage.*tanzu-framework"; fi
    nothing_left ;;
  hang)
    start hang hang; rc=0
    printf 'tanzu:\n  killGrace: 5s\nintervals:\n  management/tanzu-create: ["%s", "1s"]\n' "${HANG_TIMEOUT:-90s}" >"$work/hang.yaml"
    make e2e FOCUS=management CONFIG_OVERRIDES="$overrides,$work/hang.yaml" ARTIFACTS="$art" >"$log" 2>&1 || rc=$?
    finished $rc
    [ $rc -ne 0 ] || fail "hang: the run passed"
    classified "timeout" "control plane is not available yet"
    nothing_left ;;
  interrupt)
    start interrupt clean; rc=0
    setsid make e2e FOCUS=management CONFIG_OVERRIDES="$overrides" ARTIFACTS="$art" >"$log" 2>&1 &
    pid=$!
    deadline=$(( $(date +%s) + 600 ))
    # The state records the bootstrap cluster ready (with its kubeconfig) when the driver attaches it.
    until jq -e '[.resources[]? | select(.kind == "kind-cluster" and .state == "ready")] | length > 0' "$art/state.json" >/dev/null 2>&1; do
      kill -0 "$pid" 2>/dev/null || { fail "interrupt: the run ended before the kind cluster was attached"; break; }
      [ "$(date +%s)" -lt "$deadline" ] || { fail "interrupt: no kind cluster attached in 600s"; break; }
      sleep 1
    done
    sleep "${INTERRUPT_AFTER:-20}"
    sig=$(date +%s); ctrl_c "$pid" || fail "interrupt: no Ctrl-C sent"
    wait "$pid" || rc=$?
    say "   interrupt: exit $rc $(( $(date +%s) - sig ))s after Ctrl-C"
    [ $(( $(date +%s) - sig )) -le 120 ] || fail "interrupt: the run took more than 120s to end after Ctrl-C"
    [ $rc -ne 0 ] || fail "interrupt: the run passed"
    classified "interrupted" "tanzu management-cluster create"
    nothing_left ;;
  echo-password)
    start echo-password echo-password; rc=0
    (
      # shellcheck source=lib-vcsim.sh
      . "$root/scripts/lib-vcsim.sh"
      build_vcsim_tools
      trap stop_vcsim EXIT
      start_vcsim
      r=0
      make e2e CONFIG=config/vsphere.yaml CONFIG_OVERRIDES="$root/config/vsphere-sim.overrides.yaml,$overrides" \
        FOCUS=management ARTIFACTS="$art" >"$log" 2>&1 || r=$?
      # every rendering of the password, searched from outside the harness
      python3 "$root/scripts/check-secret-forms.py" VSPHERE_PASSWORD "$art" "$log" || { echo "FAIL echo-password: the password leaked"; exit 99; }
      exit $r
    ) || rc=$?
    [ $rc -ne 99 ] || fails=$((fails+1))
    finished $rc
    [ $rc -ne 0 ] || fail "echo-password: the run passed"
    classified "vCenter error" "Cannot complete login"
    grep -q 'Setting config variable "VSPHERE_PASSWORD"' "$art/tanzu/management-cluster-create.log" ||
      fail "echo-password: the transcript lacks the (masked) echo line: did the stand-in echo?"
    nothing_left ;;
  *) fail "unknown case $c" ;;
  esac
}

# The clean case is a whole flow and runs alone (tried among the parallel
# cases on 2026-11-27: 562 s, the CPU 91% busy, against 413 s alone first
# on 2026-11-26 on a slightly faster machine);
# the failure cases each make
# one kind cluster and then mostly wait (for a timeout, a hang, a Ctrl-C),
# so PARALLEL=3 (what CI runs) keeps three running side by side, starting
# the next case as soon as one ends (the hang case takes twice as long as
# the others: batches of three waited for it), each printing its lines when
# all have ended; each case's run has its own private folder (its ARTIFACTS
# all end in /art, one run ID: the folder is named by the short ID too).
# The default stays 1, one after the other.
parallel=${PARALLEL:-1}
batch=()
running() { local c n=0; for c in "${batch[@]}"; do kill -0 "${pids[$c]}" 2>/dev/null && n=$((n + 1)); done; echo $n; }
flush() {
  local c f
  for c in "${batch[@]}"; do wait "${pids[$c]}" || true; done
  for c in "${batch[@]}"; do
    cat "$work/$c.out"
    f=$(grep -c '^FAIL ' "$work/$c.out" || true)
    fails=$((fails + f))
  done
  batch=()
}
declare -A pids
for c in $cases; do
  if [ "$c" = clean ] || [ "$parallel" -le 1 ]; then
    flush
    run_case "$c"
    continue
  fi
  while [ "$(running)" -ge "$parallel" ]; do sleep 1; done
  mkdir -p "$work"
  say "   $c: started beside $(running) other case(s)"
  ( fails=0; run_case "$c"; exit 0 ) >"$work/$c.out" 2>&1 &
  pids[$c]=$!
  batch+=("$c")
done
flush
if [ "$fails" -gt 0 ]; then say "$fails failure(s); logs and artifacts in $work"; exit 1; fi
say "all cases passed ($cases)"
rm -rf "$work"
