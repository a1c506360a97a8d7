package vsphere_test

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/tkg-e2e/harness/framework/redact"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/vsphere"
	"github.com/tkg-e2e/harness/framework/vsphere/ovagen"
)

// The ova stage in the local profile: vcsim, a generated node OVA, import,
// property check (the inventory is dumped by framework/artifacts/vsphere
// after a failure). Durations come from the config intervals
// in a spec; they are literals here only to keep the example short.
func Example_ovaStage() {
	ctx := context.Background()
	artifacts, _ := os.MkdirTemp("", "ova-stage-")
	defer os.RemoveAll(artifacts)
	state, _ := run.New(artifacts, "example", "local", "config/local.yaml")
	red := redact.New()
	out := red.Writer(os.Stdout)
	defer out.Flush()

	simulator, err := vsphere.StartSimulator()
	if err != nil {
		panic(err)
	}
	defer simulator.Close()
	ova, err := ovagen.Write(filepath.Join(artifacts, "ubuntu-2204-kube-v1.33.1.ova"), ovagen.Options{Name: "ubuntu-2204-kube-v1.33.1"})
	if err != nil {
		panic(err)
	}

	in := simulator.SessionInput()
	in.ConnectTimeout, in.Redactor = 10*time.Second, red
	s, err := vsphere.Connect(ctx, in)
	if err != nil {
		panic(err)
	}
	defer s.Close(ctx)

	results, err := s.ImportOVAs(ctx, vsphere.ImportInput{
		Placement:   vsphere.Placement{Datacenter: "DC0", Datastore: "LocalDS_0", ResourcePool: "/DC0/host/DC0_C0/Resources", Network: "VM Network"},
		OVAs:        []vsphere.OVA{{Source: ova.Path}},
		Concurrency: 2,
		Timeout:     30 * time.Minute,
		Progress:    out, ProgressEvery: 15 * time.Second, Prefix: "[ova]",
		Recorder: state, CreatedBy: "ova",
	})
	if err != nil {
		panic(err)
	}
	if err := s.ValidateProperties(ctx, "DC0", results[0].Path, ovagen.DefaultProperties()); err != nil {
		panic(err)
	}
}
