# Sourced by scripts that need a real Boskos server: build it from the
# pinned module, give it a kind cluster with its CRDs (it keeps every
# resource as a ResourceObject there), start it with a resource file.
# Needs: $root (the repo), say(). Sets: boskos_url, boskos_kubeconfig.
# Call stop_boskos at exit.

boskos_version=v0.0.0-20210823185622-ae371c628ac9
boskos_cache=${XDG_CACHE_HOME:-$HOME/.cache}/tkg-e2e/boskos/$boskos_version

# build_boskos builds cmd/boskos once per (version, Go version, recipe):
# the module's go.mod has replace directives, so `go install pkg@version`
# refuses it; it is built inside a copy of the module instead. Its graph
# names vbom.ml/util, which the module proxy answers with 403: nothing
# imports it, so an empty stand-in module satisfies the graph.
build_boskos() {
  local key="$boskos_version|$(go env GOVERSION)|recipe1"
  if [ -x "$boskos_cache/boskos" ] && [ "$(cat "$boskos_cache/key" 2>/dev/null)" = "$key" ]; then
    return 0
  fi
  say "building boskos $boskos_version (first time: a few minutes)"
  local src; src=$(mktemp -d "${TMPDIR:-/tmp}/boskos-src.XXXXXX")
  (cd "$src" && GOFLAGS= go mod download -json "sigs.k8s.io/boskos@$boskos_version") > "$src/dl.json"
  cp -r "$(jq -r .Dir "$src/dl.json")" "$src/m" && chmod -R u+w "$src/m"
  mkdir -p "$src/vbom" && echo "module vbom.ml/util" > "$src/vbom/go.mod"
  mkdir -p "$boskos_cache"
  (cd "$src/m" && go mod edit -replace "vbom.ml/util=$src/vbom" &&
    GOFLAGS=-mod=mod go build -o "$boskos_cache/boskos" ./cmd/boskos)
  echo "$key" > "$boskos_cache/key"
  rm -rf "$src"
}

# start_boskos <resource file> <resource count> [port]: a kind cluster
# named after this process, Boskos's CRDs (config/boskos/crds.yaml), and the
# server on 127.0.0.1:<port>, waited for until it has written all <count>
# resources of the file (it adds them one by one, seconds apart).
start_boskos() {
  local resources=$1 count=$2 port=${3:-18080} p
  # Boskos logs a port it cannot bind and keeps running: check first.
  for p in "$port" $((port + 1)) $((port + 2)) $((port + 3)); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "start_boskos: port $p is in use (another Boskos?); pass another port" >&2; return 1
    fi
  done
  boskos_state=$(mktemp -d "${TMPDIR:-/tmp}/boskos.XXXXXX")
  boskos_kind=tkg-e2e-boskos-$$
  boskos_kubeconfig=$boskos_state/kubeconfig
  say "kind cluster $boskos_kind for Boskos's CRDs"
  "${KIND_BIN:-kind}" create cluster --name "$boskos_kind" --image "${KIND_NODE_IMAGE:-kindest/node:v1.33.1}" \
    --kubeconfig "$boskos_kubeconfig" --wait 120s >"$boskos_state/kind.log" 2>&1 ||
    { cat "$boskos_state/kind.log" >&2; return 1; }
  kubectl --kubeconfig "$boskos_kubeconfig" apply -f "$root/config/boskos/crds.yaml" >/dev/null
  kubectl --kubeconfig "$boskos_kubeconfig" wait --for condition=established --timeout=60s \
    crd/resources.boskos.k8s.io crd/dynamicresourcelifecycles.boskos.k8s.io >/dev/null
  "$boskos_cache/boskos" -kubeconfig "$boskos_kubeconfig" -config "$resources" -namespace default \
    -port "$port" -metrics-port $((port + 1)) -health-port $((port + 2)) -pprof-port $((port + 3)) \
    >"$boskos_state/boskos.log" 2>&1 &
  boskos_pid=$!
  boskos_url=http://127.0.0.1:$port
  for _ in $(seq 1 60); do
    curl -sf "$boskos_url/metric?type=vsphere-testbed" >/dev/null 2>&1 && break
    kill -0 "$boskos_pid" 2>/dev/null || break
    sleep 1
  done
  local n=0
  for _ in $(seq 1 120); do
    n=$(kubectl --kubeconfig "$boskos_kubeconfig" get resources.boskos.k8s.io -o name 2>/dev/null | wc -l)
    [ "$n" -ge "$count" ] && break
    kill -0 "$boskos_pid" 2>/dev/null || break
    sleep 0.5
  done
  [ "$n" -ge "$count" ] && curl -sf "$boskos_url/metric?type=vsphere-testbed" >/dev/null ||
    { echo "boskos did not start ($n of $count resources written):" >&2; tail -20 "$boskos_state/boskos.log" >&2; return 1; }
  say "boskos $boskos_version at $boskos_url (resources in kind cluster $boskos_kind)"
}

stop_boskos() {
  if [ -n "${boskos_pid:-}" ] && kill -0 "$boskos_pid" 2>/dev/null; then
    kill "$boskos_pid"; wait "$boskos_pid" 2>/dev/null || true
  fi
  if [ -n "${boskos_kind:-}" ]; then
    "${KIND_BIN:-kind}" delete cluster --name "$boskos_kind" >/dev/null 2>&1 || true
  fi
  [ -z "${boskos_state:-}" ] || rm -rf "$boskos_state"
}

# boskos_call METHOD PATH?QUERY [body]: one API call from outside the harness.
boskos_call() {
  curl -sf -X "$1" "$boskos_url/$2" ${3:+-d "$3"}
}
