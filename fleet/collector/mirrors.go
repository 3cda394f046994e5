package collector

import (
	"container/list"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/opx-dev/opx/ledger"
)

// # Open mirrors
//
// A mirror is opened when something needs it (the materializer writing
// it, the run loop reading an entry or a tree, add-checkpoint, a review
// through the collector) and stays open, unused, until more than
// Config.MaxOpenMirrors are open or it has been idle for mirrorIdle:
// then it is closed, least recently used first. An idle source holds no
// descriptor, no goroutine and no open ledger; only its small record in
// the collector (and its registry files, serve.go).

// mirrorIdle is how long an unused mirror stays open.
const mirrorIdle = 30 * time.Second

// errCacheClosed is returned by acquire once the collector closes.
var errCacheClosed = errors.New("the collector is closing")

// mirrorCache holds the open mirrors, at most max unused ones.
type mirrorCache struct {
	store string
	opts  ledger.Options
	max   int

	mu     sync.Mutex
	open   map[string]*openMirror
	lru    list.List // of *openMirror, most recently used first
	closed bool
	logf   func(string, ...any)
}

type openMirror struct {
	id   string
	l    *ledger.Ledger
	refs int
	used time.Time
	el   *list.Element
}

func newMirrorCache(store string, opts ledger.Options, max int, logf func(string, ...any)) *mirrorCache {
	return &mirrorCache{store: store, opts: opts, max: max, open: map[string]*openMirror{}, logf: logf}
}

// acquire returns the mirror of source id, opening it (or creating it
// from genesis, when genesis is given and there is none), and its
// release, which the caller must call once done with it. A mirror that
// does not exist is ledger.ErrNotExist.
//
// The mirror is opened with the cache locked: two goroutines never open
// one file twice (bbolt's lock would make the second wait).
func (mc *mirrorCache) acquire(id string, genesis []byte) (*ledger.Ledger, func(), error) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if mc.closed {
		return nil, nil, errCacheClosed
	}
	om := mc.open[id]
	if om == nil {
		path := SourcePath(mc.store, id)
		l, err := ledger.OpenMirror(path, mc.opts)
		if errors.Is(err, ledger.ErrNotExist) && genesis != nil {
			l, err = ledger.CreateMirror(path, genesis, mc.opts)
		}
		if err != nil {
			return nil, nil, err
		}
		if l.ID() != id {
			l.Close()
			return nil, nil, fmt.Errorf("the mirror %s holds ledger %s", path, l.ID())
		}
		om = &openMirror{id: id, l: l, refs: 1, used: time.Now()}
		om.el = mc.lru.PushFront(om)
		mc.open[id] = om
		mc.evictLocked(0)
	} else {
		om.refs++
		mc.lru.MoveToFront(om.el)
	}
	var once sync.Once
	return om.l, func() {
		once.Do(func() {
			mc.mu.Lock()
			om.refs--
			om.used = time.Now()
			mc.mu.Unlock()
		})
	}, nil
}

// evictLocked closes unused mirrors beyond max, and those unused for
// idle (0: none for being idle), least recently used first.
func (mc *mirrorCache) evictLocked(idle time.Duration) {
	now := time.Now()
	for el := mc.lru.Back(); el != nil; {
		if idle == 0 && len(mc.open) <= mc.max {
			return
		}
		om := el.Value.(*openMirror)
		prev := el.Prev()
		if om.refs == 0 && (len(mc.open) > mc.max || (idle > 0 && now.Sub(om.used) >= idle)) {
			mc.closeLocked(om)
		}
		el = prev
	}
}

func (mc *mirrorCache) closeLocked(om *openMirror) {
	mc.lru.Remove(om.el)
	delete(mc.open, om.id)
	if err := om.l.Close(); err != nil {
		mc.logf("collector: source %s: closing its mirror: %v", om.id, err)
	}
}

// closeIdle closes the mirrors unused for mirrorIdle.
func (mc *mirrorCache) closeIdle() {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	mc.evictLocked(mirrorIdle)
}

// openCount is how many mirrors are open.
func (mc *mirrorCache) openCount() int {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	return len(mc.open)
}

// closeAll closes every mirror (once nothing uses them) and refuses any
// acquire after.
func (mc *mirrorCache) closeAll() error {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	mc.closed = true
	var errs []error
	for _, om := range mc.open {
		errs = append(errs, om.l.Close())
	}
	mc.open = map[string]*openMirror{}
	mc.lru.Init()
	return errors.Join(errs...)
}

// mirrorTrees reads the trees of a source's mirror, from any goroutine
// (add-checkpoint's): what the mirror holds is what is materialized, so
// a size the collector verified but has not written yet is
// ledger.ErrTreeSize, as one it never had.
type mirrorTrees struct {
	cache *mirrorCache
	id    string
}

// TreeHeadAt is the mirror's tree of size entries.
func (t *mirrorTrees) TreeHeadAt(size uint64) (ledger.TreeHead, error) {
	l, release, err := t.cache.acquire(t.id, nil)
	if errors.Is(err, ledger.ErrNotExist) {
		return ledger.TreeHead{}, fmt.Errorf("no mirror written yet: %w", ledger.ErrTreeSize)
	}
	if err != nil {
		return ledger.TreeHead{}, err
	}
	defer release()
	return l.TreeHeadAt(size)
}
