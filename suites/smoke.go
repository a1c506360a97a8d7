package suites

import (
	"context"
	"errors"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/smoke"
	"github.com/tkg-e2e/harness/framework/stages"
)

// Smoke proves the workload cluster serves workloads before the placement
// and package checks judge it: servers spread over its nodes, a Service,
// DNS, and requests from every node, across nodes.
var Smoke = Stage{
	Definition: stages.Definition{Name: "smoke", Needs: []string{"workload"}, Category: stages.Infrastructure,
		Intervals: []string{"smoke"},
		Doc:       "a smoke workload on every workload cluster: Deployment over the nodes, Service, DNS, requests across nodes"},
	Preflight: smokePreflight,
	Spec: func(ctx context.Context, env func() *Env) {
		SmokeSpec(ctx, func() SmokeSpecInput {
			e := env()
			return SmokeSpecInput{Env: e, Clusters: e.Workloads(), Image: e.Config.Smoke.Image, Wait: e.Interval("smoke", "smoke")}
		})
	},
}

// SmokeSpecInput is the input of SmokeSpec.
type SmokeSpecInput struct {
	Env *Env
	// Clusters are the workload clusters, smoke-tested side by side.
	Clusters []*Cluster
	// Image serves and fetches (busybox: httpd, wget, nslookup, timeout).
	Image string
	Wait  config.Interval
	// RequireCrossNode fails a cluster whose clients all run on one node.
	RequireCrossNode bool
}

func (in SmokeSpecInput) StageOf() (*Env, string) { return in.Env, "smoke" }

func (in SmokeSpecInput) Validate() error {
	return InputErrors(in.Env, Unless(in.Image != "", "Image is empty (smoke.image)"),
		Unless(in.Wait.Timeout > 0, "Wait (interval smoke/smoke) is required"))
}

// SmokeSpec runs the smoke workload on every workload cluster, side by
// side when there are several, and writes smoke.md (smoke-<id>.md for a
// second cluster), passed or not.
func SmokeSpec(_ context.Context, inputGetter func() SmokeSpecInput) {
	DeclareStage("serves a workload: DNS, a Service and pod traffic across nodes", inputGetter, func(input SmokeSpecInput) StageFuncs {
		env := input.Env
		return StageFuncs{Run: func(ctx context.Context) error {
			if len(input.Clusters) == 0 {
				return ErrNoCluster(RoleWorkload)
			}
			jobs := make([]clusterJob, len(input.Clusters))
			entries, mds := make([]string, len(jobs)), make([]string, len(jobs))
			for i, c := range input.Clusters {
				jobs[i] = clusterJob{ID: c.Key(), Name: c.Name, Run: func(ctx context.Context) ([]Step, error) {
					var err error
					entries[i], mds[i], err = smokeCluster(ctx, input, c)
					return nil, err
				}}
			}
			err := eachCluster(ctx, env, "smoke", jobs)
			// Report entries are added from the spec's goroutine.
			for i, entry := range entries {
				if entry != "" {
					AddReportEntry(entry, mds[i])
				}
			}
			return err
		}}
	})
}

// smokeCluster runs the smoke workload on one workload cluster and
// returns its report entry's name and markdown ("" when it got no result).
func smokeCluster(ctx context.Context, input SmokeSpecInput, c *Cluster) (string, string, error) {
	env := input.Env
	k, err := c.Connect()
	if err != nil {
		return "", "", err
	}
	prefix, file := "[smoke]", "smoke.md"
	if c.ID != "" {
		prefix, file = "[smoke/"+c.ID+"]", "smoke-"+c.ID+".md"
	}
	res, err := smoke.Run(ctx, smoke.Input{Cluster: k, ClusterName: c.Name, Image: input.Image, Timeout: input.Wait.Timeout,
		Poll: input.Wait.Poll, Grace: input.Wait.Grace, RequireCrossNode: input.RequireCrossNode, Progress: env.Out, Prefix: prefix, Redactor: env.Redactor})
	if res == nil {
		return "", "", err
	}
	w, werr := env.ArtifactWriter(env.ArtifactFolder)
	if werr == nil {
		werr = w.WriteFile(file, []byte(res.Markdown()))
	}
	return strings.TrimSuffix(file, ".md"), res.Markdown(), errors.Join(err, werr)
}

// smokePreflight: the image must be set, and on this Docker host when the
// workload cluster's nodes are containers that get it loaded (it must be
// among the profile's images, or the nodes would try to pull it).
func smokePreflight(ctx context.Context, e *Env) error {
	img := e.Config.Smoke.Image
	if img == "" {
		return fmt.Errorf("smoke.image is not set: name an image with httpd, wget, nslookup, timeout and sh, e.g. busybox:1.35.0 (the kit's TEST_IMAGE_BUSYBOX)")
	}
	if e.Config.Profile != "local" {
		return nil
	}
	for _, im := range e.Config.Images {
		if im.Name == img && im.ForRole(RoleWorkload) {
			return node.ImagePresent(ctx, img)
		}
	}
	return fmt.Errorf("smoke.image %s is not among the profile's images for the workload cluster, so its nodes would have to pull it: add it to images (with workload in its roles)", img)
}
