// Package assert is the one engine behind the harness's assertions about
// live clusters: the placement matrix (framework/placement), the expected
// PackageInstalls (framework/packages) and cluster health (framework/health)
// implement its Check interface, and everything they would each do lives
// here once.
//
// Why one engine: both checks read a declarative file per profile, validate
// it against the same cluster roles, poll every cluster of the run until it
// settles or a deadline passes, and leave a report that must show every row
// and say why a row fails. Done twice, the two drifted (different skip
// semantics, files written past the artifacts Writer and so past its
// redaction and size cap). Here:
//
//   - Roles is the one table of cluster roles a file may name; a new role is
//     one entry there, and every loader validates its columns against it.
//   - Load and Parse are the one strict loader path (strictjson.DecodeYAML),
//     and Problems collects every problem of a file at once, each prefixed
//     with the file and the row it is in.
//   - Verdict, Status and Row are the one result shape: every row of every
//     check on every cluster is pass, fail, warn or skipped, and a skip always
//     carries its reason (a skip is never a pass).
//   - Run is the one per-cluster loop: it plans the check for every Target,
//     waits through framework/wait (progress lines, last state on timeout),
//     lets the check enrich a failure once at the end (pod logs, the
//     ClusterBootstrap mirror) and writes <check>.md and <check>.html through
//     the artifacts Writer, so they are redacted and capped like every other
//     artifact.
//   - MarkdownTable, HTMLTable, Fenced and Cell are the rendering pieces
//     the checks share, so a table or a quoted log looks the same everywhere.
//
// The package returns errors and never fails a test itself: suites turn an
// Outcome into a Ginkgo failure.
package assert
