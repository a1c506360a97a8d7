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
	// empty skips that check. Required for an http:// source, whose bytes
	// nothing else authenticates. A URL's download is checked before vCenter
	// is asked anything. A local file is read once: when a template of the
	// name exists, by the hash pass that decides reuse (nothing is uploaded
	// on a mismatch); otherwise while it uploads, where a mismatch stops the
	// upload before its last bytes and removes the VM. The manifest is
	// verified either way. Without it, an OVA whose manifest pins every file
	// with SHA256 or SHA512 is identified by that manifest and not hashed as
	// a whole (see Result.ManifestSHA256).
	SHA256 string `json:"sha256,omitempty"`
	// Properties are the vApp properties (id -> value) the OVA must carry.
	// They are checked against the OVF descriptor before anything is
	// uploaded; properties not listed are not checked.
	Properties map[string]string `json:"properties,omitempty"`
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
	// Replace imports an OVA whose template name is taken by a template from
	// another OVA: the new template is imported under a temporary name, the
	// old one is renamed aside (<name>.replaced-<time>) and kept, so clones
	// that refer to it keep working, and the new one takes the name. Without
	// it that is an error.
	Replace bool
	// AllowMissingManifest accepts an OVA without .mf (its disks are then not verified).
	AllowMissingManifest bool
	// DiskProvisioning is thin (default), thick or eagerZeroedThick.
	DiskProvisioning string
	// RunID names the run on the temporary VM of each import
	// (<name>.importing-<run hash>.<random>) and in its annotation, so that
	// runs sharing a vCenter never take each other's imports for leftovers.
	// Empty means a random ID for this call.
	RunID string
	// Downloads holds the run's downloaded URL sources (one download per URL
	// per run); the caller closes it. Nil means a private one in DownloadDir,
	// removed before ImportOVAs returns.
	Downloads *Downloads
	// DownloadDir is the parent of the private download folder; default the
	// OS temp dir. Unused when Downloads is set.
	DownloadDir string
	// MaxDownloadSize bounds one download of the private Downloads; 0 means
	// DefaultMaxDownloadSize.
	MaxDownloadSize int64
	// Timeout bounds the import of one OVA (download, upload, template). Required.
	// It is also how old another run's temporary import VM must be before
	// this run takes it for the leftover of a dead run and removes it.
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
	// Imported: no template of that name existed; it was imported.
	Imported Action = "imported"
	// Reused: a template of that name from the same OVA (same sha256, or
	// same manifest sha256) was kept, including one another run finished
	// while this one imported.
	Reused Action = "reused"
	// Replaced: a template of that name from another OVA was renamed aside
	// (see Result.Kept) and the OVA imported under the name (Replace).
	Replaced Action = "replaced"
	// Failed: see Result.Err.
	Failed Action = "failed"
)

// Result of importing one OVA.
type Result struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	// Path is the template's inventory path.
	Path string `json:"path,omitempty"`
	// SHA256 is the whole OVA's, when the import knew or learnt it.
	SHA256 string `json:"sha256,omitempty"`
	// ManifestSHA256 is the sha256 of the OVA's manifest when the manifest
	// pins every file with SHA256 or SHA512: the OVA's identity then, and
	// the whole file is hashed only when the config gives a sha256 or a
	// template of the name has only a whole-file sha256.
	ManifestSHA256 string `json:"manifestSha256,omitempty"`
	Action         Action `json:"action"`
	// Bytes uploaded (0 when reused).
	Bytes int64 `json:"bytes"`
	// ReadBytes is how much of the OVA file the import read after the
	// download: the file's size once for an import (the upload verifies it)
	// and none for a reuse decided on the manifest identity; a hash pass
	// (a reuse decided on the whole-file sha256) adds the size once more.
	ReadBytes int64 `json:"readBytes"`
	// ClientCPU is this process's CPU time for those reads (hashing,
	// verifying, encrypting the upload), shared out by bytes among OVAs read
	// at the same time; CPUPerGiB is it per GiB of ReadBytes.
	ClientCPU time.Duration `json:"clientCpuNs"`
	CPUPerGiB float64       `json:"cpuSecondsPerGiB"`
	// UploadRate is the upload's bytes per second (0 when nothing was uploaded).
	UploadRate float64                      `json:"uploadBytesPerSecond"`
	Duration   time.Duration                `json:"durationNs"`
	Ref        types.ManagedObjectReference `json:"ref"`
	Err        error                        `json:"-"`
	Error      string                       `json:"error,omitempty"`
	// Kept is the inventory path the replaced template was renamed to (Replaced).
	Kept string `json:"kept,omitempty"`
	// Removed are temporary import VMs this import deleted: leftovers of this
	// run, or of another run older than the import timeout.
	Removed []string `json:"removed,omitempty"`
	// LeftAlone are VMs near the template's name this import did not touch
	// (another run's import in progress), each with the reason.
	LeftAlone []string `json:"leftAlone,omitempty"`
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
		if o.SHA256 != "" && !isSHA256(o.SHA256) {
			errs = append(errs, fmt.Errorf("OVA %s: sha256 %q is not 64 hex digits", displaySource(o.Source), o.SHA256))
		}
		if o.SHA256 == "" && strings.HasPrefix(o.Source, "http://") {
			errs = append(errs, fmt.Errorf("OVA %s: an http:// source needs its sha256 (nothing else authenticates the bytes); "+
				"set it from the release's checksum file, or use https", displaySource(o.Source)))
		}
	}
	if in.MaxDownloadSize < 0 {
		errs = append(errs, fmt.Errorf("MaxDownloadSize %d must be >= 0", in.MaxDownloadSize))
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid OVA import input: %w", errors.Join(errs...))
	}
	return nil
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}
