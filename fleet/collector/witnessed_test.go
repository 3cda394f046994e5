package collector_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	tdnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
	sumtlog "golang.org/x/mod/sumdb/tlog"

	"github.com/opx-dev/opx/fleet/collector"
	"github.com/opx-dev/opx/fleet/witnesshttp"
	"github.com/opx-dev/opx/ledger/tlog"
)

// testLog is a log the collector witnesses (off its --witness-logs): an
// RFC 6962 tree in memory (x/mod's sumdb/tlog, an implementation other
// than the collector's verifier) and its signer.
type testLog struct {
	origin string
	signer *tlog.Signer
	hashes []sumtlog.Hash // stored hashes
	n      int64
}

func newTestLog(t testing.TB, origin string) *testLog {
	skey, _, err := tlog.GenerateKey(origin)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tlog.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	return &testLog{origin: origin, signer: s}
}

func (l *testLog) ReadHashes(idx []int64) ([]sumtlog.Hash, error) {
	out := make([]sumtlog.Hash, len(idx))
	for i, x := range idx {
		out[i] = l.hashes[x]
	}
	return out, nil
}

// grow appends k leaves.
func (l *testLog) grow(t testing.TB, k int) {
	for range k {
		hs, err := sumtlog.StoredHashes(l.n, []byte(fmt.Sprintf("leaf %d of %s", l.n, l.origin)), l)
		if err != nil {
			t.Fatal(err)
		}
		l.hashes = append(l.hashes, hs...)
		l.n++
	}
}

func (l *testLog) root(t testing.TB, n int64) [32]byte {
	h, err := sumtlog.TreeHash(n, l)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (l *testLog) checkpoint(t testing.TB, n int64) []byte {
	text, err := l.signer.Sign(uint64(n), l.root(t, n))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(text)
}

func (l *testLog) proof(t testing.TB, old, n int64) [][32]byte {
	if old == 0 || old == n {
		return nil
	}
	p, err := sumtlog.ProveTree(n, old, l)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][32]byte, len(p))
	for i := range p {
		out[i] = p[i]
	}
	return out
}

// request is the add-checkpoint body from old to the log's size n.
func (l *testLog) request(t testing.TB, old, n int64) []byte {
	return tlog.AddCheckpointRequest{OldSize: uint64(old), Proof: l.proof(t, old, n), Checkpoint: l.checkpoint(t, n)}.Marshal()
}

type witnessServer struct {
	url   string
	c     *collector.Collector
	store string
	key   string // the witness's cosignature/v1 verifier key
}

// startWitness opens a collector (no NATS) on store that witnesses logs
// and serves its add-checkpoint handler on loopback.
func startWitness(t testing.TB, store string, opts witnesshttp.Options, logs ...*testLog) *witnessServer {
	t.Helper()
	var wl []collector.WitnessLog
	for _, l := range logs {
		wl = append(wl, collector.WitnessLog{Origin: l.origin, Key: l.signer.Verifier().String()})
	}
	c, err := collector.New(collector.Config{URL: "nats://127.0.0.1:1", Store: store, NoSync: false, WitnessLogs: wl, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c.WitnessHandler(opts))
	closed := false
	t.Cleanup(func() {
		if !closed {
			srv.Close()
			c.Close()
		}
	})
	return &witnessServer{url: srv.URL, c: c, store: store, key: c.WitnessKey()}
}

func post(t testing.TB, url string, body []byte) (int, string, []byte) {
	t.Helper()
	resp, err := http.Post(url+tlog.AddCheckpointPath, "text/plain", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

// verifyCosig checks that sigs are the witness's cosignature/v1 lines
// over cp, with transparency-dev/formats' cosignature verifier.
func verifyCosig(t testing.TB, key string, cp, sigs []byte) {
	t.Helper()
	v, err := tdnote.NewVerifierForCosignatureV1(key)
	if err != nil {
		t.Fatal(err)
	}
	body, _, _ := bytes.Cut(cp, []byte("\n\n"))
	n, err := note.Open(append(append(append([]byte{}, body...), '\n', '\n'), sigs...), note.VerifierList(v))
	if err != nil {
		t.Fatalf("cosignature %q does not verify: %v", sigs, err)
	}
	if len(n.Sigs) != 1 {
		t.Fatalf("%d cosignatures", len(n.Sigs))
	}
	if ts, err := tdnote.CoSigV1Timestamp(n.Sigs[0]); err != nil || ts.IsZero() {
		t.Fatalf("cosignature timestamp %v, %v", ts, err)
	}
}

// TestWitness_Protocol: each answer of https://c2sp.org/tlog-witness, in
// order, with the status, content type and body the spec names.
func TestWitness_Protocol(t *testing.T) {
	lg := newTestLog(t, "example.com/log")
	other := newTestLog(t, "example.com/other")  // not configured
	impostor := newTestLog(t, "example.com/log") // same origin, another key
	w := startWitness(t, t.TempDir(), witnesshttp.Options{Rate: 1000, Burst: 1000}, lg)
	lg.grow(t, 10)

	code, ctype, body := post(t, w.url, lg.request(t, 0, 10))
	if code != 200 || ctype != "text/plain; charset=utf-8" || !bytes.HasPrefix(body, []byte("— ")) || !bytes.HasSuffix(body, []byte("\n")) {
		t.Fatalf("first: %d %q %q", code, ctype, body)
	}
	verifyCosig(t, w.key, lg.checkpoint(t, 10), body)

	impostor.grow(t, 12)
	other.grow(t, 3)
	lg.grow(t, 7) // 17
	bad := lg.request(t, 10, 17)
	bad[len("old 10\n")+2] ^= 1 // a proof hash changed
	sameSizeFork := tlog.AddCheckpointRequest{OldSize: 10, Checkpoint: impostor.checkpoint(t, 10)}
	for _, tc := range []struct {
		name  string
		body  []byte
		code  int
		ctype string
		want  string
	}{
		{"stale old size", lg.request(t, 0, 17), 409, tlog.ContentTypeSize, "10\n"},
		{"old size ahead", tlog.AddCheckpointRequest{OldSize: 12, Proof: lg.proof(t, 12, 17), Checkpoint: lg.checkpoint(t, 17)}.Marshal(), 409, tlog.ContentTypeSize, "10\n"},
		{"old size over the checkpoint's", tlog.AddCheckpointRequest{OldSize: 18, Checkpoint: lg.checkpoint(t, 17)}.Marshal(), 400, "", ""},
		{"bad proof", bad, 422, "", ""},
		{"proof of another tree", tlog.AddCheckpointRequest{OldSize: 10, Proof: lg.proof(t, 9, 17), Checkpoint: lg.checkpoint(t, 17)}.Marshal(), 422, "", ""},
		{"unknown origin", other.request(t, 0, 3), 404, "", ""},
		{"another key of the origin", impostor.request(t, 10, 12), 403, "", ""},
		{"same size, another root", sameSizeFork.Marshal(), 403, "", ""}, // the impostor's: not trusted
		{"malformed", []byte("old 010\n\nx"), 400, "", ""},
		{"64 proof lines", []byte("old 10\n" + strings.Repeat("PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n", 64) + "\n" + string(lg.checkpoint(t, 17))), 400, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, ctype, body := post(t, w.url, tc.body)
			if code != tc.code || tc.ctype != "" && ctype != tc.ctype || tc.want != "" && string(body) != tc.want {
				t.Fatalf("%d %q %q, want %d %q %q", code, ctype, body, tc.code, tc.ctype, tc.want)
			}
		})
	}
	// The latest is still 10: a consistent extension is cosigned.
	code, _, body = post(t, w.url, lg.request(t, 10, 17))
	if code != 200 {
		t.Fatalf("extension: %d %q", code, body)
	}
	verifyCosig(t, w.key, lg.checkpoint(t, 17), body)
	// The same tree again: cosigned again (no state change).
	if code, _, body = post(t, w.url, lg.request(t, 17, 17)); code != 200 {
		t.Fatalf("same tree: %d %q", code, body)
	}
	// Same size, another root, signed by the log's key: 409 (the spec's
	// answer to a root that differs at the size cosigned), not as a size
	// (omniwitness's answer, which transparency-dev's client reads as a
	// root mismatch).
	fork, err := lg.signer.Sign(17, sha256.Sum256([]byte("fork")))
	if err != nil {
		t.Fatal(err)
	}
	if code, ctype, body := post(t, w.url, tlog.AddCheckpointRequest{OldSize: 17, Checkpoint: []byte(fork)}.Marshal()); code != 409 || ctype == tlog.ContentTypeSize {
		t.Fatalf("same size fork: %d %q %q, want 409 without a size", code, ctype, body)
	}
	// A method other than POST, another path.
	if resp, err := http.Get(w.url + tlog.AddCheckpointPath); err != nil || resp.StatusCode != 405 {
		t.Fatalf("GET: %v %v", resp, err)
	}
}

// TestWitness_EmptyTree: a checkpoint of size 0 is cosigned only with
// the empty tree's root, and a proof from 0 is refused.
func TestWitness_EmptyTree(t *testing.T) {
	lg := newTestLog(t, "example.com/log")
	w := startWitness(t, t.TempDir(), witnesshttp.Options{}, lg)
	empty := [32]byte(sha256.Sum256(nil))
	cp, _ := lg.signer.Sign(0, empty)
	if code, _, body := post(t, w.url, tlog.AddCheckpointRequest{Checkpoint: []byte(cp)}.Marshal()); code != 200 {
		t.Fatalf("empty tree: %d %q", code, body)
	}
	cp, _ = lg.signer.Sign(0, [32]byte{1})
	if code, _, _ := post(t, w.url, tlog.AddCheckpointRequest{Checkpoint: []byte(cp)}.Marshal()); code != 422 {
		t.Fatalf("size 0, another root: %d", code)
	}
	lg.grow(t, 3)
	r := tlog.AddCheckpointRequest{Proof: [][32]byte{{1}}, Checkpoint: lg.checkpoint(t, 3)}
	if code, _, _ := post(t, w.url, r.Marshal()); code != 422 {
		t.Fatalf("proof from 0: %d", code)
	}
}

// TestWitness_Restart: the latest cosigned size per origin is rebuilt
// from the collector's ledger: after a restart, a fork of what was
// cosigned is refused and the old size is the recorded one.
func TestWitness_Restart(t *testing.T) {
	store := t.TempDir()
	lg := newTestLog(t, "example.com/log")
	lg.grow(t, 8)
	w := startWitness(t, store, witnesshttp.Options{}, lg)
	if code, _, body := post(t, w.url, lg.request(t, 0, 8)); code != 200 {
		t.Fatalf("%d %q", code, body)
	}
	w.c.Close() // the store is released; the old server refuses nothing more
	// A log that forked after 8 (another leaf 8): consistent with nothing
	// the witness cosigned past 8, but the restarted witness must know 8.
	w2 := startWitness(t, store, witnesshttp.Options{}, lg)
	if code, ctype, body := post(t, w2.url, lg.request(t, 0, 8)); code != 409 || ctype != tlog.ContentTypeSize || string(body) != "8\n" {
		t.Fatalf("after restart: %d %q %q, want 409 8", code, ctype, body)
	}
	fork := &testLog{origin: lg.origin + " ", signer: lg.signer} // other leaves, signed by the log's key
	fork.grow(t, 11)
	fork.origin = lg.origin
	if code, _, body := post(t, w2.url, fork.request(t, 8, 11)); code != 422 {
		t.Fatalf("a fork after restart: %d %q, want 422", code, body)
	}
	lg.grow(t, 3)
	if code, _, body := post(t, w2.url, lg.request(t, 8, 11)); code != 200 {
		t.Fatalf("extension after restart: %d %q", code, body)
	}
}

// TestWitness_Race: concurrent requests for one origin are serialized: of
// many requests from the same old size to different new sizes, exactly
// one is cosigned; the others get 409 with the size that won.
func TestWitness_Race(t *testing.T) {
	lg := newTestLog(t, "example.com/log")
	lg.grow(t, 40)
	w := startWitness(t, t.TempDir(), witnesshttp.Options{Rate: 1000, Burst: 1000}, lg)
	if code, _, _ := post(t, w.url, lg.request(t, 0, 4)); code != 200 {
		t.Fatal(code)
	}
	bodies := make([][]byte, 30)
	for i := range bodies {
		bodies[i] = lg.request(t, 4, int64(5+i))
	}
	var wg sync.WaitGroup
	codes := make([]int, len(bodies))
	latest := make([]string, len(bodies))
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, _, body := post(t, w.url, bodies[i])
			codes[i], latest[i] = code, string(body)
		}()
	}
	wg.Wait()
	won := -1
	for i, c := range codes {
		switch c {
		case 200:
			if won >= 0 {
				t.Fatalf("two cosigned from old size 4: sizes %d and %d", 5+won, 5+i)
			}
			won = i
		case 409:
		default:
			t.Fatalf("request %d: %d %q", i, c, latest[i])
		}
	}
	if won < 0 {
		t.Fatal("none cosigned")
	}
	for i, c := range codes {
		if c == 409 && latest[i] != fmt.Sprintf("%d\n", 5+won) {
			t.Fatalf("409 says %q, the winner was %d", latest[i], 5+won)
		}
	}
}

// TestWitness_Hostile: what a hostile client sends is refused within
// bounds.
func TestWitness_Hostile(t *testing.T) {
	lg := newTestLog(t, "example.com/log")
	lg.grow(t, 5)
	w := startWitness(t, t.TempDir(), witnesshttp.Options{Rate: 1, Burst: 3}, lg)
	huge := bytes.Repeat([]byte("x"), tlog.MaxAddCheckpointBytes+1)
	if code, _, _ := post(t, w.url, huge); code != 413 {
		t.Fatalf("huge body: %d", code)
	}
	// A note with 101 signatures (more than a note may carry).
	cp := lg.checkpoint(t, 5)
	many := append([]byte{}, cp...)
	for i := range 101 {
		many = append(many, fmt.Sprintf("— k%d AAAAAAAAAAA=\n", i)...)
	}
	if code, _, _ := post(t, w.url, tlog.AddCheckpointRequest{Checkpoint: many}.Marshal()); code != 400 {
		t.Fatalf("101 signatures: %d", code)
	}
	// Unknown key names only: no trusted signature.
	body, _, _ := bytes.Cut(cp, []byte("\n\n"))
	unknown := append(append([]byte{}, body...), "\n\n— someone AAAAAAAAAAA=\n— example.com/log AAAAAAAAAAA=\n"...)
	if code, _, _ := post(t, w.url, tlog.AddCheckpointRequest{Checkpoint: unknown}.Marshal()); code != 403 {
		t.Fatalf("unknown key names: %d", code)
	}
	// Size overflow in the checkpoint body (log's signature over it).
	if code, _, _ := post(t, w.url, []byte("old 18446744073709551616\n\n"+string(cp))); code != 400 {
		t.Fatalf("old size overflow: %d", code)
	}
	// The origin's bucket (burst 3, 1/s) is spent by now: 429.
	var got429 bool
	for range 5 {
		if code, _, _ := post(t, w.url, lg.request(t, 0, 5)); code == 429 {
			got429 = true
		}
	}
	if !got429 {
		t.Fatal("no 429 beyond the origin's rate")
	}
	// Unknown origins never reach a bucket: 404, however many.
	other := newTestLog(t, "example.com/other")
	other.grow(t, 1)
	for range 5 {
		if code, _, _ := post(t, w.url, other.request(t, 0, 1)); code != 404 {
			t.Fatalf("unknown origin: %d", code)
		}
	}
}
