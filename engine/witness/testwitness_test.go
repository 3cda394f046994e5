package witness_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/opx-dev/opx/ledger/tlog"
	tdnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
)

// testWitness is an in-process add-checkpoint handler for the tests of
// opx's own logic (retries, 409s, alerts) and the benchmark's baseline:
// it keeps one log's latest cosigned size and root, checks the log's
// signature and the consistency proof with ledger/tlog, and cosigns with
// transparency-dev/formats' cosignature/v1 signer. Interoperability is
// tested against transparency-dev's omniwitness (interop_test.go), never
// against this.
type testWitness struct {
	t      testing.TB
	logKey tlog.Verifier
	signer note.Signer
	vkey   string

	mu   sync.Mutex
	size uint64
	root [32]byte
	// fail answers the next fail requests with 503 (a witness down).
	fail     int
	requests int
	statuses []int
}

func newTestWitness(t testing.TB, logKey tlog.Verifier) *testWitness {
	skey, vkey, err := note.GenerateKey(rand.Reader, "witness.test")
	if err != nil {
		t.Fatal(err)
	}
	s, err := tdnote.NewSignerForCosignatureV1(skey)
	if err != nil {
		t.Fatal(err)
	}
	vkey, err = tdnote.VKeyToCosignatureV1(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return &testWitness{t: t, logKey: logKey, signer: s, vkey: vkey}
}

func (w *testWitness) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.requests++
	status := w.serve(rw, r)
	w.statuses = append(w.statuses, status)
}

func (w *testWitness) serve(rw http.ResponseWriter, r *http.Request) int {
	if r.Method != http.MethodPost || r.URL.Path != tlog.AddCheckpointPath {
		http.NotFound(rw, r)
		return 404
	}
	if w.fail > 0 {
		w.fail--
		http.Error(rw, "down", http.StatusServiceUnavailable)
		return 503
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, int64(tlog.MaxAddCheckpointBytes)+1))
	req, err := tlog.ParseAddCheckpointRequest(body)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return 400
	}
	origin, _, _ := strings.Cut(string(req.Checkpoint), "\n")
	if origin != w.logKey.Name() {
		http.Error(rw, "unknown log", http.StatusNotFound)
		return 404
	}
	cp, err := tlog.Open(req.Checkpoint, w.logKey)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusForbidden)
		return 403
	}
	if req.OldSize > cp.Size {
		http.Error(rw, "old size > size", http.StatusBadRequest)
		return 400
	}
	if req.OldSize != w.size {
		rw.Header().Set("Content-Type", tlog.ContentTypeSize)
		rw.WriteHeader(http.StatusConflict)
		rw.Write(tlog.FormatSize(w.size))
		return 409
	}
	if w.size > 0 {
		hs := make([][]byte, len(req.Proof))
		for i := range req.Proof {
			hs[i] = req.Proof[i][:]
		}
		if w.size == cp.Size && cp.Root != w.root {
			// The spec's answer, as omniwitness gives it: 409, no size.
			http.Error(rw, "root mismatch", http.StatusConflict)
			return 409
		}
		if w.size < cp.Size && tlog.VerifyConsistency(w.size, cp.Size, hs, w.root, cp.Root) != nil {
			http.Error(rw, "bad proof", http.StatusUnprocessableEntity)
			return 422
		}
	}
	w.size, w.root = cp.Size, cp.Root
	body2 := strings.SplitN(string(req.Checkpoint), "\n\n", 2)[0] + "\n"
	signed, err := note.Sign(&note.Note{Text: body2}, w.signer)
	if err != nil {
		w.t.Error(err)
		return 500
	}
	_, sigs, _ := bytes.Cut(signed, []byte("\n\n"))
	rw.Write(sigs)
	return 200
}

// state is the witness's latest size.
func (w *testWitness) state() (size uint64, requests int, statuses []int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.size, w.requests, append([]int(nil), w.statuses...)
}

func (w *testWitness) setFail(n int) {
	w.mu.Lock()
	w.fail = n
	w.mu.Unlock()
}

// itoa and b64 keep test tables short.
func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
func b64(b []byte) string  { return base64.StdEncoding.EncodeToString(b) }
