// Package conformance runs Kubernetes' own conformance tests (e2e.test)
// against a cluster through Cluster API's test/framework/kubetest, and turns
// the JUnit it leaves into a report that names every conformance test: run,
// failed, or skipped with its reason.
package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	capiframework "sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/cluster-api/test/framework/kubetest"
	"sigs.k8s.io/yaml"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/wait"
)

// Input is the input of Run.
type Input struct {
	// ClusterName names the cluster in the report and kubetest's folders.
	ClusterName string
	// KubeconfigPath reaches the cluster from a container on the "kind"
	// Docker network (CAPD's kubeconfig names the load balancer's address).
	KubeconfigPath string
	Scheme         *runtime.Scheme
	// ConfigFile is a kubetest config (Cluster API's flat YAML of e2e.test
	// flags: ginkgo.focus, ginkgo.skip, ...).
	ConfigFile string
	// Image is the conformance image (registry.k8s.io/conformance:<version>).
	Image string
	// Pull lets a missing image be pulled; without it a missing image fails
	// at once with how to build it, instead of a registry timeout.
	Pull        bool
	GinkgoNodes int
	// NotSelected says why the conformance tests the config's selection
	// leaves out are not run by this profile; it is their skip reason.
	NotSelected string
	// WorkDir is private to the run (not the artifacts folder): kubetest
	// copies the kubeconfig, keys included, into it.
	WorkDir string
	// Writer receives conformance.md and the JUnit files, redacted.
	Writer  *artifacts.Writer
	Timeout time.Duration
}

func (in Input) validate() error {
	var errs []string
	for name, v := range map[string]string{"ClusterName": in.ClusterName, "KubeconfigPath": in.KubeconfigPath,
		"ConfigFile": in.ConfigFile, "Image": in.Image, "WorkDir": in.WorkDir} {
		if v == "" {
			errs = append(errs, name+" is empty")
		}
	}
	if in.Scheme == nil {
		errs = append(errs, "Scheme is nil")
	}
	if in.Writer == nil {
		errs = append(errs, "Writer is nil")
	}
	if in.GinkgoNodes < 0 {
		errs = append(errs, fmt.Sprintf("GinkgoNodes %d is negative", in.GinkgoNodes))
	}
	errs = append(errs, wait.Timeouts{"Timeout": in.Timeout}.Missing("")...)
	sort.Strings(errs)
	return wait.Invalid("conformance.Run", errs)
}

// Selection is the focus and skip of a kubetest config file.
type Selection struct{ Focus, Skip string }

// ReadSelection reads a kubetest config and returns its selection. Errors
// name the file and say what to fix: a config without ginkgo.focus would run
// every e2e test, which is never what a conformance stage means.
func ReadSelection(path string) (Selection, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Selection{}, fmt.Errorf("kubetest config: %w (set conformance.kubetestConfig to a file like config/conformance/local-subset.yaml)", err)
	}
	var flags map[string]any
	if err := yaml.Unmarshal(data, &flags); err != nil {
		return Selection{}, fmt.Errorf("kubetest config %s is not a flat YAML map of e2e.test flags: %w", path, err)
	}
	var errs []error
	str := func(key string) string {
		v, ok := flags[key]
		if !ok {
			return ""
		}
		s, ok := v.(string)
		if !ok {
			errs = append(errs, fmt.Errorf("kubetest config %s: %s is %T, want a string (a regular expression)", path, key, v))
		}
		return s
	}
	sel := Selection{Focus: str("ginkgo.focus"), Skip: str("ginkgo.skip")}
	for k, v := range flags {
		if _, nested := v.(map[string]any); nested {
			errs = append(errs, fmt.Errorf("kubetest config %s: %s is a map; kubetest passes every key as one flag, so values must be scalars", path, k))
		}
	}
	if sel.Focus == "" {
		errs = append(errs, fmt.Errorf("kubetest config %s has no ginkgo.focus: without it e2e.test runs every e2e test, not conformance (use '\\[Conformance\\]' for the whole suite)", path))
	}
	return sel, errors.Join(errs...)
}

// Run runs the conformance image against the cluster, writes conformance.md
// and the JUnit files through the Writer, and returns the result. The error
// is about the run itself (bad input, no image, no JUnit); failed tests are
// in the result (Result.Error).
func Run(ctx context.Context, in Input) (*Result, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	sel, err := ReadSelection(in.ConfigFile)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(in.KubeconfigPath); err != nil {
		return nil, fmt.Errorf("conformance: kubeconfig of cluster %s: %w", in.ClusterName, err)
	}
	if !in.Pull {
		if err := ImagePresent(ctx, in.Image); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(in.WorkDir, 0o700); err != nil {
		return nil, err
	}
	if err := clearPrevious(in.WorkDir); err != nil {
		return nil, err
	}
	res := &Result{Cluster: in.ClusterName, Image: in.Image, Config: in.ConfigFile, Focus: sel.Focus, Skip: sel.Skip}
	start := time.Now()
	runCtx, cancel := context.WithTimeout(ctx, in.Timeout)
	defer cancel()
	// kubetest leaves its container behind (no auto-remove) and returns on a
	// cancelled context while it still runs: remove it here, on every path.
	// It is ours because it mounts a file from our private WorkDir.
	defer func() {
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer ccancel()
		if err := removeOwnContainers(cctx, in.Image, in.WorkDir); err != nil && res.Err == "" {
			res.Err = err.Error()
		}
	}()
	joined := make(chan error, 1)
	if net := os.Getenv("KIND_EXPERIMENTAL_DOCKER_NETWORK"); net != "" && net != "kind" {
		go func() { joined <- joinNetwork(runCtx, in.Image, in.WorkDir, net, 500*time.Millisecond) }()
	} else {
		joined <- nil
	}
	runErr := kubetest.Run(runCtx, kubetest.RunInput{
		ClusterProxy:       capiframework.NewClusterProxy(in.ClusterName, in.KubeconfigPath, in.Scheme),
		ArtifactsDirectory: in.WorkDir,
		ConfigFilePath:     in.ConfigFile,
		GinkgoNodes:        in.GinkgoNodes,
		ConformanceImage:   in.Image,
		ClusterName:        in.ClusterName,
	})
	res.Duration = time.Since(start)
	timedOut := runCtx.Err() != nil && ctx.Err() == nil
	cancel() // a joiner still looking gives up now
	if err := <-joined; err != nil && !errors.Is(err, context.Canceled) {
		runErr = errors.Join(runErr, err)
	}
	if timedOut {
		runErr = fmt.Errorf("conformance tests did not finish within %s (interval conformance/run-conformance): %w", in.Timeout, runCtx.Err())
	}

	files, _ := filepath.Glob(filepath.Join(in.WorkDir, "junit*.xml"))
	sort.Strings(files)
	var all []Test
	for _, f := range files {
		tests, err := parseJUnit(f)
		if err != nil {
			runErr = errors.Join(runErr, err)
			continue
		}
		all = append(all, tests...)
		rel := filepath.Join("conformance", filepath.Base(f))
		if err := in.Writer.CopyFile(rel, f); err != nil {
			runErr = errors.Join(runErr, fmt.Errorf("copying %s into the artifacts: %w", f, err))
		} else {
			res.JUnit = append(res.JUnit, rel)
		}
	}
	res.Tests, err = classify(all, in.ConfigFile, in.NotSelected)
	if err != nil {
		runErr = errors.Join(runErr, err)
	}
	switch {
	case len(files) == 0:
		res.Err = fmt.Sprintf("no JUnit report in %s: the conformance container did not get to run the suite: %v", in.WorkDir, runErr)
	case runErr != nil && res.Count(Failed) == 0:
		// e2e.test exits non-zero when tests fail; only an error the tests do not explain is the run's.
		res.Err = runErr.Error()
	}
	if err := in.Writer.WriteFile("conformance/conformance.md", []byte(res.Markdown())); err != nil {
		return res, err
	}
	return res, nil
}

// clearPrevious removes the JUnit files an earlier run left in workDir (a
// resumed run runs the stage again in the same run folder): a run that
// writes none must not be reported with the last one's results.
func clearPrevious(workDir string) error {
	old, _ := filepath.Glob(filepath.Join(workDir, "junit*.xml"))
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return fmt.Errorf("removing the JUnit file of an earlier conformance run: %w", err)
		}
	}
	return nil
}

// classify keeps the conformance tests and says why each skipped one did not
// run. A failure outside any test (the suite's BeforeSuite) is an error: it
// makes every test skipped, and skipped is never passed.
func classify(all []Test, config, notSelected string) ([]Test, error) {
	var out []Test
	var errs []error
	for _, t := range all {
		if !IsConformance(t.Name) {
			if t.Status == Failed {
				errs = append(errs, fmt.Errorf("%s failed: %s", t.Name, firstLines(t.Message, 8)))
			}
			continue
		}
		if t.Status == Skipped {
			t.SkipReason = skipReason(t, config, notSelected)
		}
		out = append(out, t)
	}
	return out, errors.Join(errs...)
}

func skipReason(t Test, config, notSelected string) string {
	if t.Message == "pending" {
		return "pending in e2e.test"
	}
	msg := strings.TrimSpace(strings.TrimPrefix(t.Message, "skipped"))
	msg = strings.TrimSpace(strings.TrimPrefix(msg, "-"))
	if msg != "" {
		// The test skipped itself (e2eskipper): a provider, a feature, too few nodes.
		return "skipped by the test: " + firstLines(msg, 1)
	}
	r := "not selected by " + filepath.Base(config)
	if notSelected != "" {
		r += ": " + notSelected
	}
	return r
}

// ImagePresent reports, as an error that says how to get it, an image that
// is not on this Docker host.
func ImagePresent(ctx context.Context, image string) error {
	if err := node.ImagePresent(ctx, image); err != nil {
		return fmt.Errorf("%w; the conformance images come from scripts/conformance-images.sh (make testbed runs it), "+
			"or set conformance.pull: true (CONFORMANCE_PULL=true) on a machine with registry access", err)
	}
	return nil
}

// removeOwnContainers removes the containers of image that mount something
// from workDir: kubetest names its container at random and labels nothing,
// and another run may be running the same image at the same time.
func removeOwnContainers(ctx context.Context, image, workDir string) error {
	ids, err := ownContainers(ctx, image, workDir)
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range ids {
		if o, err := exec.CommandContext(ctx, "docker", "rm", "-f", "-v", id).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("removing conformance container %.12s: %s", id, strings.TrimSpace(string(o))))
		}
	}
	return errors.Join(errs...)
}

// ownContainers are the containers of image that mount a file from workDir:
// kubetest's, for this run (workDir is the run's private folder).
func ownContainers(ctx context.Context, image, workDir string) ([]string, error) {
	out, err := exec.CommandContext(ctx, "docker", "ps", "-aq", "--no-trunc", "--filter", "ancestor="+image).Output()
	if err != nil {
		return nil, fmt.Errorf("listing conformance containers: %w", err)
	}
	var ids []string
	for _, id := range strings.Fields(string(out)) {
		mounts, err := exec.CommandContext(ctx, "docker", "inspect", "-f", "{{range .Mounts}}{{.Source}}\n{{end}}", id).Output()
		if err != nil {
			continue // gone meanwhile
		}
		for _, m := range strings.Fields(string(mounts)) {
			if m == workDir || strings.HasPrefix(m, workDir+string(filepath.Separator)) {
				ids = append(ids, id)
				break
			}
		}
	}
	return ids, nil
}

// joinNetwork connects kubetest's container to network as soon as it
// exists. Cluster API's kubetest always starts it on docker network "kind";
// a cluster whose nodes and control-plane endpoint live on another network
// (KIND_EXPERIMENTAL_DOCKER_NETWORK: the vSphere rehearsal's VMs and VIPs)
// is out of its reach there, as docker isolates bridge networks from each
// other. e2e.test retries its first API calls for a minute and more, so
// joining within seconds of the start is in time. It returns when joined
// or when ctx (the run) ends.
func joinNetwork(ctx context.Context, image, workDir, network string, poll time.Duration) error {
	for {
		ids, err := ownContainers(ctx, image, workDir)
		if err == nil && len(ids) > 0 {
			for _, id := range ids {
				if o, err := exec.CommandContext(ctx, "docker", "network", "connect", network, id).CombinedOutput(); err != nil &&
					!strings.Contains(string(o), "already exists") {
					return fmt.Errorf("connecting conformance container %.12s to docker network %s: %s", id, network, strings.TrimSpace(string(o)))
				}
			}
			return nil
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("no conformance container of %s found to connect to docker network %s: %w", image, network, err)
			}
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}
