#!/usr/bin/env bash
# Build, offline, the two images the conformance stage needs, under their
# upstream names, from the Kubernetes source the testbed kit already holds:
#   registry.k8s.io/conformance:<KUBERNETES_VERSION>   ginkgo + e2e.test + kubectl
#       (what Cluster API's test/framework/kubetest runs; upstream builds it
#       from cluster/images/conformance)
#   registry.k8s.io/e2e-test-images/agnhost:<tag>      test/images/agnhost, the
#       tag the e2e.test of that version asks for (test/utils/image/manifest.go)
# Like the kit, every output carries a key of its inputs (source version, Go
# version, kubectl, a recipe number): a warm run checks labels and returns in a second; a
# cold one compiles e2e.test (~10 min on 2 cores) and imports the images.
# On a machine with registry access none of this is needed: the stage pulls.
#
# The base of both images is the kit's busybox rootfs recipe (Debian's
# busybox-static, every applet linked): upstream's agnhost is Alpine with
# curl, dig, iproute2 and iperf, so conformance tests that shell out to those
# are not in the local subset (config/conformance/README.md).
#
# Env: KUBERNETES_VERSION (from the kit's env.sh), K8S_SRC (default: the kit's
#      copy, ${TESTBED_CACHE:-/var/cache/testbed}/work/src/kubernetes-<version>),
#      CONFORMANCE_CACHE (default ~/.cache/tkg-e2e/conformance).
set -euo pipefail
log() { echo "[conformance-images +$((SECONDS))s] $*"; }
die() { echo "conformance-images: $*" >&2; exit 1; }

ver=${KUBERNETES_VERSION:?KUBERNETES_VERSION is not set: source the kit env (. /var/cache/testbed/out/env.sh)}
src=${K8S_SRC:-${TESTBED_CACHE:-/var/cache/testbed}/work/src/kubernetes-$ver}
cache=${CONFORMANCE_CACHE:-$HOME/.cache/tkg-e2e/conformance}/$ver
[ -f "$src/go.mod" ] && [ -d "$src/test/e2e" ] ||
  die "no Kubernetes $ver source at $src: run the kit (make testbed), or set K8S_SRC to a kubernetes checkout with staging/"
[ -x /bin/busybox ] || die "/bin/busybox is missing: the kit's up.sh installs busybox-static (apt-get install busybox-static)"
docker info >/dev/null 2>&1 || die "docker does not answer: run make testbed first"

agnhost_tag=$(sed -n 's/.*configs\[Agnhost\] = Config{list.PromoterE2eRegistry, "agnhost", "\([^"]*\)"}.*/\1/p' "$src/test/utils/image/manifest.go")
[ -n "$agnhost_tag" ] || die "cannot read the agnhost tag from $src/test/utils/image/manifest.go"
conformance_image=registry.k8s.io/conformance:$ver
agnhost_image=registry.k8s.io/e2e-test-images/agnhost:$agnhost_tag
kubectl=${KUBECTL_BIN:-$(command -v kubectl || true)}
[ -x "$kubectl" ] || die "kubectl not found (the kit's env.sh sets KUBECTL_BIN)"

# Keys of the inputs, kit-style: bump bin<N> when the build of the binaries
# changes, img<N> when the layout of the images does.
bin_key=$(printf '%s|%s|bin1' "$ver" "$(go env GOVERSION)" | sha256sum | cut -c1-24)
key=$(printf '%s|%s|%s|img1' "$bin_key" "$(sha256sum "$kubectl" | cut -c1-16)" "$agnhost_tag" | sha256sum | cut -c1-24)
label() { docker image inspect -f '{{index .Config.Labels "tkg-e2e.key"}}' "$1" 2>/dev/null || true; }
if [ "$(label "$conformance_image")" = "$key" ] && [ "$(label "$agnhost_image")" = "$key" ]; then
  log "up to date: $conformance_image, $agnhost_image"
  exit 0
fi

mkdir -p "$cache"
if [ "$(cat "$cache/key" 2>/dev/null)" != "$bin_key" ] || [ ! -x "$cache/e2e.test" ] || [ ! -x "$cache/ginkgo" ] || [ ! -x "$cache/agnhost" ]; then
  log "building e2e.test, ginkgo and agnhost from $src (cold: ~10 min on 2 cores)"
  rm -f "$cache/key"
  ld="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=$ver -X $p.gitMajor=1 -X $p.gitMinor=$(echo "$ver" | cut -d. -f2) -X $p.gitTreeState=clean"
  done
  # CGO off: the images have no libc.
  (cd "$src" && CGO_ENABLED=0 go test -c -trimpath -ldflags "$ld" -o "$cache/e2e.test" ./test/e2e)
  (cd "$src" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$cache/ginkgo" github.com/onsi/ginkgo/v2/ginkgo)
  (cd "$src" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$cache/agnhost" ./test/images/agnhost)
  echo "$bin_key" >"$cache/key"
fi

rootfs() { # DIR: busybox with every applet, /tmp, passwd/group
  mkdir -p "$1"/bin "$1"/tmp "$1"/etc "$1"/usr/local/bin; chmod 1777 "$1"/tmp
  cp /bin/busybox "$1/bin/busybox"
  local a; for a in $(/bin/busybox --list); do [ -e "$1/bin/$a" ] || ln -s busybox "$1/bin/$a"; done
  cp /etc/ssl/certs/ca-certificates.crt "$1"/etc/ 2>/dev/null || true
}
import() { # DIR REF [--change ...]
  local dir=$1 ref=$2; shift 2
  tar -C "$dir" --numeric-owner -c . | docker import --change "LABEL tkg-e2e.key=$key" \
    --change 'ENV PATH=/usr/local/bin:/bin' "$@" - "$ref" >/dev/null
  log "imported $ref"
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

d=$work/conformance
rootfs "$d"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' >"$d/etc/passwd"
install -m0755 "$cache/e2e.test" "$cache/ginkgo" "$kubectl" "$d/usr/local/bin/"
import "$d" "$conformance_image" --change 'WORKDIR /' --change 'ENTRYPOINT ["/usr/local/bin/ginkgo"]'

# agnhost: upstream's layout (test/images/agnhost/Dockerfile): /agnhost,
# /agnhost-2 for the entrypoint tests, /uploads, porter's certificate, and the
# user/group the SupplementalGroups test expects to be defined in the image.
d=$work/agnhost
rootfs "$d"
printf 'root:x:0:0:root:/root:/bin/sh\nuser-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' >"$d/etc/passwd"
printf 'root:x:0:\nuser-defined-in-image:x:1000:\ngroup-defined-in-image:x:50000:user-defined-in-image\nnobody:x:65534:\n' >"$d/etc/group"
mkdir -p "$d/uploads" "$d/home/user-defined-in-image"
install -m0755 "$cache/agnhost" "$d/agnhost"
ln -s agnhost "$d/agnhost-2"
cp "$src/test/images/agnhost/porter/localhost.crt" "$src/test/images/agnhost/porter/localhost.key" "$d/"
import "$d" "$agnhost_image" --change 'WORKDIR /' --change 'ENTRYPOINT ["/agnhost"]' --change 'CMD ["pause"]'
log "ready: $conformance_image, $agnhost_image"
