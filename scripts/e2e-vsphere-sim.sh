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

. "$root/scripts/lib-vcsim.sh"
build_vcsim_tools
if ! docker image inspect registry.k8s.io/capi-vsphere/cluster-api-vsphere-controller:v1.16.1 >/dev/null 2>&1; then
  echo "vsphere-sim: no CAPV image: prepare it with TESTBED_EXTRAS=capv make testbed (on a machine with registry access it is pulled)" >&2
  exit 1
fi
trap stop_vcsim EXIT
start_vcsim

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

# A full rehearsal (no FOCUS) must show how far the vSphere flow went: the
# OVA imported, CAPV installed, the management cluster's VMs cloned, powered
# on, addressed and given provider IDs, then the classified stop.
if [ -z "${FOCUS:-}" ] && [ -z "${RESUME:-}" ] && [ -f "$run/state.json" ]; then
  jq -e '.stages.ova.status == "passed" and .stages.bootstrap.status == "passed"
         and .stages.management.status == "stopped"
         and (.stages.management.message | test("providerID"))' "$run/state.json" >/dev/null \
    || { echo "vsphere-sim: the rehearsal did not reach the expected stop:"; jq '.stages' "$run/state.json"; rc=1; }
  grep -q "path: /DC0/vm/tkg-e2e/$(jq -r '.resources[] | select(.kind=="capi-cluster" and .role=="management") | .name' "$run/state.json")-" \
    "$run/vsphere/inventory.yaml" || { echo "vsphere-sim: vsphere/inventory.yaml lists no cloned VM of the management cluster"; rc=1; }
  ls "$run"/clusters/bootstrap-*/pods/capv-system/*/manager.log >/dev/null 2>&1 \
    || { echo "vsphere-sim: CAPV's log is not in the artifacts"; rc=1; }
  [ $rc -ne 0 ] || say "rehearsal reached: $(jq -r '.stages.management.message' "$run/state.json" | head -1)"
fi
exit $rc
