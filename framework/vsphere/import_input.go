package vsphere

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/tkg-e2e/harness/framework/run"
)

// OVA is one node image to import.
type OVA struct {
	// Source is a local path or an http(s) URL.
	Source string `json:"source"`
	// Name of the template; defaults to the OVA file name without ".ova".
	Name string `json:"name,omitempty"`
	// SHA256 the whole OVA must have (from the release's checksum file);
	// empty skips that check. The manifest is verified either way.
	SHA256 string `json:"sha256,omitempty"`
}

// TemplateName is the name the template gets.
func (o OVA) TemplateName() string {
	if o.Name != "" {
		return o.Name
	}
	return strings.TrimSuffix(sourceBase(o.Source), ".ova")
}

// Recorder is the part of run.State the import uses to record each template
// before creating it; *run.State satisfies it.
type Recorder interface {
	PutResource(run.Resource) error
	SetResourceState(key, state string) error
}

// ImportInput describes one ova stage import.
type ImportInput struct {
	Placement Placement
	OVAs      []OVA
	// Concurrency is how many OVAs are imported at once; 0 means 1.
	Concurrency int
	// Replace deletes a same-named template imported from another OVA and
	// imports again; without it that is an error.
	Replace bool
	// AllowMissingManifest accepts an OVA without .mf (its disks are then not verified).
	AllowMissingManifest bool
	// DiskProvisioning is thin (default), thick or eagerZeroedThick.
	DiskProvisioning string
	// DownloadDir holds URL sources while they are imported; default the OS temp dir.
	DownloadDir string
	// Timeout bounds the import of one OVA (download, upload, template). Required.
	Timeout time.Duration
	// CleanupTimeout bounds deleting what a failed import left; default 2m.
	CleanupTimeout time.Duration
	// PollInterval for vCenter tasks; default per wait.For.
	PollInterval time.Duration
	// Progress receives phase lines and, every ProgressEvery, byte counts with
	// rate and ETA. Write it through a redact.Writer. Nil means silent.
	Progress      io.Writer
	ProgressEvery time.Duration
	// Prefix starts every progress line, e.g. "[ova]".
	Prefix string
	// Recorder, when set, records every template before it is created.
	Recorder Recorder
	// CreatedBy is the stage name put on recorded resources.
	CreatedBy string
}

// Action is what an import did.
type Action string

const (
	// Imported: no template of that name existed (or only a leftover of an interrupted import); it was imported.
	Imported Action = "imported"
	// Reused: a template of that name from the same OVA (same sha256) was kept.
	Reused Action = "reused"
	// Replaced: a template of that name from another OVA was deleted and imported again (Replace).
	Replaced Action = "replaced"
	// Failed: see Result.Err.
	Failed Action = "failed"
)

// Result of importing one OVA.
type Result struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	// Path is the template's inventory path.
	Path   string `json:"path,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	Action Action `json:"action"`
	// Bytes uploaded (0 when reused).
	Bytes    int64                        `json:"bytes"`
	Duration time.Duration                `json:"durationNs"`
	Ref      types.ManagedObjectReference `json:"ref"`
	Err      error                        `json:"-"`
	Error    string                       `json:"error,omitempty"`
}

// ResourceKind is the run-state kind of an imported template.
const ResourceKind = "vsphere-template"

func (in *ImportInput) validate() error {
	var errs []error
	if len(in.OVAs) == 0 {
		errs = append(errs, errors.New("no OVAs to import: list at least one (local path or URL)"))
	}
	if in.Timeout <= 0 {
		errs = append(errs, errors.New("Timeout must be > 0 (set it from the config intervals)"))
	}
	if in.Concurrency < 0 {
		errs = append(errs, fmt.Errorf("Concurrency %d must be >= 0", in.Concurrency))
	}
	switch in.DiskProvisioning {
	case "", "thin", "thick", "eagerZeroedThick", "flat", "monolithicFlat":
	default:
		errs = append(errs, fmt.Errorf("DiskProvisioning %q is not one of thin, thick, eagerZeroedThick", in.DiskProvisioning))
	}
	seen := map[string]string{}
	for _, o := range in.OVAs {
		if strings.TrimSpace(o.Source) == "" {
			errs = append(errs, errors.New("an OVA entry has an empty source"))
			continue
		}
		name := o.TemplateName()
		if prev, ok := seen[name]; ok {
			errs = append(errs, fmt.Errorf("OVAs %s and %s would both become template %q; give one a distinct name",
				displaySource(prev), displaySource(o.Source), name))
		}
		seen[name] = o.Source
		if o.SHA256 != "" && len(o.SHA256) != 64 {
			errs = append(errs, fmt.Errorf("OVA %s: sha256 %q is not 64 hex digits", displaySource(o.Source), o.SHA256))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid OVA import input: %w", errors.Join(errs...))
	}
	return nil
}
