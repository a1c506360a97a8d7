// Package vsphere collects the vCenter side of a run through govmomi: the
// inventory of the run's VM folder and of its templates (names, vApp
// properties, annotation, power and guest state), and the recent tasks and
// events, so a run that failed at the infrastructure leaves what vCenter
// saw, not only what the harness saw.
package vsphere

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/soap"

	"github.com/tkg-e2e/harness/framework/artifacts"
)

// Folder is where the vSphere files go, relative to the artifacts root.
const Folder = "vsphere"

// Input says which vCenter and which part of it to collect.
type Input struct {
	// Client is a logged-in session to reuse. When nil, URL and the
	// credentials are used to log in (and out again).
	Client *vim25.Client
	// URL of the vCenter SDK, e.g. https://vcenter.example.com/sdk. User info
	// in it is ignored; use Username and Password.
	URL      string
	Username string
	// Password is registered with the Writer's redactor before it is used.
	Password string
	// Insecure skips TLS verification; Thumbprint (SHA-1, colon separated)
	// pins the certificate instead.
	Insecure   bool
	Thumbprint string
	// Datacenter name or path; empty means the only datacenter.
	Datacenter string
	// VMFolder is the run's VM folder: an inventory path, absolute or
	// relative to the datacenter's vm folder. Its VMs are listed recursively.
	VMFolder string
	// TemplateNames are templates to describe wherever they are in the
	// datacenter (the run's node OVA templates).
	TemplateNames []string
	// Since bounds tasks and events; it is the run's start. On a shared
	// vCenter the window holds other users' tasks too: they are kept, as
	// contention is a cause worth seeing. Zero means the last hour.
	Since time.Time
	// MaxEvents caps the events read; 0 means 1000.
	MaxEvents int
	// ItemTimeout bounds each item (login, inventory, tasks, events). Required.
	ItemTimeout time.Duration
}

func (in *Input) validate() error {
	var errs []error
	if in.Client == nil && in.URL == "" {
		errs = append(errs, errors.New("neither Client nor URL is set (vsphere.server in the profile)"))
	}
	if in.Client == nil && (in.Username == "" || in.Password == "") {
		errs = append(errs, errors.New("Username and Password are required to log in with URL (vsphere.username, vsphere.password)"))
	}
	if in.VMFolder == "" {
		errs = append(errs, errors.New("VMFolder is empty (vsphere.folder in the profile)"))
	}
	if in.ItemTimeout <= 0 {
		errs = append(errs, fmt.Errorf("ItemTimeout is %s; set artifacts.itemTimeout in the profile (e.g. 20s)", in.ItemTimeout))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("artifacts/vsphere: bad input: %w", err)
	}
	if in.MaxEvents <= 0 {
		in.MaxEvents = 1000
	}
	if in.Since.IsZero() {
		in.Since = time.Now().Add(-time.Hour)
	}
	return nil
}

type collection struct {
	w  *artifacts.Writer
	in Input
	r  *artifacts.Runner
	c  *vim25.Client
	dc *object.Datacenter
	f  *find.Finder

	mu       sync.Mutex
	findings artifacts.VSphereFindings
}

// Collect writes vsphere/inventory.yaml, vsphere/tasks.txt and
// vsphere/events.txt. Like the cluster collector it returns an error only
// for bad input; a vCenter that cannot be reached is reported in the
// findings (APIError) and in errors.txt.
func Collect(ctx context.Context, w *artifacts.Writer, in Input) (artifacts.VSphereFindings, error) {
	if w == nil {
		return artifacts.VSphereFindings{}, errors.New("artifacts/vsphere: Writer is nil")
	}
	// Register the password before validation can print anything.
	w.AddSecrets(in.Password)
	if err := in.validate(); err != nil {
		return artifacts.VSphereFindings{}, err
	}
	r, err := w.NewRunner("vsphere", 3, in.ItemTimeout)
	if err != nil {
		return artifacts.VSphereFindings{}, err
	}
	c := &collection{w: w, in: in, r: r, findings: artifacts.VSphereFindings{Folder: in.VMFolder, Files: Folder}}

	if err := r.Run(ctx, artifacts.Item{Name: "connect to vCenter", Run: c.connect})[0]; err != nil {
		c.findings.APIError = w.Redact(err.Error())
		r.Skip("inventory, tasks and events", "vCenter could not be reached: see the connect item above")
		return c.findings, nil
	}
	if in.Client == nil {
		defer func() {
			lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), in.ItemTimeout)
			defer cancel()
			_ = session.NewManager(c.c).Logout(lctx)
		}()
	}
	r.Run(ctx,
		artifacts.Item{Name: "inventory of " + in.VMFolder, Run: c.inventory},
		artifacts.Item{Name: "recent tasks", Run: c.tasks},
		artifacts.Item{Name: "recent events", Run: c.events},
	)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.findings, nil
}

func (c *collection) connect(ctx context.Context) error {
	c.c = c.in.Client
	if c.c == nil {
		u, err := soap.ParseURL(c.in.URL)
		if err != nil {
			return fmt.Errorf("vCenter URL: %w", err)
		}
		u.User = nil
		sc := soap.NewClient(u, c.in.Insecure)
		if c.in.Thumbprint != "" {
			sc.SetThumbprint(u.Host, c.in.Thumbprint)
		}
		vc, err := vim25.NewClient(ctx, sc)
		if err != nil {
			return fmt.Errorf("connect to %s: %w", u.Host, err)
		}
		if err := session.NewManager(vc).Login(ctx, url.UserPassword(c.in.Username, c.in.Password)); err != nil {
			return fmt.Errorf("log in to %s as %s: %w", u.Host, c.in.Username, err)
		}
		c.c = vc
	}
	c.f = find.NewFinder(c.c, true)
	dc, err := c.f.DatacenterOrDefault(ctx, c.in.Datacenter)
	if err != nil {
		return fmt.Errorf("datacenter %q: %w", c.in.Datacenter, err)
	}
	c.dc = dc
	c.f.SetDatacenter(dc)
	return nil
}

// folderPath makes a relative folder path absolute under the datacenter's
// vm folder, the way govc reads it.
func (c *collection) folderPath() string {
	if strings.HasPrefix(c.in.VMFolder, "/") {
		return c.in.VMFolder
	}
	return path.Join(c.dc.InventoryPath, "vm", c.in.VMFolder)
}
