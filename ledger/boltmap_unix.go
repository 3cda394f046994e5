//go:build unix

package ledger

import (
	"fmt"
	"os"
	"syscall"
)

// checkBoltTree maps the first n bytes of f read-only and walks its page
// tree (walkBoltTree). The map is the kernel's page cache, shared with
// bbolt's own map of the same file, so the walk costs page-table work,
// not reads. A fault while walking (the file shrank under it) is an error.
func checkBoltTree(f *os.File, n int64, ps, pgid, root uint64) (err error) {
	data, err := syscall.Mmap(int(f.Fd()), 0, int(n), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("map the file: %w", err)
	}
	defer syscall.Munmap(data)
	return faultless(func() error { return walkBoltTree(data, ps, pgid, root) })
}
