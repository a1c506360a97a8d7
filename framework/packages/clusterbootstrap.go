package packages

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/wait"
)

// ClusterBootstrap is TKG's record of a cluster's core and additional
// packages. TKG's addons manager copies each PackageInstall's summary
// condition into its status as "<Title(package short name)>-<condition type>"
// (e.g. "Antrea-ReconcileSucceeded", "Vsphere-Csi-ReconcileSucceeded"), with
// usefulErrorMessage as the message. The harness has no Go types for it (it is
// not a dependency), so it is read as unstructured.
var ClusterBootstrapGVK = schema.GroupVersionKind{Group: "run.tanzu.vmware.com", Version: "v1alpha3", Kind: "ClusterBootstrap"}

// ClusterBootstrapCRD is the CRD whose presence decides whether the check runs.
const ClusterBootstrapCRD = "clusterbootstraps.run.tanzu.vmware.com"

var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// BootstrapInput describes a ClusterBootstrap mirror check.
type BootstrapInput struct {
	// ManagementClient reaches the management cluster, where every
	// ClusterBootstrap lives (also the management cluster's own). Required.
	ManagementClient client.Client
	// ClusterName and ClusterNamespace name the ClusterBootstrap (same as the Cluster).
	ClusterName, ClusterNamespace string
	// Packages is the PackageInstall report whose states the status must
	// mirror; the result is also stored in Packages.ClusterBootstrap.
	Packages *Report
	Timeout  time.Duration
	Interval time.Duration
	Progress io.Writer
	Prefix   string
}

// BootstrapResult is the outcome of the mirror check.
type BootstrapResult struct {
	// Skipped is set when the ClusterBootstrap API does not exist (not TKG);
	// SkipReason says so. A skipped check is not a pass.
	Skipped    bool
	SkipReason string
	Namespace  string
	Name       string
	Conditions []BootstrapCondition
	// Mismatches say where the status disagrees with the PackageInstalls.
	Mismatches []string
}

// BootstrapCondition is one status condition of a ClusterBootstrap.
type BootstrapCondition struct {
	Type, Status, Reason, Message string
}

// Failed reports whether the check ran and found mismatches.
func (b *BootstrapResult) Failed() bool { return b != nil && !b.Skipped && len(b.Mismatches) > 0 }

// CheckClusterBootstrap verifies, when the ClusterBootstrap CRD exists, that
// the cluster's ClusterBootstrap status mirrors its PackageInstalls, polling
// until it does (TKG updates it after the PackageInstalls change) or the
// timeout passes. Without the CRD it returns a skipped result and no error.
func CheckClusterBootstrap(ctx context.Context, in BootstrapInput) (*BootstrapResult, error) {
	switch {
	case in.ManagementClient == nil:
		return nil, errors.New("packages.CheckClusterBootstrap: ManagementClient is required (ClusterBootstraps live on the management cluster)")
	case in.ClusterName == "" || in.ClusterNamespace == "":
		return nil, errors.New("packages.CheckClusterBootstrap: ClusterName and ClusterNamespace are required")
	case in.Packages == nil:
		return nil, errors.New("packages.CheckClusterBootstrap: Packages (the report of the packages check) is required")
	case in.Timeout <= 0:
		return nil, errors.New("packages.CheckClusterBootstrap: Timeout must be > 0 (take it from the config intervals)")
	}
	res := &BootstrapResult{Namespace: in.ClusterNamespace, Name: in.ClusterName}
	in.Packages.ClusterBootstrap = res

	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(crdGVK)
	switch err := in.ManagementClient.Get(ctx, client.ObjectKey{Name: ClusterBootstrapCRD}, crd); {
	case apierrors.IsNotFound(err):
		res.Skipped = true
		res.SkipReason = fmt.Sprintf("CRD %s is not installed on the management cluster (not a TKG management cluster)", ClusterBootstrapCRD)
		return res, nil
	case err != nil:
		return res, fmt.Errorf("looking up CRD %s: %w", ClusterBootstrapCRD, err)
	}

	err := wait.For(ctx, wait.Options{
		What:     fmt.Sprintf("ClusterBootstrap %s/%s to mirror its PackageInstalls", in.ClusterNamespace, in.ClusterName),
		Timeout:  in.Timeout,
		Interval: in.Interval,
		Progress: in.Progress,
		Prefix:   in.Prefix,
	}, func(ctx context.Context) (bool, string, error) {
		cb := &unstructured.Unstructured{}
		cb.SetGroupVersionKind(ClusterBootstrapGVK)
		if err := in.ManagementClient.Get(ctx, client.ObjectKey{Namespace: in.ClusterNamespace, Name: in.ClusterName}, cb); err != nil {
			res.Conditions = nil
			res.Mismatches = []string{fmt.Sprintf("ClusterBootstrap %s/%s: %v", in.ClusterNamespace, in.ClusterName, err)}
			return false, res.Mismatches[0], nil
		}
		conds, err := bootstrapConditions(cb)
		if err != nil {
			return false, "", wait.Permanent(err)
		}
		res.Conditions = conds
		res.Mismatches = mirrorMismatches(in.Packages, in.ClusterName, conds)
		if len(res.Mismatches) == 0 {
			return true, fmt.Sprintf("%d conditions mirror the PackageInstalls", len(conds)), nil
		}
		return false, strings.Join(res.Mismatches, "; "), nil
	})
	var timeout *wait.TimeoutError
	if errors.As(err, &timeout) {
		return res, fmt.Errorf("ClusterBootstrap %s/%s does not mirror its PackageInstalls after %s:\n\n%s",
			in.ClusterNamespace, in.ClusterName, timeout.Elapsed.Round(time.Second), res.Markdown())
	}
	return res, err
}

func bootstrapConditions(cb *unstructured.Unstructured) ([]BootstrapCondition, error) {
	raw, _, err := unstructured.NestedSlice(cb.Object, "status", "conditions")
	if err != nil {
		return nil, fmt.Errorf("ClusterBootstrap %s/%s: status.conditions is not a list: %w", cb.GetNamespace(), cb.GetName(), err)
	}
	var out []BootstrapCondition
	for _, item := range raw {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		out = append(out, BootstrapCondition{Type: str("type"), Status: str("status"), Reason: str("reason"), Message: str("message")})
	}
	return out, nil
}

// mirrorMismatches compares the ClusterBootstrap conditions with the
// PackageInstalls TKG names "<cluster>-<package short name>". Others (the
// tkg-pkg children on a management cluster) are not in a ClusterBootstrap.
func mirrorMismatches(pkgs *Report, cluster string, conds []BootstrapCondition) []string {
	var out []string
	mirrored := 0
	for _, r := range pkgs.Results {
		short, ok := strings.CutPrefix(r.Expected.Name, cluster+"-")
		if !ok || (r.State.Phase != PhaseSucceeded && r.State.Phase != PhaseFailed) {
			continue
		}
		mirrored++
		want := short + "-" + string(r.State.Phase)
		var found *BootstrapCondition
		var others []string
		for i, c := range conds {
			switch {
			case strings.EqualFold(c.Type, want):
				found = &conds[i]
			case strings.HasPrefix(strings.ToLower(c.Type), strings.ToLower(short)+"-"):
				others = append(others, fmt.Sprintf("%s=%s %s", c.Type, c.Status, assert.Shorten(c.Message, 120)))
			}
		}
		switch {
		case found == nil && len(others) > 0:
			out = append(out, fmt.Sprintf("PackageInstall %s/%s is %s, ClusterBootstrap says %s", r.Expected.Namespace, r.Expected.Name, r.State.Phase, strings.Join(others, ", ")))
		case found == nil:
			out = append(out, fmt.Sprintf("PackageInstall %s/%s is %s, ClusterBootstrap has no %s condition", r.Expected.Namespace, r.Expected.Name, r.State.Phase, want))
		case found.Status != "True":
			out = append(out, fmt.Sprintf("PackageInstall %s/%s is %s, ClusterBootstrap condition %s is %s", r.Expected.Namespace, r.Expected.Name, r.State.Phase, found.Type, found.Status))
		}
	}
	if mirrored == 0 && len(pkgs.Results) > 0 {
		out = append(out, fmt.Sprintf("no reconciled PackageInstall named %s-<package> to compare with (was the packages check run for this cluster?)", cluster))
	}
	return out
}

// Markdown renders the result as a section of the package report.
func (b *BootstrapResult) Markdown() string {
	var s strings.Builder
	fmt.Fprintf(&s, "### ClusterBootstrap %s/%s: ", b.Namespace, b.Name)
	switch {
	case b.Skipped:
		fmt.Fprintf(&s, "– skipped\n\n%s\n", b.SkipReason)
		return s.String()
	case len(b.Mismatches) > 0:
		s.WriteString("✗ does not mirror the PackageInstalls\n\n")
		for _, m := range b.Mismatches {
			fmt.Fprintf(&s, "- %s\n", m)
		}
	default:
		s.WriteString("✓ mirrors the PackageInstalls\n")
	}
	if len(b.Conditions) > 0 {
		var rows [][]string
		for _, c := range b.Conditions {
			rows = append(rows, []string{c.Type, c.Status, c.Reason, assert.Shorten(c.Message, 200)})
		}
		s.WriteString("\n" + assert.MarkdownTable([]string{"Condition", "Status", "Reason", "Message"}, rows))
	}
	return s.String()
}
