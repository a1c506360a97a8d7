#!/usr/bin/env bash
# Build, offline, what a management cluster at the previous Cluster API
# release needs on this machine, so that the providers can be installed at
# PREVIOUS_CAPI_VERSION (`clusterctl init`) and upgraded to the kit's
# CAPI_VERSION (`clusterctl upgrade`):
#   registry.k8s.io/cluster-api/{cluster-api-controller,kubeadm-bootstrap-controller,
#     kubeadm-control-plane-controller,capd-manager}:<prev>
#   a clusterctl repository holding <prev> and the kit's <cur> of the four
#     providers side by side (<label>/<version>/components.yaml, where
#     clusterctl looks for a provider's other versions), and a clusterctl
#     config, the kit's with the four providers pointing there
#   clusterctl <prev> (for a flow that inits with the old binary)
# from sigs.k8s.io/cluster-api@<prev> and sigs.k8s.io/cluster-api/test@<prev>
# (CAPD) in the Go module proxy, laid out as in git and built as the kit
# builds <cur> (-tags fieldsv1string, CGO off, version ldflags).
#
# Each image is derived from the kit's image of the same name at <cur> (same
# layout, same user: 65532, CAPD root), with <prev>'s /manager in place of
# the kit's. The components are the kit's recipe: kustomize build of each
# provider's config/default, images rewritten to the release names,
# imagePullPolicy IfNotPresent. Like the kit, every output carries a key of
# its inputs: a warm run checks labels and keys and returns in a second; a
# cold one copies the source and compiles five binaries (measured: 280 s on
# 2 cores under load ~6 with the Go caches the kit left: <prev> pins other
# Kubernetes libraries than the kit's <cur>, which compile cold).
# On a machine with registry access none of this is needed: clusterctl
# fetches the release from GitHub and the images are pulled.
#
# Env: PREVIOUS_CAPI_VERSION (default v1.13.0), CAPI_VERSION and TESTBED_OUT
#      (the kit's env.sh), PREVIOUS_CAPI_CACHE (default
#      ~/.cache/tkg-e2e/previous-capi).
set -euo pipefail
. "$(dirname "$0")/lib-script.sh" previous-capi-images
# Only the export lines go to stdout, so that eval "$(bash $0)" sets them;
# progress goes to stderr.
exec 3>&1 1>&2

prev=${PREVIOUS_CAPI_VERSION:-v1.13.0}
cur=${CAPI_VERSION:?CAPI_VERSION is not set: source the kit env (. /var/cache/testbed/out/env.sh)}
out=${TESTBED_OUT:?TESTBED_OUT is not set: source the kit env (. /var/cache/testbed/out/env.sh)}
[[ $prev =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || die "PREVIOUS_CAPI_VERSION=$prev is not a release version (v1.MINOR.PATCH)"
prev_minor=${BASH_REMATCH[1]}
[[ $cur =~ ^v1\.([0-9]+)\. ]] || die "CAPI_VERSION=$cur is not a release version"
[ "$prev_minor" -lt "${BASH_REMATCH[1]}" ] ||
  die "PREVIOUS_CAPI_VERSION=$prev is not older than the kit's Cluster API $cur: an upgrade goes from an older minor to a newer one"
kit_repo=$out/repository kit_config=$out/clusterctl.yaml
kustomize=$out/bin/kustomize
[ -f "$kit_config" ] || die "the kit's clusterctl config $kit_config is missing: run make testbed"
[ -x "$kustomize" ] || die "the kit's kustomize $kustomize is missing: run make testbed"
command -v go >/dev/null || die "go is not in PATH"
docker info >/dev/null 2>&1 || die "docker does not answer: run make testbed first"

reg=registry.k8s.io/cluster-api
cache=${PREVIOUS_CAPI_CACHE:-$HOME/.cache/tkg-e2e/previous-capi}/$prev
lock_cache "$cache" "$prev"
src=$cache/src bin=$cache/bin repo=$cache/repository config=$cache/clusterctl.yaml
# image:binary:label:config-dir (config dir as in <prev>'s tree; core's is
# found below, it moved from config/ to core/config/ in v1.14)
providers="cluster-api-controller:capi-manager:cluster-api:
kubeadm-bootstrap-controller:kubeadm-bootstrap-manager:bootstrap-kubeadm:bootstrap/kubeadm/config/default
kubeadm-control-plane-controller:kubeadm-control-plane-manager:control-plane-kubeadm:controlplane/kubeadm/config/default
capd-manager:capd-manager:infrastructure-docker:test/infrastructure/docker/config/default"
field() { echo "$1" | cut -d: -f"$2"; }
images=$(for p in $providers; do echo "$reg/$(field "$p" 1):$prev"; done)
labels=$(for p in $providers; do field "$p" 3; done)

# The kit's outputs everything derives from (checked here: a die inside the
# keys' command substitutions below would not stop the script).
for p in $providers; do
  ref=$reg/$(field "$p" 1):$cur label=$(field "$p" 3)
  docker image inspect "$ref" >/dev/null 2>&1 || die "the kit's image $ref is missing: run make testbed"
  [ -f "$kit_repo/$label/$cur/components.yaml" ] && [ -f "$kit_repo/$label/$cur/metadata.yaml" ] ||
    die "the kit's repository lacks $label/$cur (components.yaml, metadata.yaml) under $kit_repo: run make testbed"
  grep -q "file://$kit_repo/$label/$cur/components.yaml" "$kit_config" ||
    die "$kit_config does not point $label at $kit_repo/$label/$cur: not the kit's config?"
done
# clusterctl upgrade goes from <prev> to <cur> only when <cur>'s metadata
# knows <prev>'s release series (and its contract).
series() { grep -A1 -E '^\s*- major: 1\s*$' "$1" | grep -qE "^\s*minor: $2\s*$"; }
series "$kit_repo/cluster-api/$cur/metadata.yaml" "$prev_minor" ||
  die "the kit's $cur metadata.yaml has no release series 1.$prev_minor: clusterctl would not upgrade from $prev"

# Keys, kit-style: bump bin<N> when the build of the binaries changes,
# img<N> when the images' recipe does, repo<N> when the repository's does.
bin_key=$(printf '%s|%s|fieldsv1string|bin1' "$prev" "$(go env GOVERSION)" | sha256sum | cut -c1-24)
label() { docker image inspect -f '{{index .Config.Labels "tkg-e2e.key"}}' "$1" 2>/dev/null || true; }
base_id() { docker image inspect -f '{{.Id}}' "$1"; }
img_key() { printf '%s|%s|img1' "$bin_key" "$(base_id "$1")" | sha256sum | cut -c1-24; }
kit_repo_hash=$(cd "$kit_repo" && for l in $labels; do find "$l/$cur" -type f; done | sort | xargs sha256sum | sha256sum | cut -c1-16)
repo_key=$(printf '%s|%s|%s|%s|repo1' "$prev" "$cur" "$(sha256sum "$kustomize" | cut -c1-16)" "$kit_repo_hash" | sha256sum | cut -c1-24)
# The config: the kit's, with the four providers pointing at the combined
# repository (cert-manager, variables and any other provider stay the kit's).
want_config=$(sed -e "1s#^\#.*\$#\# clusterctl config: the testbed kit's ($kit_config) with Cluster API $prev beside $cur (generated by scripts/previous-capi-images.sh). Use: clusterctl --config $config ...#" \
  $(for l in $labels; do echo "-e s#file://$kit_repo/$l/$cur/#file://$repo/$l/$cur/#"; done) "$kit_config")

ready() {
  say "ready: $(echo $images | tr ' ' ,), clusterctl $prev: $bin/clusterctl"
  say "clusterctl repository $repo: $(echo $labels | tr ' ' ,) at $prev and $cur"
  say "clusterctl config: $config"
  echo "export CAPI_PREVIOUS_VERSION=$prev" >&3
  echo "export CAPI_PREVIOUS_IMAGES=\"$(echo $images)\"" >&3
  echo "export CAPI_PREVIOUS_CLUSTERCTL_BIN=$bin/clusterctl" >&3
  echo "export CAPI_PREVIOUS_CLUSTERCTL_CONFIG=$config" >&3
}
up_to_date=1
for p in $providers; do
  [ "$(label "$reg/$(field "$p" 1):$prev")" = "$(img_key "$reg/$(field "$p" 1):$cur")" ] || up_to_date=
done
[ "$(cat "$repo/.key" 2>/dev/null)" = "$repo_key" ] || up_to_date=
[ "$(cat "$bin/key" 2>/dev/null)" = "$bin_key" ] && [ -x "$bin/clusterctl" ] || up_to_date=
[ "$(cat "$config" 2>/dev/null)" = "$want_config" ] || up_to_date=
if [ -n "$up_to_date" ]; then
  say "up to date: Cluster API $prev images, repository and config"
  ready
  exit 0
fi

# The source: cluster-api@<prev> with its test module in test/ (and its api
# module in api/ when it has one), as in git, so that the upstream replace
# directives (test: sigs.k8s.io/cluster-api => ../) resolve: what the kit
# does for <cur>.
mod_dir() { # MODULE@VERSION: its directory in the module cache
  local d
  d=$(cd / && go mod download -json "$1" | jq -r .Dir) && [ -d "$d" ] ||
    die "$1 is not served by the module proxy (GOPROXY=$(go env GOPROXY))"
  echo "$d"
}
copy_source() {
  [ -f "$src/.copied" ] && return 0
  local a t api=
  a=$(mod_dir "sigs.k8s.io/cluster-api@$prev")
  t=$(mod_dir "sigs.k8s.io/cluster-api/test@$prev")
  grep -qE '^\s*(replace\s+)?sigs.k8s.io/cluster-api/api\s+=>\s+\./api' "$a/go.mod" && api=$(mod_dir "sigs.k8s.io/cluster-api/api@$prev")
  say "copying sigs.k8s.io/cluster-api@$prev, test${api:+ and api} from the module cache"
  rm -rf "$src" && mkdir -p "$(dirname "$src")" && cp -r "$a" "$src" && chmod -R u+w "$src"
  rm -rf "$src/test" && cp -r "$t" "$src/test"
  if [ -n "$api" ]; then rm -rf "$src/api" && cp -r "$api" "$src/api"; fi
  chmod -R u+w "$src"
  touch "$src/.copied"
}
# core's main package and config: ./core and core/config/default from
# v1.14, the module root and config/default before.
core_pkg() { if [ -f "$src/core/main.go" ]; then echo ./core; else echo .; fi; }
core_config() { if [ -d "$src/core/config/default" ]; then echo core/config/default; else echo config/default; fi; }

if [ "$(cat "$bin/key" 2>/dev/null)" != "$bin_key" ] ||
   ! (cd "$bin" 2>/dev/null && ls clusterctl $(for p in $providers; do field "$p" 2; done) >/dev/null 2>&1); then
  copy_source
  rm -f "$bin/key"; mkdir -p "$bin"
  commit=$(cd / && go mod download -json "sigs.k8s.io/cluster-api@$prev" | jq -r '.Origin.Hash // empty')
  built=$(jq -r '.Time // empty' "$(cd / && go mod download -json "sigs.k8s.io/cluster-api@$prev" | jq -r .Info)")
  v=sigs.k8s.io/cluster-api/version
  ld="-s -w -X $v.gitVersion=$prev -X $v.gitMajor=1 -X $v.gitMinor=$prev_minor -X $v.gitTreeState=clean"
  ld="$ld -X $v.buildDate=${built:-1970-01-01T00:00:00Z} -X $v.gitCommit=${commit:-$prev} -X $v.gitReleaseTag=$prev"
  # As the kit builds <cur>: the fieldsv1string tag, static (the images
  # have no libc), from the module cache (-mod=readonly: the versions the
  # module's go.sum pins; module zips carry no vendor/). One go build at a
  # time: each already uses every core.
  gob() { # DIR NAME PKG
    say "building $2 $prev ($3)"
    (cd "$1" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -mod=readonly -tags=fieldsv1string -trimpath -ldflags "$ld" -o "$bin/$2" "$3") ||
      die "go build of $2 ($3) at $prev failed"
  }
  gob "$src" capi-manager "$(core_pkg)"
  gob "$src" kubeadm-bootstrap-manager ./bootstrap/kubeadm
  gob "$src" kubeadm-control-plane-manager ./controlplane/kubeadm
  gob "$src/test" capd-manager ./infrastructure/docker
  gob "$src" clusterctl ./cmd/clusterctl
  [ "$("$bin/clusterctl" version -o short)" = "$prev" ] || die "the clusterctl built reports $("$bin/clusterctl" version -o short), want $prev"
  # -trimpath keeps -ldflags out of the build info: look for the values.
  for p in $providers; do
    b=$bin/$(field "$p" 2)
    go version -m "$b" | grep -q 'build\s-tags=fieldsv1string$' && go version -m "$b" | grep -q 'build\sCGO_ENABLED=0$' ||
      die "$b was not built with -tags=fieldsv1string and CGO_ENABLED=0"
    grep -aqF -- "${commit:-$prev}" "$b" || die "$b was not linked with version $prev (${commit:-$prev})"
  done
  echo "$bin_key" > "$bin/key"
fi

work=$(mktemp -d)
cleanup() { derive_cleanup; rm -rf "$work"; }
trap cleanup EXIT
for p in $providers; do
  ref=$reg/$(field "$p" 1):$prev base=$reg/$(field "$p" 1):$cur
  path=$(docker image inspect -f '{{index .Config.Entrypoint 0}}' "$base")
  [ "$path" = /manager ] || die "the kit's $base runs $path, not /manager: not the kit's layout?"
  [ "$(label "$ref")" = "$(img_key "$base")" ] || derive_image "$base" "$ref" "$(img_key "$base")" "$bin/$(field "$p" 2):$path"
  # The binary runs in the image (static, the image's user): its flags print.
  help=$(docker run --rm --network none "$ref" --help 2>&1) || die "$ref does not run its /manager: $(echo "$help" | tail -3)"
  grep -q -- '--leader-elect' <<<"$help" || die "$ref's /manager --help does not list --leader-elect: not a Cluster API manager?"
done

# The repository: <prev> built with the kit's recipe, beside copies of the
# kit's <cur> (clusterctl lists a provider's versions as the directories
# beside the one its URL names; it skips symlinks).
if [ "$(cat "$repo/.key" 2>/dev/null)" != "$repo_key" ]; then
  copy_source
  say "writing the clusterctl repository $repo ($prev, and the kit's $cur)"
  rm -rf "$repo.tmp"; mkdir -p "$repo.tmp"
  for p in $providers; do
    img=$(field "$p" 1) l=$(field "$p" 3) dir=$(field "$p" 4)
    [ -n "$dir" ] || dir=$(core_config)
    d=$repo.tmp/$l/$prev; mkdir -p "$d"
    "$kustomize" build "$src/$dir" \
      | sed -E "s#gcr.io/k8s-staging-cluster-api/$img:main#$reg/$img:$prev#; s#imagePullPolicy: Always#imagePullPolicy: IfNotPresent#" > "$d/components.yaml" ||
      die "kustomize build of $src/$dir failed"
    grep -q "image: $reg/$img:$prev" "$d/components.yaml" || die "the image of $l $prev was not rewritten to $reg/$img:$prev"
    ! grep -q 'imagePullPolicy: Always' "$d/components.yaml" || die "$l $prev still has imagePullPolicy: Always"
    cp "$src/metadata.yaml" "$d/metadata.yaml"
    series "$d/metadata.yaml" "$prev_minor" || die "$prev's metadata.yaml has no release series 1.$prev_minor"
    cp -r "$kit_repo/$l/$cur" "$repo.tmp/$l/$cur"
  done
  for f in "$src"/test/infrastructure/docker/templates/*.yaml; do
    case $(basename "$f") in *in-memory*) ;; *) cp "$f" "$repo.tmp/infrastructure-docker/$prev/";; esac
  done
  echo "$repo_key" > "$repo.tmp/.key"
  rm -rf "$repo" && mv "$repo.tmp" "$repo"
fi
if [ "$(cat "$config" 2>/dev/null)" != "$want_config" ]; then
  echo "$want_config" > "$config.tmp" && mv "$config.tmp" "$config"
  for l in $labels; do
    grep -q "url: file://$repo/$l/$cur/components.yaml" "$config" || die "$config does not point $l at $repo/$l/$cur"
  done
  say "wrote $config"
fi
ready
