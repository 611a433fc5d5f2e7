//go:build !linux

package kv

import (
	"errors"
	"os"
)

// statfsUsage is not implemented here: the store runs without disk
// protection (Open treats the error as "no guard").
func statfsUsage(string) (diskUsage, error) { return diskUsage{}, errUsageUnsupported }

var errUsageUnsupported = errors.New("free disk space is not read on this platform")

// allocate gives f size bytes by writing them.
func allocate(f *os.File, size int64) error { return writeZeros(f, size) }
