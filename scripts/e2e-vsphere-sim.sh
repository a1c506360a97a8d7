#!/usr/bin/env bash
# Rehearse the vSphere profile on one machine: govmomi's vcsim as a separate
# server process (e2e/cmd/vcsim-server) stands in for vCenter, the real CAPV
# controller (the kit's TESTBED_EXTRAS=capv image) drives it, and the run takes
# the same config/vsphere.yaml code path a testbed takes, with
# config/vsphere-sim.overrides.yaml for the server's inventory.
#
# After the run, and before the server stops, govc (from outside the harness)
# lists the VMs still in the run's folder: any VM named after the run's
# clusters fails the script.
#
#   FOCUS, SKIP, RESUME, SKIP_CLEANUP, ARTIFACTS   passed to make e2e
#   VCSIM_PORT                                     default 8989
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
t0=$(date +%s)
say() { echo "[vsphere-sim +$(( $(date +%s) - t0 ))s] $*"; }

# Tools: the server and govc, built once (go.sum / version stamps).
mkdir -p bin
if [ ! -x bin/vcsim-server ] || [ -n "$(find e2e/cmd/vcsim-server go.sum -newer bin/vcsim-server 2>/dev/null)" ]; then
  say "building bin/vcsim-server"
  go build -o bin/vcsim-server ./e2e/cmd/vcsim-server
fi
if [ ! -x bin/govc ]; then
  say "building bin/govc (github.com/vmware/govmomi/govc@v0.46.0)"
  GOBIN=$root/bin go install github.com/vmware/govmomi/govc@v0.46.0
fi
if ! grep -q 'cluster-api-vsphere-controller' "${TESTBED_IMAGES_FILE:-/dev/null}" 2>/dev/null && \
   ! docker image inspect registry.k8s.io/capi-vsphere/cluster-api-vsphere-controller:v1.16.1 >/dev/null 2>&1; then
  echo "vsphere-sim: no CAPV image: prepare it with TESTBED_EXTRAS=capv make testbed (or on a machine with registry access, it is pulled)" >&2
  exit 1
fi

# The server listens on the docker bridge's gateway: the harness (on the
# host) and CAPV (in a kind container) reach it at the same address, and
# vcsim puts that address in its NFC upload URLs (listening on 0.0.0.0, it
# would advertise another interface's, which the pinned thumbprint does not
# cover).
port=${VCSIM_PORT:-8989}
gw=$(docker network inspect bridge -f '{{(index .IPAM.Config 0).Gateway}}')
state=$(mktemp -d "${TMPDIR:-/tmp}/vsphere-sim.XXXXXX")
chmod 700 "$state"
VCSIM_PASSWORD=$(head -c 18 /dev/urandom | base64 | tr -d '/+=' | head -c 24)
export VCSIM_PASSWORD
bin/vcsim-server -listen "$gw:$port" -env-file "$state/vcsim.env" > "$state/vcsim.log" 2>&1 &
server=$!
stop_server() {
  if kill -0 "$server" 2>/dev/null; then
    kill "$server"; wait "$server" 2>/dev/null || true
    say "vcsim-server stopped"
  fi
  # Containers vcsim ran for VMs that were never destroyed would outlive it.
  left=$(docker ps -aq --filter label=vcsim 2>/dev/null || true)
  [ -z "$left" ] || { say "removing $(echo "$left" | wc -l) vcsim container(s) left by the server"; docker rm -f -v $left >/dev/null || true; }
  rm -rf "$state"
}
trap stop_server EXIT
for _ in $(seq 1 60); do [ -s "$state/vcsim.env" ] && break; kill -0 "$server" || { cat "$state/vcsim.log"; exit 1; }; sleep 0.5; done
[ -s "$state/vcsim.env" ] || { echo "vsphere-sim: the server did not start:"; cat "$state/vcsim.log"; exit 1; }
set -a; . "$state/vcsim.env"; set +a
export VSPHERE_PASSWORD=$VCSIM_PASSWORD
say "vcsim-server at $VSPHERE_SERVER (thumbprint $VSPHERE_TLS_THUMBPRINT)"

# CAPV needs a key for its nodes and an endpoint per cluster; nothing answers
# on these addresses (vcsim's VMs boot no OS), they only have to be distinct.
if [ -z "${VSPHERE_SSH_AUTHORIZED_KEY:-}" ]; then
  ssh-keygen -q -t ed25519 -N '' -C tkg-e2e-vsphere-sim -f "$state/id_ed25519"
  VSPHERE_SSH_AUTHORIZED_KEY=$(cat "$state/id_ed25519.pub")
  export VSPHERE_SSH_AUTHORIZED_KEY
fi
export MANAGEMENT_CONTROL_PLANE_ENDPOINT_IP=${MANAGEMENT_CONTROL_PLANE_ENDPOINT_IP:-172.17.255.50}
export WORKLOAD_CONTROL_PLANE_ENDPOINT_IP=${WORKLOAD_CONTROL_PLANE_ENDPOINT_IP:-172.17.255.51}

export GOVC_URL="https://$VSPHERE_SERVER/sdk" GOVC_USERNAME=$VSPHERE_USERNAME GOVC_PASSWORD=$VSPHERE_PASSWORD GOVC_TLS_KNOWN_HOSTS=$state/known_hosts
echo "$VSPHERE_SERVER $VSPHERE_TLS_THUMBPRINT" > "$GOVC_TLS_KNOWN_HOSTS"

rc=0
make e2e CONFIG=config/vsphere.yaml CONFIG_OVERRIDES="$root/config/vsphere-sim.overrides.yaml${CONFIG_OVERRIDES:+,$CONFIG_OVERRIDES}" \
  FOCUS="${FOCUS:-}" SKIP="${SKIP:-}" RESUME="${RESUME:-}" SKIP_CLEANUP="${SKIP_CLEANUP:-}" ${ARTIFACTS:+ARTIFACTS="$ARTIFACTS"} || rc=$?
run=$(readlink -f "${ARTIFACTS:-artifacts/latest}")
say "make e2e exited $rc (artifacts: $run)"

# From outside the harness: what is left in the run's folder?
say "govc: VMs in /DC0/vm/tkg-e2e after the run"
all=$(bin/govc find /DC0/vm/tkg-e2e -type m || true)
echo "${all:-  (none)}" | sed 's/^/  /'
if [ "${SKIP_CLEANUP:-}" != 1 ] && [ -f "$run/state.json" ]; then
  names=$(jq -r '.resources[]? | select(.kind=="capi-cluster") | .name' "$run/state.json" | sort -u)
  leaked=""
  for n in $names; do
    leaked+=$(echo "$all" | grep -E "/$n-[^/]*$" || true)
  done
  if [ -n "$leaked" ]; then
    echo "vsphere-sim: VMs of the run's clusters are still in vCenter:"; echo "$leaked"; rc=1
  else
    say "no VM of the run's clusters ($(echo $names | tr '\n' ' ')) is left in vcsim"
  fi
fi
exit $rc
