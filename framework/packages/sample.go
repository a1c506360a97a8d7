package packages

import (
	"context"
	"errors"
	"io"
	"strconv"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The local profile's package set: small, self-contained packages that prove
// kapp-controller fetches (inline), templates (ytt with a data values
// schema) and deploys (kapp, waiting for a Deployment to become available)
// without a registry. config/packages/local.yaml lists the PackageInstalls
// below; a unit test keeps the two in step.
const (
	SampleNamespace      = "harness-packages"
	SampleServiceAccount = "harness-packages-installer"
	// SampleImage must be loaded into the cluster (the kit's TEST_IMAGE_BUSYBOX):
	// the Deployment uses imagePullPolicy IfNotPresent and there is no registry.
	SampleImage = "busybox:1.35.0"

	SampleConfigRef  = "config.samples.harness.tkg-e2e.dev"
	SampleBusyboxRef = "busybox.samples.harness.tkg-e2e.dev"
	SampleVersion    = "1.0.0"
)

// SamplePackages returns the package set, with the busybox Deployment using image.
func SamplePackages(image string) []InlinePackage {
	if image == "" {
		image = SampleImage
	}
	return []InlinePackage{
		{
			RefName: SampleConfigRef, Version: SampleVersion, DisplayName: "harness sample config",
			Files: map[string]string{
				"values.yml": "#@data/values-schema\n---\ngreeting: hello from a harness package\n",
				"config.yml": `#@ load("@ytt:data", "data")
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: harness-sample-config
data:
  greeting: #@ data.values.greeting
  package: ` + SampleConfigRef + `
`,
			},
		},
		{
			RefName: SampleBusyboxRef, Version: SampleVersion, DisplayName: "harness sample busybox",
			Files: map[string]string{
				"values.yml": "#@data/values-schema\n---\nimage: " + strconv.Quote(image) + "\n",
				"deployment.yml": `#@ load("@ytt:data", "data")
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: harness-sample-busybox
spec:
  replicas: 1
  selector:
    matchLabels: {app: harness-sample-busybox}
  template:
    metadata:
      labels: {app: harness-sample-busybox}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: busybox
        image: #@ data.values.image
        imagePullPolicy: IfNotPresent
        command: ["sh", "-c", "echo harness sample package running; while true; do sleep 3600; done"]
        resources:
          requests: {cpu: 5m, memory: 8Mi}
`,
			},
		},
	}
}

// SampleInstalls are the PackageInstalls of the sample set.
func SampleInstalls() []Install {
	return []Install{
		{Name: "harness-sample-config", RefName: SampleConfigRef, Version: ">=" + SampleVersion},
		{Name: "harness-sample-busybox", RefName: SampleBusyboxRef, Version: ">=" + SampleVersion},
	}
}

// SampleInput describes where to install the sample set.
type SampleInput struct {
	// Client must know the kapp-controller types (kube.Connect's does).
	Client client.Client
	// Namespace defaults to SampleNamespace, Image to SampleImage.
	Namespace, Image string
	Timeout          time.Duration
	Interval         time.Duration
	Progress         io.Writer
	Prefix           string
}

// InstallSamplePackages installs the sample set into a cluster that runs
// kapp-controller. Check it with the entries of config/packages/local.yaml.
func InstallSamplePackages(ctx context.Context, in SampleInput) error {
	if in.Client == nil {
		return errors.New("packages.InstallSamplePackages: Client is required")
	}
	ns := in.Namespace
	if ns == "" {
		ns = SampleNamespace
	}
	return InstallPackages(ctx, InstallInput{
		Client: in.Client, Namespace: ns, ServiceAccount: SampleServiceAccount,
		Packages: SamplePackages(in.Image), Installs: SampleInstalls(),
		Timeout: in.Timeout, Interval: in.Interval, Progress: in.Progress, Prefix: in.Prefix,
	})
}
