package witnesshttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/opx-dev/opx/ledger/tlog"
)

// Witness is what the handler serves: a witness that knows some origins
// and cosigns their checkpoints.
type Witness interface {
	// Known reports whether the witness has a key for origin.
	Known(origin string) bool
	// AddCheckpoint checks req (a checkpoint of origin) and returns the
	// witness's cosignature lines, each "— <name> <base64>\n", once the
	// checkpoint is recorded as the origin's latest. Its errors are this
	// package's (errors.go) or wrap tlog.ErrMalformed; any other is a
	// 500.
	AddCheckpoint(ctx context.Context, origin string, req tlog.AddCheckpointRequest) ([]byte, error)
}

// Options bound what the handler serves.
type Options struct {
	// Rate is the requests per second each origin may make, Burst how
	// many at once (DefaultRate, DefaultBurst when 0).
	Rate  float64
	Burst int
	// ClientRate is the requests per second each client address (an
	// IPv6 client's /64) may make, whatever their origins, ClientBurst
	// how many at once (DefaultClientRate, twice the rate when 0);
	// MaxClients bounds the addresses remembered (DefaultMaxClients when
	// 0; beyond it the one seen least recently is forgotten).
	ClientRate  float64
	ClientBurst int
	MaxClients  int
	// MaxInFlight bounds the requests being served at once, across
	// origins (DefaultMaxInFlight when 0); one more is a 503.
	MaxInFlight int
	// Timeout bounds one request's handling, reading its body included
	// (DefaultTimeout when 0).
	Timeout time.Duration
	// Logf, if set, receives each refusal other than a 409 and 429.
	Logf func(format string, args ...any)
}

// Defaults of Options.
const (
	DefaultRate        = 10
	DefaultBurst       = 20
	DefaultClientRate  = 50
	DefaultMaxClients  = 4096
	DefaultMaxInFlight = 64
	DefaultTimeout     = 10 * time.Second
)

// maxOriginBytes bounds the origin line looked at before the witness
// says whether it knows it.
const maxOriginBytes = 1024

// Handler serves POST /add-checkpoint (tlog.AddCheckpointPath).
type Handler struct {
	w        Witness
	opts     Options
	inFlight chan struct{}

	mu      sync.Mutex
	buckets map[string]*rate.Limiter // known origins only
	clients *clientBook
}

// New returns the handler of w.
func New(w Witness, opts Options) *Handler {
	if opts.Rate <= 0 {
		opts.Rate = DefaultRate
	}
	if opts.Burst <= 0 {
		opts.Burst = DefaultBurst
	}
	if opts.ClientRate <= 0 {
		opts.ClientRate = DefaultClientRate
	}
	if opts.ClientBurst <= 0 {
		opts.ClientBurst = max(1, int(2*opts.ClientRate))
	}
	if opts.MaxClients <= 0 {
		opts.MaxClients = DefaultMaxClients
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = DefaultMaxInFlight
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	return &Handler{w: w, opts: opts, inFlight: make(chan struct{}, opts.MaxInFlight), buckets: map[string]*rate.Limiter{},
		clients: newClientBook(opts.MaxClients, opts.ClientRate, opts.ClientBurst)}
}

// ServeHTTP serves one request.
func (h *Handler) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if r.URL.Path != tlog.AddCheckpointPath {
		http.NotFound(rw, r)
		return
	}
	if r.Method != http.MethodPost {
		rw.Header().Set("Allow", http.MethodPost)
		plain(rw, http.StatusMethodNotAllowed, "add-checkpoint takes POST")
		return
	}
	// The client's bucket first: a client beyond its rate costs a map
	// lookup, no in-flight slot, no body read.
	if !h.clients.allow(r.RemoteAddr) {
		rw.Header().Set("Retry-After", "1")
		plain(rw, http.StatusTooManyRequests, "rate limit of the client address")
		return
	}
	select {
	case h.inFlight <- struct{}{}:
		defer func() { <-h.inFlight }()
	default:
		rw.Header().Set("Retry-After", "1")
		plain(rw, http.StatusServiceUnavailable, "too many requests in flight")
		return
	}
	deadline := time.Now().Add(h.opts.Timeout)
	ctx, cancel := context.WithDeadline(r.Context(), deadline)
	defer cancel()
	// The body is read within the same deadline whatever server serves
	// h (Serve's ReadTimeout is only Serve's): a client that sends its
	// body slowly holds an in-flight slot for Timeout at most.
	_ = http.NewResponseController(rw).SetReadDeadline(deadline)
	if r.ContentLength > int64(tlog.MaxAddCheckpointBytes) {
		plain(rw, http.StatusRequestEntityTooLarge, fmt.Sprintf("body of %d bytes (at most %d)", r.ContentLength, tlog.MaxAddCheckpointBytes))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(tlog.MaxAddCheckpointBytes)+1))
	if errors.Is(err, os.ErrDeadlineExceeded) {
		plain(rw, http.StatusRequestTimeout, "body not read in time")
		return
	}
	if err != nil {
		plain(rw, http.StatusBadRequest, "read body: "+err.Error())
		return
	}
	if len(body) > tlog.MaxAddCheckpointBytes {
		plain(rw, http.StatusRequestEntityTooLarge, fmt.Sprintf("body of more than %d bytes", tlog.MaxAddCheckpointBytes))
		return
	}
	req, err := tlog.ParseAddCheckpointRequest(body)
	if err != nil {
		h.refuse(rw, r, http.StatusBadRequest, err)
		return
	}
	line, _, ok := bytes.Cut(req.Checkpoint, []byte{'\n'})
	if !ok || len(line) == 0 || len(line) > maxOriginBytes {
		h.refuse(rw, r, http.StatusBadRequest, fmt.Errorf("add-checkpoint: %w: the checkpoint has no origin line", tlog.ErrMalformed))
		return
	}
	origin := string(line)
	if !h.w.Known(origin) {
		h.refuse(rw, r, http.StatusNotFound, fmt.Errorf("%w %.100q", ErrUnknownOrigin, origin))
		return
	}
	if !h.bucket(origin).Allow() {
		rw.Header().Set("Retry-After", "1")
		plain(rw, http.StatusTooManyRequests, "rate limit of the origin")
		return
	}
	sigs, err := h.w.AddCheckpoint(ctx, origin, req)
	var conflict *ConflictError
	switch {
	case err == nil:
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		rw.WriteHeader(http.StatusOK)
		rw.Write(sigs)
	case errors.As(err, &conflict) && conflict.Root:
		// No size body: transparency-dev's client tells a root
		// mismatch from a stale size by the content type.
		h.refuse(rw, r, http.StatusConflict, err)
	case errors.As(err, &conflict):
		rw.Header().Set("Content-Type", tlog.ContentTypeSize)
		rw.WriteHeader(http.StatusConflict)
		rw.Write(tlog.FormatSize(conflict.Latest))
	default:
		h.refuse(rw, r, StatusOf(err), err)
	}
}

// StatusOf is the status code that answers err.
func StatusOf(err error) int {
	var conflict *ConflictError
	switch {
	case err == nil:
		return http.StatusOK
	case errors.As(err, &conflict):
		return http.StatusConflict
	case errors.Is(err, ErrUnknownOrigin):
		return http.StatusNotFound
	case errors.Is(err, ErrNoSignature):
		return http.StatusForbidden
	case errors.Is(err, ErrBadProof):
		return http.StatusUnprocessableEntity
	case errors.Is(err, ErrOldSize), errors.Is(err, tlog.ErrMalformed):
		return http.StatusBadRequest
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

func (h *Handler) refuse(rw http.ResponseWriter, r *http.Request, code int, err error) {
	h.opts.Logf("witness: %s: %d %v", r.RemoteAddr, code, err)
	msg := err.Error()
	if code == http.StatusInternalServerError {
		msg = "internal error" // the log has it; the client is told nothing of the store
	}
	plain(rw, code, msg)
}

// bucket is origin's token bucket, made on first use: only for origins
// the witness knows, so the map is as large as its configuration.
func (h *Handler) bucket(origin string) *rate.Limiter {
	h.mu.Lock()
	defer h.mu.Unlock()
	l := h.buckets[origin]
	if l == nil {
		l = rate.NewLimiter(rate.Limit(h.opts.Rate), h.opts.Burst)
		h.buckets[origin] = l
	}
	return l
}

func plain(rw http.ResponseWriter, code int, msg string) {
	rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
	rw.Header().Set("X-Content-Type-Options", "nosniff")
	rw.WriteHeader(code)
	io.WriteString(rw, msg+"\n")
}

// Clients is the number of client addresses the handler remembers (at
// most Options.MaxClients).
func (h *Handler) Clients() int { return h.clients.len() }

// Origins is the number of origins the handler keeps a bucket for (the
// known ones that sent a request).
func (h *Handler) Origins() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.buckets)
}
