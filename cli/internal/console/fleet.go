package console

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/opx-dev/opx/fleet"
)

// Fleet is a collector's store, read as `opx fleet sources` and
// `opx fleet alerts` read it (the cli package builds it): read-only, the
// store's own files, whether the collector runs or not.
type Fleet interface {
	// About names the store.
	About() About
	// Sources are the source ledgers the store holds, by id.
	Sources(ctx context.Context) ([]FleetSource, error)
	// Alerts are the collector's alerts, oldest first.
	Alerts(ctx context.Context) ([]FleetAlert, error)
	// Source is the console Source of source id's mirror, read as
	// `--source ID --store DIR` reads it.
	Source(id string) (Source, error)
}

// FleetSource is one row of the sources table (what fleet/collector's
// status holds: HeadSeq is the last entry it verified and stored).
type FleetSource struct {
	ID, Host, Workspace  string // host and workspace: the source's own claims
	HasMirror            bool
	HeadSeq              uint64
	HeadHash             string
	Checkpoint, Cosigned uint64 // tree sizes verified and cosigned (0: none)
	Lag                  uint64 // entries claimed beyond HeadSeq
	LastSeen             string // RFC 3339
	Held                 int
	Dropped              uint64
	Alerts               int
	Stalled              bool
}

// FleetAlert is one alert with its evidence: the source's entry it is
// about and what the collector found.
type FleetAlert struct {
	Time, Source, Kind string
	Seq                uint64
	Detail             string
}

// FleetPages is the route table of a fleet console.
func FleetPages() []Page {
	return []Page{
		{Pattern: "GET /{$}", Template: "fleet", Nav: "Fleet", NavPath: "/", Handle: (*Server).fleetPage},
		{Pattern: "/sources/{src}/", Handle: (*Server).sourcePages},
	}
}

type fleetView struct {
	Sources []FleetSource
	Alerts  []FleetAlert
	Source  string // the alerts shown are this source's ("": all)
}

func (s *Server) fleetPage(w http.ResponseWriter, r *http.Request) (any, error) {
	src, err := s.fleet.Sources(r.Context())
	if err != nil {
		return nil, err
	}
	al, err := s.fleet.Alerts(r.Context())
	if err != nil {
		return nil, err
	}
	v := &fleetView{Sources: src, Source: r.URL.Query().Get("source")}
	for _, a := range al {
		if v.Source == "" || a.Source == v.Source {
			v.Alerts = append(v.Alerts, a)
		}
	}
	return v, nil
}

// sourceConsoles are the consoles of a fleet's sources, built on first
// visit: each is the console of one ledger (the mirror), served under
// /sources/<id>/ behind the fleet console's guard.
type sourceConsoles struct {
	mu sync.Mutex
	m  map[string]*Server
}

func (s *Server) sourcePages(w http.ResponseWriter, r *http.Request) (any, error) {
	id := r.PathValue("src")
	if err := fleet.CheckLedgerID(id); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	sc := &s.subs
	sc.mu.Lock()
	if sc.m == nil {
		sc.m = map[string]*Server{}
	}
	sub := sc.m[id]
	if sub == nil {
		src, err := s.fleet.Source(id)
		if err != nil {
			sc.mu.Unlock()
			return nil, fmt.Errorf("%w: source %s: %w", ErrNotFound, id, err)
		}
		if sub, err = New(Options{Source: src, Token: s.token, Base: "/sources/" + id}); err != nil {
			sc.mu.Unlock()
			return nil, err
		}
		sc.m[id] = sub
	}
	sc.mu.Unlock()
	prefix := "/sources/" + id
	if !strings.HasPrefix(r.URL.Path, prefix+"/") {
		return nil, ErrNotFound
	}
	http.StripPrefix(prefix, sub.mux).ServeHTTP(w, r)
	return nil, nil
}
