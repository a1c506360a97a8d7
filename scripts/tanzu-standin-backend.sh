#!/usr/bin/env bash
# tanzu-standin-backend.sh ACTION - what the stand-in tanzu CLI (framework/tanzu/standin) does for real
# at each "#!backend ACTION" line of its transcripts, with kind, clusterctl and kubectl on the kit's
# images (TANZU_STANDIN_BACKEND points here), so that the harness's tanzu driver attaches to and
# checks real clusters. It stands in for TKG, not for the harness: the clusters are CAPD clusters
# made the way scripts/lifecycle-by-hand.sh makes them, in the places TKG puts them.
#
# Environment (from the stand-in): the cluster configuration file's variables (CLUSTER_NAME, NAMESPACE,
# CONTROL_PLANE_MACHINE_COUNT, WORKER_MACHINE_COUNT, KUBERNETES_VERSION); HOME, the CLI's run-local
# home; TANZU_STANDIN_KUBECONFIG / TANZU_STANDIN_MANAGEMENT_KUBECONFIG, where the bootstrap and the
# management cluster's kubeconfigs are written (the stand-in copies them where the CLI announces them).
# And the kit's: . /var/cache/testbed/out/env.sh.
#
# Actions, in the order of `tanzu management-cluster create`: bootstrap (the kind cluster the CLI announced,
# TANZU_STANDIN_KIND_NAME),
# providers (images, clusterctl init on kind), management (the management cluster in tkg-system),
# management-providers (images, clusterctl init, kapp-controller on it), packages (tkg-pkg, reconciled
# by kapp-controller), move (clusterctl move into it), delete-bootstrap (kind deleted). `tanzu cluster
# create`: workload (the cluster in NAMESPACE, kapp-controller on it, and its <name>-core package on the
# management cluster deploying into it, as TKG's per-cluster packages do). Deletes: delete-workload,
# delete-management (its containers, by CAPD's label: a self-hosted cluster cannot delete itself).
set -euo pipefail
action=${1:?usage: tanzu-standin-backend.sh ACTION}
for v in KIND_NODE_IMAGE CLUSTERCTL_CONFIG CNI_MANIFEST KAPP_CONTROLLER_MANIFEST KAPP_CONTROLLER_IMAGE CAPI_IMAGES CERT_MANAGER_IMAGES HOME CLUSTER_NAME; do
  [ -n "${!v:-}" ] || { echo "missing \$$v (the kit's env.sh, or the stand-in's environment)" >&2; exit 2; }
done
state=$HOME/.config/tanzu/standin-backend
mkdir -p "$state"
DIR=$state/scratch; mkdir -p "$DIR"
K8S=${KUBERNETES_VERSION:-v1.33.1}
# shellcheck source=lib-by-hand.sh
. "$(dirname "$0")/lib-by-hand.sh"
BKC=${TANZU_STANDIN_KUBECONFIG:?}
MKC=${TANZU_STANDIN_MANAGEMENT_KUBECONFIG:-$HOME/.kube/config}
CP=${CONTROL_PLANE_MACHINE_COUNT:-1} WORKERS=${WORKER_MACHINE_COUNT:-1}
kind_name() { cat "$state/kind-name"; }

# pkg NAMESPACE INSTALL REFNAME [KUBECONFIG_SECRET]: a Package and its PackageInstall (inline fetch,
# ytt, kapp: one ConfigMap), reconciled by kapp-controller into its own namespace or, with the Cluster
# API kubeconfig Secret, into that cluster's default namespace.
pkg() {
  local ns=$1 name=$2 ref=$3 secret=${4:-} who="  serviceAccountName: standin-package-installer"
  # kapp-controller takes a service account (its own cluster) or a kubeconfig (another), not both
  [ -z "$secret" ] || who="  cluster:
    namespace: default
    kubeconfigSecretRef: {name: $secret, key: value}"
  kubectl --kubeconfig "$MKC" apply -f - <<YAML
apiVersion: v1
kind: Namespace
metadata: {name: $ns}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: standin-package-installer, namespace: $ns}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: standin-package-installer-$ns}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects: [{kind: ServiceAccount, name: standin-package-installer, namespace: $ns}]
---
apiVersion: data.packaging.carvel.dev/v1alpha1
kind: Package
metadata: {name: $ref.0.28.0, namespace: $ns}
spec:
  refName: $ref
  version: 0.28.0
  template:
    spec:
      fetch:
      - inline:
          paths:
            config.yml: |
              apiVersion: v1
              kind: ConfigMap
              metadata: {name: $name}
              data: {package: $ref, madeBy: tanzu-standin-backend}
      template:
      - ytt: {paths: [config.yml]}
      deploy:
      - kapp: {}
---
apiVersion: packaging.carvel.dev/v1alpha1
kind: PackageInstall
metadata: {name: $name, namespace: $ns}
spec:
  packageRef: {refName: $ref, versionSelection: {constraints: 0.28.0}}
$who
YAML
  kubectl --kubeconfig "$MKC" -n "$ns" wait "packageinstall/$name" --for=condition=ReconcileSucceeded --timeout=300s
}

case $action in
bootstrap)
  name=${TANZU_STANDIN_KIND_NAME:?the stand-in names the kind cluster (Creating kind cluster: …)}
  echo "$name" >"$state/kind-name"
  kind_create "$name" "$BKC" ;;
providers)
  kind load docker-image --name "$(kind_name)" $CAPI_IMAGES $CERT_MANAGER_IMAGES
  clusterctl_init "$BKC" ;;
management)
  create_cluster "$BKC" "$CLUSTER_NAME" tkg-system "$WORKERS" "$MKC" "$CP" ;;
management-providers)
  kind load docker-image --name "$CLUSTER_NAME" $CAPI_IMAGES $CERT_MANAGER_IMAGES "$KAPP_CONTROLLER_IMAGE"
  clusterctl_init "$MKC"
  install_kapp "$MKC" ;;
packages)
  pkg tkg-system tkg-pkg tkg.tanzu.vmware.com ;;
move)
  move_all "$BKC" "$MKC" tkg-system ;;
delete-bootstrap)
  kind delete cluster --name "$(kind_name)" --kubeconfig "$BKC" ;;
workload)
  ns=${NAMESPACE:-default} wkc=$DIR/$CLUSTER_NAME.kubeconfig
  create_cluster "$MKC" "$CLUSTER_NAME" "$ns" "$WORKERS" "$wkc" "$CP"
  kind load docker-image --name "$CLUSTER_NAME" "$KAPP_CONTROLLER_IMAGE"
  install_kapp "$wkc"
  pkg "$ns" "$CLUSTER_NAME-core" core.tanzu.vmware.com "$CLUSTER_NAME-kubeconfig" ;;
delete-workload)
  ns=${NAMESPACE:-default}
  kubectl --kubeconfig "$MKC" -n "$ns" delete packageinstall "$CLUSTER_NAME-core" --ignore-not-found --wait=true --timeout=120s
  kubectl --kubeconfig "$MKC" -n "$ns" delete cluster "$CLUSTER_NAME" --wait=true --timeout=300s ;;
delete-management)
  remove_capd_cluster "$CLUSTER_NAME" ;;
*) echo "unknown action $action" >&2; exit 2 ;;
esac
