package suites

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tkg-e2e/harness/framework/cleanup"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/stages"
	"github.com/tkg-e2e/harness/framework/vsphere"
	"github.com/tkg-e2e/harness/framework/vsphere/ovagen"
)

// OVA imports the node OVAs as vCenter templates.
var OVA = Stage{
	Definition: stages.Definition{Name: "ova", Category: stages.Infrastructure, Intervals: []string{"connect", "import"},
		Kinds: []string{vsphere.ResourceKind},
		Doc:   "imports node OVAs into vCenter as templates, checks their vApp properties, reuses them on a second import"},
	Spec: func(ctx context.Context, env func() *Env) {
		OVASpec(ctx, func() OVASpecInput {
			e := env()
			return OVASpecInput{Env: e, Placement: placementOf(e.Config), OVAs: e.Config.OVA.Images,
				Concurrency: e.Config.OVA.Concurrency, Replace: e.Config.OVA.Replace, Import: e.Interval("ova", "import"),
				Connect: func(ctx context.Context) (*vsphere.Session, error) {
					return vsphereSession(ctx, e, e.Interval("ova", "connect"))
				}}
		})
	},
	Cleanup: func(o CleanupOptions) StageCleanup {
		if o.DeleteTemplates && o.VSphere != nil {
			return StageCleanup{Deleters: map[string]cleanup.Deleter{vsphere.ResourceKind: deleteTemplate(o)}}
		}
		return StageCleanup{Deleters: map[string]cleanup.Deleter{vsphere.ResourceKind: keepTemplate(o.State)}}
	},
}

// keepTemplate is the "deleter" of templates: they are kept on purpose (the
// next run reuses them), except those imported into the in-process vcsim,
// which ended with the process that ran it (recorded per template: a vcsim
// server process, like a vCenter, keeps them).
func keepTemplate(s *run.State) cleanup.Deleter {
	return func(_ context.Context, r run.Resource) (string, error) {
		if s != nil && r.Attributes[attrInProcessSimulator] == "true" {
			return "gone with the in-process vcsim", s.SetResourceState(r.Key(), "deleted")
		}
		return "", cleanup.Keep(fmt.Sprintf("template %s is kept for the next run (by hand: %s)", r.Name, r.DeleteHint))
	}
}

// deleteTemplate removes a template the run imported (ova.deleteTemplates).
func deleteTemplate(o CleanupOptions) cleanup.Deleter {
	keep := keepTemplate(o.State)
	return func(ctx context.Context, r run.Resource) (string, error) {
		if r.Attributes[attrInProcessSimulator] == "true" {
			return keep(ctx, r)
		}
		s, err := o.VSphere(ctx)
		if err != nil {
			return "", err
		}
		if err := s.DeleteTemplate(ctx, r.Name, o.ClusterTimeout, o.Progress, o.Prefix); err != nil {
			return "", err
		}
		return "deleted (ova.deleteTemplates)", nil
	}
}

// attrInProcessSimulator marks a template imported into the vcsim this
// process ran.
const attrInProcessSimulator = "inProcessSimulator"

// templateRecorder records templates in the run state with where they live.
type templateRecorder struct {
	*run.State
	inProcess bool
}

func (t templateRecorder) PutResource(r run.Resource) error {
	if t.inProcess {
		r.SetAttribute(attrInProcessSimulator, "true")
	}
	return t.State.PutResource(r)
}

// OVASpecInput is the input of OVASpec.
type OVASpecInput struct {
	Env *Env
	// Connect opens (or returns) the run's vCenter session.
	Connect func(ctx context.Context) (*vsphere.Session, error)
	// Placement is where templates go.
	Placement vsphere.Placement
	// OVAs are the node OVAs to import (generated first when they say so).
	OVAs        []config.OVA
	Concurrency int
	Replace     bool
	Import      config.Interval
}

func (in OVASpecInput) StageOf() (*Env, string) { return in.Env, "ova" }

func (in OVASpecInput) Validate() error {
	return InputErrors(in.Env, Unless(len(in.OVAs) > 0, "OVAs is empty: list the node OVAs to import under ova.images"),
		Unless(in.Connect != nil && in.Import.Timeout > 0, "Connect and Import (an interval) are required"))
}

// OVASpec imports the node OVAs of the config as templates, checks their vApp
// properties, then imports them again to prove the stage is idempotent (every
// template reused), as a second run against the same vCenter would.
func OVASpec(_ context.Context, inputGetter func() OVASpecInput) {
	getInput := DeclareStage("imports node OVAs as templates with the expected vApp properties", inputGetter, func(input OVASpecInput) StageFuncs {
		env := input.Env
		return StageFuncs{Run: func(ctx context.Context) error {
			session, err := input.Connect(ctx)
			if err != nil {
				return err
			}
			if err := generateTestOVAs(env.Run, input.OVAs); err != nil {
				return err
			}
			results, err := importOVAs(ctx, env, input, session)
			reportImports(env.Run, results)
			if err != nil {
				return err
			}
			var problems []error
			for _, r := range results {
				if err := session.ValidateProperties(ctx, input.Placement.Datacenter, r.Path, expectedProperties(input.OVAs, r.Name)); err != nil {
					problems = append(problems, err)
				}
			}
			return errors.Join(problems...)
		}}
	})

	It("reuses every template on a second import of the same OVAs", func(ctx SpecContext) {
		input := getInput()
		env := input.Env
		session := env.VSphere()
		if !env.State.Passed("ova") || session == nil {
			Skip("the import did not pass, so there is nothing to reuse")
		}
		results, err := importOVAs(ctx, env, input, session)
		reportImports(env.Run, results)
		Expect(err).NotTo(HaveOccurred())
		for _, r := range results {
			Expect(r.Action).To(Equal(vsphere.Reused), "template %s was %s on the second import; an unchanged OVA must be reused", r.Name, r.Action)
		}
	})
}

func placementOf(cfg *config.Config) vsphere.Placement {
	v := cfg.VSphere
	return vsphere.Placement{Datacenter: v.Datacenter, Folder: v.Folder, Datastore: v.Datastore, ResourcePool: v.ResourcePool, Network: v.Network}
}

// vsphereSession connects to the configured vCenter, or starts vcsim and
// connects to it over the same SOAP API. The session (and simulator) live
// until the suite ends, so the artifact collectors can read the inventory.
func vsphereSession(ctx context.Context, env *Env, connect config.Interval) (*vsphere.Session, error) {
	if s := env.VSphere(); s != nil {
		return s, nil
	}
	cfg := env.Config.VSphere
	var in vsphere.SessionInput
	if cfg.Simulator {
		sim, err := vsphere.StartSimulatorWithPassword(cfg.Password.Reveal())
		if err != nil {
			return nil, fmt.Errorf("starting vcsim: %w", err)
		}
		env.AddCloser("vcsim", func(context.Context) error { sim.Close(); return nil })
		env.AddRunSecret(sim.Password)
		env.Printf("[ova] vcsim (VPX model) listening on %s", sim.Server)
		in = sim.SessionInput()
	} else {
		in = vsphere.SessionInput{Server: cfg.Server, Username: cfg.Username, Password: cfg.Password.Reveal(),
			Thumbprint: cfg.TLSThumbprint, Insecure: cfg.Insecure, CAFile: cfg.CAFile}
	}
	in.ConnectTimeout, in.Redactor = connect.Timeout, env.Redactor
	s, err := vsphere.Connect(ctx, in)
	if err != nil {
		return nil, err
	}
	env.AddCloser("vsphere session", s.Close)
	env.SetVSphere(s)
	return s, nil
}

// generateTestOVAs writes the OVAs the config asks to synthesize (local
// profile): no binary OVA is committed. The seed comes from the name, so the
// same config always produces the same OVA and a second import can reuse it.
func generateTestOVAs(env *Run, ovas []config.OVA) error {
	for _, o := range ovas {
		if o.Generate == nil {
			continue
		}
		if _, err := os.Stat(o.Source); err == nil {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(o.Source), 0o755); err != nil {
			return err
		}
		h := fnv.New64a()
		h.Write([]byte(o.Name))
		res, err := ovagen.Write(o.Source, ovagen.Options{Name: o.Name, Properties: o.Properties,
			DataSize: int64(o.Generate.DiskMiB) << 20, Seed: h.Sum64()})
		if err != nil {
			return fmt.Errorf("generating test OVA %s: %w", o.Source, err)
		}
		env.Printf("[ova] generated test OVA %s (%d bytes, sha256 %s)", res.Path, res.Size, res.SHA256)
	}
	return nil
}

func importOVAs(ctx context.Context, env *Env, in OVASpecInput, s *vsphere.Session) ([]vsphere.Result, error) {
	var ovas []vsphere.OVA
	for _, o := range in.OVAs {
		ovas = append(ovas, vsphere.OVA{Source: o.Source, Name: o.Name, SHA256: o.SHA256, Properties: o.Properties})
	}
	return s.ImportOVAs(ctx, vsphere.ImportInput{
		Placement:    in.Placement,
		OVAs:         ovas,
		Concurrency:  in.Concurrency,
		Replace:      in.Replace,
		RunID:        env.State.RunID,
		Downloads:    runDownloads(env),
		Timeout:      in.Import.Timeout,
		PollInterval: in.Import.Poll,
		Progress:     env.Out,
		Prefix:       "[ova]",
		Recorder:     templateRecorder{State: env.State, inProcess: env.Config.VSphere.Simulator},
		CreatedBy:    "ova",
	})
}

// ovaDownloads keeps each run's downloaded OVAs (by *Env) between the
// stage's imports, so a URL is fetched once per run.
var ovaDownloads sync.Map

// runDownloads is the run's OVA download cache: a 0700 folder beside the
// run's kubeconfigs (never under the collected artifacts folder), removed by
// the run's closers on every exit, interrupted runs included.
func runDownloads(env *Env) *vsphere.Downloads {
	fresh := &vsphere.Downloads{Parent: env.KubeconfigDir, MaxSize: env.Config.OVA.MaxDownloadBytes()}
	v, loaded := ovaDownloads.LoadOrStore(env, fresh)
	if !loaded {
		env.AddCloser("ova downloads", func(context.Context) error {
			ovaDownloads.Delete(env)
			return fresh.Close()
		})
	}
	return v.(*vsphere.Downloads)
}

func expectedProperties(ovas []config.OVA, template string) map[string]string {
	for _, o := range ovas {
		if o.Name == template {
			return o.Properties
		}
	}
	return nil
}

func reportImports(env *Run, results []vsphere.Result) {
	var b strings.Builder
	for _, r := range results {
		fmt.Fprintf(&b, "%-40s %-9s %8.1f MiB %6.2fs %s%s\n", r.Name, r.Action, float64(r.Bytes)/(1<<20), r.Duration.Seconds(), identityOf(r), cost(r))
		if r.Kept != "" {
			fmt.Fprintf(&b, "    kept the replaced template as %s (delete it by hand when nothing clones from it)\n", r.Kept)
		}
		for _, l := range r.LeftAlone {
			fmt.Fprintf(&b, "    left alone: %s\n", l)
		}
	}
	AddReportEntry("ova imports", b.String())
	env.Printf("[ova] templates:\n%s", b.String())
}

// cost is what an import's read of the OVA took: the upload rate, and the
// client CPU per GiB read (the OVA stage is CPU-bound on small machines).
func cost(r vsphere.Result) string {
	s := ""
	if r.UploadRate > 0 {
		s += fmt.Sprintf(" upload %.0f MiB/s", r.UploadRate/(1<<20))
	}
	if r.ReadBytes > 0 {
		s += fmt.Sprintf(" cpu %.2fs/GiB", r.CPUPerGiB)
	}
	return s
}

// identityOf is the OVA's identity as the template annotation records it:
// the whole file's sha256 when the import knew it, else the manifest's
// (the import did not hash the whole file), else none (it failed before).
func identityOf(r vsphere.Result) string {
	switch {
	case r.SHA256 != "":
		return "sha256:" + short(r.SHA256)
	case r.ManifestSHA256 != "":
		return "manifest-sha256:" + short(r.ManifestSHA256)
	}
	return "sha256:-"
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
