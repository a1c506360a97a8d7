// Package e2e is the Ginkgo entry point of the lifecycle suite: flags, suite
// setup and teardown. The stages, their order and their specs come from the
// stage registry (lifecycle.Registry).
package e2e

import (
	"flag"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/suites"
	"github.com/tkg-e2e/harness/suites/lifecycle"
)

// Flags, set by the Makefile from CONFIG, CONFIG_OVERRIDES, ARTIFACTS, RESUME and SKIP_CLEANUP.
var (
	profile = suites.RegisterProfileFlags("../config/local.yaml", "harness profile (config/local.yaml or config/vsphere.yaml)",
		"run folder for state, logs and reports (default ../artifacts/<run-id>)")
	resume        = flag.Bool("e2e.resume", false, "re-attach to the stages that passed in the kept run in -e2e.artifacts-folder")
	resumeForeign = flag.Bool("e2e.resume-foreign", false, "let -e2e.resume attach to a run another OS user started")
	skipCleanup   = flag.Bool("e2e.skip-cleanup", false, "keep everything the run created; the state file says what remains")
)

// env is shared by every stage; BeforeSuite fills it.
var env *suites.Env

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	defer suites.RestoreOutput() // SuiteSetup masks stdout and stderr; this writes the last lines
	RunSpecs(t, "TKG lifecycle conformance")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	folder := profile.ArtifactFolder(func() string { return filepath.Join("..", "artifacts", run.NewRunID()) })
	overrides, configPath := profile.Overrides(), profile.ConfigPath()
	var err error
	// The env exists even when this fails, so AfterSuite can write reports.
	env, err = suites.NewEnv(suites.EnvOptions{Registry: lifecycle.Registry, ConfigPath: configPath, Overrides: overrides,
		ArtifactFolder: folder, Resume: *resume, ResumeForeign: *resumeForeign, SkipCleanup: *skipCleanup, Out: GinkgoWriter,
		Context: ctx})
	Expect(err).NotTo(HaveOccurred())
	Expect(env.Config.Driver).To(Equal(config.PeekDriver(configPath, overrides)),
		"the Ginkgo tree was built for the driver the profile's driver: key says as written; write it as clusterctl or tanzu, not through a variable")
	Expect(suites.SuiteSetup(ctx, env)).To(Succeed(), "preflight")
})

// AfterSuite collects artifacts while the clusters still exist, then cleans
// up; it runs after failures and interrupts too, and after a failed BeforeSuite.
var _ = AfterSuite(func(ctx SpecContext) {
	if env == nil {
		return
	}
	suites.SuiteTeardown(ctx, env)
}, NodeTimeout(30*time.Minute))

// ReportAfterSuite writes the reports from the final Ginkgo report, whatever happened.
var _ = ReportAfterSuite("artifacts report", func(ctx SpecContext, report Report) {
	suites.WriteReports(ctx, env, report)
	// Release the run lock: a later RESUME=1 or clean-run finds it free.
	if env != nil && env.State != nil {
		_ = env.State.Close()
	}
})
