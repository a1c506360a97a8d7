// Package tanzu drives the tanzu CLI: the path TKG users take to create
// and delete clusters (tanzu management-cluster create, tanzu cluster
// create, and their deletes), which release qualification must test as
// such (issue 13). It holds no Ginkgo or Gomega: it returns errors and
// results, like every framework/ package.
//
// What is here:
//
//   - Run runs the user's tanzu binary once, in a process group of its own
//     (SIGINT to the group at the timeout or when ctx is cancelled,
//     SIGKILL after KillGrace, and whatever is left of the group when the
//     CLI exits), streaming stdout and stderr line by line into a redacted
//     transcript and to a Progress func.
//   - Parser turns the output, as it arrives, into Phases (the markers of
//     seed 000: "Bootstrapper created. Kubeconfig: …", "Waiting for
//     provider …", "Start creating management cluster...", "Saving
//     management cluster kubeconfig into …", "Moving all Cluster API
//     objects …", "Management cluster created!", and the workload
//     equivalents), timed by arrival, and calls Hooks (the bootstrap and
//     management kubeconfigs as soon as they are announced).
//   - A failed command comes back as a *Failure: classified (provider wait
//     timeout, package reconcile failure, vCenter error, timeout,
//     interrupted, unknown) with the lines that matter quoted, redacted,
//     and a Markdown rendering for SUMMARY.md.
//   - WriteConfigFile writes the cluster configuration file (flat KEY:
//     value, 0600, in a private folder outside the artifacts) and
//     registers its secrets with the redactor; ConfigFile.Remove deletes it.
//   - standin/ is a stand-in CLI for tests: it replays transcripts cut from
//     seed 000 (standin/testdata), writes the kubeconfigs it announces and
//     exits with the CLI's codes, so everything above is tested without
//     the real binary or Docker.
//
// How it plugs into the stages (the wiring lives in suites/tanzucli,
// suites/driver.go and framework/config/tanzu.go, not here): the
// clusterctl driver stays the default;
// a profile key `driver: tanzu` selects this one, with the binary from
// `tanzu.cli` or, when that is empty, TANZU_CLI. Then
//
//   - bootstrap + management + move are one `tanzu management-cluster
//     create` (ManagementClusterCreateArgs). The bootstrap stage's Env
//     cluster is attached in Hooks.OnBootstrapKubeconfig (in a goroutine:
//     hooks run on the reading goroutine), so a failure before the move
//     still collects kind's logs, events and resources; the management
//     cluster in OnManagementKubeconfig. The stages after it run their own
//     checks as for clusterctl; the move stage's inventory check has no
//     "before" from the harness's own discovery, and the phases give its
//     timing instead.
//   - workload is `tanzu cluster create` (ClusterCreateArgs), with its own
//     config file; cleanup is ClusterDeleteArgs then
//     ManagementClusterDeleteArgs, then the same leak checks.
//   - Run the CLI with a run-local HOME in RunInput.Env: it writes
//     ~/.kube-tkg, ~/.config/tanzu and merges into ~/.kube/config, which
//     must not be the user's.
//   - Stream the transcript into the run's work folder and copy it into
//     the artifacts with artifacts.Writer.CopyFile at the end (capped and
//     listed like clusterctl's log); the file on disk is already redacted,
//     so a crashed harness leaves nothing secret behind either.
//   - Result.Phases go into timings.json, Result.Failure.Markdown() into
//     SUMMARY.md; the timeouts come from the stage's intervals
//     (Env.Interval), never literals.
package tanzu
