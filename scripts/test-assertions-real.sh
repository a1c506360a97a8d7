#!/usr/bin/env bash
# test-assertions-real.sh - runs the real-cluster tests of framework/placement and framework/packages
# (the Test*Real* tests, which skip without HARNESS_TEST_KUBECONFIG) against a throwaway kind cluster:
#   1. kind create cluster with the offline kit's kind CLI and node image (by tag: $KIND_NODE_IMAGE)
#   2. kind load kapp-controller + busybox images (there is no registry)
#   3. apply $KAPP_CONTROLLER_MANIFEST, wait for the Deployment and for the APIService
#      v1alpha1.data.packaging.carvel.dev to be Available (Package/PackageMetadata are served by it)
#   4. go test -run Real with HARNESS_TEST_KUBECONFIG pointing at the cluster: placement, packages and the
#      artifacts collectors side by side (each in its own namespaces), then framework/health alone (it stops
#      the node's kubelet, which no other test may see)
#   5. with HARNESS_TEST_DOCKER=1: framework/kind's TestCreateInterruptedReal (a kind create cancelled midway)
#      and framework/conformance's TestJoinNetworkReal
# The cluster is deleted on exit, also on failure or Ctrl-C (KEEP=1 keeps it and prints how to delete it).
#
# Needs the kit (testbed/README.md): `. /var/cache/testbed/out/env.sh` must work (TESTBED_ENV overrides the path).
# Env: CLUSTER (kind cluster name, default harness-assertions), KEEP=1, GO_TEST_FLAGS (extra flags for go test).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TESTBED_ENV=${TESTBED_ENV:-/var/cache/testbed/out/env.sh}
CLUSTER=${CLUSTER:-harness-assertions}
T0=$SECONDS

log() { printf '[%s +%4ss] %s\n' "$(date +%H:%M:%S)" "$((SECONDS - T0))" "$*"; }
die() { log "ERROR: $*" >&2; exit 1; }

[ -f "$TESTBED_ENV" ] || die "$TESTBED_ENV not found: build the offline kit first (testbed/README.md: up.sh, build.sh)"
# shellcheck source=/dev/null
. "$TESTBED_ENV"
for v in KIND_NODE_IMAGE KAPP_CONTROLLER_MANIFEST KAPP_CONTROLLER_IMAGE TEST_IMAGE_BUSYBOX; do
  [ -n "${!v:-}" ] || die "$v is not set by $TESTBED_ENV: rebuild the kit (build.sh)"
done
# The kit's images live in the default engine; another DOCKER_HOST would not have them.
export DOCKER_HOST=${DOCKER_HOST:-unix:///var/run/docker.sock}
KIND=${KIND_BIN:-kind}
command -v "$KIND" >/dev/null || die "kind CLI not found (the kit's env.sh puts it in PATH)"
command -v kubectl >/dev/null || die "kubectl not found (the kit's env.sh puts it in PATH)"
for img in "$KAPP_CONTROLLER_IMAGE" "$TEST_IMAGE_BUSYBOX" "$KIND_NODE_IMAGE"; do
  docker image inspect "$img" >/dev/null 2>&1 || die "image $img is not in the docker engine: run the kit's build.sh"
done

WORK=$(mktemp -d /tmp/harness-assertions.XXXXXX)
KC=$WORK/kubeconfig
created=""

cleanup() {
  local rc=$?
  set +e
  if [ -n "$created" ]; then
    if [ -n "${KEEP:-}" ]; then
      log "KEEP=1: cluster $CLUSTER kept; kubeconfig $KC; delete with: $KIND delete cluster --name $CLUSTER"
      exit $rc
    fi
    local s=$SECONDS
    "$KIND" delete cluster --name "$CLUSTER" >/dev/null 2>&1 || log "WARNING: kind delete cluster --name $CLUSTER failed"
    log "deleted cluster $CLUSTER in $((SECONDS - s))s"
  fi
  rm -rf "$WORK"
  log "exit $rc after $((SECONDS - T0))s"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if "$KIND" get clusters 2>/dev/null | grep -qx "$CLUSTER"; then
  die "a kind cluster named $CLUSTER exists already (a kept run?): delete it with '$KIND delete cluster --name $CLUSTER' or set CLUSTER"
fi

s=$SECONDS
created=1 # set before create: a half-created cluster must be deleted too
"$KIND" create cluster --name "$CLUSTER" --image "$KIND_NODE_IMAGE" --kubeconfig "$KC" --wait 3m
log "kind cluster $CLUSTER created in $((SECONDS - s))s"

s=$SECONDS
"$KIND" load docker-image --name "$CLUSTER" "$KAPP_CONTROLLER_IMAGE" "$TEST_IMAGE_BUSYBOX"
log "images loaded in $((SECONDS - s))s"

s=$SECONDS
kubectl --kubeconfig "$KC" apply -f "$KAPP_CONTROLLER_MANIFEST" >/dev/null
kubectl --kubeconfig "$KC" -n kapp-controller rollout status deploy/kapp-controller --timeout=180s
kubectl --kubeconfig "$KC" wait --for=condition=Available apiservice/v1alpha1.data.packaging.carvel.dev --timeout=180s \
  || die "APIService v1alpha1.data.packaging.carvel.dev not Available: $(kubectl --kubeconfig "$KC" get apiservice v1alpha1.data.packaging.carvel.dev -o jsonpath='{.status.conditions[0].message}')"
log "kapp-controller ready (APIService Available) in $((SECONDS - s))s"

s=$SECONDS
cd "$ROOT"
set +e # the exit code is go test's, taken from PIPESTATUS below
# shellcheck disable=SC2086
{
  HARNESS_TEST_KUBECONFIG=$KC go test -p 3 -count=1 -timeout 25m -v -run 'Real' ${GO_TEST_FLAGS:-} ./framework/placement/ ./framework/packages/ ./framework/artifacts/... &&
    HARNESS_TEST_KUBECONFIG=$KC go test -count=1 -timeout 25m -v -run 'Real' ${GO_TEST_FLAGS:-} ./framework/health/
} 2>&1 | tee "$WORK/go-test.log"
rc=${PIPESTATUS[0]}
set -e
grep -E '^(--- |ok|FAIL|PASS)' "$WORK/go-test.log" || true
log "go test finished in $((SECONDS - s))s with exit code $rc"
[ "$rc" -eq 0 ] || exit "$rc"

# The tests that need Docker but no cluster of this script's: a kind create
# cancelled midway (its own cluster, which the test deletes: the call
# returns promptly, the state recorded the cluster first, cleanup and the
# leak checks leave nothing), and the conformance container joining a
# rehearsal's docker network.
s=$SECONDS
set +e
HARNESS_TEST_DOCKER=1 go test -count=1 -timeout 10m -v -run '^(TestCreateInterruptedReal|TestJoinNetworkReal)$' \
  ./framework/kind/ ./framework/conformance/ 2>&1 | tee "$WORK/go-test-docker.log"
rc=${PIPESTATUS[0]}
set -e
for t in TestCreateInterruptedReal TestJoinNetworkReal; do
  grep -q -- "--- PASS: $t" "$WORK/go-test-docker.log" || { log "$t did not pass (exit $rc)"; exit 1; }
done
log "Docker tests finished in $((SECONDS - s))s"
