//go:build !linux

package sqlite

import "os"

// startWriteback does nothing where sync_file_range does not exist: the
// checkpoint's own fsync writes the pages.
func startWriteback(*os.File) error { return nil }
