package ovagen

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"

	"github.com/vmware/govmomi/vmdk"
)

// diskData returns DataSize bytes of pseudo-random data. Random so that a
// stream-optimized disk is as big as its data (zeros would compress away and
// make a "200 MiB" OVA a few kilobytes); seeded so the same options give the
// same OVA and the same sha256.
func diskData(o Options) io.Reader {
	var seed [32]byte
	name := sha256.Sum256([]byte(o.Name))
	copy(seed[:], name[:])
	binary.LittleEndian.PutUint64(seed[:8], binary.LittleEndian.Uint64(seed[:8])^o.Seed)
	return io.LimitReader(rand.NewChaCha8(seed), o.DataSize)
}

// writeDisk writes the disk file to a temporary file in dir and returns its path.
func writeDisk(dir string, o Options) (string, error) {
	f, err := os.CreateTemp(dir, ".ovagen-disk-*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	switch o.Format {
	case Raw:
		w := bufio.NewWriterSize(f, 1<<20)
		_, err = io.Copy(w, diskData(o))
		if err == nil {
			err = w.Flush()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	default:
		// govmomi's writer opens the file itself.
		_ = f.Close()
		err = writeStreamOptimized(tmp, o)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("ovagen: writing %s disk: %w", o.Format, err)
	}
	return tmp, nil
}

func writeStreamOptimized(path string, o Options) error {
	w, err := vmdk.NewStreamOptimizedWriter(path, o.DiskCapacity)
	if err != nil {
		return err
	}
	if err := w.Write(diskData(o)); err != nil {
		return err
	}
	return w.Close()
}
