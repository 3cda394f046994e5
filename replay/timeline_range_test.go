package replay_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/replay"
)

// parsedOnly hides a ledger's RangeRaw, so Build parses every entry: the
// way it reads through a running engine, and the reference for the
// filtered read of a file.
type parsedOnly struct{ l *ledger.Ledger }

func (p parsedOnly) Range(from, to uint64, fn func(ledger.Entry) error) error {
	return p.l.Range(from, to, fn)
}
func (p parsedOnly) GetBlob(h ledger.Hash) ([]byte, error) { return p.l.GetBlob(h) }

// TestBuild_FilteredReadAgrees checks that Build from a ledger file, which
// parses only entries whose canonical tail can concern the session, gives
// the same timeline (and the same Read list) as Build parsing every entry,
// for every session of the hand-built scene and of the sample ledger, and
// at every --at of the scene's session.
func TestBuild_FilteredReadAgrees(t *testing.T) {
	for name, l := range map[string]*ledger.Ledger{"scene": buildScene(t).l, "sample": importSample(t)} {
		sessions := map[string]bool{}
		var head uint64
		l.Range(0, ^uint64(0), func(e ledger.Entry) error {
			if e.Session != "" {
				sessions[e.Session] = true
			}
			head = e.Seq
			return nil
		})
		for s := range sessions {
			for _, at := range []uint64{0, head / 2, head - 1} {
				want, werr := replay.Build(parsedOnly{l}, s, replay.Options{At: at})
				got, gerr := replay.Build(l, s, replay.Options{At: at})
				if fmt.Sprint(werr) != fmt.Sprint(gerr) {
					t.Fatalf("%s %s at %d: error %v, want %v", name, s, at, gerr, werr)
				}
				if werr != nil {
					continue
				}
				wj, _ := json.Marshal(want)
				gj, _ := json.Marshal(got)
				if string(wj) != string(gj) || fmt.Sprint(want.Read()) != fmt.Sprint(got.Read()) {
					t.Errorf("%s %s at %d: filtered read differs\n got %s %v\nwant %s %v", name, s, at, gj, got.Read(), wj, want.Read())
				}
				if len(got.Read()) == 0 || got.Read()[0] > got.FirstSeq {
					t.Errorf("%s %s: Read %v does not start at or before the span %d", name, s, got.Read(), got.FirstSeq)
				}
			}
		}
	}
}

// TestLookup_AgreesWithBuild: Lookup, which stops at a session's first
// entry, answers as Build does for every session of the sample at every
// --at tried, for an unknown id and for one that is only a substring of a
// real one, from the file (its raw read) and parsing every entry.
func TestLookup_AgreesWithBuild(t *testing.T) {
	l := importSample(t)
	sessions := map[string]bool{"ses_nope": true, "": true, "ses_83c9": true, `ses_"x`: true}
	var head uint64
	l.Range(0, ^uint64(0), func(e ledger.Entry) error {
		if e.Session != "" {
			sessions[e.Session] = true
		}
		head = e.Seq
		return nil
	})
	for s := range sessions {
		for _, at := range []uint64{0, 100, head / 2, head} {
			_, berr := replay.Build(l, s, replay.Options{At: at})
			for name, src := range map[string]replay.Source{"file": l, "parsed": parsedOnly{l}} {
				err := replay.Lookup(src, s, at)
				if fmt.Sprint(err) != fmt.Sprint(berr) {
					t.Errorf("%s %q at %d: Lookup %v, Build %v", name, s, at, err, berr)
				}
			}
		}
	}
}
