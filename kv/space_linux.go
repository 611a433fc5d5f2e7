package kv

import (
	"errors"
	"os"
	"syscall"
)

// errUsageUnsupported is never returned on Linux.
var errUsageUnsupported = errors.New("free disk space is not read on this platform")

// statfsUsage reads the free and total space of the file system of dir.
func statfsUsage(dir string) (diskUsage, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return diskUsage{}, err
	}
	bs := uint64(st.Bsize)
	return diskUsage{avail: st.Bavail * bs, total: st.Blocks * bs, rootOnly: (st.Bfree - min(st.Bavail, st.Bfree)) * bs}, nil
}

// allocate gives f size bytes of real disk blocks.
func allocate(f *os.File, size int64) error {
	err := syscall.Fallocate(int(f.Fd()), 0, 0, size)
	if err == syscall.EOPNOTSUPP || err == syscall.ENOSYS {
		return writeZeros(f, size)
	}
	return err
}
