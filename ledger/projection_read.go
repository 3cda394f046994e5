package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// ViewProjection calls fn with p's bucket in a read-only transaction. On
// a ledger opened for writing with p, the bucket holds every committed
// entry. On other opens it fails with ErrNoProjection when the file holds
// no such projection and ErrProjectionStale when it is behind the head or
// of another version than p's: ReadProjection folds it in memory then.
func (l *Ledger) ViewProjection(p Projection, fn func(Bucket) error) error {
	return l.view(func(tx *bolt.Tx) error {
		st := tx.Bucket(bucketProjState)
		b := tx.Bucket(projBucketName(p.Name()))
		if st == nil || b == nil {
			return fmt.Errorf("%w %q", ErrNoProjection, p.Name())
		}
		s, ok := decodeProjState(st.Get([]byte(p.Name())))
		switch {
		case !ok:
			return fmt.Errorf("%w %q", ErrNoProjection, p.Name())
		case s.broken:
			return fmt.Errorf("%w: %s", ErrProjectionBroken, p.Name())
		case s.version != p.Version():
			return fmt.Errorf("%w: %s is version %q, not %q", ErrProjectionStale, p.Name(), s.version, p.Version())
		}
		meta := tx.Bucket(bucketMeta)
		if h, err := readHead(meta); err == nil && s.through < h.Seq {
			return fmt.Errorf("%w: %s folded to %d of %d", ErrProjectionStale, p.Name(), s.through, h.Seq)
		}
		return fn(readBucket{b})
	})
}

// ReadProjection is ViewProjection that, when the file's projection is
// missing, stale or broken (a read-only review of a ledger written
// without it, or by an older opx), folds p from the entries into memory
// instead. Either way fn sees the projection of every committed entry.
func (l *Ledger) ReadProjection(p Projection, fn func(Bucket) error) error {
	err := l.ViewProjection(p, fn)
	if err == nil || !(errors.Is(err, ErrNoProjection) || errors.Is(err, ErrProjectionStale) || errors.Is(err, ErrProjectionBroken)) {
		return err
	}
	m, ferr := FoldProjection(l, p, ^uint64(0))
	if ferr != nil {
		return ferr
	}
	return fn(m)
}

// Ranger is a source of entries in seq order (a *Ledger, or a running
// engine's ledger service).
type Ranger interface {
	Range(from, to uint64, fn func(Entry) error) error
}

// FoldProjection folds the entries 0..to of src into a new in-memory
// bucket: the projection computed from the entries alone.
func FoldProjection(src Ranger, p Projection, to uint64) (*MemBucket, error) {
	m := NewMemBucket()
	err := src.Range(0, to, func(e Entry) error {
		if err := p.Apply(m, &e); err != nil {
			return fmt.Errorf("projection %s, entry %d: %w", p.Name(), e.Seq, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// CheckpointPayload is the data of a ledger.checkpoint entry: the state
// root of each projection, folded through the entry just before it, and
// the Merkle tree of the entries before it (TreeSize is the checkpoint's
// own seq), with the signed note of that tree when the ledger signs its
// checkpoints. A checkpoint written before the tree has only projections;
// one of a ledger without projections has only the tree.
type CheckpointPayload struct {
	Projections []CheckpointRoot `json:"projections,omitempty"`
	TreeSize    uint64           `json:"tree_size,omitempty"`
	TreeRoot    string           `json:"tree_root,omitempty"` // base64 (std), as in a C2SP note
	Note        string           `json:"note,omitempty"`      // the C2SP signed note of the tree
}

// CheckpointRoot is one projection's root in a checkpoint.
type CheckpointRoot struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Through uint64 `json:"through"`
	Root    string `json:"root"`
}

// Checkpoint records the state roots of the ledger's projections and the
// Merkle tree in a ledger.checkpoint entry, so that a rebuild can prove it
// folds to the same state and verify that the tree was the same. Each
// root, and the tree, is as of the entry just before the checkpoint (the
// file's, with what is queued since folded in memory: see appendAtHead),
// where a rebuild or verify compares it as it passes. With
// Options.SignCheckpoint, the tree's signed note is recorded too. It
// waits for a commit or rebuild under way, and ctx is checked only before
// it starts. The ledger must be open for writing. It fails with
// ErrNoProjection only when there is nothing to record: no projections
// and no tree.
func (l *Ledger) Checkpoint(ctx context.Context, d Durability) (Appended, error) {
	if l.readOnly {
		return Appended{}, ErrReadOnly
	}
	if err := ctx.Err(); err != nil {
		return Appended{}, err
	}
	in := map[string]bool{}
	for _, p := range l.opts.Projections {
		in[p.Name()] = true
	}
	return l.w.appendAtHead(d, func(at atHead) (Record, error) {
		var c CheckpointPayload
		for _, s := range at.states {
			if in[s.Name] && s.Broken == "" {
				c.Projections = append(c.Projections, CheckpointRoot{Name: s.Name, Version: s.Version, Through: s.Through, Root: s.Root.String()})
			}
		}
		if at.tree != nil {
			c.TreeSize, c.TreeRoot = at.tree.Size, EncodeTreeRoot(at.tree.Root)
			if l.opts.SignCheckpoint != nil {
				note, err := l.opts.SignCheckpoint(*at.tree)
				if err != nil {
					return Record{}, fmt.Errorf("checkpoint: sign: %w", err)
				}
				c.Note = note
			}
		}
		if len(c.Projections) == 0 && at.tree == nil {
			return Record{}, fmt.Errorf("checkpoint: %w: the ledger was opened without projections", ErrNoProjection)
		}
		return Record{Type: TypeCheckpoint, Data: c}, nil
	})
}

// RebuildReport is what RebuildProjections found.
type RebuildReport struct {
	Entries     uint64 // entries folded
	Projections []ProjectionState
	// Checked counts the checkpoint roots compared; Mismatches lists the
	// ones the rebuilt state did not reproduce. Unchecked counts roots
	// that could not be compared: of a projection version or name not
	// rebuilt here, or not taken through the entry just before their
	// checkpoint (written by an older opx).
	Checked    int
	Unchecked  int
	Mismatches []CheckpointMismatch
}

// CheckpointMismatch is a checkpoint root that a rebuild did not
// reproduce: the projection recorded at Seq disagreed with the entries.
type CheckpointMismatch struct {
	Seq        uint64 `json:"seq"` // the ledger.checkpoint entry
	Projection string `json:"projection"`
	Through    uint64 `json:"through"`
	Recorded   string `json:"recorded"`
	Rebuilt    string `json:"rebuilt"`
}

func (m CheckpointMismatch) Error() string {
	return fmt.Sprintf("checkpoint at entry %d: projection %s through entry %d recorded root %s, the entries fold to %s",
		m.Seq, m.Projection, m.Through, m.Recorded, m.Rebuilt)
}

// RebuildProjections drops every projection bucket of the ledger's
// projections and folds them again from the entries, in one pass,
// comparing the roots each ledger.checkpoint recorded with the ones
// folded through the entry before it. No append commits meanwhile
// (appends queue). The buckets come out byte-identical to ones folded at
// append time.
func (l *Ledger) RebuildProjections() (*RebuildReport, error) {
	if l.readOnly {
		return nil, ErrReadOnly
	}
	ps := l.opts.Projections
	if len(ps) == 0 {
		return nil, fmt.Errorf("rebuild: %w: the ledger was opened without projections", ErrNoProjection)
	}
	l.w.cmu.Lock()
	defer l.w.cmu.Unlock()
	l.w.flushLocked() // what is queued commits first, with the old state
	head, err := l.Head()
	if err != nil {
		return nil, err
	}
	versions := map[string]string{}
	if err := l.db.Update(func(tx *bolt.Tx) error {
		for _, p := range ps {
			versions[p.Name()] = p.Version()
			if err := resetProjection(tx, p); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	rep := &RebuildReport{Entries: head.Seq + 1}
	err = l.foldProjections(ps, head.Seq, func(cp *Entry, roots map[string]Root) {
		var c CheckpointPayload
		if json.Unmarshal(cp.Data, &c) != nil {
			return // strict verify reports a bad payload
		}
		for _, r := range c.Projections {
			got, ok := roots[r.Name]
			if !ok || versions[r.Name] != r.Version || r.Through+1 != cp.Seq {
				rep.Unchecked++
				continue
			}
			rep.Checked++
			if got.String() != r.Root {
				rep.Mismatches = append(rep.Mismatches, CheckpointMismatch{Seq: cp.Seq, Projection: r.Name,
					Through: r.Through, Recorded: r.Root, Rebuilt: got.String()})
			}
		}
	})
	if err != nil {
		return nil, err
	}
	rep.Projections, err = l.Projections()
	return rep, err
}
