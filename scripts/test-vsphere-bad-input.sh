#!/usr/bin/env bash
# Bad vSphere input fails before any cluster exists, naming the value and the
# fix, and leaves nothing behind: each case runs `make e2e
# CONFIG=config/vsphere.yaml FOCUS=bootstrap` against a vcsim server with one
# value wrong, and checks the exit code, the message, the time it took and
# that no kind cluster or vcsim VM appeared. Then the rehearsal script's own
# input (the VM node image, the control-plane VIPs): `make e2e-vsphere-sim`
# with one value wrong fails before any VM, and leaves no network.
set -euo pipefail
. "$(dirname "$0")/lib-script.sh" bad-input
. "$root/scripts/lib-vcsim.sh"
build_vcsim_tools
trap stop_vcsim EXIT
start_vcsim
make -s "$root/bin/harness" "$root/bin/ginkgo" >/dev/null

overrides=$vcsim_state/bad.yaml
# made_by RUN: the clusters the run recorded and the kind clusters of its
# short ID that exist: what it created. (Not a before/after of all kind
# clusters: another run on a shared host makes its own meanwhile.)
made_by() {
  local st=$1/state.json short
  [ -f "$st" ] || return 0
  jq -r '.resources[]? | select(.kind == "kind-cluster" or .kind == "capi-cluster") | "\(.kind) \(.name)"' "$st"
  short=$(jq -r '.shortID // empty' "$st")
  [ -z "$short" ] || kind get clusters 2>/dev/null | grep -- "-$short\$" || true
}
fails=0
# case NAME EXPECTED-REGEX [ENV=VALUE...] [-- OVERRIDE-YAML]
case_() {
  local name=$1 want=$2; shift 2
  local envs=() yaml="{}"
  while [ $# -gt 0 ]; do
    if [ "$1" = "--" ]; then yaml=$2; break; fi
    envs+=("$1"); shift
  done
  printf '%s\n' "$yaml" > "$overrides"
  local out=$vcsim_state/$name.log start=$(date +%s) rc=0
  env "${envs[@]}" make e2e CONFIG=config/vsphere.yaml CONFIG_OVERRIDES="$root/config/vsphere-sim.overrides.yaml,$overrides" \
    FOCUS=bootstrap ARTIFACTS="$vcsim_state/run-$name" > "$out" 2>&1 || rc=$?
  local secs=$(( $(date +%s) - start ))
  local vms; vms=$(bin/govc find /DC0/vm/tkg-e2e -type m | grep -v '/ubuntu-' || true)
  local made; made=$(made_by "$vcsim_state/run-$name")
  if [ $rc -eq 0 ]; then
    echo "FAIL $name: the run passed"; fails=$((fails+1))
  elif ! grep -Eq "$want" "$out"; then
    echo "FAIL $name: exit $rc, but no line matches /$want/:"; grep -E 'FAILED|problem|fix:|Fix:|preflight' "$out" | head -8; fails=$((fails+1))
  elif [ -n "$made" ] || [ -n "$vms" ]; then
    echo "FAIL $name: something was created: [$made] VMs [$vms]"; fails=$((fails+1))
  elif grep -qF "$VSPHERE_PASSWORD" "$out"; then
    echo "FAIL $name: the password reached the output"; fails=$((fails+1))
  else
    echo "ok   $name: exit $rc in ${secs}s: $(grep -Eo "$want" "$out" | head -1)"
  fi
}

# What lib-vcsim once exported on an engine whose bridge reports no gateway.
case_ server-without-host 'vsphere.server: ":443" has no host' VSPHERE_SERVER=:443
case_ wrong-thumbprint 'thumbprint' VSPHERE_TLS_THUMBPRINT=AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD
case_ wrong-password '(incorrect user name or password|Login failure|InvalidLogin|cannot complete login)' VSPHERE_PASSWORD=wrong-password-1234
case_ no-datacenter 'datacenter "/DC9" not found' -- 'vsphere: {datacenter: /DC9}'
case_ no-folder 'folder "/DC0/vm/nope" not found' -- 'vsphere: {folder: /DC0/vm/nope}'
case_ no-datastore 'datastore "ds-nope" not found' -- 'vsphere: {datastore: ds-nope}'
case_ no-pool 'resource pool "/DC0/host/DC0_C0/Resources/nope" not found' -- 'vsphere: {resourcePool: /DC0/host/DC0_C0/Resources/nope}'
case_ no-network 'network "net-nope" not found' -- 'vsphere: {network: net-nope}'
case_ capv-variable-unset 'VSPHERE_SSH_AUTHORIZED_KEY' VSPHERE_SSH_AUTHORIZED_KEY=
case_ endpoint-shared "CONTROL_PLANE_ENDPOINT_IP ${MANAGEMENT_CONTROL_PLANE_ENDPOINT_IP//./\\.} is also" WORKLOAD_CONTROL_PLANE_ENDPOINT_IP="$MANAGEMENT_CONTROL_PLANE_ENDPOINT_IP"
# script_case NAME EXPECTED-REGEX ENV=VALUE...: make e2e-vsphere-sim with one
# value wrong; it starts a server and network of its own.
script_case() {
  local name=$1 want=$2; shift 2
  local out=$vcsim_state/$name.log start=$(date +%s) rc=0 nets_before nets
  nets_before=$(docker network ls -q --filter label=tkg-e2e.vcsim | sort)
  env "$@" FOCUS=bootstrap ARTIFACTS="$vcsim_state/run-$name" make e2e-vsphere-sim > "$out" 2>&1 || rc=$?
  local secs=$(( $(date +%s) - start ))
  local made; made=$(made_by "$vcsim_state/run-$name")
  nets=$(docker network ls -q --filter label=tkg-e2e.vcsim | sort)
  if [ $rc -eq 0 ]; then
    echo "FAIL $name: the rehearsal passed"; fails=$((fails+1))
  elif ! grep -Eq "$want" "$out"; then
    echo "FAIL $name: exit $rc, but no line matches /$want/:"; tail -8 "$out"; fails=$((fails+1))
  elif [ -n "$made" ] || [ -n "$(comm -13 <(echo "$nets_before") <(echo "$nets"))" ]; then
    echo "FAIL $name: something was left: [$made] networks [$nets] (before: [$nets_before])"; fails=$((fails+1))
  elif grep -q 'kind create\|Creating cluster' "$out"; then
    echo "FAIL $name: a cluster was started before the error"; fails=$((fails+1))
  else
    echo "ok   $name: exit $rc in ${secs}s: $(grep -Eo "$want" "$out" | head -1)"
  fi
}
script_case no-node-image 'no VM node image localhost/tkg-e2e/no-such-node:v0: build it with scripts/vsphere-sim-images.sh' \
  VSPHERE_SIM_NODE_IMAGE=localhost/tkg-e2e/no-such-node:v0
# The kit's plain kind node image: it boots, but holds neither kube-vip nor the CPI.
script_case node-image-without-add-ons 'does not hold ghcr.io/kube-vip/kube-vip:v0.6.3, registry.k8s.io/cloud-pv-vsphere/cloud-provider-vsphere:v1.33.0' \
  VSPHERE_SIM_NODE_IMAGE="${KIND_NODE_IMAGE:-kindest/node:v1.33.1}"
script_case vip-outside-network 'MANAGEMENT_CONTROL_PLANE_ENDPOINT_IP=10.9.9.9 is not in 172\.29\.[0-9]+\.128-' \
  MANAGEMENT_CONTROL_PLANE_ENDPOINT_IP=10.9.9.9
say "done: $fails failure(s)"
[ $fails -eq 0 ]
