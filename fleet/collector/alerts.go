package collector

import (
	"context"
	"fmt"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Alert is one fleet.alert of the collector's ledger.
type Alert struct {
	Seq       uint64 `json:"seq"` // the alert's entry in the collector's ledger
	Time      string `json:"ts"`
	Source    string `json:"source"`
	Kind      string `json:"kind"`
	SourceSeq uint64 `json:"source_seq"` // the source entry it concerns
	Detail    string `json:"detail"`
}

type alertKey struct {
	source, kind string
	seq          uint64
	msg          uint64 // a malformed message's stream seq: each is one
}

// alertBook deduplicates alerts (one per source, kind and seq), bounds
// them per source and kind, and keeps the latest for the status.
type alertBook struct {
	seen       map[alertKey]bool
	perKind    map[[2]string]int
	suppressed map[string]uint64 // per source
	recent     []Alert
}

// add notes an alert; false when it is a duplicate or over the bound.
func (a *alertBook) add(al Alert, msg uint64) bool {
	if a.seen == nil {
		a.seen, a.perKind, a.suppressed = map[alertKey]bool{}, map[[2]string]int{}, map[string]uint64{}
	}
	k := alertKey{al.Source, al.Kind, al.SourceSeq, msg}
	if a.seen[k] {
		return false
	}
	pk := [2]string{al.Source, al.Kind}
	if a.perKind[pk] >= MaxAlertsPerKind {
		a.suppressed[al.Source]++
		return false
	}
	a.seen[k] = true
	a.perKind[pk]++
	a.recent = append(a.recent, al)
	if len(a.recent) > StatusAlerts {
		a.recent = append(a.recent[:0:0], a.recent[len(a.recent)-StatusAlerts:]...)
	}
	return true
}

// alert records an alert in the collector's ledger (durable with the
// batch, before its messages are acknowledged), once.
func (c *Collector) alert(b *batch, source, kind string, seq uint64, detail string) {
	c.alertMsg(b, source, kind, seq, 0, detail)
}

// alertMsg is alert for a message that is not deduplicated with others
// of its seq (a malformed one: msg is its stream seq).
func (c *Collector) alertMsg(b *batch, source, kind string, seq, msg uint64, detail string) {
	if len(detail) > event.MaxAlertDetail {
		detail = detail[:event.MaxAlertDetail] + "…"
	}
	detail = ledgerSafe(detail)
	al := Alert{Source: source, Kind: kind, SourceSeq: seq, Detail: detail}
	if !c.alerts.add(al, msg) {
		return
	}
	c.dirty = true
	app, err := c.record(b, &event.FleetAlert{Source: source, Kind: kind, Seq: seq, Detail: detail})
	if err == nil {
		last := &c.alerts.recent[len(c.alerts.recent)-1]
		last.Seq = app.Seq
		last.Time = timeNow()
	}
	c.cfg.Logf("collector: alert %s source %s seq %d: %s", kind, source, seq, detail)
}

// record appends one of the collector's entries (Async: the batch's
// commit syncs it).
func (c *Collector) record(b *batch, p event.Payload) (ledger.Appended, error) {
	rec, err := event.Record("", p)
	if err != nil {
		c.cfg.Logf("collector: record %s: %v", p.Type(), err)
		return ledger.Appended{}, err
	}
	app, err := c.own.Append(context.Background(), ledger.Async, rec)
	if err != nil {
		c.cfg.Logf("collector: record %s: %v", p.Type(), err)
		return ledger.Appended{}, err
	}
	return app[0], nil
}

// ledgerSafe keeps what a source sent from turning an alert's detail
// into something that is not valid text.
func ledgerSafe(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r == '\uFFFD' || r < 0x20 && r != '\n' {
			r = '?'
		}
		out = append(out, r)
	}
	return fmt.Sprint(string(out))
}
