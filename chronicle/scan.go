package chronicle

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Scanner takes incremental snapshots of a workspace. It remembers each
// file's stat (device, inode, size, mtime, ctime, mode) with the hash of
// its content, and reads again only files whose stat changed, so scanning
// an unchanged workspace costs a directory walk and no reads. It is safe
// for concurrent use; scans are serialised.
//
// # Racy entries
//
// A file changed twice within one timestamp tick keeps its stat. As git
// does with its index, an entry whose mtime or ctime is not comfortably
// older than the scan that hashed it is racy: it is hashed again on every
// scan until it is old enough to trust.
type Scanner struct {
	fs TreeFS
	// Limit is the largest file whose content a snapshot keeps; larger
	// files are recorded by hash only. Zero means MaxFileBytes.
	Limit int64
	// Skip, if set, leaves a path (and, for a directory, everything
	// beneath it) out of snapshots.
	Skip func(rel string, dir bool) bool

	mu    sync.Mutex
	cache map[string]*cacheEntry
	gen   uint64 // scans so far; an entry not seen by the last one is gone
	last  *Tree  // the last scan's tree, reused while nothing changes
}

type cacheEntry struct {
	path               string
	dev, ino           uint64
	size, mtime, ctime int64
	mode               fs.FileMode
	hash               ledger.Hash
	hex                string // hash.String(), kept: every scan needs it
	gen                uint64
	racy               bool
}

// racyWindow is how much older than the scan a timestamp must be for its
// stat to be trusted. Filesystems with coarse timestamps need it; ext4,
// xfs, btrfs and tmpfs stamp with the kernel's tick. A variable for tests.
var racyWindow = time.Second

// Excluder returns a Skip that leaves out the paths matching any of the
// patterns (path.Match syntax, against workspace-relative paths).
func Excluder(patterns []string) func(rel string, dir bool) bool {
	return func(rel string, _ bool) bool {
		for _, p := range patterns {
			if ok, _ := path.Match(p, rel); ok {
				return true
			}
		}
		return false
	}
}

// ScanOnce scans fsys as it is now, without a cache, leaving out what the
// excluded patterns match.
func ScanOnce(fsys TreeFS, excluded []string) (*Tree, error) {
	sc := NewScanner(fsys)
	sc.Skip = Excluder(excluded)
	res, err := sc.Scan(nil)
	if err != nil {
		return nil, err
	}
	return res.Tree, nil
}

// ScanSubtree records one path and, if it is a directory, everything
// beneath it, without a cache; an absent root gives an empty tree. For
// small subtrees (opx's configuration) when a whole scan is not possible.
func ScanSubtree(fsys TreeFS, root string) (*Tree, error) {
	t := &Tree{}
	var visit func(p string) error
	visit = func(p string) error {
		st, _, err := capture(fsys, p, MaxFileBytes, false)
		if err != nil {
			return err
		}
		if st.State == event.StateAbsent {
			return nil
		}
		t.Items = append(t.Items, st)
		if st.State != event.StateDir {
			return nil
		}
		ents, err := fsys.ReadDirStat(p)
		if err != nil {
			return fmt.Errorf("snapshot %s: %w", p, err)
		}
		for _, e := range ents {
			if q := p + "/" + e.Name; utf8.ValidString(q) && len(q) <= maxPath { // as Scan, which names them unrecorded
				if err := visit(q); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := visit(root); err != nil {
		return nil, err
	}
	sort.Slice(t.Items, func(i, j int) bool { return t.Items[i].Path < t.Items[j].Path })
	return t, nil
}

// maxPath is the longest workspace-relative path a snapshot records; a
// deeper one is named as unrecorded rather than failing every scan (tools
// resolve at most PATH_MAX bytes).
const maxPath = 4000

// NewScanner returns a scanner of fsys with an empty cache.
func NewScanner(fsys TreeFS) *Scanner {
	return &Scanner{fs: fsys, cache: map[string]*cacheEntry{}}
}

// ScanResult is one scan.
type ScanResult struct {
	Tree *Tree
	// Unrecorded names the paths left out because they cannot be
	// recorded (not valid UTF-8, or of a kind that holds no content:
	// sockets, fifos, devices), quoted.
	Unrecorded []string
	// Read counts the files whose content was read (changed, new, racy,
	// or needed for a blob).
	Read int
}

// Store receives content a scan found missing from the ledger.
type Store interface {
	// Missing reports whether content with hash h still has to be stored.
	Missing(h ledger.Hash) bool
	// Put stores content (whose hash is h). It is called from several
	// goroutines.
	Put(h ledger.Hash, content []byte) error
}

// Scan walks the workspace and returns its tree. With store, the content
// of every file store reports missing is read (if the cache spared that)
// and put, so the returned tree's blobs all exist once the puts are
// durable; without it (the scan after a tool ran) nothing is stored.
func (s *Scanner) Scan(store Store) (*ScanResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	limit := s.Limit
	if limit <= 0 {
		limit = MaxFileBytes
	}
	start := time.Now()
	items, order, unrecorded, err := s.walk()
	if err != nil {
		return nil, err
	}
	res := &ScanResult{Unrecorded: unrecorded}
	s.gen++

	// Files whose content must be read: stat changed, racy, or missing
	// from the ledger. Read them in parallel.
	var jobs []int
	for i := range items {
		it := &items[i]
		if it.state.State != event.StateFile {
			continue
		}
		c := s.cache[it.state.Path]
		if c != nil && !c.racy && c.dev == it.st.Dev && c.ino == it.st.Ino && c.size == it.st.Size &&
			c.mtime == it.st.Mtime && c.ctime == it.st.Ctime && c.mode == it.st.Mode {
			c.gen = s.gen
			// The cache's copy of the path: an unchanged tree then
			// compares equal to the last one by pointer (sameTree).
			it.state.Path = c.path
			s.fillHex(&it.state, c.hex, it.st.Size, limit)
			if store == nil || it.state.Blob == "" || !store.Missing(c.hash) {
				continue
			}
		}
		jobs = append(jobs, i)
	}
	res.Read = len(jobs)
	if err := s.readAll(items, jobs, limit, store); err != nil {
		return nil, err
	}

	// Remember what was read; forget what is gone.
	trustBefore := start.Add(-racyWindow).UnixNano()
	for _, i := range jobs {
		it := &items[i]
		if it.state.State != event.StateFile {
			continue // it changed into something else while read
		}
		st := it.st
		s.cache[it.state.Path] = &cacheEntry{path: it.state.Path, dev: st.Dev, ino: st.Ino, size: st.Size, mtime: st.Mtime, ctime: st.Ctime,
			mode: st.Mode, hash: it.hash, hex: it.hash.String(), gen: s.gen,
			racy: st.Mtime >= trustBefore || st.Ctime >= trustBefore}
	}
	for p, c := range s.cache {
		if c.gen != s.gen {
			delete(s.cache, p)
		}
	}

	// An unchanged workspace gives the very same tree: keep the last one,
	// whose manifest is already encoded and hashed, and copy nothing.
	if s.last == nil || !sameItems(s.last.Items, items, order) {
		tree := &Tree{Items: make([]event.FileState, len(order))}
		for k, i := range order {
			tree.Items[k] = items[i].state
		}
		s.last = tree
	}
	res.Tree = s.last
	return res, nil
}

// sameItems reports whether items, in order, are exactly last.
func sameItems(last []event.FileState, items []scanItem, order []int32) bool {
	if len(last) != len(order) {
		return false
	}
	for k, i := range order {
		if last[k] != items[i].state {
			return false
		}
	}
	return true
}

// readAll reads the files jobs names, in parallel.
func (s *Scanner) readAll(items []scanItem, jobs []int, limit int64, store Store) error {
	if len(jobs) == 0 {
		return nil
	}
	var (
		wg       sync.WaitGroup
		next     = make(chan int)
		errMu    sync.Mutex
		firstErr error
	)
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				it := &items[i]
				h, err := s.read(it, limit, store)
				if err != nil {
					errMu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					errMu.Unlock()
					continue
				}
				it.hash = h
			}
		}()
	}
	for _, i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	return firstErr
}

// Forget drops the cache, so the next scan reads every file (after
// retention pruned blobs the cache may think are stored, say).
func (s *Scanner) Forget() {
	s.mu.Lock()
	s.cache = map[string]*cacheEntry{}
	s.last = nil
	s.mu.Unlock()
}

type scanItem struct {
	state event.FileState
	st    Stat
	hash  ledger.Hash
}

// fillHex records a file's content hash (hex): as its blob when the
// content is kept, else as an omitted hash.
func (s *Scanner) fillHex(f *event.FileState, hex string, size, limit int64) {
	f.Size = size
	if size > limit {
		f.Blob, f.Hash = "", hex
		f.Omitted = fmt.Sprintf("%d bytes, over the %d byte snapshot limit", size, limit)
		return
	}
	f.Blob, f.Hash, f.Omitted = hex, "", ""
}

// read reads one file, hashes it and stores it if store wants it. A file
// that changed kind since the walk is recorded as what it is now.
func (s *Scanner) read(it *scanItem, limit int64, store Store) (ledger.Hash, error) {
	st, content, err := capture(s.fs, it.state.Path, limit, store != nil)
	if err != nil {
		if errors.Is(err, ErrNotSnapshottable) {
			st = event.FileState{Path: it.state.Path, State: event.StateAbsent}
		} else {
			return ledger.Hash{}, err
		}
	}
	if st.State != event.StateFile {
		it.state = st
		return ledger.Hash{}, nil
	}
	h, _ := ledger.ParseHash(st.ContentHash())
	// capture stats again: keep the size it read, which is what the
	// hash is of.
	s.fillHex(&it.state, h.String(), st.Size, limit)
	it.state.Mode = st.Mode
	if store != nil && content != nil && store.Missing(h) {
		if err := store.Put(h, content); err != nil {
			return ledger.Hash{}, fmt.Errorf("store %s: %w", it.state.Path, err)
		}
	}
	return h, nil
}

// walk lists every path beneath the root, directories in parallel. order
// indexes items by path.
func (s *Scanner) walk() (items []scanItem, order []int32, unrecorded []string, err error) {
	var (
		chunks   [][]scanItem // one per directory, joined once at the end
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
		vanished = map[string]bool{}
	)
	sem := make(chan struct{}, runtime.GOMAXPROCS(0)*2)
	var visit func(dir string)
	visit = func(dir string) {
		defer wg.Done()
		sem <- struct{}{}
		ents, err := s.fs.ReadDirStat(dir)
		<-sem
		if err != nil && dir != "." && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) {
			// Removed (or replaced) since its parent was listed, by
			// something running beside opx: record it as gone.
			mu.Lock()
			vanished[dir] = true
			mu.Unlock()
			return
		}
		if err != nil {
			mu.Lock()
			if firstErr == nil {
				firstErr = fmt.Errorf("snapshot %s: %w", dir, err)
			}
			mu.Unlock()
			return
		}
		local := make([]scanItem, 0, len(ents))
		var skipped []string
		for _, e := range ents {
			rel := e.Name
			if dir != "." {
				rel = dir + "/" + e.Name
			}
			isDir := e.Mode.IsDir()
			if s.Skip != nil && s.Skip(rel, isDir) {
				continue
			}
			if !utf8.ValidString(rel) {
				skipped = append(skipped, strconv.Quote(rel)+": name is not valid UTF-8")
				continue
			}
			if len(rel) > maxPath {
				skipped = append(skipped, strconv.Quote(rel[:64])+"...: path longer than opx records")
				continue
			}
			mode := ModeBits(e.Mode)
			switch {
			case e.Mode.IsRegular():
				local = append(local, scanItem{state: event.FileState{Path: rel, State: event.StateFile, Mode: mode, Size: e.Size}, st: e})
			case isDir:
				local = append(local, scanItem{state: event.FileState{Path: rel, State: event.StateDir, Mode: mode}, st: e})
				wg.Add(1)
				go visit(rel)
			case e.Mode&fs.ModeSymlink != 0:
				target, err := s.fs.Readlink(rel)
				if err != nil || !utf8.ValidString(target) {
					why := "target is not valid UTF-8"
					if err != nil {
						why = err.Error()
					}
					skipped = append(skipped, strconv.Quote(rel)+": "+why)
					continue
				}
				local = append(local, scanItem{state: event.FileState{Path: rel, State: event.StateSymlink, Target: target}, st: e})
			default:
				skipped = append(skipped, strconv.Quote(rel)+": "+e.Mode.Type().String()+" holds no content")
			}
		}
		mu.Lock()
		chunks = append(chunks, local)
		unrecorded = append(unrecorded, skipped...)
		mu.Unlock()
	}
	wg.Add(1)
	visit(".")
	wg.Wait()
	if firstErr != nil {
		return nil, nil, nil, firstErr
	}
	n := 0
	for _, c := range chunks {
		n += len(c)
	}
	items = make([]scanItem, 0, n)
	for _, c := range chunks {
		items = append(items, c...)
	}
	if len(vanished) > 0 {
		kept := items[:0]
		for _, it := range items {
			if !vanished[it.state.Path] {
				kept = append(kept, it)
			}
		}
		items = kept
	}
	order = make([]int32, len(items))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(items[a].state.Path, items[b].state.Path) })
	sort.Strings(unrecorded)
	return items, order, unrecorded, nil
}
