// Package durablefile replaces small files so that a crash at any moment
// leaves either the old contents or the new, never a torn file, and the
// new contents survive power loss once Write returns: the data goes to a
// temporary file that is synced, renamed over the file, and the directory
// is synced so that the rename itself is durable. The oracle's window file
// (package tso) and a KV node's state file (package kv/node) are written
// this way.
package durablefile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces path with data (mode perm when created). A temporary
// file path+".tmp" left by a crash is overwritten next time.
func Write(path string, data []byte, perm os.FileMode) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return d.Close()
}
