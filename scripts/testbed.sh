#!/usr/bin/env bash
# Prepare Docker and the offline images with the testbed kit, then print the
# environment file to source. On a machine with registry access none of this
# is needed: `make e2e` pulls the normal images.
#
#   TESTBED_KIT   the kit folder (default: ../shared/testbed beside the repo)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kit=${TESTBED_KIT:-$root/../shared/testbed}
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo

if [ ! -x "$kit/up.sh" ]; then
  echo "testbed: no kit at $kit (set TESTBED_KIT); cannot prepare Docker offline" >&2
  exit 1
fi
start=$(date +%s)
echo "testbed: up.sh (docker engine, runtime shim, iptables rule)"
if ! $sudo "$kit/up.sh"; then
  echo "testbed: FAILED to start Docker with $kit/up.sh; the e2e suite cannot run on this machine." >&2
  echo "testbed: see /var/log/testbed-dockerd.log and the kit README's Troubleshooting section." >&2
  exit 1
fi
# CAPV is built too: `make e2e-vsphere-sim` rehearses the vSphere profile
# with the real controller (TESTBED_EXTRAS= to skip it).
extras=${TESTBED_EXTRAS-capv}
echo "testbed: build.sh (images and manifests; cold 25-55 min with CAPV on 2 cores, measured on fresh machines; warm ~2 s; extras: ${extras:-none})"
if ! $sudo env TESTBED_EXTRAS="$extras" "$kit/build.sh"; then
  echo "testbed: FAILED to build the offline images; see \${TESTBED_CACHE:-/var/cache/testbed}/logs" >&2
  exit 1
fi
# Every kind/CAPD node runs systemd, which takes inotify instances; with the
# default of 128 a fifth or sixth node fails with "Failed to allocate manager
# object: Too many open files" (kind's known-issues page). Raise it as kind advises.
for kv in fs.inotify.max_user_instances=512 fs.inotify.max_user_watches=524288; do
  k=${kv%%=*}; want=${kv#*=}
  have=$(sysctl -n "$k" 2>/dev/null || echo 0)
  if [ "$have" -lt "$want" ]; then
    $sudo sysctl -qw "$kv" && echo "testbed: $k $have -> $want"
  fi
done
if ! docker info >/dev/null 2>&1; then
  echo "testbed: docker does not answer after up.sh; the e2e suite cannot run." >&2
  exit 1
fi
# The conformance stage's images (registry.k8s.io/conformance, agnhost) from
# the kit's Kubernetes source: cold ~15 min of compiling e2e.test, warm ~1 s.
# TESTBED_CONFORMANCE=0 skips them (the conformance stage's preflight then
# says what is missing before any cluster is made).
if [ "${TESTBED_CONFORMANCE:-1}" != 0 ]; then
  # shellcheck disable=SC1091
  . "${TESTBED_OUT:-/var/cache/testbed/out}/env.sh"
  if ! bash "$root/scripts/conformance-images.sh"; then
    echo "testbed: FAILED to build the conformance images (scripts/conformance-images.sh, above)" >&2
    exit 1
  fi
fi
# With CAPV, the vSphere rehearsal's VM node image and the add-ons CAPV's
# template deploys (kube-vip, the vSphere CPI), from the module proxy:
# cold ~8 min, warm ~1 s (scripts/vsphere-sim-images.sh).
case ",$extras," in
  *,capv,*)
    # shellcheck disable=SC1091
    . "${TESTBED_OUT:-/var/cache/testbed/out}/env.sh"
    if ! bash "$root/scripts/vsphere-sim-images.sh"; then
      echo "testbed: FAILED to build the vSphere rehearsal's images (scripts/vsphere-sim-images.sh, above)" >&2
      exit 1
    fi ;;
esac
# The day-two stages' previous releases (QUALIFY=1 and CI): Kubernetes
# PREVIOUS_KUBERNETES_VERSION's node and control-plane images and Cluster API
# PREVIOUS_CAPI_VERSION's controllers and clusterctl repository. Measured
# cold on a fresh machine (2026-11-27): 957 s and 555 s, which a first CI
# paid inside its day-two section; here they are part of the testbed's cold
# cost, and warm (~2 s) everywhere after it. TESTBED_PREVIOUS=0 skips them
# (the upgrade stages' preflights then say what is missing).
if [ "${TESTBED_PREVIOUS:-1}" != 0 ]; then
  # shellcheck disable=SC1091
  . "${TESTBED_OUT:-/var/cache/testbed/out}/env.sh"
  for s in previous-release-images.sh previous-capi-images.sh; do
    p0=$(date +%s)
    # previous-capi-images.sh prints export lines for eval; not needed here.
    if ! bash "$root/scripts/$s" >/dev/null; then
      echo "testbed: FAILED to build the previous release's images (scripts/$s, above)" >&2
      exit 1
    fi
    echo "testbed: scripts/$s done in $(( $(date +%s) - p0 ))s"
  done
fi
echo "testbed: ready in $(( $(date +%s) - start ))s; now run: . ${TESTBED_OUT:-/var/cache/testbed/out}/env.sh"
