import os, re, sys
seed = open(sys.argv[1] if len(sys.argv) > 1 else '../../../../../shared/seeds/000_93e94fd379902c67.txt').read().split('\n')
incode = set()
c = False
for i, l in enumerate(seed, 1):
    if l.strip().startswith('```'):
        c = not c
        continue
    if c:
        incode.add(i)
SKIP = {167, 455, 468}
def L(a, b=None):
    """seed lines a..b (1-based, inclusive), markdown indentation and the annotator's '...' and '#' lines dropped"""
    b = b or a
    out = []
    for i in range(a, b+1):
        l = seed[i-1]
        if i not in incode or i in SKIP:
            continue
        s = l.strip()
        if s in ('', '...', ',,,') or s.startswith(('#', 'func ', '//', 'log.', 'tanzu ', '...')) or 'INFO:root' in s:
            continue
        if i == 467:
            s = s + ' ' + seed[467].strip()
        s = re.sub(r'\s*<---.*$', '', s)
        s = s.rstrip('\\').rstrip()
        s = s.replace('tkg-kind-ceus13jb4t5tab9k5jk0', '{{KIND_NAME}}')
        s = s.replace('tkg-mgmt-vc', '{{CLUSTER_NAME}}').replace('tkg-vc-antrea', '{{CLUSTER_NAME}}')
        out.append(s)
    return out
def T(*lines): return list(lines)

mc_validate = L(81, 105)
mc_kind = L(121, 127) + L(161, 168) + ['#!sleep 28'] + L(182, 185) + ['#!backend bootstrap', '#!kubeconfig bootstrap', 'Bootstrapper created. Kubeconfig: {{BOOTSTRAP_KUBECONFIG}}']
mc_boot_setup = L(193, 296)
# seed 000 elides the bootstrap cluster's "Waiting for provider" lines; these mirror the management cluster's
mc_boot_providers = ['#!backend providers', 'Waiting for provider bootstrap-kubeadm', 'Waiting for provider control-plane-kubeadm',
    'Waiting for provider infrastructure-vsphere', 'Waiting for provider cluster-api', 'Waiting for provider infrastructure-ipam-in-cluster',
    '#!sleep 15'] + L(297, 301) + ['#!sleep 5'] + L(302, 306)
mc_boot_pkg_wait = L(309, 333)
mc_boot_pkg_done = L(334, 358)
mc_carry = L(359, 368)
mc_create = L(389, 412)
mc_save = ['#!backend management', '#!kubeconfig management', '[2023-01-10T19:54:33.277Z] Saving management cluster kubeconfig into {{MANAGEMENT_KUBECONFIG}}'] + L(414, 440)
mc_mgmt_init = L(441, 470)
mc_mgmt_providers = L(471, 506)
mc_mgmt_providers_passed = L(507, 524)
mc_mgmt_pkg = L(525, 585)
mc_move = ['#!backend move'] + L(586, 806) + ['#!backend delete-bootstrap', '#!rm-kubeconfig bootstrap'] + L(807, 822) + L(835, 844)

head = ['#!child'] + mc_validate + mc_kind + mc_boot_setup + mc_boot_providers
clean = head + mc_boot_pkg_wait + mc_boot_pkg_done + mc_carry + mc_create + mc_save + mc_mgmt_init + ['#!backend management-providers'] + mc_mgmt_providers + mc_mgmt_providers_passed + ['#!backend packages'] + mc_mgmt_pkg + mc_move

debug = lambda when: [
    f'[{when}] ',
    f'[{when}] Failure while deploying management cluster, Here are some steps to investigate the cause:',
    f'[{when}] ',
    f'[{when}] Debug:',
    f'[{when}]     kubectl get po,deploy,cluster,kubeadmcontrolplane,machine,machinedeployment -A --kubeconfig {{{{BOOTSTRAP_KUBECONFIG}}}}',
    f'[{when}]     kubectl logs deployment.apps/<deployment-name> -n <deployment-namespace> manager --kubeconfig {{{{BOOTSTRAP_KUBECONFIG}}}}',
    f'[{when}] ',
    f'[{when}] To clean up the resources created by the management cluster:',
    f'[{when}] \t  tanzu management-cluster delete',
]
# provider wait on the kind cluster: three providers pass, capv and ipam never do (with a backend, kind is
# made and no provider installed: the case costs a kind cluster, not a management cluster)
unstamped = lambda lines: [l.split('] ', 1)[1] if l.startswith('[') else l for l in lines]
provider_timeout = ['#!child'] + mc_validate + mc_kind + mc_boot_setup + mc_boot_providers[1:6] + [
    '#!sleep 15',
    'Passed waiting on provider bootstrap-kubeadm after 15.51390451s',
    'Passed waiting on provider control-plane-kubeadm after 15.566739105s',
    'Passed waiting on provider cluster-api after 15.694037955s',
    "pods are not yet running for deployment 'capv-controller-manager' in namespace 'capv-system', retrying",
    '#!sleep 300',
    "pods are not yet running for deployment 'capv-controller-manager' in namespace 'capv-system', retrying",
    '#!sleep 300',
    '#!stream stderr',
] + unstamped(debug('x')) + [
    'Error: unable to set up management cluster: unable to initialize providers on bootstrap cluster: error waiting for provider components to be up and running after installing providers: timed out waiting for provider infrastructure-vsphere: timed out waiting for the condition',
    '#!exit 1',
]
# tkg-pkg on the bootstrap cluster: tanzu-framework fails, so tkg-pkg never reconciles
# (kind only, as for the provider timeout: what the harness does with a failure before the move is the same)
pkg_fail = [l for l in head if l != '#!backend providers'] + mc_boot_pkg_wait + [
    ' waiting for resource tkg-pkg of type *v1alpha1.PackageInstall to be up and running',
    ' successfully reconciled package: tanzu-addons-manager',
    ' successfully reconciled package: tanzu-cliplugins',
    '#!sleep 120',
    " waiting for 'tanzu-framework' Package to be installed, retrying",
    '#!sleep 180',
    '#!stream stderr',
    " resource reconciliation failed: ReconcileFailed. usefulErrorMessage: 'kapp: Error: waiting on reconcile packageinstall/tanzu-framework (packaging.carvel.dev/v1alpha1) namespace: tkg-system: Finished unsuccessfully (Reconcile failed: Deploying: Error (see .status.usefulErrorMessage for details))'",
] + unstamped(debug('x')) + [
    'Error: unable to set up management cluster: unable to install management packages on bootstrap cluster: package reconciliation failed: tkg-pkg: ReconcileFailed',
    '#!exit 1',
]
# the control plane never comes up and the CLI stops answering signals
hang = ['#!ignore-interrupt'] + [l for l in head if l != '#!backend providers'] + mc_boot_pkg_wait + mc_boot_pkg_done + mc_carry + L(389, 405) + ['#!hang']
# the CLI echoes every config variable it sets, the password among them, then vCenter refuses the login
echo = ['#!child'] + mc_validate[:mc_validate.index('Setting config variable "VSPHERE_FOLDER" to value "/dc0/vm/folder0"')+1] + [
    'Setting config variable "VSPHERE_PASSWORD" to value "{{VSPHERE_PASSWORD}}"',
    '#!sleep 2',
    '#!stream stderr',
    'Error: unable to set up management cluster: unable to get vSphere client: failed to login to vCenter {{VSPHERE_SERVER}} as {{VSPHERE_USERNAME}} with password {{VSPHERE_PASSWORD}}: ServerFaultCode: Cannot complete login due to an incorrect user name or password.',
    '#!exit 1',
]
wc = L(1393, 1515)
# the backend makes the cluster while the CLI waits for its kubeconfig Secret
wc.insert(wc.index('[2023-01-10T20:12:46.750Z] waiting for resource {{CLUSTER_NAME}}-kubeconfig of type *v1.Secret to be up and running'), '#!backend workload')

# the workload's vsphere-csi PackageInstall fails
wc_pkg_fail = wc[:wc.index("[2023-01-10T20:14:47.043Z] waiting for '{{CLUSTER_NAME}}-vsphere-csi' Package to be installed, retrying") + 1] + [
    "[2023-01-10T20:19:47.043Z] waiting for '{{CLUSTER_NAME}}-vsphere-csi' Package to be installed, retrying",
    '#!stream stderr',
    "[2023-01-10T20:24:47.043Z] resource reconciliation failed: ReconcileFailed. usefulErrorMessage: 'kapp: Error: waiting on reconcile daemonset/vsphere-csi-node (apps/v1) namespace: vmware-system-csi: Finished unsuccessfully (Deployment is not progressing: ProgressDeadlineExceeded)'",
    "Error: waiting for addons core packages: package reconciliation failed: '{{CLUSTER_NAME}}-vsphere-csi': ReconcileFailed",
    '#!exit 1',
]

version = ['version: v0.28.0-dev', 'buildDate: 2023-01-09', 'sha: d293a0881-dirty']
cluster_delete = ["Workload cluster '{{CLUSTER_NAME}}' is being deleted", '#!backend delete-workload']
mc_delete = ['Verifying management cluster...', 'Setting up cleanup cluster...', '#!sleep 30', 'Installing providers to cleanup cluster...',
    '#!sleep 60', 'Moving all Cluster API objects from management cluster to cleanup cluster...', '#!sleep 10',
    'Waiting for the Cluster API objects to get ready after move...', 'Deleting management cluster...', '#!backend delete-management', '#!sleep 120',
    "Management cluster '{{CLUSTER_NAME}}' deleted.", 'Deleting the management cluster context from the kubeconfig file',
    'Management cluster deleted!']

files = {
  'management-cluster-create-clean': clean,
  'management-cluster-create-provider-timeout': provider_timeout,
  'management-cluster-create-pkg-reconcile-fail': pkg_fail,
  'management-cluster-create-hang': hang,
  'management-cluster-create-echo-password': echo,
  'cluster-create-clean': wc,
  'cluster-create-pkg-reconcile-fail': wc_pkg_fail,
  'version-clean': version,
  'cluster-delete-clean': cluster_delete,
  'management-cluster-delete-clean': mc_delete,
}
for n, lines in files.items():
    open(os.path.join(os.path.dirname(os.path.abspath(__file__)), n + '.txt'), 'w').write('\n'.join(lines) + '\n')
    print(n, len(lines))
