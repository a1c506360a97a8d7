#!/usr/bin/env bash
# lifecycle-by-hand.sh - the local lifecycle with bare CLIs (kind, clusterctl, kubectl), timed per step,
# as the baseline for the harness's overhead (scripts/bench-flow.sh runs it beside `make e2e`):
#   kind bootstrap -> clusterctl init -> management (1 CP + 1 worker) -> load images + clusterctl init +
#   kapp-controller on it -> clusterctl move -> kind delete -> workload (1 CP + WL_WORKERS workers) -> its image +
#   kapp-controller (the harness's workload stage installs kapp-controller too; steps workload-load, workload-kapp)
#   -> cleanup.
# Needs the kit's environment: . /var/cache/testbed/out/env.sh (or the same variables on a registry machine).
# Names start with $PREFIX (default h4eh<random>); only containers carrying those names/labels are touched.
# KEEP=1 skips cleanup.
set -euo pipefail

for v in KIND_NODE_IMAGE CLUSTERCTL_CONFIG CNI_MANIFEST KAPP_CONTROLLER_MANIFEST KAPP_CONTROLLER_IMAGE CAPI_IMAGES CERT_MANAGER_IMAGES; do
  [ -n "${!v:-}" ] || { echo "missing \$$v: run '. /var/cache/testbed/out/env.sh' first" >&2; exit 2; }
done
PREFIX=${PREFIX:-h4eh$(printf %04x $RANDOM)}
K8S=${KUBERNETES_VERSION:-v1.33.1}
WL_WORKERS=${WL_WORKERS:-0}
BOOT=$PREFIX-boot MGMT=$PREFIX-mgmt WL=$PREFIX-wl NS=$PREFIX
DIR=$(mktemp -d /tmp/lifecycle-by-hand-$PREFIX.XXXX)
BKC=$DIR/bootstrap.kubeconfig MKC=$DIR/management.kubeconfig WKC=$DIR/workload.kubeconfig
TIMES=$DIR/times.txt; : >"$TIMES"
T0=$(date +%s.%N)

# shellcheck source=lib-by-hand.sh
. "$(dirname "$0")/lib-by-hand.sh"
step() { # step NAME CMD... : runs and records the duration
  local name=$1; shift; local s; s=$(date +%s.%N)
  log "==> $name"
  "$@"
  local d; d=$(echo "$(date +%s.%N) - $s" | bc)
  printf '  %-28s %7.1fs\n' "$name" "$d" | tee -a "$TIMES"
}

cleanup() {
  local rc=$?
  set +e
  if [ -n "${KEEP:-}" ]; then log "KEEP=1: leaving everything; kubeconfigs in $DIR"; exit $rc; fi
  local s; s=$(date +%s.%N)
  log "==> cleanup"
  if [ -f "$MKC" ] && kubectl --kubeconfig "$MKC" -n "$NS" get cluster "$WL" >/dev/null 2>&1; then
    kubectl --kubeconfig "$MKC" -n "$NS" delete cluster "$WL" --wait=true --timeout=300s >/dev/null
  fi
  if kind get clusters 2>/dev/null | grep -qx "$BOOT"; then
    # not moved yet: the bootstrap cluster still manages the management cluster
    kubectl --kubeconfig "$BKC" -n "$NS" delete cluster "$MGMT" --wait=true --timeout=300s >/dev/null 2>&1
    kind delete cluster --name "$BOOT" >/dev/null 2>&1
  fi
  for c in "$MGMT" "$WL"; do remove_capd_cluster "$c"; done   # self-hosted management cluster (and any leftovers)
  printf '  %-28s %7.1fs\n' cleanup "$(echo "$(date +%s.%N) - $s" | bc)" | tee -a "$TIMES"
  local leaks; leaks=$(docker ps -a --format '{{.Names}}' | grep "^$PREFIX" || true)
  leaks+=$(docker network ls --format '{{.Name}}' | grep "^$PREFIX" || true)
  leaks+=$(kind get clusters 2>/dev/null | grep "^$PREFIX" || true)
  if [ -n "$leaks" ]; then log "LEAKS: $leaks"; rc=1; else log "leak check: nothing of $PREFIX left"; fi
  log "per-step times (run $PREFIX):"; cat "$TIMES"
  printf '  %-28s %7.1fs\n' TOTAL "$(echo "$(date +%s.%N) - $T0" | bc)"
  rm -rf "$DIR"
  exit $rc
}
trap cleanup EXIT

log "run $PREFIX in $DIR"
step kind-create kind_create "$BOOT" "$BKC"
step kind-load kind load docker-image --name "$BOOT" $CAPI_IMAGES $CERT_MANAGER_IMAGES
step clusterctl-init clusterctl_init "$BKC"
step management-create create_cluster "$BKC" "$MGMT" "$NS" 1 "$MKC"
step management-load kind load docker-image --name "$MGMT" $CAPI_IMAGES $CERT_MANAGER_IMAGES "$KAPP_CONTROLLER_IMAGE"
step management-init clusterctl_init "$MKC"
step kapp-controller install_kapp "$MKC"
step move move_all "$BKC" "$MKC" "$NS"
step kind-delete kind delete cluster --name "$BOOT" --kubeconfig "$BKC"
step workload-create create_cluster "$MKC" "$WL" "$NS" "$WL_WORKERS" "$WKC"
step workload-load kind load docker-image --name "$WL" "$KAPP_CONTROLLER_IMAGE"
step workload-kapp install_kapp "$WKC"
