package tanzu

import "strconv"

// The command lines the stages run. They are the ones TKG's documentation
// and seed 000 use; --yes because the harness has no one to answer prompts.

// ManagementClusterCreateArgs: `tanzu management-cluster create --file F -v N --yes`.
// Verbosity 9 is what seed 000 ran with, and what the parser's markers need
// (the provider and package waits are printed from -v 3 or so on).
func ManagementClusterCreateArgs(configFile string, verbosity int) []string {
	return []string{"management-cluster", "create", "--file", configFile, "-v", strconv.Itoa(verbosity), "--yes"}
}

// ClusterCreateArgs: `tanzu cluster create --file F -v N`; the name comes
// from the file's CLUSTER_NAME.
func ClusterCreateArgs(configFile string, verbosity int) []string {
	return []string{"cluster", "create", "--file", configFile, "-v", strconv.Itoa(verbosity)}
}

// ClusterDeleteArgs: `tanzu cluster delete NAME [--namespace NS] --yes`;
// without --namespace the CLI looks in "default" only.
func ClusterDeleteArgs(name, namespace string) []string {
	args := []string{"cluster", "delete", name}
	if namespace != "" && namespace != "default" {
		args = append(args, "--namespace", namespace)
	}
	return append(args, "--yes")
}

// ManagementClusterDeleteArgs: `tanzu management-cluster delete --yes`.
func ManagementClusterDeleteArgs() []string {
	return []string{"management-cluster", "delete", "--yes"}
}

// VersionArgs: `tanzu version`.
func VersionArgs() []string { return []string{"version"} }
