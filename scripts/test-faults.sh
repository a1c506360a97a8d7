#!/usr/bin/env bash
# Faults a bad release would carry, injected into the clusters of a kept run
# (make e2e ... SKIP_CLEANUP=1). `make verify` must fail each with its cause
# at the start of the first line (state.json, SUMMARY.md's table, JUnit),
# within 60 s of its check starting, although the profile's waits are
# minutes long: a state that cannot fix itself ends the wait after the
# stuck-grace (issue 31). Then the same clusters, clean again, must pass,
# and Ctrl-C during smoke must leave no namespace behind.
#
#   round 1 (one fault per check, on the workload cluster; each check in a
#   make verify of its own, the four side by side):
#     health    an admission webhook whose Service has a ready endpoint but
#               whose server does not answer (plain HTTP behind an HTTPS
#               call): health's dry-run probe finds it
#     smoke     a ValidatingAdmissionPolicy that refuses pods in smoke's
#               namespaces: the ReplicaSet's creates are refused
#     placement a Deployment in kube-system whose image no registry serves
#     packages  a PackageInstall given values its schema rejects
#   round 2 (one make verify, two checks failing: a failure does not hide
#   the check after it):
#     health    a cordoned worker, and an APIService whose Service does not exist
#     placement a Deployment in kube-system whose requests no node can meet
#   round 3: nothing injected: every check passes on both clusters, and
#            with READ_ONLY=1 smoke is recorded as left out
#   round 4: Ctrl-C while smoke's servers start: its namespace is gone after
#
# What only this script shows is `make verify` itself against the two
# clusters a full run left (the CLI, both kubeconfigs, the reports) and no
# false alarm on them; the Go tests of scripts/test-assertions-real.sh prove
# each check's faults on a throw-away kind cluster. Every fault is removed
# before the next round, and on exit, also after a failure or Ctrl-C.
#
# Usage: scripts/test-faults.sh <run folder of a kept run with a workload cluster>
#   VERIFY_DIR=<another checkout>  runs that checkout's make verify against
#                                  the same faults (to time an older version)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
run=${1:?usage: scripts/test-faults.sh <run folder of a kept run>}
state=$run/state.json
[ -f "$state" ] || { echo "no state.json in $run: pass the ARTIFACTS folder of a kept run (SKIP_CLEANUP=1)"; exit 2; }
kc() { jq -r --arg k capi-cluster --arg role "$1" '[.resources[] | select(.kind == $k and .state != "deleted" and (.cluster // .role) == $role)][0].kubeconfig // empty' "$state"; }
mgmt=$(kc management) wl=$(kc workload)
[ -f "$mgmt" ] && [ -f "$wl" ] || { echo "the run in $run has no live management and workload cluster with kubeconfigs ($mgmt, $wl)"; exit 2; }
wlname=$(jq -r '[.resources[] | select(.kind == "capi-cluster" and (.cluster // .role) == "workload")][0].name' "$state")

fails=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
log() { echo "[test-faults +${SECONDS}s] $*"; }
k() { kubectl --kubeconfig "$wl" "$@"; }
limit=${FAULT_VERDICT_SECONDS:-60}

out=$(mktemp -d)
remove_faults() {
  k delete validatingwebhookconfiguration tkg-e2e-fault-webhook --ignore-not-found --wait=false
  k delete validatingadmissionpolicybinding tkg-e2e-fault-no-pods --ignore-not-found --wait=false
  k delete validatingadmissionpolicy tkg-e2e-fault-no-pods --ignore-not-found --wait=false
  k delete apiservice v1.tkg-e2e-fault.example.com --ignore-not-found --wait=false
  k -n kube-system delete deployment tkg-e2e-fault-nopull tkg-e2e-fault-toobig --ignore-not-found --wait=false
  k delete namespace tkg-e2e-fault --ignore-not-found --wait=false
  if k -n harness-packages get pkgi harness-sample-config -o jsonpath='{.spec.values}' 2>/dev/null | grep -q tkg-e2e-fault-values; then
    k -n harness-packages patch pkgi harness-sample-config --type json -p '[{"op":"remove","path":"/spec/values"}]'
  fi
  k -n harness-packages delete secret tkg-e2e-fault-values --ignore-not-found
  local n
  for n in $(k get nodes -o jsonpath='{range .items[?(@.spec.unschedulable==true)]}{.metadata.name}{"\n"}{end}'); do k uncordon "$n"; done
}
cleanup() {
  local rc=$?
  set +e
  remove_faults >/dev/null 2>&1
  rm -rf "$out"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# verify NAME FOCUS [VAR=value...]: make verify on both clusters into its
# own artifacts folder, with the profile's own waits (no shortened timeouts).
verify() {
  local name=$1 focus=$2 rc=0
  shift 2
  make -s -C "${VERIFY_DIR:-$root}" verify "$@" FOCUS="$focus" ARTIFACTS="$out/$name" \
    MANAGEMENT_KUBECONFIG="$mgmt" WORKLOAD_KUBECONFIG="$wl" WORKLOAD_CLUSTER_NAME="$wlname" >"$out/$name.log" 2>&1 || rc=$?
  echo $rc
}
# caught NAME STAGE CAUSE-REGEX WANT...: in verify NAME, STAGE failed within
# $limit s, the first line of its message (state.json) starts with a match
# of CAUSE-REGEX and holds every WANT, and SUMMARY.md's table row and
# JUnit's message carry that whole line.
caught() {
  local name=$1 stage=$2 re=$3; shift 3
  local f=$out/$name/state.json status secs first
  status=$(jq -r --arg s "$stage" '.stages[$s].status // "not run"' "$f")
  secs=$(jq -r --arg s "$stage" '.stages[$s].seconds // 0' "$f")
  first=$(jq -r --arg s "$stage" '.stages[$s].message // "" | split("\n")[0]' "$f")
  log "$name: $stage $status after ${secs}s"
  if [ "$status" != failed ]; then
    fail "$name: $stage is $status, want failed"; tail -40 "$out/$name.log"; return
  fi
  if ! awk -v s="$secs" -v l="$limit" 'BEGIN { exit !(s <= l) }'; then
    fail "$name: $stage took ${secs}s to its verdict, want <= ${limit}s: $first"; return
  fi
  if ! grep -Eq "^($re)" <<<"$first"; then
    fail "$name: $stage's first line does not start with the cause /$re/: $first"; return
  fi
  local w
  for w in "$@"; do
    grep -qF -- "$w" <<<"$first" || { fail "$name: $stage's first line lacks '$w': $first"; return; }
  done
  grep -qF -- "${first//|/\\|}" "$out/$name/SUMMARY.md" || { fail "$name: SUMMARY.md's stage table does not carry the whole first line of $stage"; return; }
  python3 - "$out/$name/junit.xml" "$first" <<'PY' || { fail "$name: no failure message in junit.xml starts with the cause of $stage"; return; }
import sys, xml.etree.ElementTree as ET
first = sys.argv[2]
msgs = [f.get("message", "") + "\n" + (f.text or "") for f in ET.parse(sys.argv[1]).iter("failure")]
sys.exit(0 if any(m.lstrip().startswith(first[:120]) or first[:120] in m.split("\n")[0] for m in msgs) else 1)
PY
  pass "$name: $stage caught in ${secs}s: ${first:0:220}"
  echo "$stage $secs" >>"$out/verdicts"
}
ready_pkgi() { # waits until the sample config package reconciles again
  k -n harness-packages wait pkgi/harness-sample-config --for=condition=ReconcileSucceeded --timeout=180s >/dev/null
}

log "round 1: a webhook that does not answer, a policy that refuses smoke's pods, an image no registry serves, broken package values"
# deployment_head name namespace: a Deployment's manifest up to its pod
# spec, whose lines the caller adds (indented six spaces).
deployment_head() {
  printf '%s\n' "apiVersion: apps/v1" "kind: Deployment" "metadata: {name: $1, namespace: $2}" "spec:" \
    "  selector: {matchLabels: {app: $1}}" "  template:" "    metadata: {labels: {app: $1}}" "    spec:"
}
cacert=$(openssl req -x509 -newkey rsa:2048 -nodes -keyout /dev/null -subj /CN=tkg-e2e-fault -days 1 2>/dev/null | base64 -w0)
k create namespace tkg-e2e-fault --dry-run=client -o yaml | k apply -f - >/dev/null
k apply -f - >/dev/null <<EOF2
$(deployment_head no-tls tkg-e2e-fault)
      containers:
      - name: httpd
        image: busybox:1.35.0
        imagePullPolicy: IfNotPresent
        command: [sh, -c, "mkdir -p /www && exec httpd -f -p 8443 -h /www"]
        readinessProbe: {tcpSocket: {port: 8443}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: no-tls, namespace: tkg-e2e-fault}
spec:
  selector: {app: no-tls}
  ports: [{port: 443, targetPort: 8443}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: tkg-e2e-fault-webhook}
webhooks:
- name: configmaps.fault.tkg-e2e.dev
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  timeoutSeconds: 5
  clientConfig:
    service: {namespace: tkg-e2e-fault, name: no-tls, port: 443, path: /validate}
    caBundle: $cacert
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]
  namespaceSelector: {matchLabels: {tkg-e2e-fault: webhook}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: tkg-e2e-fault-no-pods}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
    namespaceSelector: {matchLabels: {tkg-e2e/smoke: "true"}}
  validations: [{expression: "false", message: "tkg-e2e fault: no pods in smoke namespaces"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: tkg-e2e-fault-no-pods}
spec: {policyName: tkg-e2e-fault-no-pods, validationActions: [Deny]}
---
$(deployment_head tkg-e2e-fault-nopull kube-system)
      containers: [{name: app, image: "tkg-e2e.invalid/no-such-image:1", imagePullPolicy: IfNotPresent}]
---
apiVersion: v1
kind: Secret
metadata: {name: tkg-e2e-fault-values, namespace: harness-packages}
stringData:
  values.yml: "greeting: 42"
EOF2
k -n harness-packages patch pkgi harness-sample-config --type merge -p '{"spec":{"values":[{"secretRef":{"name":"tkg-e2e-fault-values"}}]}}' >/dev/null
# The webhook's Service must have its ready endpoint: that is the fault.
k -n tkg-e2e-fault rollout status deployment/no-tls --timeout=120s >/dev/null
# Each fault touches only its own check (the webhook only health's probe
# namespace, the policy only smoke's), so the four checks run as four make
# verify side by side: each waits out its own verdict (30-42 s), where one
# make verify waited out the four one after the other (128-144 s). One
# compiled suite for all four (make verify-suite); an older checkout
# (VERIFY_DIR) links its suite in the package folder on every make verify,
# so there they run one after the other.
r1() { # CHECK: its make verify's exit status, in a file
  local rc
  rc=$(verify "round1-$1" "$1")
  echo "$rc" >"$out/round1-$1.rc"
}
round1=(health smoke placement packages)
if [ -z "${VERIFY_DIR:-}" ]; then
  make -s verify-suite
  for c in "${round1[@]}"; do r1 "$c" & done
  wait
else
  for c in "${round1[@]}"; do r1 "$c"; done
fi
for c in "${round1[@]}"; do
  [ "$(cat "$out/round1-$c.rc")" != 0 ] || fail "round1-$c: make verify FOCUS=$c passed with its fault in place"
done
caught round1-health health 'webhook configmaps\.fault\.tkg-e2e\.dev' "tkg-e2e-fault/no-tls" "failed calling webhook"
caught round1-smoke smoke 'ReplicaFailure FailedCreate: pods .* is forbidden: ValidatingAdmissionPolicy' "tkg-e2e-fault-no-pods" "Deployment tkg-e2e-smoke-"
# The kubelet shows ErrImagePull and ImagePullBackOff in turn; the verdict lands on either.
caught round1-placement placement '(ImagePullBackOff|ErrImagePull): ' "tkg-e2e.invalid/no-such-image:1" "kube-system/tkg-e2e-fault-nopull-"
caught round1-packages packages 'ReconcileFailed: ytt: Error' "harness-packages/harness-sample-config"
remove_faults >/dev/null 2>&1
ready_pkgi

log "round 2: a cordoned worker and an APIService without its Service; a pod no node can take"
worker=$(k get nodes -l '!node-role.kubernetes.io/control-plane' -o jsonpath='{.items[0].metadata.name}')
k cordon "$worker" >/dev/null
k apply -f - >/dev/null <<EOF2
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
---
$(deployment_head tkg-e2e-fault-toobig kube-system)
      # It tolerates the control plane's taint, so the scheduler weighs
      # its request on every node, the cordoned worker aside.
      tolerations: [{key: node-role.kubernetes.io/control-plane, operator: Exists, effect: NoSchedule}]
      containers:
      - {name: app, image: "busybox:1.35.0", imagePullPolicy: IfNotPresent, command: [sleep, "3600"], resources: {requests: {cpu: "1000"}}}
EOF2
rc=$(verify round2 "health placement")
[ "$rc" != 0 ] || fail "round2: make verify passed with three faults in place"
caught round2 health "node $worker is cordoned" "kubectl uncordon $worker" "APIService v1.tkg-e2e-fault.example.com"
caught round2 placement 'Unschedulable: 0/[0-9]+ nodes are available' "Insufficient cpu" "kube-system/tkg-e2e-fault-toobig-"
remove_faults >/dev/null 2>&1

log "round 3: nothing injected: every check must pass on both clusters"
rc=$(verify clean "health smoke placement packages")
if [ "$rc" = 0 ]; then
  pass "clean clusters: make verify (health, smoke, placement, packages) passed (no false alarm)"
else
  fail "clean clusters: make verify failed (exit $rc)"; sed -n 1,40p "$out/clean/SUMMARY.md"
fi

log "round 3b: READ_ONLY=1: the same checks without smoke, which the report must name as left out"
rc=$(verify readonly "health smoke placement packages" READ_ONLY=1)
if [ "$rc" != 0 ]; then
  fail "read-only: make verify READ_ONLY=1 failed (exit $rc)"; sed -n 1,40p "$out/readonly/SUMMARY.md"
elif ! jq -e '.stages.smoke.status == "skipped" and (.stages.smoke.message | test("left out: READ_ONLY=1"))
    and .stages.health.status == "passed"' "$out/readonly/state.json" >/dev/null; then
  fail "read-only: state.json does not record smoke as left out and health as passed: $(jq -c .stages "$out/readonly/state.json")"
elif ! grep -q '| smoke | skipped |.*left out: READ_ONLY=1' "$out/readonly/SUMMARY.md"; then
  fail "read-only: SUMMARY.md does not name smoke as left out"; sed -n '/## Stages/,/^$/p' "$out/readonly/SUMMARY.md"
else
  pass "read-only: health, placement, packages passed; smoke recorded as skipped (left out: READ_ONLY=1)"
fi

log "round 4: Ctrl-C while smoke runs: its namespace must be gone"
# Smoke's namespace is read from the cluster itself: the one that was not
# there before this round (an earlier round's may still be terminating).
smoke_ns() { k get namespaces -o name 2>/dev/null | sed -n 's#^namespace/\(tkg-e2e-smoke-[a-z0-9]*\)$#\1#p' | sort; }
smoke_before=$(smoke_ns || true)
set -m
make -s verify FOCUS=smoke ARTIFACTS="$out/interrupt" MANAGEMENT_KUBECONFIG="$mgmt" WORKLOAD_KUBECONFIG="$wl" \
  WORKLOAD_CLUSTER_NAME="$wlname" >"$out/interrupt.log" 2>&1 &
pid=$!
set +m
ns=""
for _ in $(seq 120); do
  ns=$(comm -13 <(echo "$smoke_before") <(smoke_ns) | head -1)
  [ -z "$ns" ] || break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.5
done
if [ -z "$ns" ]; then
  fail "interrupt: smoke never created its namespace"; tail -20 "$out/interrupt.log"
else
  kill -INT -- -"$pid" 2>/dev/null || true
  irc=0; wait "$pid" 2>/dev/null || irc=$?
  if [ "$irc" = 0 ] || jq -e '.stages.smoke.status == "passed"' "$out/interrupt/state.json" >/dev/null 2>&1; then
    fail "interrupt: verify was not interrupted (exit $irc): smoke ended on its own"; tail -20 "$out/interrupt.log"
  elif k get namespace "$ns" >/dev/null 2>&1 && ! k wait --for=delete "namespace/$ns" --timeout=30s >/dev/null 2>&1; then
    fail "interrupt: namespace $ns is still there 30 s after verify ended"
  else
    pass "interrupt: Ctrl-C during smoke (verify exit $irc); its namespace $ns is gone"
  fi
fi

if [ -f "$out/verdicts" ]; then
  log "time to verdict (s), per injected fault's check:"; sed 's/^/  /' "$out/verdicts"
fi
log "$fails check(s) failed"
[ $fails -eq 0 ]
