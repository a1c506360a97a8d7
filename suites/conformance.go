package suites

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"

	"github.com/tkg-e2e/harness/framework/artifacts/report"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/conformance"
	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/stages"
)

// Conformance runs Kubernetes' conformance tests on the workload cluster.
var Conformance = Stage{
	Definition: stages.Definition{Name: "conformance", Needs: []string{"workload"}, Category: stages.Conformance,
		Intervals: []string{"load-images", "run-conformance"},
		Doc:       "Kubernetes conformance (e2e.test in the conformance image, via Cluster API's kubetest) on the first workload cluster"},
	Preflight: conformancePreflight,
	Spec: func(ctx context.Context, env func() *Env) {
		ConformanceSpec(ctx, func() ConformanceSpecInput {
			e := env()
			cf := e.Config.Conformance
			in := ConformanceSpecInput{Env: e, Cluster: e.Cluster(RoleWorkload), KubetestConfig: cf.KubetestConfig,
				Image: e.Config.ConformanceImage(), Pull: cf.Pull, GinkgoNodes: cf.GinkgoNodes, NotSelected: cf.NotSelected,
				LoadImages: e.Interval("conformance", "load-images"), Run: e.Interval("conformance", "run-conformance")}
			for _, im := range cf.Images {
				in.Images = append(in.Images, clusterctl.ContainerImage{Name: im.Name, LoadBehavior: clusterctl.LoadImageBehavior(im.LoadBehavior)})
			}
			return in
		})
	},
}

// ConformanceSpecInput is the input of ConformanceSpec.
type ConformanceSpecInput struct {
	Env     *Env
	Cluster *Cluster
	// KubetestConfig selects the tests (Cluster API's kubetest config format).
	KubetestConfig string
	Image          string
	Pull           bool
	// Images are the test images the selection needs, loaded into the
	// cluster's nodes when they are containers.
	Images      []clusterctl.ContainerImage
	GinkgoNodes int
	NotSelected string
	LoadImages  config.Interval
	Run         config.Interval
}

func (in ConformanceSpecInput) StageOf() (*Env, string) { return in.Env, "conformance" }

func (in ConformanceSpecInput) Validate() error {
	return InputErrors(in.Env,
		Unless(in.KubetestConfig != "", "KubetestConfig is empty (conformance.kubetestConfig)"),
		Unless(in.Image != "", "Image is empty (conformance.image)"),
		Unless(in.Run.Timeout > 0, "Run (interval conformance/run-conformance) is required"))
}

// ConformanceSpec loads the test images into the workload cluster, runs the
// conformance image against it and reports every conformance test: the
// selection's results, and the rest as skipped with the reason.
func ConformanceSpec(_ context.Context, inputGetter func() ConformanceSpecInput) {
	DeclareStage("passes the Kubernetes conformance tests of its selection", inputGetter, func(input ConformanceSpecInput) StageFuncs {
		env := input.Env
		return StageFuncs{Run: func(ctx context.Context) error {
			c := input.Cluster
			if c == nil {
				return ErrNoCluster(RoleWorkload)
			}
			if len(input.Images) > 0 && c.DockerNodes() {
				res, err := node.LoadImages(ctx, node.LoadImagesInput{ClusterName: c.Name, Images: input.Images, Pull: input.Pull,
					Timeout: input.LoadImages.Timeout, Progress: env.Out, Prefix: "[conformance]"})
				if err != nil {
					return fmt.Errorf("loading the conformance test images into %s: %w", c.Name, err)
				}
				env.Printf("[conformance] images: %d loaded, %d already there, into %d node(s)", len(res.Loaded), len(res.Present), len(res.Nodes))
			}
			w, err := env.ArtifactWriter(env.ArtifactFolder)
			if err != nil {
				return err
			}
			env.Printf("[conformance] running %s on cluster %s with %s (bounded by %s)", input.Image, c.Name, filepath.Base(input.KubetestConfig), input.Run.Timeout)
			res, err := conformance.Run(ctx, conformance.Input{ClusterName: c.Name, KubeconfigPath: c.Kubeconfig, Scheme: kube.Scheme(),
				ConfigFile: input.KubetestConfig, Image: input.Image, Pull: input.Pull, GinkgoNodes: input.GinkgoNodes,
				NotSelected: input.NotSelected, WorkDir: filepath.Join(env.KubeconfigDir, "kubetest"), Writer: w, Timeout: input.Run.Timeout})
			if res != nil {
				sum := &report.ConformanceResult{Passed: !res.Failed(), Summary: res.Summary(), Report: "conformance/conformance.md", JUnit: res.JUnit}
				for _, t := range res.Tests {
					if t.Status == conformance.Failed {
						sum.FailedTests = append(sum.FailedTests, t.Name)
					}
				}
				env.UpdateReports(func(r *Reports) { r.Conformance = sum })
				AddReportEntry("conformance", res.Markdown())
				env.Printf("[conformance] %s", res.Summary())
			}
			if err != nil {
				return err
			}
			return res.Error()
		}}
	})
}

// conformancePreflight checks, before any cluster exists, what the stage
// needs at the end of the run: a kubetest config that selects tests, and
// (without pull) the conformance image and the test images on this host.
func conformancePreflight(ctx context.Context, e *Env) error {
	cf := e.Config.Conformance
	if cf.KubetestConfig == "" {
		return fmt.Errorf("conformance.kubetestConfig is not set: point it at a kubetest config such as config/conformance/local-subset.yaml (or leave the conformance stage out: make e2e FOCUS=...)")
	}
	if _, err := conformance.ReadSelection(cf.KubetestConfig); err != nil {
		return err
	}
	if cf.Pull {
		return nil
	}
	images := []string{e.Config.ConformanceImage()}
	for _, im := range cf.Images {
		images = append(images, im.Name)
	}
	var errs []error
	for _, im := range images {
		if err := conformance.ImagePresent(ctx, im); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
