package vsphere_test

import (
	"testing"

	"github.com/tkg-e2e/harness/framework/vsphere"
)

func TestCompareProperties(t *testing.T) {
	found := []vsphere.VAppProperty{
		{ID: "VERSION", Category: "Other", Value: "from another product section"},
		{ID: "VERSION", Category: "Cluster API Provider (CAPI)", Value: "v1"},
		{ID: "DISTRO_NAME", Value: "photon"},
	}
	if err := vsphere.CompareProperties("t", found, map[string]string{"VERSION": "v1"}); err != nil {
		t.Errorf("the CAPI category should win: %v", err)
	}
	err := vsphere.CompareProperties("/DC0/vm/t", found, map[string]string{"VERSION": "v2", "DISTRO_NAME": "ubuntu"})
	mustContain(t, err, "template /DC0/vm/t: 2 vApp properties do not match the config: ",
		`DISTRO_NAME: expected "ubuntu", found "photon"; VERSION: expected "v2", found "v1"`)
}
