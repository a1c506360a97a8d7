package tanzucli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tkg-e2e/harness/framework/infrastructure"
	"github.com/tkg-e2e/harness/framework/kind"
	"github.com/tkg-e2e/harness/framework/redact"
	"github.com/tkg-e2e/harness/framework/tanzu"
	"github.com/tkg-e2e/harness/suites"
)

// A management create that fails at the provider wait: the kind cluster
// stays attached for collection, and the stage's error is the classified
// failure in Markdown, quoting the CLI's lines, naming the transcript.
func TestTanzuManagementFailureKeepsKindAndQuotesTheCLI(t *testing.T) {
	env, out := tanzuEnv(t)
	t.Setenv("TANZU_STANDIN_SCENARIO", "provider-timeout")
	_, err := TanzuManagementCreate(runCtx(t), managementInput(t, env))
	var ce *TanzuCommandError
	if !errors.As(err, &ce) {
		t.Fatalf("want a *TanzuCommandError, got %T: %v\n%s", err, err, out)
	}
	if ce.Failure.Kind != tanzu.KindProviderTimeout {
		t.Errorf("classified %q, want %q", ce.Failure.Kind, tanzu.KindProviderTimeout)
	}
	msg := err.Error()
	if first, _, _ := strings.Cut(msg, "\n"); !strings.Contains(first, "provider wait timeout") || !strings.HasPrefix(first, "tanzu management-cluster create") {
		t.Errorf("the message's first line (the summary's stages table) is %q", first)
	}
	for _, want := range []string{"### ✗ `tanzu management-cluster create", "provider wait timeout", "```", "tanzu/management-cluster-create.log"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the stage's failure message lacks %q:\n%s", want, msg)
		}
	}
	if b := env.Cluster(suites.RoleBootstrap); b == nil || b.Name != fakeKindName || b.Infrastructure != infrastructure.KindCluster {
		t.Errorf("the kind cluster is not attached after a failure before the move: %+v", b)
	}
	if r, ok := env.State.Resource(TanzuManagementKind, env.Config.Clusters.Management.Name); !ok || r.State != "creating" {
		t.Errorf("a failed create must leave the management cluster recorded (cleanup deletes it): %+v (%v)", r, ok)
	}
	if left, _ := filepath.Glob(filepath.Join(env.KubeconfigDir, "tanzu", "tanzu-config-*")); len(left) > 0 {
		t.Errorf("the cluster configuration file was not removed after a failure: %v", left)
	}
}

func TestKindClusterNameFromTheAnnouncedKubeconfig(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config_x")
	if err := os.WriteFile(p, []byte(fakeKindKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := kindClusterName(p); err != nil || n != fakeKindName {
		t.Errorf("kindClusterName = %q, %v", n, err)
	}
	notKind := strings.ReplaceAll(fakeKindKubeconfig, "kind-"+fakeKindName, "mgmt-admin")
	if err := os.WriteFile(p, []byte(notKind), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := kindClusterName(p); err == nil || !strings.Contains(err.Error(), "not a kind cluster") {
		t.Errorf("a non-kind kubeconfig: %v", err)
	}
}

func TestTanzuManagementInputIsChecked(t *testing.T) {
	env, _ := tanzuEnv(t)
	_, err := TanzuManagementCreate(runCtx(t), TanzuManagementInput{Env: env, Cluster: env.Config.Clusters.Management})
	for _, want := range []string{"CLI is required", "Values CLUSTER_NAME", "interval management/tanzu-create"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("an empty input: want %q in %v", want, err)
		}
	}
	if _, ok := env.State.Resource(TanzuManagementKind, env.Config.Clusters.Management.Name); ok {
		t.Error("a rejected input recorded a cluster in the run state")
	}
}

// echoedPassword is a vCenter password with characters that have escaped
// forms (& and <), so a redaction of one form only would show; none of
// " ' \ which the vSphere profile rejects for CAPV.
const echoedPassword = `Sup3r&S3cret<pw!`

// A CLI that echoes the vCenter password (seed 000's -v 9 prints every
// configuration variable): it reaches neither the run's output, nor the
// transcript in the artifacts, nor the stage's failure message; the
// vCenter login failure is classified as such.
func TestTanzuEchoedPasswordReachesNoOutput(t *testing.T) {
	env, out := tanzuEnvWith(t, "../../config/vsphere.yaml")
	t.Setenv("TANZU_STANDIN_SCENARIO", "echo-password")
	in := managementInput(t, env)
	if in.Values["VSPHERE_PASSWORD"] != echoedPassword || in.Values["INFRASTRUCTURE_PROVIDER"] != "vsphere" {
		t.Fatalf("the cluster configuration lacks the vCenter password or provider: provider %q", in.Values["INFRASTRUCTURE_PROVIDER"])
	}
	_, err := TanzuManagementCreate(runCtx(t), in)
	var ce *TanzuCommandError
	if !errors.As(err, &ce) || ce.Failure.Kind != tanzu.KindVCenter {
		t.Fatalf("want a vCenter error, got %v", err)
	}
	tr, rerr := os.ReadFile(env.Path("tanzu", "management-cluster-create.log"))
	// The echo line is there, masked: the stand-in did echo the password.
	if rerr != nil || !strings.Contains(string(tr), `Setting config variable "VSPHERE_PASSWORD" to value "`+redact.Mask+`"`) {
		t.Fatalf("the transcript in the artifacts does not have the masked echo line: %v", rerr)
	}
	// Refused at the vCenter login, before any marker: nothing was made,
	// and cleanup must not try the CLI's delete of a cluster it never began.
	if r, ok := env.State.Resource(TanzuManagementKind, env.Config.Clusters.Management.Name); !ok || r.State != "gone" {
		t.Errorf("a create refused before its first phase must record the management cluster gone: %+v (%v)", r, ok)
	}
	res, _ := os.ReadFile(env.Path("tanzu", "management-cluster-create.result.json"))
	for what, text := range map[string]string{"output": out.String(), "transcript": string(tr), "result": string(res), "stage message": err.Error()} {
		if strings.Contains(text, echoedPassword) || strings.Contains(text, "Sup3r") {
			t.Errorf("the vCenter password reached the %s", what)
		}
	}
}

// The kind cluster is recorded by the name the CLI announces before kind
// makes anything ("Creating kind cluster: …"), so a CLI killed while kind
// works leaves a name for cleanup; a kubeconfig of another cluster is an
// error, not a second record.
func TestTanzuKindRecordedWhenAnnounced(t *testing.T) {
	env, out := tanzuEnv(t)
	t.Setenv("TANZU_STANDIN_KIND_NAME", "tkg-kind-announced")
	_, err := TanzuManagementCreate(runCtx(t), managementInput(t, env))
	if err == nil || !strings.Contains(err.Error(), "said it creates the kind cluster tkg-kind-announced, but its kubeconfig") {
		t.Fatalf("want the name mismatch reported, got %v\n%s", err, out)
	}
	if r, ok := env.State.Resource(kind.ResourceKind, "tkg-kind-announced"); !ok || r.State != "creating" || r.CreatedBy != "management" ||
		r.DeleteHint != kind.DeleteHint("tkg-kind-announced") {
		t.Errorf("the announced kind cluster is not recorded for cleanup: %+v (%v)", r, ok)
	}
}
