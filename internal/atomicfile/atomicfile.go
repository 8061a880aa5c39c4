// Package atomicfile replaces files the crash-safe way Redis does: write a
// temporary file next to the target, fsync it, rename it over the target,
// then fsync the directory so that the rename itself is durable. The RDB
// saver (internal/persist) and the AOF manifest (internal/aof) share it.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Commit finishes a temporary file f at tmp whose writing ended with werr:
// it syncs and closes f and renames tmp over path. On any error tmp is
// removed and the error returned. The directory is not synced: call
// SyncDir when the rename must survive a crash.
func Commit(f *os.File, tmp, path string, werr error) error {
	err := werr
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// SyncDir fsyncs the directory holding path, making a rename in it durable.
func SyncDir(path string) error {
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
