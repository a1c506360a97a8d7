package node

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// Disk is the free space where Docker keeps containers and their volumes.
// A kind or CAPD node's /var is a volume holding a copy of its image's
// preloaded images and every image loaded into it, so each node costs GiBs
// there; a full disk does not fail a run at once but slowly: image loads
// retried for minutes, execs refused, nodes that never get Ready.
type Disk struct {
	// Dir is Docker's data root (docker info's DockerRootDir).
	Dir string
	// Free is what an unprivileged writer may still use there, in bytes.
	Free uint64
}

// GiB is Free in GiB.
func (d Disk) GiB() float64 { return float64(d.Free) / (1 << 30) }

// DockerDisk reads Docker's data root from the engine and its free space
// from this host's filesystem. ok is false when the engine is not on this
// host (DOCKER_HOST tcp:// or ssh://) or its root is not visible here (a
// rootless or VM-backed engine): then nothing can be said about its disk.
func DockerDisk(ctx context.Context) (d Disk, ok bool, err error) {
	if h := os.Getenv("DOCKER_HOST"); h != "" && !strings.HasPrefix(h, "unix://") {
		return Disk{}, false, nil
	}
	rt, err := runtime(ctx)
	if err != nil {
		return Disk{}, false, err
	}
	info, err := rt.GetSystemInfo(ctx)
	if err != nil {
		return Disk{}, false, fmt.Errorf("docker info: %w", err)
	}
	if info.DockerRootDir == "" {
		return Disk{}, false, nil
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(info.DockerRootDir, &st); err != nil {
		return Disk{}, false, nil //nolint:nilerr // not visible from this host: nothing to check
	}
	return Disk{Dir: info.DockerRootDir, Free: st.Bavail * uint64(st.Bsize)}, true, nil
}

// NeedDisk is the disk check before a cluster of nodes is made: nodes ×
// perNodeGiB must be free. what names the cluster; key is the setting that
// holds perNodeGiB, for the fix. perNodeGiB 0 turns the check off.
func NeedDisk(d Disk, what string, nodes int, perNodeGiB float64, key string) error {
	if perNodeGiB <= 0 || nodes <= 0 {
		return nil
	}
	need := float64(nodes) * perNodeGiB
	if d.GiB() >= need {
		return nil
	}
	return fmt.Errorf("%s needs about %.1f GiB of disk for its %d node(s) (%.1f GiB each, %s), but Docker's data root %s has %.1f GiB free.\n"+
		"Fix: free space there (make clean-run ARTIFACTS=<kept run>; docker system prune; go clean -cache), or set %s lower if your nodes take less",
		what, need, nodes, perNodeGiB, key, d.Dir, d.GiB(), key)
}
