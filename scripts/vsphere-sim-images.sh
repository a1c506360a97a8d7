#!/usr/bin/env bash
# Build, offline, the images a vSphere rehearsal needs beyond the kit's, under
# their upstream names:
#   ghcr.io/kube-vip/kube-vip:<KUBE_VIP_VERSION>     the control-plane VIP pod
#       CAPV's cluster template writes (the template names v0.6.4, which the
#       proxy refuses with 403; v0.6.3 is the newest that resolves)
#   registry.k8s.io/cloud-pv-vsphere/cloud-provider-vsphere:<CPI_VERSION>
#       the vSphere cloud controller manager (sets the nodes' providerIDs)
#   localhost/tkg-e2e/vsphere-sim-node:<tag>         what a vcsim VM's container
#       runs so that the VM boots as a Kubernetes node: the kit's kind node
#       image + cloud-init reading the VMware datasource from the VMX_GUESTINFO_*
#       variables vcsim sets, with every image the node can need preloaded,
#       because nothing can be pulled: the kit's, kube-vip and the CPI, and
#       the conformance image and its test images (scripts/conformance-images.sh
#       builds them first). The label tkg-e2e.preloaded lists them, so a
#       rehearsal can check before any VM that what its flavor runs is there.
# Like the kit, every output carries a key of its inputs (label tkg-e2e.key): a
# warm run checks labels and returns in a second; a cold one compiles both
# binaries (20 min on 2 cores while the kit compiled beside it) and builds the
# node image.
# On a machine with registry access the first two are pulled as usual; a real
# vSphere needs none of this (its VMs boot a real OVA).
#
# Usage: vsphere-sim-images.sh [kube-vip] [cpi] [node]   (default: all three;
#        node needs the other two, and builds them)
# Env: KUBE_VIP_VERSION (v0.6.3), CPI_VERSION (v1.33.0),
#      KIND_NODE_IMAGE (base, kindest/node:v1.33.1),
#      VSPHERE_SIM_NODE_IMAGE (localhost/tkg-e2e/vsphere-sim-node:<base tag>),
#      TESTBED_IMAGES_FILE (the kit's images.txt; set by its env.sh),
#      VSPHERE_SIM_EXTRA_IMAGES (the conformance image and agnhost of
#        scripts/conformance-images.sh; space-separated, in docker),
#      VSPHERE_SIM_CACHE (binaries; default ~/.cache/tkg-e2e/vsphere-sim).
set -euo pipefail
log() { echo "[vsphere-sim-images +$((SECONDS))s] $*"; }
die() { echo "vsphere-sim-images: $*" >&2; exit 1; }

kv_ver=${KUBE_VIP_VERSION:-v0.6.3}
cpi_ver=${CPI_VERSION:-v1.33.0}
kube_vip_image=ghcr.io/kube-vip/kube-vip:$kv_ver
cpi_image=registry.k8s.io/cloud-pv-vsphere/cloud-provider-vsphere:$cpi_ver
base_image=${KIND_NODE_IMAGE:-kindest/node:v1.33.1}
node_image=${VSPHERE_SIM_NODE_IMAGE:-localhost/tkg-e2e/vsphere-sim-node:${base_image##*:}}
images_txt=${TESTBED_IMAGES_FILE:-${TESTBED_OUT:-${TESTBED_CACHE:-/var/cache/testbed}/out}/images.txt}
cache=${VSPHERE_SIM_CACHE:-$HOME/.cache/tkg-e2e/vsphere-sim}
certs=/etc/ssl/certs/ca-certificates.crt

want_kv="" want_cpi="" want_node=""
[ $# -gt 0 ] || set -- kube-vip cpi node
for t in "$@"; do
  case $t in
    kube-vip) want_kv=1 ;;
    cpi) want_cpi=1 ;;
    node) want_kv=1 want_cpi=1 want_node=1 ;;
    *) die "unknown target '$t' (kube-vip, cpi, node)" ;;
  esac
done

# Everything that can be missing is checked before anything slow starts.
docker info >/dev/null 2>&1 || die "docker does not answer: run make testbed first"
command -v go >/dev/null || die "go is not in PATH (the kit's up.sh checks for Go >= 1.26)"
[ -s "$certs" ] || die "$certs is missing: apt-get install ca-certificates"
if [ -n "$want_node" ]; then
  docker image inspect "$base_image" >/dev/null 2>&1 ||
    die "no $base_image in docker: run make testbed (the kit builds it), or set KIND_NODE_IMAGE"
  [ -s "$images_txt" ] ||
    die "no image list at $images_txt: run make testbed and source its env.sh (TESTBED_IMAGES_FILE)"
  # The node runs what a management or workload cluster runs: Cluster API,
  # CAPV, cert-manager, kapp-controller, busybox for test pods. Left out:
  # kind's own images (the node image itself, CAPD's haproxy) and CAPD, which
  # needs a docker socket a VM does not have.
  preload=()
  while read -r r; do
    case $r in ''|'#'*|kindest/*|*/capd-manager:*) continue ;; esac
    docker image inspect "$r" >/dev/null 2>&1 || die "$r (listed in $images_txt) is not in docker: run make testbed"
    preload+=("$r")
  done <"$images_txt"
  printf '%s\n' "${preload[@]}" | grep -q cluster-api-vsphere-controller ||
    die "$images_txt lists no CAPV image: build the kit with TESTBED_EXTRAS=capv (make testbed does by default)"
  # The conformance stage runs on the rehearsal's workload cluster too.
  for r in ${VSPHERE_SIM_EXTRA_IMAGES-registry.k8s.io/conformance:v1.33.1 registry.k8s.io/e2e-test-images/agnhost:2.53}; do
    docker image inspect "$r" >/dev/null 2>&1 || die "$r is not in docker: run scripts/conformance-images.sh (make testbed does), or set VSPHERE_SIM_EXTRA_IMAGES"
    preload+=("$r")
  done
fi

# Keys of the inputs, kit-style: bump bin<N> when the build of the binaries
# changes, img<N> when the layout of the images does, node<N> when the node
# recipe does.
gov=$(go env GOVERSION)
kv_bin_key=$(printf '%s|%s|bin1' "$kv_ver" "$gov" | sha256sum | cut -c1-24)
cpi_bin_key=$(printf '%s|%s|bin1' "$cpi_ver" "$gov" | sha256sum | cut -c1-24)
certs_sum=$(sha256sum "$certs" | cut -c1-16)
kv_key=$(printf '%s|%s|img1' "$kv_bin_key" "$certs_sum" | sha256sum | cut -c1-24)
cpi_key=$(printf '%s|%s|img1' "$cpi_bin_key" "$certs_sum" | sha256sum | cut -c1-24)
label() { docker image inspect -f '{{index .Config.Labels "tkg-e2e.key"}}' "$1" 2>/dev/null || true; }
node_key=""
if [ -n "$want_node" ]; then
  ids=$(for r in "${preload[@]}"; do echo "$r=$(docker image inspect -f '{{.Id}}' "$r")"; done | sort | sha256sum | cut -c1-16)
  node_key=$(printf '%s|%s|%s|%s|node5' "$(docker image inspect -f '{{.Id}}' "$base_image")" "$kv_key" "$cpi_key" "$ids" |
    sha256sum | cut -c1-24)
fi
if { [ -z "$want_kv" ] || [ "$(label "$kube_vip_image")" = "$kv_key" ]; } &&
   { [ -z "$want_cpi" ] || [ "$(label "$cpi_image")" = "$cpi_key" ]; } &&
   { [ -z "$want_node" ] || [ "$(label "$node_image")" = "$node_key" ]; }; then
  log "up to date:${want_kv:+ $kube_vip_image}${want_cpi:+ $cpi_image}${want_node:+ $node_image}"
  exit 0
fi

work=$(mktemp -d)
build_c=""
cleanup() { [ -z "$build_c" ] || docker rm -f -v "$build_c" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT

# Neither module is in the checksum database the proxy mirrors (its lookup is a
# 404), so the module itself is fetched with GONOSUMDB for its path only; its
# dependencies are still checked against the module's own go.sum.
modsrc() { # MODULE VERSION: writable copy in $work/src/<module>; sets mod_dir, mod_commit
  local json dir
  json=$(cd "$work" && GONOSUMDB=$1 go mod download -json "$1@$2") ||
    die "go mod download $1@$2 failed (the module proxy answers pinned versions only): $json"
  dir=$(sed -n 's/^\t"Dir": "\(.*\)",$/\1/p' <<<"$json")
  mod_commit=$(sed -n 's/^\t\t"Hash": "\(.*\)",$/\1/p' <<<"$json")
  [ -d "$dir" ] || die "go mod download $1@$2 gave no source dir: $json"
  mod_dir=$work/src/$1
  mkdir -p "$(dirname "$mod_dir")"; cp -r "$dir" "$mod_dir"; chmod -R u+w "$mod_dir"; rm -rf "$mod_dir/vendor"
}
gobuild() { # SRC OUT PKG LDFLAGS: static, since both images have no libc
  (cd "$1" && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-buildvcs=false go build -trimpath -ldflags "$4" -o "$2" "$3") ||
    die "go build of $3 in $1 failed (see above)"
}

if [ -n "$want_kv" ] && [ "$(label "$kube_vip_image")" != "$kv_key" ]; then
  c=$cache/kube-vip-$kv_ver; mkdir -p "$c"
  if [ "$(cat "$c/key" 2>/dev/null)" != "$kv_bin_key" ] || [ ! -x "$c/kube-vip" ]; then
    log "building kube-vip $kv_ver (github.com/kube-vip/kube-vip, its own go.mod/go.sum; cold: 3-6 min)"
    rm -f "$c/key"
    modsrc github.com/kube-vip/kube-vip "$kv_ver"
    # The ldflags of upstream's Makefile, so `kube-vip version` names the release.
    gobuild "$mod_dir" "$c/kube-vip" . "-s -w -X=main.Version=$kv_ver -X=main.Build=$mod_commit"
    echo "$kv_bin_key" >"$c/key"
  fi
  # Upstream's Dockerfile (the one its release workflow pushes as
  # ghcr.io/kube-vip/kube-vip): FROM scratch, the CA bundle, /kube-vip. The
  # iptables variant is a separate image (kube-vip-iptables) CAPV does not use.
  d=$work/kube-vip; mkdir -p "$d/etc/ssl/certs"
  install -m0755 "$c/kube-vip" "$d/kube-vip"
  install -m0644 "$certs" "$d/etc/ssl/certs/ca-certificates.crt"
  tar -C "$d" --numeric-owner --owner=0 --group=0 -c . |
    docker import --change "LABEL tkg-e2e.key=$kv_key" --change 'ENTRYPOINT ["/kube-vip"]' - "$kube_vip_image" >/dev/null
  log "imported $kube_vip_image"
fi

if [ -n "$want_cpi" ] && [ "$(label "$cpi_image")" != "$cpi_key" ]; then
  c=$cache/cpi-$cpi_ver; mkdir -p "$c"
  if [ "$(cat "$c/key" 2>/dev/null)" != "$cpi_bin_key" ] || [ ! -x "$c/vsphere-cloud-controller-manager" ]; then
    log "building vsphere-cloud-controller-manager $cpi_ver (k8s.io/cloud-provider-vsphere, its own go.mod/go.sum; cold: 5-15 min)"
    rm -f "$c/key"
    modsrc k8s.io/cloud-provider-vsphere "$cpi_ver"
    # What upstream's Makefile sets (LDFLAGS_CCM), with component-base's real
    # package path, so --version and the version metric say the release.
    gobuild "$mod_dir" "$c/vsphere-cloud-controller-manager" ./cmd/vsphere-cloud-controller-manager \
      "-s -w -X main.version=$cpi_ver -X k8s.io/component-base/version.gitVersion=$cpi_ver"
    echo "$cpi_bin_key" >"$c/key"
  fi
  # Upstream: distroless/static, USER nobody, /bin/vsphere-cloud-controller-manager.
  # CAPV's manifest runs it as uid 1001, which is in no passwd: the binary must
  # be world-executable and /tmp world-writable (klog and client-go write there).
  d=$work/cpi; mkdir -p "$d/bin" "$d/etc/ssl/certs" "$d/tmp" "$d/home/nonroot"; chmod 1777 "$d/tmp"
  install -m0755 "$c/vsphere-cloud-controller-manager" "$d/bin/"
  install -m0644 "$certs" "$d/etc/ssl/certs/ca-certificates.crt"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$d/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' >"$d/etc/group"
  tar -C "$d" --numeric-owner --owner=0 --group=0 -c . |
    docker import --change "LABEL tkg-e2e.key=$cpi_key" --change 'USER nobody' \
      --change 'ENTRYPOINT ["/bin/vsphere-cloud-controller-manager"]' - "$cpi_image" >/dev/null
  log "imported $cpi_image"
fi

[ -n "$want_node" ] && [ "$(label "$node_image")" != "$node_key" ] || {
  log "ready:${want_kv:+ $kube_vip_image}${want_cpi:+ $cpi_image}${want_node:+ $node_image}"; exit 0; }

log "building $node_image from $base_image (cloud-init + ${#preload[@]} + 2 preloaded images)"
# The build container never boots systemd (entrypoint sleep): nothing of a run
# (machine-id, journal, kubelet or cloud-init state) can end up in the commit.
# --network host only for apt: containers on the docker bridge cannot leave the
# host here (the kit's DOCKER-USER reject rule). /tmp and /run are tmpfs so that
# containerd's state and sockets stay out of the commit; /var is deliberately
# no volume, since the preloaded images live in /var/lib/containerd.
build_c=tkg-e2e-vsphere-sim-build-$$
# --init: sleep as PID 1 reaps nothing, and the containerd started below by
# `docker exec` would stay a zombie (alive to kill -0) once stopped.
docker run -d --init --name "$build_c" --network host --entrypoint sleep --tmpfs /tmp --tmpfs /run \
  --security-opt seccomp=unconfined "$base_image" infinity >/dev/null
if ! docker exec "$build_c" test -s /etc/apt/sources.list && ! docker exec "$build_c" sh -c 'ls /etc/apt/sources.list.d/*.sources' >/dev/null 2>&1; then
  # The host's mirror (the kit's debootstrap leaves one; this is for other bases).
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/debian.sources; do
    [ -s "$f" ] && docker cp "$f" "$build_c:$f"
  done
fi
docker exec -i "$build_c" bash -s <<'IN_NODE' || die "installing cloud-init in $base_image failed (see above; the apt step needs the Debian mirror the host uses)"
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# No recommends: sudo, eatmydata, growpart's cloud-guest-utils and the like are
# of no use in a container "VM" (the kubeadm cloud-config runs as root).
apt-get install -y -qq --no-install-recommends cloud-init >/dev/null
apt-get clean; rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin
mkdir -p /etc/cloud/cloud.cfg.d
cat >/etc/cloud/cloud.cfg.d/99-tkg-e2e-vsphere-sim.cfg <<'CFG'
# A govmomi vcsim VM backed by a container: guestinfo comes from VMX_GUESTINFO_*
# variables (DataSourceVMware's envvar method). A single datasource also makes
# ds-identify skip detection, which would look for VMware in DMI.
datasource_list: [VMware, None]
# docker owns eth0 and /etc/hosts; CAPV's metadata network section (match by
# MAC, static or DHCP) must not be applied to the container's interface.
network: {config: disabled}
manage_etc_hosts: false
# No disk to grow; apt sources are the image's own.
growpart: {mode: "off"}
resize_rootfs: false
apt: {preserve_sources_list: true}
CFG
# A kind image has no locales package, so cc_locale's locale-gen fails; its
# schema has no "off" value, so the module goes from the list.
sed -i '/^ *- locale$/d' /etc/cloud/cloud.cfg
! grep -q '^ *- locale$' /etc/cloud/cloud.cfg
# systemd gives services only what PassEnvironment= names from its own
# environment, which is the container's; without this cloud-init never sees
# what vcsim set and falls back to DataSourceNone.
vars="VMX_GUESTINFO VMX_GUESTINFO_METADATA VMX_GUESTINFO_METADATA_ENCODING VMX_GUESTINFO_USERDATA VMX_GUESTINFO_USERDATA_ENCODING VMX_GUESTINFO_VENDORDATA VMX_GUESTINFO_VENDORDATA_ENCODING"
units="cloud-init-local.service cloud-init.service cloud-config.service cloud-final.service"
for u in $units; do
  mkdir -p "/etc/systemd/system/$u.d"
  printf '[Service]\nPassEnvironment=%s\n' "$vars" >"/etc/systemd/system/$u.d/10-vmx-guestinfo.conf"
done
# The kind base drops every *.wants link; make sure the package's survive.
systemctl enable $units >/dev/null 2>&1
for u in $units; do systemctl is-enabled -q "$u" || { echo "$u is not enabled" >&2; exit 1; }; done
# A VM here is a container in a network namespace of the host's kernel,
# where net.netfilter.nf_conntrack_max is global and read-only: kube-proxy's
# default (maxPerCore 32768) makes it write the value and exit ("open
# /proc/sys/net/netfilter/nf_conntrack_max: permission denied"), so no
# Service works and the vSphere CPI never reaches the API. CAPD makes the
# same change to the bootstrap data of its container nodes
# (cluster-api test/infrastructure/docker/internal/provisioning/cloudinit/
# writefiles.go): kubeadm init gets a KubeProxyConfiguration with
# maxPerCore 0. A wrapper ahead of /usr/bin in PATH does it here, so the
# cluster objects stay CAPV's.
cat >/usr/local/bin/kubeadm <<'WRAP'
#!/bin/sh
# vSphere rehearsal node image (scripts/vsphere-sim-images.sh): skip setting
# the host-global nf_conntrack_max, as CAPD does for its container nodes.
if [ "$1" = init ]; then
  cfg="" prev=""
  for a in "$@"; do
    case $a in --config=*) cfg=${a#--config=} ;; esac
    [ "$prev" = --config ] && cfg=$a
    prev=$a
  done
  if [ -n "$cfg" ] && [ -f "$cfg" ] && ! grep -q '^kind: KubeProxyConfiguration' "$cfg"; then
    printf -- '---\napiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nconntrack:\n  maxPerCore: 0\n' >>"$cfg"
    echo "vsphere-sim node: added KubeProxyConfiguration conntrack.maxPerCore: 0 to $cfg (a container cannot set nf_conntrack_max)"
  fi
fi
exec /usr/bin/kubeadm "$@"
WRAP
chmod 0755 /usr/local/bin/kubeadm
# The kubelet's hard eviction thresholds are fractions of the filesystem it
# sees, and a VM's disk here is the host's, shared with everything else on
# it: at 85 % used the kubelet reports DiskPressure and no Machine becomes
# Available. Its image garbage collection starts at 85 % too, and removes
# the preloaded images nothing can pull back, pause (the sandbox image)
# among them: a CI run's conformance then waited on pods that never got a
# sandbox. kind and CAPD turn both off for their container nodes the same
# way (imageGCHighThresholdPercent: 100).
f=/etc/default/kubelet
ev='--eviction-hard=nodefs.available<0%,nodefs.inodesFree<0%,imagefs.available<0% --image-gc-high-threshold=100 --image-gc-low-threshold=99'
if grep -q '^KUBELET_EXTRA_ARGS=' "$f" 2>/dev/null; then
  sed -i "s|^KUBELET_EXTRA_ARGS=.*|& $ev|" "$f"
else
  echo "KUBELET_EXTRA_ARGS=$ev" >>"$f"
fi
grep -qF -- "$ev" "$f"
rm -rf /var/lib/cloud /var/log/cloud-init*.log
: >/etc/machine-id
IN_NODE
log "cloud-init $(docker exec "$build_c" dpkg-query -W -f '${Version}' cloud-init) installed"

# Preloaded like kind's node image and the kit's: imported without unpacking
# (containerd's CRI unpacks on first use) and pinned, so kubelet's image GC
# never removes what cannot be pulled back.
docker exec "$build_c" sh -c 'containerd >/tmp/containerd.log 2>&1 & echo $! >/tmp/containerd.pid'
docker exec "$build_c" sh -c 'for i in $(seq 1 40); do ctr version >/dev/null 2>&1 && exit 0; sleep 0.5; done; cat /tmp/containerd.log; exit 1' ||
  die "containerd did not start in the build container"
have=$(docker exec "$build_c" ctr -n k8s.io images ls -q)
in_ctr() { # REF: present in containerd under its normalized name
  local r=$1
  # The first path element is a registry only when a slash follows it
  # ("busybox:1.35.0" has a colon, but it is the tag).
  case $r in
    */*) case ${r%%/*} in *.*|*:*|localhost) ;; *) r=docker.io/$r ;; esac ;;
    *) r=docker.io/library/$r ;;
  esac
  grep -qxF "$r" <<<"$have"
}
todo=()
for r in "$kube_vip_image" "$cpi_image" "${preload[@]}"; do in_ctr "$r" || todo+=("$r"); done
if [ ${#todo[@]} -gt 0 ]; then
  log "importing ${#todo[@]} images into the node's containerd"
  docker save "${todo[@]}" | docker exec -i "$build_c" ctr -n k8s.io images import \
    --label=io.cri-containerd.pinned=pinned --all-platforms --no-unpack --digests - >/dev/null ||
    die "ctr images import failed"
fi
have=$(docker exec "$build_c" ctr -n k8s.io images ls -q)
for r in "$kube_vip_image" "$cpi_image" "${preload[@]}"; do in_ctr "$r" || die "$r is missing from the node's containerd after the import; it has: $(echo $have)"; done
docker exec "$build_c" sh -c 'kill $(cat /tmp/containerd.pid); for i in $(seq 1 20); do kill -0 $(cat /tmp/containerd.pid) 2>/dev/null || exit 0; sleep 0.5; done; exit 1' ||
  die "containerd did not stop in the build container"

# docker commit takes the container's config, whose entrypoint is sleep: put
# back the base's. The stop signal systemd wants cannot be set here (this
# docker's commit refuses STOPSIGNAL, as its import does): vcsim-server
# starts node VMs with --stop-signal SIGRTMIN+3.
ep=$(docker image inspect -f '{{json .Config.Entrypoint}}' "$base_image")
cmd=$(docker image inspect -f '{{json .Config.Cmd}}' "$base_image")
[ "$cmd" != null ] || cmd='[]'
docker commit --change "ENTRYPOINT $ep" --change "CMD $cmd" \
  --change "LABEL tkg-e2e.key=$node_key" --change "LABEL tkg-e2e.preloaded=\"$kube_vip_image $cpi_image ${preload[*]}\"" \
  "$build_c" "$node_image" >/dev/null
log "ready: $kube_vip_image $cpi_image $node_image"
