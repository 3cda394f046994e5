package collector

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// StatusFile is the status the collector rewrites (atomically) as it
// goes, for readers while it runs.
const StatusFile = "status.json"

// maxStatusFile bounds what a reader reads of the status file.
const maxStatusFile = 64 << 20

// Status is the collector's state as its readers see it.
type Status struct {
	Updated     string `json:"updated"`
	Running     bool   `json:"running"` // false once it stopped cleanly
	WitnessKey  string `json:"witness_key"`
	WitnessName string `json:"witness_name"`
	// WitnessListen is where the collector serves C2SP tlog-witness
	// add-checkpoint; Witnessed counts the checkpoints it cosigned there
	// (this collector life).
	WitnessListen string         `json:"witness_listen,omitempty"`
	Witnessed     uint64         `json:"witnessed,omitempty"`
	Sources       []SourceStatus `json:"sources"`
	// MaxSources is the bound on sources; RefusedMessages counts the
	// messages of sources beyond it (this collector life).
	MaxSources      int     `json:"max_sources"`
	RefusedMessages uint64  `json:"refused_messages,omitempty"`
	Alerts          []Alert `json:"alerts"` // the latest StatusAlerts
}

// SourceStatus is one source.
type SourceStatus struct {
	ID         string `json:"id"`
	Host       string `json:"host,omitempty"`
	Workspace  string `json:"workspace,omitempty"`
	OpxVersion string `json:"opx_version,omitempty"`
	Boot       string `json:"boot,omitempty"`
	// HeadSeq and HeadHash are the mirror's head: what it holds,
	// durably, and what a reader of the mirror sees (HasMirror false:
	// none yet). VerifiedSeq is the head verified and durable in the
	// collector's journal (acknowledged), which the mirror follows:
	// HeadSeq <= VerifiedSeq (HasVerified false: no genesis yet).
	HasMirror   bool   `json:"has_mirror"`
	HeadSeq     uint64 `json:"head_seq"`
	HeadHash    string `json:"head_hash,omitempty"`
	HasVerified bool   `json:"has_verified"`
	VerifiedSeq uint64 `json:"verified_seq"`
	// ClaimedHead is the head the source's last hello named.
	ClaimedHead uint64 `json:"claimed_head"`
	// Checkpoint is the size of the last checkpoint verified, Cosigned
	// of the last one cosigned.
	Checkpoint uint64 `json:"checkpoint"`
	Cosigned   uint64 `json:"cosigned"`
	// WitnessedAhead is a tree size add-checkpoint cosigned for the
	// source's origin that the mirror does not hold yet (0: none): the
	// NATS path cosigns only above it.
	WitnessedAhead uint64 `json:"witnessed_ahead,omitempty"`
	LastSeen       string `json:"last_seen,omitempty"`
	// LagSeconds is how long since the source last sent anything.
	LagSeconds float64 `json:"lag_seconds"`
	Held       int     `json:"held"`    // entries waiting for an earlier one
	Dropped    uint64  `json:"dropped"` // entries given up on (after a gap or a broken chain)
	Alerts     int     `json:"alerts"`
	Suppressed uint64  `json:"alerts_suppressed,omitempty"`
	Stalled    bool    `json:"stalled"`
	Path       string  `json:"path"`
	// Resends counts the resend requests published to the source (this
	// collector life), the last at LastResend from ResendFrom.
	Resends    uint64 `json:"resends,omitempty"`
	LastResend string `json:"last_resend,omitempty"`
	ResendFrom uint64 `json:"resend_from,omitempty"`
}

func timeNow() string { return time.Now().UTC().Format(ledger.TimeLayout) }

// status builds the current status.
func (c *Collector) status(running bool) *Status {
	st := &Status{Updated: timeNow(), Running: running, WitnessKey: c.wit.VKey, WitnessName: c.wit.Name(),
		Alerts: append([]Alert{}, c.alerts.recent...), Sources: []SourceStatus{},
		MaxSources: c.cfg.MaxSources, RefusedMessages: c.refusedMsgs,
		WitnessListen: c.WitnessAddr(), Witnessed: c.witnessed.Load()}
	counts := map[string]int{}
	for _, a := range c.alerts.recent {
		counts[a.Source]++
	}
	now := time.Now()
	for _, s := range c.sources {
		ss := SourceStatus{ID: s.id, Checkpoint: s.checkpoint, Cosigned: s.cosigned,
			Held: len(s.held), Dropped: s.dropped, Alerts: counts[s.id], Suppressed: c.alerts.suppressed[s.id],
			Stalled: s.stalled, Path: SourcePath(c.cfg.Store, s.id), WitnessedAhead: c.witnessedAhead(s)}
		if s.has {
			ss.HasVerified, ss.VerifiedSeq = true, s.next-1
		}
		if mat, prev := c.matHead(s); mat > 0 {
			ss.HasMirror, ss.HeadSeq, ss.HeadHash = true, mat-1, prev.String()
		}
		if s.resends > 0 {
			ss.Resends, ss.LastResend, ss.ResendFrom = s.resends, s.resendAt.UTC().Format(time.RFC3339Nano), s.resendFrom
		}
		if h := s.hello; h != nil {
			ss.Host, ss.Workspace, ss.OpxVersion, ss.Boot, ss.ClaimedHead = h.Host, h.Workspace, h.OpxVersion, h.Boot, h.HeadSeq
		}
		if !s.lastSeen.IsZero() {
			ss.LastSeen = s.lastSeen.UTC().Format(time.RFC3339Nano)
			ss.LagSeconds = now.Sub(s.lastSeen).Seconds()
		}
		st.Sources = append(st.Sources, ss)
	}
	sort.Slice(st.Sources, func(i, j int) bool { return st.Sources[i].ID < st.Sources[j].ID })
	return st
}

// restoreSeen takes back, after a restart, what only the status file
// kept of each source the collector knows: its last hello (host,
// workspace, boot, claimed head) and when it was last heard from. A
// source whose last-seen time is unknown counts as seen when the
// collector started, so that a source silent across a restart is
// stalled StallAfter later all the same.
func (c *Collector) restoreSeen(started time.Time) {
	st, err := (&Store{dir: c.cfg.Store}).Status()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		c.cfg.Logf("collector: the last status does not read (%v): last-seen times start now", err)
	}
	prev := map[string]*SourceStatus{}
	if st != nil {
		for i := range st.Sources {
			prev[st.Sources[i].ID] = &st.Sources[i]
		}
	}
	for id, s := range c.sources {
		s.lastSeen, s.progressAt = started, started
		p := prev[id]
		if p == nil {
			continue
		}
		if t, err := time.Parse(time.RFC3339Nano, p.LastSeen); err == nil && t.Before(started) {
			s.lastSeen = t
		}
		if s.hello == nil && (p.Host != "" || p.Workspace != "" || p.Boot != "") {
			s.hello = clipHello(&fleet.Hello{LedgerID: id, Host: p.Host, Workspace: p.Workspace,
				OpxVersion: p.OpxVersion, Boot: p.Boot, HeadSeq: p.ClaimedHead})
		}
	}
}

// maxHelloField bounds each text of a hello the collector keeps (and
// writes in the status): a hello may be up to fleet.MaxHelloBytes.
const maxHelloField = 256

// clipHello is h with its texts clipped to maxHelloField bytes.
func clipHello(h *fleet.Hello) *fleet.Hello {
	c := *h
	for _, f := range []*string{&c.Host, &c.Workspace, &c.OpxVersion, &c.Boot, &c.HeadHash} {
		if len(*f) > maxHelloField {
			*f = strings.ToValidUTF8((*f)[:maxHelloField], "") + "…"
		}
	}
	return &c
}

// Status returns the collector's state now (not safe while Run runs on
// another goroutine: readers there use OpenStore).
func (c *Collector) Status() *Status { return c.status(true) }

// writeStatus rewrites the status file unless nothing changed, at most
// every statusEvery or, when writing it takes long (many sources), every
// statusCostShare times what the last write took, so that it never takes
// more than a small share of the run loop; final writes it in any case.
func (c *Collector) writeStatus(final bool) {
	if !final && (!c.dirty || time.Since(c.statusAt) < max(statusEvery, statusCostShare*c.statusCost)) {
		return
	}
	start := time.Now()
	c.statusAt, c.dirty = start, false
	b, err := json.MarshalIndent(c.status(!final), "", "  ")
	if err == nil {
		err = writeAtomic(filepath.Join(c.cfg.Store, StatusFile), b)
	}
	c.statusCost = time.Since(start)
	if err != nil {
		c.cfg.Logf("collector: status: %v", err)
	}
}

func writeAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".status-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Store reads a collector's store, whether or not the collector runs.
type Store struct{ dir string }

// OpenStore opens the store at dir for reading.
func OpenStore(dir string) (*Store, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("collector store: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("collector store %s: not a directory", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, OwnLedger)); err != nil {
		return nil, fmt.Errorf("collector store %s: no %s (not a collector's store?)", dir, OwnLedger)
	}
	return &Store{dir: dir}, nil
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// Status reads the status file the collector last wrote.
func (s *Store) Status() (*Status, error) {
	f, err := os.Open(filepath.Join(s.dir, StatusFile))
	if err != nil {
		return nil, fmt.Errorf("collector status: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxStatusFile+1))
	if err != nil {
		return nil, fmt.Errorf("collector status: %w", err)
	}
	if len(b) > maxStatusFile {
		return nil, fmt.Errorf("collector status: larger than %d bytes", maxStatusFile)
	}
	var st Status
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("collector status: %w", err)
	}
	return &st, nil
}

// Sources lists the sources: from the status file, with each mirror's
// head read from the mirror itself when no collector holds it.
func (s *Store) Sources() ([]SourceStatus, error) {
	st, err := s.Status()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	byID := map[string]*SourceStatus{}
	var out []SourceStatus
	if st != nil {
		out = st.Sources
	}
	for i := range out {
		byID[out[i].ID] = &out[i]
	}
	dirs, err := os.ReadDir(filepath.Join(s.dir, "sources"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for _, d := range dirs {
		id := d.Name()
		if fleet.CheckLedgerID(id) != nil {
			continue
		}
		ss := byID[id]
		if ss == nil {
			out = append(out, SourceStatus{ID: id, Path: SourcePath(s.dir, id)})
			ss = &out[len(out)-1]
			byID[id] = ss
		}
		if st == nil || !st.Running {
			if l, err := ledger.OpenReadOnly(SourcePath(s.dir, id)); err == nil {
				if h, err := l.Head(); err == nil {
					ss.HasMirror, ss.HeadSeq, ss.HeadHash = true, h.Seq, h.Hash.String()
				}
				l.Close()
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Alerts lists every alert: from the collector's ledger when no
// collector holds it, else the latest StatusAlerts from the status file.
func (s *Store) Alerts() ([]Alert, error) {
	l, err := ledger.OpenReadOnly(filepath.Join(s.dir, OwnLedger))
	if errors.Is(err, ledger.ErrLocked) {
		st, err := s.Status()
		if err != nil {
			return nil, err
		}
		return st.Alerts, nil
	}
	if err != nil {
		return nil, err
	}
	defer l.Close()
	h, err := l.Head()
	if err != nil {
		return nil, err
	}
	var out []Alert
	err = l.Range(1, h.Seq, func(e ledger.Entry) error {
		if e.Type != event.TypeFleetAlert {
			return nil
		}
		var a event.FleetAlert
		if err := json.Unmarshal(e.Data, &a); err != nil {
			return nil
		}
		out = append(out, Alert{Seq: e.Seq, Time: e.TS, Source: a.Source, Kind: a.Kind, SourceSeq: a.Seq, Detail: a.Detail})
		return nil
	})
	return out, err
}

// SourcePath is the mirror ledger of source id, which must exist.
func (s *Store) SourcePath(id string) (string, error) {
	if err := fleet.CheckLedgerID(id); err != nil {
		return "", err
	}
	p := SourcePath(s.dir, id)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("source %s: no mirror in %s", id, s.dir)
	}
	return p, nil
}

// WitnessKey is the collector's cosigner verifier key (creating the key
// when the store has none yet).
func (s *Store) WitnessKey() (string, error) {
	w, err := LoadWitness(s.dir, "")
	if err != nil {
		return "", err
	}
	return w.VKey, nil
}
