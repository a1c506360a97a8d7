// Command vcsim-server serves govmomi's simulator (the vCenter API the harness
// already runs in-process for the local profile) as a separate process, so the
// vSphere profile can be rehearsed end to end: the harness, clusterctl and the
// real CAPV controller (in a kind cluster) all talk to it over the network, as
// they would to a testbed's vCenter.
//
// The govmomi `vcsim` command of v0.56.0 is a nested module the module proxy
// does not serve; this is the same few calls over the same library.
//
//	vcsim-server -listen 0.0.0.0:8989 -advertise 172.17.0.1 -env-file run/vcsim.env
//
// With -network and -node-images, VMs whose RUN.container is a node image
// boot as Kubernetes nodes on the run's docker network (nodes.go).
//
// The password is read from $VCSIM_PASSWORD (never a flag: flags show up in
// ps). The env file gets VSPHERE_SERVER, VSPHERE_USERNAME and
// VSPHERE_TLS_THUMBPRINT (SHA-1, what CAPV and govc pin) and is written only
// once the server answers, so a script can wait for it.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	// Register the vAPI (tags, content library) and PBM (storage policy)
	// endpoints: CAPV talks to both.
	_ "github.com/vmware/govmomi/pbm/simulator"
	_ "github.com/vmware/govmomi/vapi/simulator"
)

func main() {
	listen := flag.String("listen", "0.0.0.0:8989", "address to listen on")
	advertise := flag.String("advertise", "", "host or IP clients use to reach the server (default: the listen host)")
	username := flag.String("username", "administrator@vsphere.local", "the only user accepted")
	envFile := flag.String("env-file", "", "write VSPHERE_SERVER, VSPHERE_USERNAME, VSPHERE_TLS_THUMBPRINT here once serving")
	folder := flag.String("folder", "tkg-e2e", "VM folder to create under /DC0/vm (where the run's VMs go)")
	pool := flag.String("pool", "tkg-e2e", "resource pool to create under /DC0/host/DC0_C0/Resources")
	hosts := flag.Int("hosts", 3, "hosts in cluster DC0_C0")
	network := flag.String("network", "", "docker network of every VM container whose extraConfig names none (RUN.network)")
	nodeImages := flag.String("node-images", "", "comma-separated RUN.container images that boot as Kubernetes nodes (privileged, systemd, host name = VM name)")
	label := flag.String("label", "", "value of the tkg-e2e.vcsim label on every VM container, to find what the server leaves behind (default: pid-<pid>)")
	flag.Parse()
	vc := vmContainers{Network: *network}
	if *nodeImages != "" {
		vc.NodeImages = strings.Split(*nodeImages, ",")
	}
	if *label == "" {
		*label = fmt.Sprintf("pid-%d", os.Getpid())
	}
	vc.Label = *label
	if err := serve(*listen, *advertise, *username, *envFile, *folder, *pool, *hosts, vc); err != nil {
		fmt.Fprintln(os.Stderr, "vcsim-server:", err)
		os.Exit(1)
	}
}

func serve(listen, advertise, username, envFile, folder, pool string, hosts int, vc vmContainers) error {
	password := os.Getenv("VCSIM_PASSWORD")
	if password == "" {
		return errors.New("VCSIM_PASSWORD is empty: export the password the server should accept")
	}
	if err := vc.validate(); err != nil {
		return err
	}
	// govmomi v0.56.0's docker-events watcher never fires (it compares
	// container IDs with the quotes of its --format still on), so a VM
	// follows its container only by inspect polls, every 10 s by default:
	// a VM whose container stopped would look powered on that long.
	if os.Getenv("VCSIM_INSPECT_INTERVAL") == "" {
		os.Setenv("VCSIM_INSPECT_INTERVAL", "2s")
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("-listen %q: %w (want host:port, e.g. 0.0.0.0:8989)", listen, err)
	}
	if advertise == "" {
		advertise = host
	}

	// A small testbed: one datacenter, one cluster, a distributed port group
	// beside "VM Network", and a few VMs that belong to somebody else (the
	// run must never touch them).
	m := simulator.VPX()
	m.ClusterHost = hosts
	m.Machine = 1
	if err := m.Create(); err != nil {
		return fmt.Errorf("creating the model: %w", err)
	}
	defer m.Remove()
	m.Map().Handler = vc.handler
	m.Service.TLS = new(tls.Config)
	// Serve the blank-imported vAPI and PBM endpoints: CAPV logs in to the
	// REST API (tags) as well as SOAP.
	m.Service.RegisterEndpoints = true
	m.Service.Listen = &url.URL{Host: listen, User: url.UserPassword(username, password)}
	s := m.Service.NewServer()
	defer s.Close()

	ctx := context.Background()
	u := *s.URL
	c, err := govmomi.NewClient(ctx, &u, true)
	if err != nil {
		return fmt.Errorf("logging in to the simulator itself: %w", err)
	}
	if err := inventory(ctx, c, folder, pool); err != nil {
		return err
	}
	_ = c.Logout(ctx)

	// On 443 the server is a bare host, as a vCenter is: the vSphere cloud
	// provider appends :443 itself, and its credentials Secret's key
	// "<server>.password" cannot hold a colon.
	server := advertise
	if port != "443" {
		server = net.JoinHostPort(advertise, port)
	}
	thumb := s.CertificateInfo().ThumbprintSHA1
	fmt.Printf("vcsim-server: serving https://%s/sdk (listening on %s), user %s, thumbprint %s\n", server, listen, username, thumb)
	if envFile != "" {
		body := fmt.Sprintf("VSPHERE_SERVER=%s\nVSPHERE_USERNAME=%s\nVSPHERE_TLS_THUMBPRINT=%s\n", server, username, thumb)
		if err := os.MkdirAll(filepath.Dir(envFile), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(envFile+".tmp", []byte(body), 0o600); err != nil {
			return err
		}
		if err := os.Rename(envFile+".tmp", envFile); err != nil {
			return err
		}
	}

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	got := <-sig
	fmt.Printf("vcsim-server: %s, stopping (%s)\n", got, time.Now().UTC().Format(time.RFC3339))
	return nil
}

// inventory adds what a testbed admin prepares for the e2e runs: a VM folder
// and a resource pool of their own.
func inventory(ctx context.Context, c *govmomi.Client, folder, pool string) error {
	f := find.NewFinder(c.Client, true)
	dc, err := f.Datacenter(ctx, "DC0")
	if err != nil {
		return err
	}
	f.SetDatacenter(dc)
	vmFolder, err := f.Folder(ctx, "/DC0/vm")
	if err != nil {
		return err
	}
	if _, err := vmFolder.CreateFolder(ctx, folder); err != nil {
		return fmt.Errorf("creating folder /DC0/vm/%s: %w", folder, err)
	}
	rp, err := f.ResourcePool(ctx, "/DC0/host/DC0_C0/Resources")
	if err != nil {
		return err
	}
	spec := types.DefaultResourceConfigSpec()
	if _, err := rp.Create(ctx, pool, spec); err != nil {
		return fmt.Errorf("creating resource pool %s: %w", pool, err)
	}
	return nil
}
