#!/usr/bin/env bash
# Testbed pools, end to end against a real Boskos server (built from the
# pinned module, its resources kept as CRDs in a kind cluster) and two
# vcsim server processes as the pool's two vsphere-testbeds. The runs take
# the vSphere profile's code path with FOCUS=ova (no clusters) and get
# every testbed value (server, thumbprint, password) from the lease.
#
#   1. the client's own tests against the server (go test, BOSKOS_URL)
#   2. three runs at once on two testbeds: two run together, the third
#      queues and runs when one is released; both testbeds end free
#   3. Boskos unreachable, and the pool empty past the acquire timeout:
#      a clear error before any work, nothing created
#   4. Ctrl-C in the middle of a run: the testbed is released
#   5. the lease taken away (a reaper's reset): the run stops with
#      "lease lost" and does not release what is no longer its own
#   6. a kept run (SKIP_CLEANUP=1) whose vCenter then cannot be reached:
#      make clean-run re-attaches to the same lease, the leak check fails,
#      and the testbed goes back dirty with the reason in its user data
#
# Every Boskos call the script makes itself is curl, from outside the harness.
set -euo pipefail
. "$(dirname "$0")/lib-script.sh" leases
fail() { echo "test-leases: FAIL: $*" >&2; exit 1; }

. "$root/scripts/lib-vcsim.sh"
. "$root/scripts/lib-boskos.sh"
build_vcsim_tools
build_boskos

work=$root/artifacts/leases-$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$work"
chmod 700 "$work"
# The testbeds' passwords live here, outside what the secret scan reads.
priv=$(mktemp -d "${TMPDIR:-/tmp}/leases.XXXXXX")
chmod 700 "$priv"
pids=()
cleanup_all() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  stop_boskos
  rm -rf "$priv"
  # Only its own servers' VM containers (vcsim-server labels them
  # pid-<its pid>): CI runs other vcsim sections beside this one.
  for p in ${tb_pid[@]+"${tb_pid[@]}"}; do
    docker ps -aq --filter "label=tkg-e2e.vcsim=pid-$p" | xargs -r docker rm -f -v >/dev/null 2>&1 || true
  done
}
trap cleanup_all EXIT

cat > "$work/resources.yaml" <<'EOF'
resources:
- {type: vsphere-testbed, state: free, names: [testbed-1, testbed-2]}
- {type: tkg-e2e-client-test, state: free, names: [client-test-1]}
EOF
start_boskos "$work/resources.yaml" 3 "${BOSKOS_PORT:-18080}"

# Two testbeds: one vcsim server each, its own password and certificate.
declare -A tb_pid tb_env
start_testbed() { # name port
  local name=$1 port=$2 pw
  pw=$(head -c 18 /dev/urandom | base64 | tr -d '/+=' | head -c 24)
  tb_env[$name]=$priv/$name.env
  VCSIM_PASSWORD=$pw "$root/bin/vcsim-server" -listen "127.0.0.1:$port" -env-file "${tb_env[$name]}.tmp" \
    >"$priv/$name-vcsim.log" 2>&1 &
  tb_pid[$name]=$!
  pids+=("${tb_pid[$name]}")
  for _ in $(seq 1 60); do [ -s "${tb_env[$name]}.tmp" ] && break; sleep 0.5; done
  [ -s "${tb_env[$name]}.tmp" ] || fail "vcsim-server for $name did not start: $(cat "$priv/$name-vcsim.log")"
  { cat "${tb_env[$name]}.tmp"; echo "VSPHERE_PASSWORD=$pw"; } > "${tb_env[$name]}"
  rm -f "${tb_env[$name]}.tmp"
  chmod 600 "${tb_env[$name]}"
}
# The pool's admin writes each testbed's values into its user data, as a
# team does once per testbed: take it by name, update, release free.
load_userdata() { # name
  local name=$1 json
  json=$(set -a; . "${tb_env[$name]}"; jq -n --arg key "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGxlYXNldGVzdGxlYXNldGVzdGxlYXNldGVzdA tkg-e2e-leases" '{
    VSPHERE_SERVER: env.VSPHERE_SERVER, VSPHERE_USERNAME: env.VSPHERE_USERNAME, VSPHERE_PASSWORD: env.VSPHERE_PASSWORD,
    VSPHERE_TLS_THUMBPRINT: env.VSPHERE_TLS_THUMBPRINT, VSPHERE_DATACENTER: "/DC0", VSPHERE_FOLDER: "/DC0/vm/tkg-e2e",
    VSPHERE_DATASTORE: "LocalDS_0", VSPHERE_RESOURCE_POOL: "/DC0/host/DC0_C0/Resources/tkg-e2e",
    VSPHERE_NETWORK: "/DC0/network/VM Network", VSPHERE_SSH_AUTHORIZED_KEY: $key,
    MANAGEMENT_CONTROL_PLANE_ENDPOINT_IP: "172.17.255.60", WORKLOAD_CONTROL_PLANE_ENDPOINT_IP: "172.17.255.61"}')
  retry boskos_call POST "acquirebystate?state=free&dest=busy&owner=pool-admin&names=$name"
  retry boskos_call POST "update?name=$name&owner=pool-admin&state=busy" "$json"
  retry boskos_call POST "release?name=$name&owner=pool-admin&dest=free"
}
# Boskos answers from an informer cache: a call right after a write may
# see the state before it for a moment.
retry() { local i; for i in 1 2 3 4 5 6 7 8 9 10; do "$@" >/dev/null && return 0; sleep 0.3; done; "$@"; }
# janitor <name>: what a janitor does to a dirty testbed (here: nothing to
# clean, vcsim's folder is checked below), back to free with the note cleared.
janitor() {
  local name=$1
  retry boskos_call POST "acquirebystate?state=dirty&dest=busy&owner=janitor&names=$name"
  retry boskos_call POST "update?name=$name&owner=janitor&state=busy" '{"tkg-e2e-dirty-reason":""}'
  retry boskos_call POST "release?name=$name&owner=janitor&dest=free"
}
resource() { # name -> its JSON, read from the CRD Boskos keeps it in
  kubectl --kubeconfig "$boskos_kubeconfig" get resources.boskos.k8s.io "$1" -o json
}
pool() { boskos_call GET "metric?type=vsphere-testbed"; }

start_testbed testbed-1 18991
start_testbed testbed-2 18992
load_userdata testbed-1
load_userdata testbed-2
say "pool: $(pool)"

# The runs must not find testbed values anywhere but in the lease.
unset VSPHERE_SERVER VSPHERE_USERNAME VSPHERE_PASSWORD VSPHERE_TLS_THUMBPRINT VSPHERE_SSH_AUTHORIZED_KEY \
  MANAGEMENT_CONTROL_PLANE_ENDPOINT_IP WORKLOAD_CONTROL_PLANE_ENDPOINT_IP GOVC_URL GOVC_PASSWORD
# A bigger OVA than the rehearsal's keeps each run on its testbed long
# enough for the third to queue behind the first two.
cat > "$work/ova.overrides.yaml" <<'EOF'
ova:
  deleteTemplates: true
  images:
    - name: ubuntu-2204-kube-v1.33.1
      source: ${OVA_DIR}/ubuntu-2204-kube-v1.33.1.ova
      generate:
        diskMiB: ${OVA_DISK_MIB:-256}
      properties:
        VERSION: v1.33.1+vmware.1-tkg.1
        KUBERNETES_SEMVER: v1.33.1+vmware.1
        DISTRO_NAME: ubuntu
        DISTRO_VERSION: "22.04"
        DISTRO_ARCH: amd64
EOF
overrides="$root/config/vsphere-sim.overrides.yaml,$work/ova.overrides.yaml"
# The vcsim flavor's folder is on this machine, not a testbed value (the
# rehearsal script exports it too): without it the runs would expect it
# from the lease's user data.
export VSPHERE_SIM_FLAVORS=$root/config/flavors
export BOSKOS_ACQUIRE_POLL=1s BOSKOS_HEARTBEAT=2s BOSKOS_ACQUIRE_TIMEOUT=5m

say "1. the Boskos client against the real server"
BOSKOS_URL=$boskos_url go test -count=1 -v -run '^TestReal' ./framework/boskos/ | tee "$work/client-test.log" | grep -E '^(---|ok|FAIL|PASS)|_test\.go:[0-9]+:'
[ "$(grep -c -- '--- PASS: TestReal' "$work/client-test.log")" -ge 2 ] || fail "the real-server client tests did not run"

# One run: make e2e FOCUS=ova on a leased testbed, in its own process group,
# with its own OVA folder. The runs share bin/harness: make relinks it only
# when a source changed, and then into a temporary file moved over it, so a
# run never executes a half-written binary (a link per run had cost 6.4
# core-seconds each, ten times here).
start_run() { # id [extra make args...]
  local id=$1; shift
  mkdir -p "$work/$id-ovas"
  OVA_DIR=$work/$id-ovas setsid make e2e CONFIG=config/vsphere.yaml CONFIG_OVERRIDES="$overrides" LEASE="$boskos_url" \
    FOCUS=ova ARTIFACTS="$work/$id" "$@" >"$work/$id.log" 2>&1 &
  last_pid=$!
  pids+=("$last_pid")
}
lease_of() { jq -r ".lease.$2 // empty" "$work/$1/state.json" 2>/dev/null; }
wait_until() { # what seconds cond...
  local what=$1 secs=$2; shift 2
  local end=$(( $(date +%s) + secs ))
  until "$@"; do [ "$(date +%s)" -lt "$end" ] || fail "timed out after ${secs}s waiting for $what"; sleep 0.5; done
}
leased() { [ -n "$(lease_of "$1" name)" ]; }
stage_is() { [ "$(jq -r ".stages.$2.status // empty" "$work/$1/state.json" 2>/dev/null)" = "$3" ]; }
epoch() { date -d "$1" +%s.%N; }

say "compiling the suite once (so the three runs start together)"
make e2e CONFIG=config/vsphere.yaml CONFIG_OVERRIDES="$overrides" LEASE="$boskos_url" FOCUS=ova DRY_RUN=1 \
  >"$work/dry-run.log" 2>&1 || { cat "$work/dry-run.log"; fail "dry run"; }

say "2. three runs started together, two testbeds"
ta=$(date +%s.%N)
start_run run-a; pa=$last_pid
start_run run-b; pb=$last_pid
start_run run-c; pc=$last_pid
rc_all=0
for p in "$pa" "$pb" "$pc"; do wait "$p" || rc_all=$?; done
[ "$rc_all" -eq 0 ] || { tail -30 "$work"/run-*.log; fail "a run of the three failed"; }
for id in run-a run-b run-c; do
  stage_is "$id" ova passed || fail "$id: ova did not pass"
  [ "$(lease_of "$id" released)" = free ] || fail "$id: lease released as '$(lease_of "$id" released)', want free"
done
# Order the runs by when they got their testbed: the first two must have
# held theirs at the same time, the third must have queued and got one
# only once one of them was released.
mapfile -t order < <(for id in run-a run-b run-c; do echo "$(epoch "$(lease_of "$id" acquired)") $id"; done | sort -n | cut -d' ' -f2)
first=${order[0]} second=${order[1]} third=${order[2]}
[ "$(lease_of "$first" name)" != "$(lease_of "$second" name)" ] || fail "$first and $second were given the same testbed"
awk -v a="$(epoch "$(lease_of "$second" acquired)")" -v r="$(epoch "$(lease_of "$first" releasedAt)")" 'BEGIN { exit !(a < r) }' ||
  fail "$first and $second did not hold their testbeds at the same time"
first_release=$(printf '%s\n' "$(epoch "$(lease_of "$first" releasedAt)")" "$(epoch "$(lease_of "$second" releasedAt)")" | sort -n | head -1)
awk -v a="$(epoch "$(lease_of "$third" acquired)")" -v r="$first_release" 'BEGIN { exit !(a >= r) }' ||
  fail "$third was leased a testbed before $first or $second released one"
waited=$(lease_of "$third" waitedSeconds)
awk -v w="$waited" 'BEGIN { exit !(w >= 1) }' || fail "$third did not queue (waited ${waited}s)"
for id in "${order[@]}"; do
  say "$id: $(lease_of "$id" name), queued $(lease_of "$id" waitedSeconds)s, held $(lease_of "$id" acquired) -> $(lease_of "$id" releasedAt) ($(lease_of "$id" released)); ova $(jq -r .stages.ova.seconds "$work/$id/state.json")s"
done
say "three runs done in $(awk -v s="$ta" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e-s}')s; $third queued ${waited}s for a testbed"
sleep 1
m=$(pool)
[ "$(jq -r '.current.free' <<<"$m")" = 2 ] || fail "pool after the three runs: $m (want both free)"
say "pool after the three runs: $m"
for tb in testbed-1 testbed-2; do
  r=$(resource "$tb")
  [ "$(jq -r '.status.userData["tkg-e2e-dirty-reason"] // empty' <<<"$r")" = "" ] || fail "$tb carries a dirty reason after a clean run"
  [ -n "$(jq -r '.status.userData["tkg-e2e-run"] // empty' <<<"$r")" ] || fail "$tb does not name the run that released it"
done

say "3a. Boskos unreachable: fails before any work"
s=$(date +%s)
if OVA_DIR=$work/x make e2e CONFIG=config/vsphere.yaml CONFIG_OVERRIDES="$overrides" LEASE=http://127.0.0.1:1 FOCUS=ova \
  ARTIFACTS="$work/run-unreachable" >"$work/run-unreachable.log" 2>&1; then
  fail "a run with an unreachable Boskos passed"
fi
grep -q 'boskos at http://127.0.0.1:1 is unreachable' "$work/run-unreachable.log" || fail "no 'unreachable' error in $work/run-unreachable.log"
[ "$(jq '.resources | length' "$work/run-unreachable/state.json")" = 0 ] || fail "the unreachable run recorded resources"
[ ! -e "$work/x" ] || fail "the unreachable run generated an OVA"
say "   failed in $(( $(date +%s) - s ))s: $(grep -o 'boskos at [^:]*:[^ ]* is unreachable[^"]*' "$work/run-unreachable.log" | head -1)"

say "3b. pool empty past the acquire timeout"
boskos_call POST "acquire?type=vsphere-testbed&state=free&dest=busy&owner=blocker" >/dev/null
boskos_call POST "acquire?type=vsphere-testbed&state=free&dest=busy&owner=blocker" >/dev/null
s=$(date +%s)
if OVA_DIR=$work/y BOSKOS_ACQUIRE_TIMEOUT=5s make e2e CONFIG=config/vsphere.yaml CONFIG_OVERRIDES="$overrides" LEASE="$boskos_url" \
  FOCUS=ova ARTIFACTS="$work/run-empty" >"$work/run-empty.log" 2>&1; then
  fail "a run with an empty pool passed"
fi
grep -q 'timed out after 5s waiting for a free vsphere-testbed' "$work/run-empty.log" || fail "no acquire timeout in $work/run-empty.log"
grep -q '0 of 2 free; busy: 2 (owners: blocker)' "$work/run-empty.log" || fail "the timeout does not say who holds the pool"
[ "$(jq '.resources | length' "$work/run-empty/state.json")" = 0 ] && [ ! -e "$work/y" ] || fail "the run with an empty pool created something"
say "   failed in $(( $(date +%s) - s ))s: $(grep -o 'timed out after 5s waiting for a free vsphere-testbed[^"]*' "$work/run-empty.log" | head -1 | cut -c1-200)"
for tb in testbed-1 testbed-2; do retry boskos_call POST "release?name=$tb&owner=blocker&dest=free"; done

say "4. Ctrl-C during a run releases its testbed"
OVA_DISK_MIB=1024 start_run run-int; pi=$last_pid
wait_until "run-int's ova stage" 240 stage_is run-int ova running
sleep 1
held=$(lease_of run-int name)
ctrl_c "$pi"
s=$(date +%s)
wait "$pi" || true
rel=$(lease_of run-int released)
[ -n "$rel" ] && [ "$rel" != "kept (SKIP_CLEANUP=1)" ] || fail "run-int did not release $held (released: '$rel')"
owner=$(resource "$held" | jq -r '.status.owner')
[ -z "$owner" ] || fail "$held is still owned by '$owner' after Ctrl-C"
say "   exited $(( $(date +%s) - s ))s after Ctrl-C; $held released: $rel"
[ "$(resource "$held" | jq -r .status.state)" = free ] || janitor "$held"

say "5. the lease taken away mid-run: the run stops with 'lease lost'"
OVA_DISK_MIB=1024 BOSKOS_HEARTBEAT=1s start_run run-lost; pl=$last_pid
wait_until "run-lost's ova stage" 240 stage_is run-lost ova running
held=$(lease_of run-lost name)
# What a Boskos reaper does to a resource whose heartbeats it stopped
# seeing: back to dirty, no owner.
boskos_call POST "reset?type=vsphere-testbed&state=busy&expire=1ns&dest=dirty" >/dev/null
s=$(date +%s)
if wait "$pl"; then fail "run-lost passed after its lease was taken away"; fi
jq -r '.stages.ova.message' "$work/run-lost/state.json" | grep -q '^lease lost: '"$held" || fail "run-lost's ova stage does not say 'lease lost': $(jq -r .stages.ova.message "$work/run-lost/state.json")"
[[ "$(lease_of run-lost released)" == lost:* ]] || fail "run-lost's state does not record the loss"
grep -q 'lease-lost\|Boskos lease was lost' "$work/run-lost/SUMMARY.md" || fail "SUMMARY.md does not classify the loss"
[ "$(resource "$held" | jq -r '.status.state + "/" + .status.owner')" = "dirty/" ] || fail "$held was touched after the loss: $(resource "$held" | jq -c '.status | del(.userData)')"
say "   stopped $(( $(date +%s) - s ))s after the reset: $(jq -r '.stages.ova.message' "$work/run-lost/state.json" | head -1 | cut -c1-160)"
janitor "$held"

say "6. a kept run whose vCenter is gone: make clean-run releases its testbed dirty, with the reason"
start_run run-kept SKIP_CLEANUP=1; pk=$last_pid
wait "$pk" || fail "run-kept failed: $(tail -20 "$work/run-kept.log")"
held=$(lease_of run-kept name)
[ "$(lease_of run-kept released)" = "kept (SKIP_CLEANUP=1)" ] || fail "run-kept did not keep its lease"
[ "$(resource "$held" | jq -r '.status.state + "/" + .status.owner')" = "busy/$(jq -r .runID "$work/run-kept/state.json")" ] || fail "$held is not busy for run-kept"
kill "${tb_pid[$held]}"; wait "${tb_pid[$held]}" 2>/dev/null || true
say "   stopped $held's vCenter; make clean-run"
if OVA_DIR=$work/run-kept-ovas make clean-run ARTIFACTS="$work/run-kept" CONFIG=config/vsphere.yaml CONFIG_OVERRIDES="$overrides" LEASE="$boskos_url" \
  >"$work/clean-run.log" 2>&1; then
  fail "clean-run passed although the vCenter leak check could not run"
fi
r=$(resource "$held")
[ "$(jq -r '.status.state + "/" + .status.owner' <<<"$r")" = "dirty/" ] || fail "$held after clean-run: $(jq -c '.status | del(.userData)' <<<"$r") ($work/clean-run.log)"
reason=$(jq -r '.status.userData["tkg-e2e-dirty-reason"] // empty' <<<"$r")
grep -qi 'vcenter\|leak check' <<<"$reason" || fail "the dirty reason does not say why: '$reason'"
[[ "$(lease_of run-kept released)" == dirty:* ]] || fail "run-kept's state does not record the dirty release"
say "   $held dirty: ${reason:0:200}"

rm -rf "$work"/*-ovas # generated test data, not output (and 2.5 GiB of it)
say "no form of a testbed password in the runs' output or artifacts"
for tb in testbed-1 testbed-2; do
  VSPHERE_PASSWORD=$(. "${tb_env[$tb]}"; echo "$VSPHERE_PASSWORD") python3 "$root/scripts/check-secret-forms.py" VSPHERE_PASSWORD "$work"
done
say "PASS"
