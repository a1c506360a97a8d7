# Sourced by the vSphere rehearsal scripts: build the tools, give the run a
# docker network of its own, start e2e/cmd/vcsim-server on that network's
# gateway, and export what config/vsphere.yaml reads for it (VSPHERE_SERVER,
# VSPHERE_USERNAME, VSPHERE_PASSWORD, VSPHERE_TLS_THUMBPRINT, an SSH key, the
# control-plane endpoints) plus GOVC_* for checks from outside the harness.
# Needs: $root (the repo), say(). Sets: vcsim_state (a 0700 temp folder),
# vcsim_network, vcsim_label. Call stop_vcsim at exit.
#
#   VCSIM_PORT        default 443: the vSphere cloud provider always dials
#                     <server>:443, as it would a vCenter
#   VCSIM_NODE_IMAGES RUN.container images that boot as Kubernetes nodes

build_vcsim_tools() {
  mkdir -p "$root/bin"
  if [ ! -x "$root/bin/vcsim-server" ] || [ -n "$(find "$root/e2e/cmd/vcsim-server" "$root/go.sum" -newer "$root/bin/vcsim-server" 2>/dev/null)" ]; then
    say "building bin/vcsim-server"
    (cd "$root" && go build -o bin/vcsim-server ./e2e/cmd/vcsim-server)
  fi
  if [ ! -x "$root/bin/govc" ]; then
    say "building bin/govc (github.com/vmware/govmomi/govc@v0.46.0)"
    (cd "$root" && GOBIN=$root/bin go install github.com/vmware/govmomi/govc@v0.46.0)
  fi
}

# network_gateway NET: the host's address on a docker network. The IPAM
# Gateway field is empty on a freshly started engine's default bridge (only
# the subnet is reported), so fall back to the bridge interface itself.
network_gateway() {
  local net=$1 gw ifname id
  gw=$(docker network inspect "$net" -f '{{range .IPAM.Config}}{{.Gateway}} {{end}}' 2>/dev/null | awk '{print $1}')
  if [ -z "$gw" ]; then
    ifname=$(docker network inspect "$net" -f '{{index .Options "com.docker.network.bridge.name"}}' 2>/dev/null || true)
    if [ -z "$ifname" ] || [ "$ifname" = "<no value>" ]; then
      id=$(docker network inspect "$net" -f '{{.Id}}')
      ifname=br-${id:0:12}
    fi
    gw=$(ip -4 -o addr show dev "$ifname" 2>/dev/null | awk '{split($4, a, "/"); print a[1]; exit}')
  fi
  [ -n "$gw" ] || { echo "vcsim: cannot tell the host's address on docker network $net (no IPAM gateway, no address on its bridge interface)" >&2; return 1; }
  echo "$gw"
}

# create_run_network: a /24 of its own for this rehearsal. Docker hands out
# only the lower half (--ip-range), so the upper half holds addresses no
# container gets: the clusters' control-plane VIPs, which kube-vip claims by
# ARP. Two rehearsals at once get two subnets, so they never share a VIP.
create_run_network() {
  local name=tkg-e2e-vsim-$(head -c 3 /dev/urandom | od -An -tx1 | tr -d ' \n') third try
  for try in $(seq 1 30); do
    third=$(( $(od -An -N1 -tu1 /dev/urandom) ))
    if docker network create --driver bridge --subnet "172.29.$third.0/24" --ip-range "172.29.$third.0/25" \
         --gateway "172.29.$third.1" --label tkg-e2e.vcsim="$name" "$name" >/dev/null 2>"$vcsim_state/net.err"; then
      vcsim_network=$name
      vcsim_subnet_prefix=172.29.$third
      return 0
    fi
    grep -qiE 'overlap|already' "$vcsim_state/net.err" || { cat "$vcsim_state/net.err" >&2; return 1; }
  done
  echo "vcsim: no free /24 in 172.29.0.0/16 after $try tries" >&2
  return 1
}

# check_vips: the control-plane endpoints must be addresses of the run's
# network that docker never hands out (its upper half, .128-.254), and two
# different ones; a VIP anywhere else is answered by nobody (kube-vip claims it
# by ARP on the VMs' network) or collides with a container.
check_vips() {
  local v bad="" last
  for v in MANAGEMENT_CONTROL_PLANE_ENDPOINT_IP WORKLOAD_CONTROL_PLANE_ENDPOINT_IP; do
    last=${!v##*.}
    if [ "${!v%.*}" != "$vcsim_subnet_prefix" ] || ! [[ $last =~ ^[0-9]+$ ]] || [ "$last" -lt 128 ] || [ "$last" -gt 254 ]; then
      bad+="$v=${!v} is not in $vcsim_subnet_prefix.128-$vcsim_subnet_prefix.254, the part of the run's network $vcsim_network ($vcsim_subnet_prefix.0/24) docker does not hand out; "
    fi
  done
  [ "$MANAGEMENT_CONTROL_PLANE_ENDPOINT_IP" != "$WORKLOAD_CONTROL_PLANE_ENDPOINT_IP" ] ||
    bad+="MANAGEMENT_CONTROL_PLANE_ENDPOINT_IP and WORKLOAD_CONTROL_PLANE_ENDPOINT_IP are both $MANAGEMENT_CONTROL_PLANE_ENDPOINT_IP; "
  [ -z "$bad" ] || { echo "vcsim: ${bad%; }: unset them (the rehearsal takes .200 and .201 of its network) or pick two addresses in that range" >&2; return 1; }
}

start_vcsim() {
  local port=${VCSIM_PORT:-443} gw
  vcsim_state=$(mktemp -d "${TMPDIR:-/tmp}/vsphere-sim.XXXXXX")
  chmod 700 "$vcsim_state"
  create_run_network
  vcsim_label=$vcsim_network
  gw=$(network_gateway "$vcsim_network")
  # The server listens on the run network's gateway: the harness (on the
  # host) and CAPV and the CPI (in containers on that network) reach it at
  # the same address, and vcsim puts that address in its NFC upload URLs
  # (listening on 0.0.0.0, it would advertise another interface's, which
  # the pinned thumbprint does not cover).
  VCSIM_PASSWORD=$(head -c 18 /dev/urandom | base64 | tr -d '/+=' | head -c 24)
  export VCSIM_PASSWORD
  # setsid: a Ctrl-C at the terminal goes to the whole foreground process
  # group; the harness then cleans up through CAPV, which needs the server
  # until its VMs are destroyed. stop_vcsim stops it afterwards.
  setsid "$root/bin/vcsim-server" -listen "$gw:$port" -env-file "$vcsim_state/vcsim.env" \
    -network "$vcsim_network" -label "$vcsim_label" ${VCSIM_NODE_IMAGES:+-node-images "$VCSIM_NODE_IMAGES"} \
    > "$vcsim_state/vcsim.log" 2>&1 &
  vcsim_pid=$!
  for _ in $(seq 1 60); do
    [ -s "$vcsim_state/vcsim.env" ] && break
    kill -0 "$vcsim_pid" 2>/dev/null || break
    sleep 0.5
  done
  if [ ! -s "$vcsim_state/vcsim.env" ]; then
    echo "vcsim-server did not start:" >&2; cat "$vcsim_state/vcsim.log" >&2; return 1
  fi
  set -a; . "$vcsim_state/vcsim.env"; set +a
  export VSPHERE_PASSWORD=$VCSIM_PASSWORD
  if [ -z "${VSPHERE_SSH_AUTHORIZED_KEY:-}" ]; then
    ssh-keygen -q -t ed25519 -N '' -C tkg-e2e-vsphere-sim -f "$vcsim_state/id_ed25519"
    VSPHERE_SSH_AUTHORIZED_KEY=$(cat "$vcsim_state/id_ed25519.pub")
    export VSPHERE_SSH_AUTHORIZED_KEY
  fi
  # The kind bootstrap cluster (CAPV runs there) and the throw-away kind
  # cluster of a move-back join the run's network, beside the VMs.
  export KIND_EXPERIMENTAL_DOCKER_NETWORK=$vcsim_network
  # config/vsphere-sim.overrides.yaml: the clusterctl overrides folder with
  # CAPV's vcsim flavor.
  export VSPHERE_SIM_FLAVORS=$root/config/flavors
  export MANAGEMENT_CONTROL_PLANE_ENDPOINT_IP=${MANAGEMENT_CONTROL_PLANE_ENDPOINT_IP:-$vcsim_subnet_prefix.200}
  export WORKLOAD_CONTROL_PLANE_ENDPOINT_IP=${WORKLOAD_CONTROL_PLANE_ENDPOINT_IP:-$vcsim_subnet_prefix.201}
  check_vips
  export GOVC_URL="https://$VSPHERE_SERVER/sdk" GOVC_USERNAME=$VSPHERE_USERNAME GOVC_PASSWORD=$VSPHERE_PASSWORD
  export GOVC_TLS_KNOWN_HOSTS=$vcsim_state/known_hosts
  echo "$VSPHERE_SERVER $VSPHERE_TLS_THUMBPRINT" > "$GOVC_TLS_KNOWN_HOSTS"
  say "vcsim-server at $VSPHERE_SERVER on docker network $vcsim_network (thumbprint $VSPHERE_TLS_THUMBPRINT; VIPs $MANAGEMENT_CONTROL_PLANE_ENDPOINT_IP, $WORKLOAD_CONTROL_PLANE_ENDPOINT_IP)"
}

# vcsim_leftovers: what of the run is still on the docker host (containers
# the server ran for VMs, the run's network), one per line.
vcsim_leftovers() {
  [ -n "${vcsim_label:-}" ] || return 0
  docker ps -a --filter "label=tkg-e2e.vcsim=$vcsim_label" --format 'container {{.Names}} ({{.Status}})' 2>/dev/null || true
  docker network ls --filter "label=tkg-e2e.vcsim=$vcsim_label" --format 'network {{.Name}}' 2>/dev/null || true
}

stop_vcsim() {
  if [ -n "${vcsim_pid:-}" ] && kill -0 "$vcsim_pid" 2>/dev/null; then
    kill "$vcsim_pid"; wait "$vcsim_pid" 2>/dev/null || true
    say "vcsim-server stopped"
  fi
  # Containers vcsim ran for VMs that were never destroyed would outlive it.
  local left
  if [ -n "${vcsim_label:-}" ]; then
    left=$(docker ps -aq --filter "label=tkg-e2e.vcsim=$vcsim_label" 2>/dev/null || true)
    if [ -n "$left" ]; then
      say "removing $(echo "$left" | wc -l) VM container(s) left by the server"
      docker rm -f -v $left >/dev/null || true
    fi
  fi
  if [ -n "${vcsim_network:-}" ]; then
    # Anything still attached (a kind cluster the run did not delete) is
    # disconnected first, so the network never outlives the rehearsal.
    for c in $(docker network inspect "$vcsim_network" -f '{{range .Containers}}{{.Name}} {{end}}' 2>/dev/null || true); do
      say "disconnecting $c from $vcsim_network"
      docker network disconnect -f "$vcsim_network" "$c" >/dev/null 2>&1 || true
    done
    docker network rm "$vcsim_network" >/dev/null 2>&1 || true
  fi
  [ -z "${vcsim_state:-}" ] || rm -rf "$vcsim_state"
}
