package ledger

import (
	"encoding/binary"
	"fmt"
)

// bbolt page layout (go.etcd.io/bbolt internal/common): a 16-byte header
// (id, flags, count, overflow), then count 16-byte elements. A branch
// element is (pos, ksize, child pgid); a leaf element is (flags, pos,
// ksize, vsize), its key at the element's address plus pos and its value
// after the key. A leaf value flagged as a bucket starts with the bucket's
// root pgid (0 for a bucket inlined in the value).
const (
	boltBranchPage   = 0x01
	boltLeafPage     = 0x02
	boltBucketLeaf   = 0x01
	boltElementSize  = 16
	boltMaxTreeDepth = 64
)

// walkBoltTree checks the page tree of a bbolt file (data holds its first
// pgid pages of ps bytes) from the root bucket's page: every page a branch
// or bucket names is inside the file and named once only (so there is no
// loop); every page it reads says it is that page, is a branch (not
// empty) or leaf page, sits at most boltMaxTreeDepth deep and holds its
// elements, keys and values inside its own pages. bbolt trusts all of
// this: a damaged branch that points back up the tree made a cursor
// descend until memory ran out, and an element past its page read past
// the map.
//
// It reads every branch page, the first child of each, and every page of
// the root bucket's tree (where the buckets' roots are); the other leaves
// of a bucket (nearly all pages) are only counted, which is enough for the
// loop check (a loop goes through a branch page, which is then named
// twice) and keeps the walk to about two pages in a hundred.
func walkBoltTree(data []byte, ps, pgid, root uint64) error {
	le := binary.LittleEndian
	seen := make([]uint64, (pgid+63)/64)
	type visit struct {
		id, depth uint64
		rootTree  bool // in the root bucket's tree: read every page
		unread    bool // a leaf-level sibling: counted, not read
	}
	stack := []visit{{id: root, rootTree: true}}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if v.id < 2 || v.id >= pgid {
			return fmt.Errorf("a branch names page %d, outside the file's %d pages", v.id, pgid)
		}
		if seen[v.id/64]&(1<<(v.id%64)) != 0 {
			return fmt.Errorf("page %d is named twice (a loop in the page tree)", v.id)
		}
		seen[v.id/64] |= 1 << (v.id % 64)
		if v.depth > boltMaxTreeDepth {
			return fmt.Errorf("page tree deeper than %d at page %d", boltMaxTreeDepth, v.id)
		}
		if v.unread {
			continue
		}
		off := v.id * ps
		h := data[off : off+boltPageHeader]
		flags, count, overflow := le.Uint16(h[8:]), uint64(le.Uint16(h[10:])), uint64(le.Uint32(h[12:]))
		if id := le.Uint64(h[0:]); id != v.id {
			return fmt.Errorf("page %d says it is page %d", v.id, id)
		}
		if flags == boltBranchPage && count == 0 {
			return fmt.Errorf("branch page %d is empty", v.id)
		}
		if v.id+overflow >= pgid {
			return fmt.Errorf("page %d runs %d pages past the file's %d pages", v.id, overflow, pgid)
		}
		end := (overflow + 1) * ps // page-relative
		if boltPageHeader+count*boltElementSize > end {
			return fmt.Errorf("page %d: %d elements do not fit in it", v.id, count)
		}
		page := data[off : off+end]
		leafLevel := false
		for i := uint64(0); i < count; i++ {
			ea := boltPageHeader + i*boltElementSize
			e := page[ea : ea+boltElementSize]
			switch flags {
			case boltBranchPage:
				pos, ksize := uint64(le.Uint32(e[0:])), uint64(le.Uint32(e[4:]))
				if ea+pos+ksize > end {
					return fmt.Errorf("page %d: key %d lies outside the page", v.id, i)
				}
				child := le.Uint64(e[8:])
				if i == 0 && child < pgid {
					leafLevel = le.Uint16(data[child*ps+8:]) == boltLeafPage
				}
				stack = append(stack, visit{id: child, depth: v.depth + 1, rootTree: v.rootTree,
					unread: leafLevel && i > 0 && !v.rootTree})
			case boltLeafPage:
				pos, ksize, vsize := uint64(le.Uint32(e[4:])), uint64(le.Uint32(e[8:])), uint64(le.Uint32(e[12:]))
				if ea+pos+ksize+vsize > end {
					return fmt.Errorf("page %d: element %d lies outside the page", v.id, i)
				}
				if le.Uint32(e[0:])&boltBucketLeaf != 0 {
					if vsize < 16 {
						return fmt.Errorf("page %d: bucket %d has a %d-byte header", v.id, i, vsize)
					}
					if r := le.Uint64(page[ea+pos+ksize:]); r != 0 {
						stack = append(stack, visit{id: r, depth: v.depth + 1})
					}
				}
			default:
				return fmt.Errorf("page %d is named by the tree but is not a branch or leaf page (flags %#x)", v.id, flags)
			}
		}
	}
	return nil
}
