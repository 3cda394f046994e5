package chronicle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Tree is the state of every path beneath a workspace root (the root
// itself excluded) at one moment, sorted by path. Its encoding is a
// workspace snapshot's manifest. A Tree is not changed once encoded: the
// encoding is kept.
type Tree struct {
	Items []event.FileState

	manifest []byte
	hash     ledger.Hash
}

// Encode returns the manifest: one canonical JSON FileState per line, in
// path order, each line ending in a newline. The same tree always encodes
// to the same bytes, so an unchanged workspace yields the same manifest
// blob and costs nothing to store again.
func (t *Tree) Encode() []byte {
	if t.manifest != nil {
		return t.manifest
	}
	n := 0
	for i := range t.Items {
		f := &t.Items[i]
		n += 64 + len(f.Path) + len(f.Blob) + len(f.Hash) + len(f.Target) + len(f.Omitted)
	}
	b := make([]byte, 0, n)
	for i := range t.Items {
		b = appendState(b, &t.Items[i])
		b = append(b, '\n')
	}
	t.manifest = b
	return b
}

// appendState appends f as canonical JSON (keys sorted, empty members
// omitted), by hand: it runs for every path of every workspace snapshot.
func appendState(b []byte, f *event.FileState) []byte {
	b = append(b, '{')
	first := true
	key := func(k string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, '"', ':')
	}
	if f.Blob != "" {
		key("blob")
		b = appendJSONString(b, f.Blob)
	}
	if f.Hash != "" {
		key("hash")
		b = appendJSONString(b, f.Hash)
	}
	if f.Mode != 0 {
		key("mode")
		b = strconv.AppendUint(b, uint64(f.Mode), 10)
	}
	if f.Omitted != "" {
		key("omitted")
		b = appendJSONString(b, f.Omitted)
	}
	key("path")
	b = appendJSONString(b, f.Path)
	if f.Size != 0 {
		key("size")
		b = strconv.AppendInt(b, f.Size, 10)
	}
	key("state")
	b = appendJSONString(b, f.State)
	if f.Target != "" {
		key("target")
		b = appendJSONString(b, f.Target)
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string in the canonical (RFC 8785)
// escaping: only quote, backslash and control characters are escaped.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// DecodeTree parses a manifest, checking each line and the order. Each
// line must be exactly as Encode writes it (encoding/json alone would take
// "PATH" for "path", a duplicate member, spaces or a missing final
// newline), so one manifest has one reading, and its blob hash stands for
// exactly one tree.
func DecodeTree(manifest []byte) (*Tree, error) {
	t := &Tree{}
	if len(manifest) > 0 && manifest[len(manifest)-1] != '\n' {
		return nil, fmt.Errorf("manifest: %w: last line has no newline", ErrManifest)
	}
	var canon []byte
	rest := manifest
	for n := 1; len(rest) > 0; n++ {
		i := bytes.IndexByte(rest, '\n') // found: the manifest ends in one
		line := rest[:i]
		rest = rest[i+1:]
		var f event.FileState
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return nil, fmt.Errorf("manifest line %d: %w: %v", n, ErrManifest, err)
		}
		if canon = appendState(canon[:0], &f); !bytes.Equal(canon, line) {
			return nil, fmt.Errorf("manifest line %d: %w: not in canonical form", n, ErrManifest)
		}
		if err := validState(f); err != nil {
			return nil, fmt.Errorf("manifest line %d: %w: %v", n, ErrManifest, err)
		}
		if k := len(t.Items); k > 0 && t.Items[k-1].Path >= f.Path {
			return nil, fmt.Errorf("manifest line %d: %w: %q is out of order", n, ErrManifest, f.Path)
		}
		t.Items = append(t.Items, f)
	}
	return t, nil
}

// validState checks a manifest line as strict verify checks a snapshot's
// files.
func validState(f event.FileState) error {
	s := &event.Snapshot{CallID: "-", Tool: "-", Kind: event.KindFiles, Files: []event.FileState{f}}
	return s.Validate()
}

// Get returns path's state; a path not in the tree is absent.
func (t *Tree) Get(path string) event.FileState {
	i := sort.Search(len(t.Items), func(i int) bool { return t.Items[i].Path >= path })
	if i < len(t.Items) && t.Items[i].Path == path {
		return t.Items[i]
	}
	return event.FileState{Path: path, State: event.StateAbsent}
}

// Hash is the BLAKE3 of the manifest.
func (t *Tree) Hash() ledger.Hash {
	if t.hash == (ledger.Hash{}) {
		t.hash = ledger.Sum(t.Encode())
	}
	return t.hash
}

// Diff returns every path whose state differs between before and after:
// its state before (absent if it is new) and after. Both lists are in
// path order and name the same paths.
func Diff(before, after *Tree) (pre []event.FileState, post []event.PostState) {
	a, b := before.Items, after.Items
	pre, post = []event.FileState{}, []event.PostState{}
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || (len(a) > 0 && a[0].Path < b[0].Path): // removed
			pre = append(pre, a[0])
			post = append(post, event.PostState{Path: a[0].Path, Absent: true})
			a = a[1:]
		case len(a) == 0 || b[0].Path < a[0].Path: // created
			pre = append(pre, event.FileState{Path: b[0].Path, State: event.StateAbsent})
			post = append(post, PostOf(b[0]))
			b = b[1:]
		default:
			if !sameState(a[0], b[0]) {
				pre = append(pre, a[0])
				post = append(post, PostOf(b[0]))
			}
			a, b = a[1:], b[1:]
		}
	}
	return pre, post
}

// sameState reports whether two states of a path are the same for
// rollback: kind, permission bits, content and target.
func sameState(x, y event.FileState) bool {
	return x.State == y.State && x.Mode == y.Mode && StateHash(x) == StateHash(y)
}
