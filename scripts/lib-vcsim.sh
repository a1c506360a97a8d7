# Sourced by the vSphere rehearsal scripts: build the tools, start
# e2e/cmd/vcsim-server on the docker bridge's gateway, and export what
# config/vsphere.yaml reads for it (VSPHERE_SERVER, VSPHERE_USERNAME,
# VSPHERE_PASSWORD, VSPHERE_TLS_THUMBPRINT, an SSH key, the control-plane
# endpoints) plus GOVC_* for checks from outside the harness.
# Needs: $root (the repo), say(). Sets: vcsim_state (a 0700 temp folder).
# Call stop_vcsim at exit.

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

start_vcsim() {
  local port=${VCSIM_PORT:-8989} gw
  # The server listens on the docker bridge's gateway: the harness (on the
  # host) and CAPV (in a kind container) reach it at the same address, and
  # vcsim puts that address in its NFC upload URLs (listening on 0.0.0.0, it
  # would advertise another interface's, which the pinned thumbprint does not
  # cover).
  gw=$(docker network inspect bridge -f '{{(index .IPAM.Config 0).Gateway}}')
  vcsim_state=$(mktemp -d "${TMPDIR:-/tmp}/vsphere-sim.XXXXXX")
  chmod 700 "$vcsim_state"
  VCSIM_PASSWORD=$(head -c 18 /dev/urandom | base64 | tr -d '/+=' | head -c 24)
  export VCSIM_PASSWORD
  "$root/bin/vcsim-server" -listen "$gw:$port" -env-file "$vcsim_state/vcsim.env" > "$vcsim_state/vcsim.log" 2>&1 &
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
  # Nothing answers on these (vcsim's VMs boot no OS); they only have to be distinct.
  export MANAGEMENT_CONTROL_PLANE_ENDPOINT_IP=${MANAGEMENT_CONTROL_PLANE_ENDPOINT_IP:-172.17.255.50}
  export WORKLOAD_CONTROL_PLANE_ENDPOINT_IP=${WORKLOAD_CONTROL_PLANE_ENDPOINT_IP:-172.17.255.51}
  export GOVC_URL="https://$VSPHERE_SERVER/sdk" GOVC_USERNAME=$VSPHERE_USERNAME GOVC_PASSWORD=$VSPHERE_PASSWORD
  export GOVC_TLS_KNOWN_HOSTS=$vcsim_state/known_hosts
  echo "$VSPHERE_SERVER $VSPHERE_TLS_THUMBPRINT" > "$GOVC_TLS_KNOWN_HOSTS"
  say "vcsim-server at $VSPHERE_SERVER (thumbprint $VSPHERE_TLS_THUMBPRINT)"
}

stop_vcsim() {
  if [ -n "${vcsim_pid:-}" ] && kill -0 "$vcsim_pid" 2>/dev/null; then
    kill "$vcsim_pid"; wait "$vcsim_pid" 2>/dev/null || true
    say "vcsim-server stopped"
  fi
  # Containers vcsim ran for VMs that were never destroyed would outlive it.
  local left
  left=$(docker ps -aq --filter label=vcsim 2>/dev/null || true)
  if [ -n "$left" ]; then
    say "removing $(echo "$left" | wc -l) vcsim container(s) left by the server"
    docker rm -f -v $left >/dev/null || true
  fi
  [ -z "${vcsim_state:-}" ] || rm -rf "$vcsim_state"
}
