package projection

import (
	"bytes"
	"strings"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Taint keeps, per session, the calls that read something sensitive (or
// changed a build or test file: ChangedPrefix) and ran (Shield's
// information flow, docs/shield-rules.md "flow:*"): a tool.proposed
// naming what it reads that is sensitive is held until its exec.started,
// which makes the session hold that data. The engine reads it when a
// call is proposed and records what it read with the proposal
// (tool.proposed taint), so a replay judges with the same taint.
//
// Every entry a proposal names is kept (not only its first: one command
// may change two build files), each changed file once (a file edited
// again is already held, so that editing one file many times does not
// use up the bound), reads and changed files under their own MaxTaint.
// KeepTaint is the same rule over a list in memory (opx shield eval);
// a test folds both ways and compares.
type Taint struct{}

func (Taint) Name() string    { return "taint" }
func (Taint) Version() string { return "4" }

// MaxTaint bounds what is kept per session: the first reads that taint it
// (one is enough to judge by; the rest are named in the ledger), and
// apart, the first build or test files it changed (ChangedPrefix): many
// such changes must not crowd out a later sensitive read.
const MaxTaint = 16

// ChangedPrefix begins a Sensitive entry that names a build or test file
// the call changes (shield.ChangedPrefix; engine/judge tests they agree):
// the session's later run of the tool that runs it is judged with it
// (flow:changed-then-run).
const ChangedPrefix = "changed: "

// countKey is the per-session counter an entry counts against.
func countKey(what string) string {
	if strings.HasPrefix(what, ChangedPrefix) {
		return "nc"
	}
	return "n"
}

// maxTaintWhats bounds the entries kept of one proposal's list (the
// engine names at most a few).
const maxTaintWhats = 8

// pendingTaint is a sensitive proposal waiting for its exec.started.
type pendingTaint struct {
	Seq   uint64   `json:"seq"`
	Whats []string `json:"whats"`
}

// KeepTaint returns ts (a session's taint, as ReadTaint returns it)
// with what a call that ran (t: its seq and ids) named added by the
// projection's rule: each of whats in order, a changed file not already
// held, each kind up to MaxTaint.
func KeepTaint(ts []event.Taint, t event.Taint, whats []string) []event.Taint {
	for _, what := range whats[:min(len(whats), maxTaintWhats)] {
		changed := strings.HasPrefix(what, ChangedPrefix)
		n := 0
		held := false
		for _, o := range ts {
			if strings.HasPrefix(o.What, ChangedPrefix) == changed {
				n++
				held = held || changed && o.What == what
			}
		}
		if held || n >= MaxTaint {
			continue
		}
		t.What = what
		ts = append(ts, t)
	}
	return ts
}

func (Taint) Apply(b ledger.Bucket, e *ledger.Entry) error {
	switch e.Type {
	case event.TypeToolProposed:
		var p event.ToolProposed
		if !bytes.Contains(e.Data, []byte(`"sensitive"`)) || !decode(e, &p) || len(p.Sensitive) == 0 {
			return nil
		}
		return putJSON(b, key(e.Session, "p", p.SubAgentID, p.CallID), &pendingTaint{Seq: e.Seq, Whats: p.Sensitive[:min(len(p.Sensitive), maxTaintWhats)]})
	case event.TypeExecStarted:
		var p event.ExecStarted
		if !decode(e, &p) {
			return nil
		}
		k := key(e.Session, "p", p.SubAgentID, p.CallID)
		var pt pendingTaint
		if !getJSON(b, k, &pt) {
			return nil
		}
		if err := b.Delete(k); err != nil {
			return err
		}
		// Folds read and write by key (no cursor): the counts are kept,
		// and a mark per changed file held.
		for i, what := range pt.Whats {
			changed := strings.HasPrefix(what, ChangedPrefix)
			hk := key(e.Session, "held", what)
			if changed && b.Get(hk) != nil {
				continue
			}
			nk := key(e.Session, countKey(what))
			var n int
			getJSON(b, nk, &n)
			if n >= MaxTaint {
				continue
			}
			if err := putJSON(b, nk, n+1); err != nil {
				return err
			}
			if changed {
				if err := b.Put(hk, []byte{1}); err != nil {
					return err
				}
			}
			k := append(seqKey(pt.Seq, e.Session, "t"), byte(i))
			if err := putJSON(b, k, &event.Taint{Seq: pt.Seq, SubAgentID: p.SubAgentID, CallID: p.CallID, What: what}); err != nil {
				return err
			}
		}
		return nil
	}
	return nil
}

// ReadTaint returns the calls of session that read something sensitive
// and ran, oldest first (at most MaxTaint).
func ReadTaint(b ledger.Bucket, session string) []event.Taint {
	prefix := append(key(session, "t"), 0)
	var out []event.Taint
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var t event.Taint
		if err := jsonUnmarshal(v, &t); err == nil {
			out = append(out, t)
		}
	}
	return out
}
