#!/usr/bin/env bash
# Build, offline, what a cluster at the previous Kubernetes release needs on
# this machine, under the upstream names, so that a workload cluster can be
# created at PREVIOUS_KUBERNETES_VERSION and upgraded to the kit's
# KUBERNETES_VERSION (the release under test):
#   registry.k8s.io/kube-{apiserver,controller-manager,scheduler,proxy}:<prev>
#   kindest/node:<prev>   the kit's node image of the release under test with
#                         <prev>'s kubelet, kubeadm and kubectl and <prev>'s
#                         control-plane images preloaded
# from k8s.io/kubernetes@<prev> and its staging modules in the Go module
# proxy. etcd, CoreDNS and pause stay the kit's: kubeadm <prev> asks for
# older etcd and CoreDNS tags by default, so a cluster at <prev> pins the
# kit's tags in its kubeadm ClusterConfiguration; nothing is pulled, and
# nothing is tagged under a version it is not.
#
# Each image is derived from the kit's image of the same name at the
# release under test (same layout, same userland), with <prev>'s binary in
# place of the kit's. Like the kit, every output carries a key of its
# inputs: a warm run checks labels and returns in a second; a cold one
# copies the source and compiles seven binaries (measured: 230 s on 2 cores
# with the Go build cache the kit left; longer on an empty one).
# On a machine with registry access none of this is needed: CAPD pulls.
#
# Env: PREVIOUS_KUBERNETES_VERSION (default v1.32.5), KUBERNETES_VERSION and
#      KIND_NODE_IMAGE (the kit's env.sh), PREVIOUS_RELEASE_CACHE (default
#      ~/.cache/tkg-e2e/previous-release).
set -euo pipefail
. "$(dirname "$0")/lib-script.sh" previous-release-images

prev=${PREVIOUS_KUBERNETES_VERSION:-v1.32.5}
cur=${KUBERNETES_VERSION:?KUBERNETES_VERSION is not set: source the kit env (. /var/cache/testbed/out/env.sh)}
node_cur=${KIND_NODE_IMAGE:?KIND_NODE_IMAGE is not set: source the kit env (. /var/cache/testbed/out/env.sh)}
[[ $prev =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || die "PREVIOUS_KUBERNETES_VERSION=$prev is not a release version (v1.MINOR.PATCH)"
prev_minor=${BASH_REMATCH[1]} staging=v0.${BASH_REMATCH[1]}.${BASH_REMATCH[2]}
[[ $cur =~ ^v1\.([0-9]+)\. ]] || die "KUBERNETES_VERSION=$cur is not a release version"
[ "$prev_minor" -lt "${BASH_REMATCH[1]}" ] ||
  die "PREVIOUS_KUBERNETES_VERSION=$prev is not older than the release under test $cur: an upgrade goes from an older minor to a newer one"
docker info >/dev/null 2>&1 || die "docker does not answer: run make testbed first"

cache=${PREVIOUS_RELEASE_CACHE:-$HOME/.cache/tkg-e2e/previous-release}/$prev
lock_cache "$cache" "$prev"
src=$cache/src bin=$cache/bin
cmds="kube-apiserver kube-controller-manager kube-scheduler kube-proxy kubelet kubeadm kubectl"
control_plane="kube-apiserver kube-controller-manager kube-scheduler kube-proxy"

# Keys, kit-style: bump bin<N> when the build of the binaries changes,
# img<N> when the images' recipe does.
bin_key=$(printf '%s|%s|bin2' "$prev" "$(go env GOVERSION)" | sha256sum | cut -c1-24)
label() { docker image inspect -f '{{index .Config.Labels "tkg-e2e.key"}}' "$1" 2>/dev/null || true; }
base_id() { docker image inspect -f '{{.Id}}' "$1"; }
img_key() { printf '%s|%s|img1' "$bin_key" "$(base_id "$1")" | sha256sum | cut -c1-24; }

# The kit's images every output derives from (checked here: a die inside
# the keys' command substitutions below would not stop the script).
for ref in "$node_cur" $(for c in $control_plane; do echo "registry.k8s.io/$c:$cur"; done); do
  docker image inspect "$ref" >/dev/null 2>&1 || die "the kit's image $ref is missing: run make testbed"
done
up_to_date=1
for c in $control_plane; do
  [ "$(label "registry.k8s.io/$c:$prev")" = "$(img_key "registry.k8s.io/$c:$cur")" ] || up_to_date=
done
node_key=$(printf '%s|%s|node1' "$(img_key "$node_cur")" "$(for c in $control_plane; do base_id "registry.k8s.io/$c:$cur"; done | sha256sum | cut -c1-16)" | sha256sum | cut -c1-24)
[ "$(label "kindest/node:$prev")" = "$node_key" ] || up_to_date=
if [ -n "$up_to_date" ]; then
  say "up to date: kindest/node:$prev and the control-plane images of $prev"
  exit 0
fi

# The source: the module as the proxy serves it, with the staging modules it
# replaces copied into staging/ (what the kit does for the release under test).
copy_source() {
  [ -f "$src/.copied" ] && return 0
  local mod mods m cachedir
  mod=$(go mod download -json "k8s.io/kubernetes@$prev" | jq -r .Dir) ||
    die "k8s.io/kubernetes@$prev is not served by the module proxy (GOPROXY=$(go env GOPROXY))"
  mods=$(grep -oE 'staging/src/k8s.io/[a-z0-9-]+' "$mod/go.work" | sed 's#staging/src/##' | sort -u)
  say "copying k8s.io/kubernetes@$prev and $(echo "$mods" | wc -w) staging modules at $staging"
  (cd / && go mod download $(for m in $mods; do echo "$m@$staging"; done)) ||
    die "a staging module at $staging is not served by the module proxy"
  cachedir=$(go env GOMODCACHE)
  rm -rf "$src" && mkdir -p "$(dirname "$src")" && cp -r "$mod" "$src" && chmod -R u+w "$src"
  mkdir -p "$src/staging/src/k8s.io"
  for m in $mods; do cp -r "$cachedir/$m@$staging" "$src/staging/src/$m"; done
  chmod -R u+w "$src/staging"
  touch "$src/.copied"
}

# Go >= 1.26's url.Parse rejects an IPv4 address in brackets, which
# kubeadm's HTTPProxyCIDR preflight check writes for every 16-byte IP: under
# CAPD `kubeadm init` fails. The kit patches the release under test the same
# way: bracket only real IPv6 addresses, what the check means.
kubeadm_go126_fix() {
  local f=$src/cmd/kubeadm/app/preflight/checks.go
  grep -q 'if testIP.To4() == nil {' "$f" && return 0
  sed -i 's/^\tif len(testIP) == net.IPv6len {$/\tif testIP.To4() == nil {/' "$f"
  grep -q 'if testIP.To4() == nil {' "$f" || die "the kubeadm Go 1.26 fix did not apply to $f"
}

if [ "$(cat "$bin/key" 2>/dev/null)" != "$bin_key" ] || ! (cd "$bin" 2>/dev/null && ls $cmds >/dev/null 2>&1); then
  copy_source
  kubeadm_go126_fix
  say "building $cmds at $prev (cold: minutes on 2 cores)"
  rm -f "$bin/key"; mkdir -p "$bin"
  ld="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do # without these kubeadm reports v0.0.0-master
    ld="$ld -X $p.gitVersion=$prev -X $p.gitMajor=1 -X $p.gitMinor=$prev_minor -X $p.gitTreeState=clean"
  done
  # The module zip carries vendor/modules.txt written for the staging
  # modules as a workspace, which this go.work's module set does not match:
  # build from the module cache instead (same pinned versions, go.sum).
  # Static, like the kit's: the control-plane images have no libc.
  (cd "$src" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -mod=readonly -trimpath -ldflags "$ld" -o "$bin/" $(for c in $cmds; do echo ./cmd/$c; done))
  [ "$("$bin/kubeadm" version -o short)" = "$prev" ] || die "the kubeadm built reports $("$bin/kubeadm" version -o short), want $prev"
  echo "$bin_key" > "$bin/key"
fi

work=$(mktemp -d)
cleanup() { derive_cleanup; rm -rf "$work"; }
trap cleanup EXIT
for c in $control_plane; do
  ref=registry.k8s.io/$c:$prev base=registry.k8s.io/$c:$cur
  path=$(docker image inspect -f '{{index .Config.Entrypoint 0}}' "$base")
  [ "$(label "$ref")" = "$(img_key "$base")" ] || derive_image "$base" "$ref" "$(img_key "$base")" "$bin/$c:$path"
  docker run --rm --entrypoint "$path" "$ref" --version | grep -qx "Kubernetes $prev" || die "$ref does not run $c $prev"
done

# The node image: the kit's node with <prev>'s kubelet, kubeadm and kubectl,
# <prev>'s four control-plane images preloaded in place of the kit's, and
# /kind/version saying <prev> (kind and CAPD read it).
if [ "$(label "kindest/node:$prev")" != "$node_key" ]; then
  n=tkg-e2e-prev-node-$$
  docker rm -f -v "$n" >/dev/null 2>&1 || true
  docker run -d --network none --entrypoint=sleep --name "$n" --security-opt seccomp=unconfined "$node_cur" infinity >/dev/null
  trap 'docker rm -f -v "'"$n"'" >/dev/null 2>&1 || true; cleanup' EXIT
  for f in kubeadm kubelet kubectl; do docker cp "$bin/$f" "$n:/usr/bin/$f"; done
  docker exec "$n" sh -c "echo -n $prev > /kind/version"
  docker exec "$n" sh -c "sed -i 's#registry.k8s.io/kube-proxy:$cur#registry.k8s.io/kube-proxy:$prev#' /kind/manifests/*.yaml"
  docker exec "$n" bash -c 'nohup containerd > /dev/null 2>&1 &'
  docker exec "$n" bash -c 'for i in $(seq 1 40); do [ -S /run/containerd/containerd.sock ] && break; sleep 0.5; done; ctr version >/dev/null'
  for c in $control_plane; do
    docker save "registry.k8s.io/$c:$prev" | docker exec -i "$n" ctr --namespace=k8s.io images import \
      --label=io.cri-containerd.pinned=pinned --all-platforms --no-unpack --digests - >/dev/null
    docker exec "$n" ctr --namespace=k8s.io images rm "registry.k8s.io/$c:$cur" >/dev/null
  done
  docker exec "$n" ctr --namespace=k8s.io images ls -q | grep -v -e '^sha256:' -e '^import-' | sort > "$work/images.txt"
  for c in $control_plane; do
    grep -qx "registry.k8s.io/$c:$prev" "$work/images.txt" || die "the node image lacks registry.k8s.io/$c:$prev"
  done
  docker exec "$n" pkill containerd || true
  sleep 1
  docker commit --change 'ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]' \
    --change "LABEL tkg-e2e.key=$node_key" "$n" "kindest/node:$prev" >/dev/null
  docker rm -f -v "$n" >/dev/null
  say "built kindest/node:$prev: $(tr '\n' ' ' < "$work/images.txt")"
fi
got=$(docker run --rm --entrypoint kubeadm "kindest/node:$prev" version -o short)
[ "$got" = "$prev" ] || die "kindest/node:$prev has kubeadm $got"
say "ready: kindest/node:$prev, registry.k8s.io/{$(echo $control_plane | tr ' ' ,)}:$prev"
