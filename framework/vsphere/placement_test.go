package vsphere_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tkg-e2e/harness/framework/vsphere"
)

func TestResolveWrongNamesListWhatExists(t *testing.T) {
	s := connect(t)
	for name, c := range map[string]struct {
		p    vsphere.Placement
		want string
	}{
		"datacenter": {vsphere.Placement{Datacenter: "DC9"}, `datacenter "DC9" not found; available: DC0`},
		"datastore": {vsphere.Placement{Datacenter: "DC0", Datastore: "ds9", ResourcePool: placement.ResourcePool},
			`datastore "ds9" not found in datacenter "DC0"; available: LocalDS_0`},
		"resource pool": {vsphere.Placement{Datacenter: "DC0", ResourcePool: "Gold"},
			`resource pool "Gold" not found in datacenter "DC0"; available: /DC0/host/DC0_C0/Resources, /DC0/host/DC0_H0/Resources`},
		"folder": {vsphere.Placement{Datacenter: "DC0", Folder: "/DC0/vm/tkg-nope", ResourcePool: placement.ResourcePool},
			`folder "/DC0/vm/tkg-nope" not found in datacenter "DC0"; available: /DC0/vm`},
		"network": {vsphere.Placement{Datacenter: "DC0", ResourcePool: placement.ResourcePool, Network: "VM Netwrok"},
			`network "VM Netwrok" not found in datacenter "DC0"; available: /DC0/network/VM Network`},
		"unnamed pool": {vsphere.Placement{Datacenter: "DC0"},
			`no resource pool set and there are 2 in datacenter "DC0": /DC0/host/DC0_C0/Resources, /DC0/host/DC0_H0/Resources; name one`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := s.Resolve(context.Background(), c.p)
			mustContain(t, err, c.want)
			var nf *vsphere.NotFoundError
			if !strings.HasPrefix(name, "unnamed") && !errors.As(err, &nf) {
				t.Errorf("want a *NotFoundError, got %T", err)
			}
		})
	}
}

func TestResolveAcceptsNamesAndPaths(t *testing.T) {
	s := connect(t)
	for _, p := range []vsphere.Placement{
		placement,
		{Datacenter: "/DC0", Folder: "vm", Datastore: "/DC0/datastore/LocalDS_0", ResourcePool: "DC0_C0/Resources", Network: "DC0_DVPG0"},
		// A single datastore needs no name.
		{Datacenter: "DC0", ResourcePool: "DC0_H0/Resources"},
	} {
		tg, err := s.Resolve(context.Background(), p)
		if err != nil {
			t.Errorf("%+v: %v", p, err)
			continue
		}
		if tg.Folder.InventoryPath != "/DC0/vm" || tg.Datastore.Name() != "LocalDS_0" {
			t.Errorf("%+v resolved to folder %s, datastore %s", p, tg.Folder.InventoryPath, tg.Datastore.Name())
		}
	}
}
