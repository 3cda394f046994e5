package console

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Page is one route of the console: a page (Template set) or a download.
// Adding a page is adding a Page to Pages and, for a page,
// templates/<Template>.html defining "title" and "content" (the layout
// wraps it). Handle returns the data its template renders, or writes the
// response itself and returns nil data; an error is answered with its
// status (statusOf), never with recorded content.
type Page struct {
	// Pattern is its http.ServeMux pattern ("GET /sessions/{id}"). A
	// method other than GET and HEAD is state-changing: the guard checks
	// its origin.
	Pattern string
	// Template is the page's template file (without .html); "" for a
	// route that writes its own response (a download).
	Template string
	// Nav is its label in the navigation bar; "" keeps it out.
	Nav, NavPath string
	Handle       func(s *Server, w http.ResponseWriter, r *http.Request) (any, error)
}

// Pages is the console's route table.
func Pages() []Page {
	return []Page{
		{Pattern: "GET /{$}", Template: "sessions", Nav: "Sessions", NavPath: "/", Handle: (*Server).sessionsPage},
		{Pattern: "GET /sessions/{id}", Template: "session", Handle: (*Server).sessionPage},
		{Pattern: "GET /sessions/{id}/report", Handle: (*Server).reportDownload},
		{Pattern: "GET /sessions/{id}/export", Handle: (*Server).exportDownload},
		{Pattern: "GET /proof/{seq}", Handle: (*Server).proofDownload},
		{Pattern: "GET /entry/{seq}", Handle: (*Server).entryDownload},
		{Pattern: "GET /blob/{hash}", Handle: (*Server).blobDownload},
		{Pattern: "GET /approvals", Template: "approvals", Nav: "Approvals", NavPath: "/approvals", Handle: (*Server).approvalsPage},
		{Pattern: "POST /approvals/{id}", Handle: (*Server).approvalAnswer},
		{Pattern: "GET /events", Handle: (*Server).events},
		{Pattern: "GET /sessions/{id}/annotate", Template: "annotate", Handle: (*Server).annotatePage},
		{Pattern: "POST /sessions/{id}/notes", Handle: (*Server).annotationPost},
		{Pattern: "POST /sessions/{id}/whatif", Template: "whatif", Handle: (*Server).whatIfPost},
		{Pattern: "GET /compare", Template: "compare", Handle: (*Server).comparePage},
		{Pattern: "GET /sessions/{id}/workspace", Template: "workspace", Handle: (*Server).workspacePage},
	}
}

// layoutView is what the layout renders around a page.
type layoutView struct {
	Title string
	Nav   []navItem
	About About
	Page  any
}

type navItem struct {
	Label, Path string
	Current     bool
}

// handle runs p and renders its template in the layout.
func (s *Server) handle(p Page) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := p.Handle(s, w, r)
		if err != nil {
			http.Error(w, errorText(err), statusOf(err))
			return
		}
		if p.Template == "" || data == nil {
			return
		}
		k, keyed := data.(keyed)
		var key renderKey
		if keyed {
			key.of, key.query = k.key()
			key.page = p.Template
			if b, ok := s.rendered.get(key); ok {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.Write(b)
				return
			}
		}
		v := layoutView{About: s.about, Page: data}
		for _, q := range s.pages {
			if q.Nav != "" {
				v.Nav = append(v.Nav, navItem{Label: q.Nav, Path: s.base + q.NavPath, Current: q.Template == p.Template})
			}
		}
		var buf bytes.Buffer
		if err := s.tmpl[p.Template].Execute(&buf, v); err != nil {
			http.Error(w, "render: "+err.Error(), http.StatusInternalServerError)
			return
		}
		if keyed {
			s.rendered.put(key, buf.Bytes())
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(buf.Bytes())
	})
}

// keyed is a page's data that says what it was made from: the Source's
// answer (shared while the ledger's head does not move) and the query
// that shaped it. Two requests with the same key render the same bytes,
// so the second is answered from the first's.
type keyed interface {
	key() (of any, query string)
}

type renderKey struct {
	page  string
	of    any
	query string
}

// renderCache holds pages rendered from the Source's current answers:
// an answer replaced (the head moved) is never asked for again, and the
// cache is emptied whenever it holds renderCacheSize pages.
type renderCache struct {
	mu sync.Mutex
	m  map[renderKey][]byte
}

const renderCacheSize = 64

func (c *renderCache) get(k renderKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.m[k]
	return b, ok
}

func (c *renderCache) put(k renderKey, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= renderCacheSize {
		c.m = map[renderKey][]byte{}
	}
	c.m[k] = append([]byte(nil), b...)
}

// statusOf is the HTTP status of a handler's error.
func statusOf(err error) int {
	switch {
	case errors.Is(err, ErrBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ErrOffline):
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

// errorText is an error as a plain-text response says it (neutralised:
// an error may quote recorded content).
func errorText(err error) string { return Neutral(err.Error()) }

// seqParam reads the path value name as a seq.
func seqParam(r *http.Request, name string) (uint64, error) {
	n, err := strconv.ParseUint(r.PathValue(name), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %s is not a seq", ErrBadRequest, name)
	}
	return n, nil
}

// funcs are the templates' helpers. Every recorded string a template
// shows goes through text (Neutral) or value (Neutral and clipped).
var funcs = template.FuncMap{
	"text":   Neutral,
	"value":  func(s string) Clip { return clip(s, ValueLimit) },
	"short":  short,
	"hash12": hash12,
	"kib":    func(n int) string { return fmt.Sprintf("%.1f KiB", float64(n)/1024) },
	"lines": func(s string) []string {
		return strings.Split(s, "\n")
	},
	"diffClass": func(l string) string {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			return "dh"
		case strings.HasPrefix(l, "+"):
			return "da"
		case strings.HasPrefix(l, "-"):
			return "dd"
		case strings.HasPrefix(l, "@@"):
			return "dc"
		}
		return ""
	},
	"add":  func(a, b int) int { return a + b },
	"pair": func(v, x any) pair { return pair{V: v, X: x} },
}

// short is s Neutral, cut to at most n bytes on a character boundary
// with an ellipsis.
func short(s string, n int) string {
	s = Neutral(s)
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && s[i]&0xc0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}

// hash12 is a hash's first 12 characters.
func hash12(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// pair passes two values to a nested template: the page's view (or a
// seq) and the item it renders.
type pair struct{ V, X any }
