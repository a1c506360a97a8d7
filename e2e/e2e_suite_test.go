// Package e2e is the Ginkgo entry point of the harness: flags, suite setup and
// teardown, and the order of the stages. The stages themselves are in suites/.
package e2e

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/redact"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/suites"
)

// Flags, set by the Makefile from CONFIG, CONFIG_OVERRIDES, ARTIFACTS, RESUME and SKIP_CLEANUP.
var (
	configPath     = flag.String("e2e.config", "../config/local.yaml", "harness profile (config/local.yaml or config/vsphere.yaml)")
	configOverride = flag.String("e2e.config-overrides", "", "comma-separated override files merged over the profile")
	artifactFolder = flag.String("e2e.artifacts-folder", "", "run folder for state, logs and reports (default ../artifacts/<run-id>)")
	resume         = flag.Bool("e2e.resume", false, "re-attach to the stages that passed in the kept run in -e2e.artifacts-folder")
	skipCleanup    = flag.Bool("e2e.skip-cleanup", false, "keep everything the run created; the state file says what remains")
)

// env is shared by every stage; BeforeSuite fills it.
var env *suites.Env

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "TKG lifecycle conformance")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	folder := *artifactFolder
	if folder == "" {
		folder = filepath.Join("..", "artifacts", time.Now().UTC().Format("20060102-150405"))
	}
	folder, _ = filepath.Abs(folder)
	Expect(os.MkdirAll(folder, 0o755)).To(Succeed(), "cannot create the artifacts folder %s", folder)
	// The env exists from here on, so AfterSuite can write reports even when
	// the config is bad.
	env = &suites.Env{ArtifactFolder: folder, Redactor: redact.New(), Resume: *resume, SkipCleanup: *skipCleanup}
	env.Out = env.Redactor.Writer(GinkgoWriter)

	var overrides []string
	if *configOverride != "" {
		overrides = strings.Split(*configOverride, ",")
	}
	cfg, err := config.Load(config.LoadOptions{Path: *configPath, Overrides: overrides})
	Expect(err).NotTo(HaveOccurred(), "the harness config is not valid")
	env.Config = cfg
	env.Redactor.Add(cfg.Secrets()...)

	if *resume {
		env.State, err = run.Load(folder)
		Expect(err).NotTo(HaveOccurred())
		env.Printf("resuming run %s from %s", env.State.RunID, env.State.Path())
	} else {
		env.State, err = run.New(folder, filepath.Base(folder), cfg.Profile, cfg.Source)
		Expect(err).NotTo(HaveOccurred())
	}
	env.Printf("run %s: profile %s, artifacts in %s", env.State.RunID, cfg.Profile, folder)
	suites.SuiteSetup(ctx, env)
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
})
