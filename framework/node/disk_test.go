package node

import (
	"strings"
	"testing"
)

func TestNeedDiskNamesTheClusterTheRootAndTheFix(t *testing.T) {
	d := Disk{Dir: "/var/lib/docker", Free: 3 << 30}
	if err := NeedDisk(d, "cluster wl", 1, 2, "host.diskPerNodeGiB"); err != nil {
		t.Fatalf("3 GiB free for one 2 GiB node: %v", err)
	}
	err := NeedDisk(d, "cluster wl", 2, 2, "host.diskPerNodeGiB")
	if err == nil {
		t.Fatal("3 GiB free for two 2 GiB nodes passed")
	}
	for _, want := range []string{"cluster wl needs about 4.0 GiB", "2 node(s)", "/var/lib/docker has 3.0 GiB free", "Fix:", "host.diskPerNodeGiB"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}
	if err := NeedDisk(Disk{Dir: "/x"}, "cluster wl", 2, 0, "k"); err != nil {
		t.Errorf("0 GiB per node turns the check off, got %v", err)
	}
}
