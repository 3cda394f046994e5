package console

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay/projection"
)

// PageSize is how many sessions one page of the listing shows.
const PageSize = 50

// sessionFilter is the listing's query: ?mode= &outcome= &from= &to= &q=
// &otr=1 &page=.
type sessionFilter struct {
	Mode, Outcome, From, To, Q string
	OTR                        bool
	Page                       int
}

// Modes a listing filters by: the recorded modes, "subagent" (sessions
// with sub-agents) and "hooks" (the three agents audited through hooks).
var filterModes = []string{"normal", "otr", "subagent", "mcp-proxy", "hooks", event.ModeClaudeCode, event.ModeCodex, event.ModeGeminiCLI}

// filterOutcomes are the outcomes a listing filters by, with the slot that
// counts each.
var filterOutcomes = []struct {
	Name string
	Slot int
}{{"blocked", projection.SlotBlock}, {"escalated", projection.SlotApproval}, {"denied", projection.SlotDenied},
	{"failed", projection.SlotFailed}, {"flagged", projection.SlotFlagged}, {"rolled-back", projection.SlotRolledBack}}

// outcomeNames are filterOutcomes' names.
var outcomeNames = func() []string {
	var out []string
	for _, o := range filterOutcomes {
		out = append(out, o.Name)
	}
	return out
}()

func parseFilter(q url.Values) (sessionFilter, error) {
	f := sessionFilter{Mode: q.Get("mode"), Outcome: q.Get("outcome"), From: q.Get("from"), To: q.Get("to"),
		Q: q.Get("q"), OTR: q.Get("otr") == "1", Page: 1}
	if p := q.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 1<<20 {
			return f, fmt.Errorf("%w: page %q", ErrBadRequest, p)
		}
		f.Page = n
	}
	if len(f.Q) > 256 {
		return f, fmt.Errorf("%w: the text to find is over 256 bytes", ErrBadRequest)
	}
	if f.Mode == "otr" {
		f.OTR = true
	}
	return f, nil
}

// match says whether s passes f.
func (f sessionFilter) match(s *SessionRow) bool {
	if s.Mode == "otr" && !f.OTR {
		return false
	}
	switch f.Mode {
	case "":
	case "subagent":
		if s.SubAgents.Spawned == 0 {
			return false
		}
	case "hooks":
		if s.Mode != event.ModeClaudeCode && s.Mode != event.ModeCodex && s.Mode != event.ModeGeminiCLI {
			return false
		}
	default:
		if s.Mode != f.Mode {
			return false
		}
	}
	if f.Outcome != "" {
		ok := false
		for _, o := range filterOutcomes {
			if o.Name == f.Outcome && s.Outcomes[o.Slot] > 0 {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	// Timestamps are RFC 3339 UTC: a day compares as a prefix.
	if f.From != "" && s.Updated < f.From {
		return false
	}
	if f.To != "" && s.Created > f.To+"\xff" {
		return false
	}
	if f.Q != "" {
		q := strings.ToLower(f.Q)
		title := strings.ToLower(s.Title)
		if s.Mode == "otr" {
			title = "" // withheld: nothing to find in it
		}
		if !strings.Contains(title, q) && !strings.Contains(strings.ToLower(s.ID), q) {
			return false
		}
	}
	return true
}

// query is f as a URL query, with page set.
func (f sessionFilter) query(page int) string {
	q := url.Values{}
	for k, v := range map[string]string{"mode": f.Mode, "outcome": f.Outcome, "from": f.From, "to": f.To, "q": f.Q} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.OTR && f.Mode != "otr" {
		q.Set("otr", "1")
	}
	if page > 1 {
		q.Set("page", strconv.Itoa(page))
	}
	if len(q) == 0 {
		return "/"
	}
	return "/?" + q.Encode()
}

// sessionsView is the sessions page.
type sessionsView struct {
	Filter    sessionFilter
	Rows      []template.HTML // each row rendered (Server.row)
	Form      template.HTML   // the filter form (Server.filterForm)
	Total     int             // sessions in the ledger
	Matched   int             // sessions that pass the filter
	OTRHidden int
	Counts    []outcomeCount
	Chart     chart
	Page      int
	Pages     int
	Prev      string
	Next      string
	Head      uint64
	list      *SessionList
	query     string
}

func (v *sessionsView) key() (any, string) { return v.list, v.query }

type outcomeCount struct {
	Name string
	N    int
	Link string
}

func (s *Server) sessionsPage(w http.ResponseWriter, r *http.Request) (any, error) {
	f, err := parseFilter(r.URL.Query())
	if err != nil {
		return nil, err
	}
	list, err := s.src.Sessions(r.Context())
	if err != nil {
		return nil, err
	}
	v := &sessionsView{Filter: f, Total: len(list.Sessions), Head: list.Head, Page: f.Page,
		list: list, query: r.URL.RawQuery}
	if v.Form, err = s.filterForm(f); err != nil {
		return nil, err
	}
	counts := make([]int, len(filterOutcomes))
	var matched []*SessionRow
	for i := range list.Sessions {
		row := &list.Sessions[i]
		if row.Mode == "otr" && !f.OTR {
			v.OTRHidden++
		}
		if !f.match(row) {
			continue
		}
		matched = append(matched, row)
		for j, o := range filterOutcomes {
			if row.Outcomes[o.Slot] > 0 {
				counts[j]++
			}
		}
	}
	for j, o := range filterOutcomes {
		g := f
		g.Outcome = o.Name
		v.Counts = append(v.Counts, outcomeCount{Name: o.Name, N: counts[j], Link: s.base + g.query(1)})
	}
	// Most recently updated first (RFC 3339 UTC sorts as text), then id.
	sort.Slice(matched, func(i, j int) bool {
		if matched[i].Updated != matched[j].Updated {
			return matched[i].Updated > matched[j].Updated
		}
		return matched[i].ID < matched[j].ID
	})
	v.Matched = len(matched)
	v.Pages = max(1, (len(matched)+PageSize-1)/PageSize)
	lo := min((f.Page-1)*PageSize, len(matched))
	hi := min(lo+PageSize, len(matched))
	for _, row := range matched[lo:hi] {
		r := *row // the Source's listing may be shared: not changed here
		// What the row shows of the title, and no more: the row is
		// kept by value (Server.row), and a title may be long.
		r.Title = short(event.Display(r.Title), 200)
		h, err := s.row(r)
		if err != nil {
			return nil, err
		}
		v.Rows = append(v.Rows, h)
	}
	if f.Page > 1 {
		v.Prev = s.base + f.query(f.Page-1)
	}
	if f.Page < v.Pages {
		v.Next = s.base + f.query(f.Page+1)
	}
	v.Chart = verdictChart(list.Days, f)
	return v, nil
}

// row is a session's row of the listing, rendered by the "row" template
// of sessions.html. A row is a function of the session's projection and
// outcome counts only, and a new entry changes one session at most, so
// the rows rendered before are kept by value and a listing after a new
// entry renders only the row that changed.
func (s *Server) row(r SessionRow) (template.HTML, error) {
	return s.rows.render(r, func(b *strings.Builder) error {
		return s.tmpl["sessions"].ExecuteTemplate(b, "row", r)
	})
}

// filterForm is the listing's filter form as f fills it ("filter" of
// sessions.html), kept by f as the rows are.
// A filter of more than formKeyLimit bytes (the query is the reader's)
// is rendered each time, not kept.
func (s *Server) filterForm(f sessionFilter) (template.HTML, error) {
	exec := func(b *strings.Builder) error {
		return s.tmpl["sessions"].ExecuteTemplate(b, "filter", formView{Filter: f, Modes: filterModes, Outcomes: outcomeNames})
	}
	if len(f.Mode)+len(f.Outcome)+len(f.From)+len(f.To)+len(f.Q) > formKeyLimit {
		var b strings.Builder
		err := exec(&b)
		return template.HTML(b.String()), err
	}
	return s.forms.render(f, exec)
}

// formKeyLimit bounds the filters kept rendered.
const formKeyLimit = 512

type formView struct {
	Filter          sessionFilter
	Modes, Outcomes []string
}

// fragmentCacheSize bounds the fragments a fragmentCache keeps.
const fragmentCacheSize = 1024

// fragmentCache holds HTML fragments rendered by html/template, by the
// value they were rendered from (a comparable value of bounded size: a
// fragment is a function of it alone). Full, it starts over.
type fragmentCache[K comparable] struct {
	mu sync.Mutex
	m  map[K]template.HTML
}

func (c *fragmentCache[K]) render(k K, exec func(*strings.Builder) error) (template.HTML, error) {
	c.mu.Lock()
	h, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return h, nil
	}
	var b strings.Builder
	if err := exec(&b); err != nil {
		return "", fmt.Errorf("render a fragment: %w", err)
	}
	h = template.HTML(b.String())
	c.mu.Lock()
	if c.m == nil || len(c.m) >= fragmentCacheSize {
		c.m = map[K]template.HTML{}
	}
	c.m[k] = h
	c.mu.Unlock()
	return h, nil
}

// chart is the verdicts-per-day bar chart, drawn as SVG on the server.
type chart struct {
	Width, Height int
	Bars          []bar
	Max           uint64
	Empty         bool
}

type bar struct {
	X, W              int
	Day               string
	Allow, Block, Esc rect
	Label             string
}

type rect struct{ Y, H int }

// verdictChart draws the last 60 days with verdicts (within f's dates).
func verdictChart(days []projection.DayVerdicts, f sessionFilter) chart {
	var in []projection.DayVerdicts
	for _, d := range days {
		if (f.From == "" || d.Day >= f.From[:min(10, len(f.From))]) && (f.To == "" || d.Day <= f.To) {
			in = append(in, d)
		}
	}
	if len(in) > 60 {
		in = in[len(in)-60:]
	}
	c := chart{Width: 600, Height: 120, Empty: len(in) == 0}
	for _, d := range in {
		c.Max = max(c.Max, d.Allow+d.Block+d.Escalate)
	}
	if c.Max == 0 {
		c.Empty = true
		return c
	}
	w := c.Width / max(len(in), 1)
	h := uint64(c.Height - 16)
	for i, d := range in {
		scale := func(n uint64) int { return int(n * h / c.Max) }
		b := bar{X: i * w, W: max(w-2, 1), Day: d.Day,
			Label: fmt.Sprintf("%s: %d allowed, %d blocked, %d escalated", d.Day, d.Allow, d.Block, d.Escalate)}
		y := int(h)
		b.Allow = rect{Y: y - scale(d.Allow), H: scale(d.Allow)}
		y -= b.Allow.H
		b.Esc = rect{Y: y - scale(d.Escalate), H: scale(d.Escalate)}
		y -= b.Esc.H
		b.Block = rect{Y: y - scale(d.Block), H: scale(d.Block)}
		c.Bars = append(c.Bars, b)
	}
	return c
}
