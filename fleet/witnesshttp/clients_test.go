package witnesshttp_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/opx-dev/opx/fleet/witnesshttp"
	"github.com/opx-dev/opx/ledger/tlog"
)

// from serves one request as if from remote (HOST:PORT) and returns its
// status.
func from(h http.Handler, remote string, b []byte) int {
	r := httptest.NewRequest("POST", tlog.AddCheckpointPath, bytes.NewReader(b))
	r.RemoteAddr = remote
	rw := httptest.NewRecorder()
	h.ServeHTTP(rw, r)
	return rw.Code
}

// TestHandler_ClientRate: a client address beyond its burst gets 429
// before its body is read, whatever origin it names (known or not);
// another address has its own bucket; an IPv6 client is counted by its
// /64, and an IPv4-mapped address as the IPv4 one.
func TestHandler_ClientRate(t *testing.T) {
	f := newFake(nil)
	h := witnesshttp.New(f, witnesshttp.Options{Rate: 1000, Burst: 1000, ClientRate: 0.001, ClientBurst: 3})
	for i, origin := range []string{"example.com/log", "example.com/other", "example.com/nope"} {
		if code := from(h, "192.0.2.1:1000", body(origin)); code != 200 && code != 404 {
			t.Fatalf("request %d within the client's burst: %d", i, code)
		}
	}
	if code := from(h, "192.0.2.1:2000", body("example.com/log")); code != 429 {
		t.Fatalf("beyond the client's burst (another port): %d, want 429", code)
	}
	if code := from(h, "[::ffff:192.0.2.1]:1", body("example.com/log")); code != 429 {
		t.Fatalf("the same address, IPv4-mapped: %d, want 429", code)
	}
	if code := from(h, "192.0.2.2:1000", body("example.com/log")); code != 200 {
		t.Fatalf("another address: %d", code)
	}
	for i := range 3 {
		from(h, fmt.Sprintf("[2001:db8:1:2::%x]:443", i+1), body("example.com/log"))
	}
	if code := from(h, "[2001:db8:1:2:ffff::9]:443", body("example.com/log")); code != 429 {
		t.Fatalf("a fourth address of one /64: %d, want 429", code)
	}
	if code := from(h, "[2001:db8:1:3::1]:443", body("example.com/log")); code != 200 {
		t.Fatalf("another /64: %d", code)
	}
	if n := f.calls.Load(); n != 7 {
		t.Fatalf("the witness was asked %d times, want 7", n)
	}
}

// TestHandler_ClientRate_RotatingAddresses: an attacker rotating through
// 20,000 addresses and as many origins leaves the handler remembering
// MaxClients addresses and no origin it does not know; an honest client
// that was forgotten meanwhile starts with a full bucket again.
func TestHandler_ClientRate_RotatingAddresses(t *testing.T) {
	f := newFake(nil)
	const maxClients = 1000
	h := witnesshttp.New(f, witnesshttp.Options{ClientRate: 0.001, ClientBurst: 1, MaxClients: maxClients})
	if code := from(h, "198.51.100.7:1", body("example.com/log")); code != 200 {
		t.Fatalf("honest: %d", code)
	}
	if code := from(h, "198.51.100.7:1", body("example.com/log")); code != 429 {
		t.Fatalf("honest, beyond its burst: %d", code)
	}
	for i := range 20_000 {
		from(h, fmt.Sprintf("10.%d.%d.%d:9", i>>16&255, i>>8&255, i&255), body(fmt.Sprintf("attacker.example/%d", i)))
	}
	if n := h.Clients(); n != maxClients {
		t.Fatalf("%d clients remembered, want %d", n, maxClients)
	}
	if n := h.Origins(); n != 1 {
		t.Fatalf("%d origin buckets, want 1 (the known origin the honest client sent)", n)
	}
	if code := from(h, "198.51.100.7:1", body("example.com/log")); code != 200 {
		t.Fatalf("honest, forgotten then back: %d", code)
	}
}
