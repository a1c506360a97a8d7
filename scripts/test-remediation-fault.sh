#!/usr/bin/env bash
# A remediation that never replaces the Machine, injected into the kept
# workload cluster of a run: every worker Machine carries Cluster API's
# skip-remediation annotation, so every MachineHealthCheck passes it over
# and the stopped kubelet is never remediated. The remediate stage must fail within its wait
# (shortened here to REMEDIATION_WAIT, default 2m), its state.json message
# naming the Machine it broke as "not replaced", with its conditions.
# Afterwards the annotation is removed and the kubelet started again, and
# the node must be Ready, so the run's later sections find it as it was.
#
# Usage: scripts/test-remediation-fault.sh <run folder of a kept run> [CONFIG_OVERRIDES]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
run=${1:?usage: scripts/test-remediation-fault.sh <run folder of a kept run> [overrides]}
extra=${2:-}
state=$run/state.json
[ -f "$state" ] || { echo "no state.json in $run: pass the ARTIFACTS folder of a kept run (SKIP_CLEANUP=1)"; exit 2; }
kc() { jq -r --arg role "$1" '[.resources[] | select(.kind == "capi-cluster" and .state != "deleted" and (.cluster // .role) == $role)][0].kubeconfig // empty' "$state"; }
mgmt=$(kc management) wl=$(kc workload)
[ -f "$mgmt" ] && [ -f "$wl" ] || { echo "the run in $run has no live management and workload cluster"; exit 2; }
read -r wlname wlns < <(jq -r '[.resources[] | select(.kind == "capi-cluster" and (.cluster // .role) == "workload")][0] | "\(.name) \(.namespace)"' "$state")
m() { kubectl --kubeconfig "$mgmt" -n "$wlns" "$@"; }
workers="-l cluster.x-k8s.io/cluster-name=$wlname,!cluster.x-k8s.io/control-plane"
log() { echo "[test-remediation-fault +${SECONDS}s] $*"; }

overrides=$(mktemp --suffix=.yaml)
restore() {
  set +e
  # The kubelet first: quick-start's own MachineHealthCheck (5 minutes)
  # must find the node healthy once the annotation is gone.
  for n in $(m get machines $workers -o jsonpath='{.items[*].status.nodeRef.name}'); do
    docker exec "$n" systemctl start kubelet 2>/dev/null
  done
  kubectl --kubeconfig "$wl" wait --for=condition=Ready nodes --all --timeout=3m >/dev/null
  m annotate machines $workers cluster.x-k8s.io/skip-remediation- >/dev/null 2>&1
  rm -f "$overrides"
}
trap restore EXIT

printf 'intervals:\n  remediate/wait-remediation: ["%s", "1s"]\n' "${REMEDIATION_WAIT:-5m}" > "$overrides"
m annotate machines $workers cluster.x-k8s.io/skip-remediation="" --overwrite >/dev/null
log "workers of $wlname annotated cluster.x-k8s.io/skip-remediation; running the remediate stage"
if make -s e2e RESUME=1 SKIP_CLEANUP=1 FOCUS=remediate ARTIFACTS="$run" CONFIG_OVERRIDES="${extra:+$extra,}$overrides" > "$run/remediation-fault.log" 2>&1; then
  echo "FAIL the remediate stage passed although no Machine could be remediated"; exit 1
fi
msg=$(jq -r '.stages.remediate.message // ""' "$state")
status=$(jq -r '.stages.remediate.status // ""' "$state")
if [ "$status" != failed ] || ! grep -q "not replaced: $wlname-" <<<"$msg" || ! grep -q "annotated cluster.x-k8s.io/skip-remediation" <<<"$msg"; then
  echo "FAIL remediate is $status, its message does not give the cause and the Machine not replaced:"; echo "$msg" | head -5; exit 1
fi
echo "PASS remediate failed after $(jq -r '.stages.remediate.seconds // "?"' "$state")s: $(head -c 400 <<<"$msg")"
restore
trap - EXIT
log "annotation removed, kubelet started, every node of $wlname Ready"
