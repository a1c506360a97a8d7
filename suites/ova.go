package suites

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tkg-e2e/harness/framework/stages"
	"github.com/tkg-e2e/harness/framework/vsphere"
	"github.com/tkg-e2e/harness/framework/vsphere/ovagen"
)

// OVASpecInput is the input of OVASpec.
type OVASpecInput struct {
	Env *Env
	// PostImport runs after the templates are imported and validated.
	PostImport func(ctx context.Context, s *vsphere.Session, results []vsphere.Result)
}

// Env keys of what the ova stage leaves for the artifact collectors.
const (
	// EnvVSphereSession holds the *vsphere.Session of the run.
	EnvVSphereSession = "vsphere.session"
)

// OVASpec imports the node OVAs of the config as templates, checks their vApp
// properties, then imports them again to prove the stage is idempotent (every
// template reused), as a second run against the same vCenter would.
func OVASpec(inputGetter func() OVASpecInput) {
	var (
		input   OVASpecInput
		session *vsphere.Session
	)
	BeforeEach(func() {
		input = inputGetter()
		Expect(input.Env.Validate()).To(Succeed())
		Expect(input.Env.Config.OVA.Images).NotTo(BeEmpty(), "config ova.images is empty: list the node OVAs to import")
	})

	It("imports node OVAs as templates with the expected vApp properties", func(ctx SpecContext) {
		env := input.Env
		RunStage(ctx, env, stages.OVA, StageFuncs{Run: func(ctx context.Context) error {
			var err error
			session, err = vsphereSession(ctx, env)
			if err != nil {
				return err
			}
			if err := generateTestOVAs(env); err != nil {
				return err
			}
			results, err := importOVAs(ctx, env, session)
			reportImports(env, results)
			if err != nil {
				return err
			}
			var problems []error
			for _, r := range results {
				want := expectedProperties(env, r.Name)
				if err := session.ValidateProperties(ctx, env.Config.VSphere.Datacenter, r.Path, want); err != nil {
					problems = append(problems, err)
				}
			}
			if err := errors.Join(problems...); err != nil {
				return err
			}
			if input.PostImport != nil {
				input.PostImport(ctx, session, results)
			}
			return nil
		}})
	})

	It("reuses every template on a second import of the same OVAs", func(ctx SpecContext) {
		env := input.Env
		if !env.State.Passed(stages.OVA) || session == nil {
			Skip("the import did not pass, so there is nothing to reuse")
		}
		results, err := importOVAs(ctx, env, session)
		reportImports(env, results)
		Expect(err).NotTo(HaveOccurred())
		for _, r := range results {
			Expect(r.Action).To(Equal(vsphere.Reused), "template %s was %s on the second import; an unchanged OVA must be reused", r.Name, r.Action)
		}
	})
}

// vsphereSession connects to the configured vCenter, or starts vcsim and
// connects to it over the same SOAP API. The session (and simulator) live
// until the suite ends, so the artifact collectors can read the inventory.
func vsphereSession(ctx context.Context, env *Env) (*vsphere.Session, error) {
	if v, ok := env.Get(EnvVSphereSession); ok {
		return v.(*vsphere.Session), nil
	}
	cfg := env.Config.VSphere
	connect := env.Config.MustInterval(stages.OVA, "connect")
	var in vsphere.SessionInput
	if cfg.Simulator {
		sim, err := vsphere.StartSimulator()
		if err != nil {
			return nil, fmt.Errorf("starting vcsim: %w", err)
		}
		env.AddCloser("vcsim", func(context.Context) error { sim.Close(); return nil })
		env.addRunSecret(sim.Password)
		env.Printf("[ova] vcsim (VPX model) listening on %s", sim.Server)
		in = sim.SessionInput()
	} else {
		in = vsphere.SessionInput{Server: cfg.Server, Username: cfg.Username, Password: cfg.Password.Reveal(),
			Thumbprint: cfg.TLSThumbprint, Insecure: cfg.Insecure}
	}
	in.ConnectTimeout, in.Redactor = connect.Timeout, env.Redactor
	s, err := vsphere.Connect(ctx, in)
	if err != nil {
		return nil, err
	}
	env.AddCloser("vsphere session", s.Close)
	env.Set(EnvVSphereSession, s)
	return s, nil
}

// generateTestOVAs writes the OVAs the config asks to synthesize (local
// profile): no binary OVA is committed. The seed comes from the name, so the
// same config always produces the same OVA and a second import can reuse it.
func generateTestOVAs(env *Env) error {
	for _, o := range env.Config.OVA.Images {
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

func importOVAs(ctx context.Context, env *Env, s *vsphere.Session) ([]vsphere.Result, error) {
	cfg := env.Config
	iv := cfg.MustInterval(stages.OVA, "import")
	var ovas []vsphere.OVA
	for _, o := range cfg.OVA.Images {
		ovas = append(ovas, vsphere.OVA{Source: o.Source, Name: o.Name})
	}
	return s.ImportOVAs(ctx, vsphere.ImportInput{
		Placement: vsphere.Placement{Datacenter: cfg.VSphere.Datacenter, Folder: cfg.VSphere.Folder,
			Datastore: cfg.VSphere.Datastore, ResourcePool: cfg.VSphere.ResourcePool, Network: cfg.VSphere.Network},
		OVAs:         ovas,
		Concurrency:  cfg.OVA.Concurrency,
		Replace:      cfg.OVA.Replace,
		DownloadDir:  env.Path("ova-downloads"),
		Timeout:      iv.Timeout,
		PollInterval: iv.Poll,
		Progress:     env.Out,
		Prefix:       "[ova]",
		Recorder:     env.State,
		CreatedBy:    stages.OVA,
	})
}

func expectedProperties(env *Env, template string) map[string]string {
	for _, o := range env.Config.OVA.Images {
		if o.Name == template {
			return o.Properties
		}
	}
	return nil
}

func reportImports(env *Env, results []vsphere.Result) {
	var b strings.Builder
	for _, r := range results {
		fmt.Fprintf(&b, "%-40s %-9s %8.1f MiB %6.2fs sha256:%s\n", r.Name, r.Action, float64(r.Bytes)/(1<<20), r.Duration.Seconds(), short(r.SHA256))
	}
	AddReportEntry("ova imports", b.String())
	env.Printf("[ova] templates:\n%s", b.String())
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
