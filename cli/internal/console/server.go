package console

import (
	"context"
	"crypto/tls"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/url"
	"time"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed assets
var assetFiles embed.FS

// Options configure a console.
type Options struct {
	Source Source
	// Listen is the address to listen on; "" is 127.0.0.1:0 (a free
	// port on loopback).
	Listen string
	// TLSCert and TLSKey, both or neither, serve HTTPS.
	TLSCert, TLSKey string
	// InsecureListen allows a non-loopback Listen without TLS.
	InsecureListen bool
	// Token is the access token; "" draws a fresh one (NewToken).
	Token string
	// Warn receives the warnings (plain HTTP off loopback); nil: none.
	Warn io.Writer
	// Fleet, in place of Source, serves a collector's store: the
	// sources, the alerts, and each source's pages under
	// /sources/<id>/ (fleet.go).
	Fleet Fleet
	// Base is the path the pages are served under ("" for the root; a
	// fleet's source console is under /sources/<id>).
	Base string
}

// Server is a console: its pages over one Source.
type Server struct {
	src   Source
	fleet Fleet
	about About
	base  string
	token string
	pages []Page
	tmpl  map[string]*template.Template
	mux   *http.ServeMux
	// rendered are pages already rendered from the Source's answers.
	rendered renderCache
	// rows and forms are the sessions listing's rows and filter forms
	// already rendered.
	rows  fragmentCache[SessionRow]
	forms fragmentCache[sessionFilter]
	// subs are a fleet console's source consoles (fleet.go).
	subs sourceConsoles
}

// New builds the console over o.Source with the pages of Pages.
func New(o Options) (*Server, error) {
	if o.Source == nil && o.Fleet == nil {
		return nil, ErrNoSource
	}
	s := &Server{src: o.Source, fleet: o.Fleet, base: o.Base, token: o.Token, tmpl: map[string]*template.Template{}, mux: http.NewServeMux()}
	if o.Fleet != nil {
		s.about = o.Fleet.About()
	} else {
		s.about = o.Source.About()
	}
	if s.token == "" {
		t, err := NewToken()
		if err != nil {
			return nil, err
		}
		s.token = t
	}
	s.pages = Pages()
	if o.Fleet != nil {
		s.pages = FleetPages()
	}
	base := template.FuncMap{"base": func() string { return s.base }}
	for _, p := range s.pages {
		if p.Template == "" {
			continue
		}
		// One template set per page: the layout and the page's own file,
		// so two pages' blocks never collide.
		t, err := template.New("layout.html").Funcs(funcs).Funcs(base).ParseFS(templateFiles, "templates/layout.html", "templates/"+p.Template+".html")
		if err != nil {
			return nil, fmt.Errorf("console: page %s: %w", p.Template, err)
		}
		s.tmpl[p.Template] = t
	}
	for _, p := range s.pages {
		s.mux.Handle(p.Pattern, s.handle(p))
	}
	assets, err := fs.Sub(assetFiles, "assets")
	if err != nil {
		return nil, err
	}
	s.mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(assets)))
	return s, nil
}

// Token is the access token every request must carry.
func (s *Server) Token() string { return s.token }

// Handler is the console behind its guard (guard.go). loopback says the
// server listens on loopback only (the Host is then checked); tls that
// it serves HTTPS (the cookie is then Secure).
func (s *Server) Handler(loopback, tls bool) http.Handler {
	return guard(s.token, loopback, tls, s.mux)
}

// Listen opens o.Listen by the console's rules: loopback by default;
// another address only with TLS or InsecureListen (warned about).
func Listen(o Options) (ln net.Listener, loopback bool, err error) {
	addr := o.Listen
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, false, fmt.Errorf("--listen %q: %w", addr, err)
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return nil, false, ErrTLSHalf
	}
	ip := net.ParseIP(host)
	loopback = host == "localhost" || (ip != nil && ip.IsLoopback())
	if !loopback {
		switch {
		case o.TLSCert != "":
		case o.InsecureListen:
			if o.Warn != nil {
				fmt.Fprintf(o.Warn, "WARNING: serving the console over plain HTTP on %s: the token and every page cross the network unencrypted\n", addr)
			}
		default:
			return nil, false, fmt.Errorf("--listen %s: %w", addr, ErrNotLoopback)
		}
	}
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		return nil, false, err
	}
	if o.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
		if err != nil {
			ln.Close()
			return nil, false, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	}
	return ln, loopback, nil
}

// URL is the address to open: the listener's, with the token.
func (s *Server) URL(ln net.Listener, tls bool) string {
	scheme := "http"
	if tls {
		scheme = "https"
	}
	return fmt.Sprintf("%s://%s/?token=%s", scheme, ln.Addr().String(), url.QueryEscape(s.token))
}

// Serve serves the console on ln until ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener, loopback, tls bool) error {
	hs := &http.Server{Handler: s.Handler(loopback, tls), ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes: 64 << 10, ErrorLog: log.New(io.Discard, "", 0),
		// Requests end with the server: an event stream never holds a
		// stopping console open.
		BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			hs.Shutdown(sctx)
		case <-done:
		}
	}()
	err := hs.Serve(ln)
	close(done)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Weight is what a page weighs before any data: the bytes of the
// embedded templates, style sheet and script.
func Weight() (int, error) {
	n := 0
	for _, fsys := range []fs.FS{templateFiles, assetFiles} {
		err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := fs.ReadFile(fsys, path)
			n += len(b)
			return err
		})
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}
