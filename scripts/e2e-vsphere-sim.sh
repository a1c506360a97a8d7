#!/usr/bin/env bash
# Rehearse the vSphere profile on one machine: govmomi's vcsim as a separate
# server process (e2e/cmd/vcsim-server) stands in for vCenter, the real CAPV
# controller (the kit's TESTBED_EXTRAS=capv image) drives it, and the run takes
# the same config/vsphere.yaml code path a testbed takes, with
# config/vsphere-sim.overrides.yaml for the server's inventory. Each VM CAPV
# clones is a container of the VM node image (scripts/vsphere-sim-images.sh)
# that boots as a Kubernetes node from CAPV's bootstrap data.
#
# After the run, and before the server stops, this script checks from outside
# the harness (govc against the still-running server, docker) that nothing of
# the run is left: no VM, folder or resource pool named after the run's
# clusters, no container of the run's VMs; after the server stops, no docker
# network of the run.
#
#   FOCUS, SKIP, RESUME, SKIP_CLEANUP, ARTIFACTS   passed to make e2e
#   VSPHERE_SIM_NODE_IMAGE                         default localhost/tkg-e2e/vsphere-sim-node:v1.33.1
#   VCSIM_PORT                                     default 443
set -euo pipefail
. "$(dirname "$0")/lib-script.sh" vsphere-sim

node_image=${VSPHERE_SIM_NODE_IMAGE:-localhost/tkg-e2e/vsphere-sim-node:v1.33.1}
export VSPHERE_SIM_NODE_IMAGE=$node_image
# Before any server, network or cluster: what the VMs will run must exist
# here (nothing can be pulled on a machine without registry access).
docker image inspect registry.k8s.io/capi-vsphere/cluster-api-vsphere-controller:v1.16.1 >/dev/null 2>&1 ||
  die "no CAPV image: prepare it with TESTBED_EXTRAS=capv make testbed (on a machine with registry access it is pulled)"
docker image inspect "$node_image" >/dev/null 2>&1 ||
  die "no VM node image $node_image: build it with scripts/vsphere-sim-images.sh (make testbed does), or set VSPHERE_SIM_NODE_IMAGE to a node image with cloud-init"
# Nothing can be pulled inside a VM here: what the vcsim flavor runs on every
# VM (kube-vip, the vSphere CPI) and what conformance runs must be in the
# node image (its label tkg-e2e.preloaded lists what is). A node image of a
# machine with registry access may leave VSPHERE_SIM_PULL=1 and pull.
if [ "${VSPHERE_SIM_PULL:-}" != 1 ]; then
  k8s=${KUBERNETES_VERSION:-v1.33.1}
  flavor=$root/config/flavors/infrastructure-vsphere/v1.16.1/cluster-template-vcsim.yaml
  need=$(sed -n 's/^ *image: *//p' "$flavor" | sed "s/\${CPI_IMAGE_K8S_VERSION}/${k8s%.*}.0/" | sort -u)
  need+=$'\n'"registry.k8s.io/conformance:$k8s"$'\n'"registry.k8s.io/e2e-test-images/agnhost:2.53"
  have=$(docker image inspect -f '{{index .Config.Labels "tkg-e2e.preloaded"}}' "$node_image")
  missing=$(for r in $need; do grep -qxF -- "$r" <<<"${have// /$'\n'}" || echo "$r"; done)
  [ -z "$missing" ] ||
    die "the VM node image $node_image does not hold $(echo $missing | sed 's/ /, /g') (the vcsim flavor's add-ons and the conformance images; it holds: ${have:-no tkg-e2e.preloaded label}), and a VM here cannot pull: rebuild it with scripts/vsphere-sim-images.sh (make testbed does), or set VSPHERE_SIM_PULL=1 on a machine with registry access"
fi
. "$root/scripts/lib-vcsim.sh"
build_vcsim_tools
trap stop_vcsim EXIT
export VCSIM_NODE_IMAGES=$node_image
start_vcsim

# A Ctrl-C reaches the whole process group: the harness cleans up through
# CAPV (the server runs in a session of its own, so it outlives the signal),
# and this script goes on to the check from outside instead of ending with
# make (a trap with a handler is not inherited, so make still gets the signal).
trap 'say "interrupted: the run cleans up; then the check from outside"' INT
rc=0
make e2e CONFIG=config/vsphere.yaml CONFIG_OVERRIDES="$root/config/vsphere-sim.overrides.yaml${CONFIG_OVERRIDES:+,$CONFIG_OVERRIDES}" \
  FOCUS="${FOCUS:-}" SKIP="${SKIP:-}" RESUME="${RESUME:-}" SKIP_CLEANUP="${SKIP_CLEANUP:-}" ${ARTIFACTS:+ARTIFACTS="$ARTIFACTS"} || rc=$?
run=$(readlink -f "${ARTIFACTS:-artifacts/latest}")
say "make e2e exited $rc (artifacts: $run)"

# From outside the harness, against the server that still runs.
if [ "${SKIP_CLEANUP:-}" != 1 ] && [ -f "$run/state.json" ]; then
  names=$(jq -r '.resources[]? | select(.kind=="capi-cluster" or .kind=="kind-cluster") | .name' "$run/state.json" | sort -u)
  leaked=""
  for n in $names; do
    for type in m f p; do
      leaked+=$(bin/govc find / -type "$type" -name "$n*" 2>/dev/null | sed "s/^/vCenter ($type): /")$'\n'
    done
  done
  leaked+=$(docker ps -a --filter "label=tkg-e2e.vcsim=$vcsim_label" --format 'container {{.Names}} ({{.Status}})')$'\n'
  # The kind clusters (bootstrap, move-back) joined the run's network too.
  leaked+=$(docker network inspect "$vcsim_network" -f '{{range .Containers}}attached to {{.Name}}{{"\n"}}{{end}}' 2>/dev/null || true)
  leaked=$(echo "$leaked" | sed '/^$/d')
  # For checks that read files, not this output (scripts/interrupt-test.sh).
  printf '%s\n' "$leaked" | sed '/^$/d' >"$run/outside-leak-check.txt"
  if [ -n "$leaked" ]; then
    echo "vsphere-sim: the run left these behind:"; echo "$leaked" | sed 's/^/  /'; rc=1
  else
    say "nothing of the run's clusters ($(echo $names | tr '\n' ' ')) is left: no VM, folder or pool in vcsim, no VM container, nothing on the run's network"
  fi
fi
# What the rehearsal reached, from the run's own record: every stage it
# started passed (a stage that stopped at a rehearsal limit or was skipped
# for one that failed is named).
if [ -f "$run/state.json" ] && [ -z "${RESUME:-}" ]; then
  if ! jq -e '.stages | length > 0 and all(.[]; .status == "passed")' "$run/state.json" >/dev/null; then
    echo "vsphere-sim: not every stage passed:"; jq -r '.stages | to_entries[] | "  \(.key): \(.value.status) \(.value.message // "" | .[0:300])"' "$run/state.json"; rc=1
  else
    say "stages passed: $(jq -r '.stages | to_entries | map("\(.key) \(.value.seconds // 0 | floor)s") | join(", ")' "$run/state.json")"
  fi
fi
stop_vcsim
trap - EXIT
left=$(vcsim_leftovers)
[ ! -f "$run/outside-leak-check.txt" ] || printf '%s\n' "$left" | sed '/^$/d; s/^/after the server stopped: /' >>"$run/outside-leak-check.txt"
if [ -n "$left" ]; then
  echo "vsphere-sim: left on the docker host after the server stopped:"; echo "$left" | sed 's/^/  /'; rc=1
fi
exit $rc
