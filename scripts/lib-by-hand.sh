# lib-by-hand.sh - the lifecycle's steps with bare CLIs (kind, clusterctl, kubectl), shared by
# lifecycle-by-hand.sh (the harness's baseline) and tanzu-standin-backend.sh (what the stand-in
# tanzu CLI does for real). Needs the kit's environment (. /var/cache/testbed/out/env.sh) and
# DIR (a scratch folder); K8S (default v1.33.1).
# shellcheck shell=bash

log() { echo "$(date +%T) $*"; }
until_ok() { # until_ok TIMEOUT_S CMD... : retry every 2s
  local t=$1; shift; local s; s=$(date +%s)
  until "$@" >/dev/null 2>&1; do
    [ $(( $(date +%s) - s )) -lt "$t" ] || { log "timed out after ${t}s: $*"; "$@"; return 1; }
    sleep 2
  done
}
kind_create() { # NAME KUBECONFIG : a kind cluster CAPD can work from (the Docker socket mounted)
  cat >"$DIR/kind-$1.yaml" <<YAML
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
nodes:
- role: control-plane
  extraMounts:
  - hostPath: /var/run/docker.sock
    containerPath: /var/run/docker.sock
YAML
  kind create cluster --name "$1" --image "$KIND_NODE_IMAGE" --config "$DIR/kind-$1.yaml" --kubeconfig "$2" --wait 3m
}
clusterctl_init() { # KUBECONFIG
  clusterctl init --config "$CLUSTERCTL_CONFIG" --kubeconfig "$1" --infrastructure docker --wait-providers --wait-provider-timeout 600
}
create_cluster() { # MGMT_KUBECONFIG NAME NAMESPACE WORKERS OUT_KUBECONFIG [CONTROL_PLANES]
  local mkc=$1 name=$2 ns=$3 workers=$4 out=$5 cps=${6:-1}
  kubectl --kubeconfig "$mkc" create namespace "$ns" --dry-run=client -o yaml | kubectl --kubeconfig "$mkc" apply -f - >/dev/null
  clusterctl generate cluster "$name" -n "$ns" --config "$CLUSTERCTL_CONFIG" --kubeconfig "$mkc" --infrastructure docker \
    --flavor development --kubernetes-version "${K8S:-v1.33.1}" --control-plane-machine-count "$cps" --worker-machine-count "$workers" >"$DIR/$name.yaml"
  until_ok 180 kubectl --kubeconfig "$mkc" apply -f "$DIR/$name.yaml"        # webhooks refuse right after init
  until_ok 600 sh -c "clusterctl get kubeconfig $name -n $ns --kubeconfig $mkc >$out && [ -s $out ]"
  until_ok 600 kubectl --kubeconfig "$out" get --raw /readyz
  log "$name API reachable; applying CNI"
  until_ok 120 kubectl --kubeconfig "$out" apply -f "$CNI_MANIFEST"
  local want=$((cps + workers))
  until_ok 900 sh -c "[ \$(kubectl --kubeconfig $out get nodes --no-headers | wc -l) -ge $want ]"
  kubectl --kubeconfig "$out" wait nodes --all --for=condition=Ready --timeout=600s
  kubectl --kubeconfig "$mkc" -n "$ns" wait "cluster/$name" --for=condition=Available --timeout=600s
}
install_kapp() { # KUBECONFIG : kapp-controller from the kit's manifest, Available with its API
  kubectl --kubeconfig "$1" apply -f "$KAPP_CONTROLLER_MANIFEST" >/dev/null
  kubectl --kubeconfig "$1" -n kapp-controller rollout status deploy/kapp-controller --timeout=180s
  kubectl --kubeconfig "$1" wait apiservice/v1alpha1.data.packaging.carvel.dev --for=condition=Available --timeout=180s
}
move_all() { # FROM_KUBECONFIG TO_KUBECONFIG NAMESPACE
  clusterctl move --kubeconfig "$1" --to-kubeconfig "$2" -n "$3" --config "$CLUSTERCTL_CONFIG" -v 1
}
remove_capd_cluster() { # NAME : a self-hosted cluster cannot delete itself: its containers, by CAPD's label
  local ids; ids=$(docker ps -aq --filter "label=io.x-k8s.kind.cluster=$1")
  [ -z "$ids" ] || docker rm -f -v $ids >/dev/null
}
