package cli_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/fleet/natsrv"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// publishCosig publishes text on the cosignature subject of ledger id, as
// the collector does, or as anyone who may publish there.
func publishCosig(t *testing.T, url, id, text string) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lines := strings.SplitN(text, "\n", 3)
	var size uint64
	fmt.Sscan(lines[1], &size)
	if _, err := js.PublishMsg(ctx, fleet.CosigMessage(fleet.DefaultPrefix, id, size, []byte(text))); err != nil {
		t.Fatal(err)
	}
}

// publishRaw publishes m as it is on the server at url.
func publishRaw(t *testing.T, url string, m *nats.Msg) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := js.PublishMsg(ctx, m); err != nil {
		t.Fatal(err)
	}
}

// oldestCosigned is the note of the ledger's first ledger.cosigned entry:
// whoever holds the ledger file holds every cosignature the engine
// recorded.
func oldestCosigned(t *testing.T, path string) string {
	t.Helper()
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var oldest string
	err = l.Backward(func(_ uint64, raw []byte) (bool, error) {
		e, err := ledger.ParseEntry(raw)
		if err != nil || e.Type != event.TypeCosigned {
			return true, err
		}
		p, err := event.Decode(e)
		if err != nil {
			return false, err
		}
		oldest = p.(*event.Cosigned).Note
		return true, nil
	})
	if err != nil || oldest == "" {
		t.Fatalf("no ledger.cosigned entry in %s: %v", path, err)
	}
	return oldest
}

// Issue 24 #1: verify --witness took the newest message on the
// cosignature subject, and the stream kept one per ledger. A ledger
// truncated after the witness cosigned it fails not-extension; publishing
// the ledger's own oldest cosigned note (from its ledger.cosigned entries)
// on the subject made the same verify pass. The reference is now the
// largest checkpoint KEY cosigned among every message the stream keeps,
// so the replay changes nothing: still not-extension, exit 4. On one
// server and on a 3-node cluster (3 replicas).
func TestLedgerVerifyWitness_ReplayedOldCosignature(t *testing.T) {
	for _, tt := range []struct {
		name     string
		replicas int
	}{{"one server", 1}, {"3-node cluster", 3}} {
		t.Run(tt.name, func(t *testing.T) {
			var url string
			if tt.replicas == 1 {
				srv, err := natsrv.Start(natsrv.Options{Dir: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(srv.Shutdown)
				url = srv.ClientURL()
			} else {
				c, err := natsrv.StartCluster(t.TempDir(), "witness", 3)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(c.Shutdown)
				url = c.ClientURLs()
			}
			nc, err := nats.Connect(url)
			if err != nil {
				t.Fatal(err)
			}
			js, _ := jetstream.New(nc)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			err = fleet.EnsureStreams(ctx, js, fleet.DefaultPrefix, tt.replicas)
			cancel()
			nc.Close()
			if err != nil {
				t.Fatal(err)
			}

			// A ledger the witness cosigned three times as it grew; the
			// engine recorded each cosignature, the collector published each.
			w := newTestWitness(t, "witness.example")
			s := signedLedger(t, 10, 5, 10)
			var id string
			if l, err := ledger.OpenReadOnly(s.Path); err == nil {
				id = l.ID()
				l.Close()
			} else {
				t.Fatal(err)
			}
			cosignLatest := func() (uint64, string) {
				var size uint64
				for sz := range s.Notes {
					size = max(size, sz)
				}
				text := w.cosign(t, s, s.Notes[size])
				recordCosigned(t, s.Path, "witness.example", text)
				publishCosig(t, url, id, text)
				return size, text
			}
			first, _ := cosignLatest()
			s = growLedger(t, s, 10, 5)
			cosignLatest()
			s = growLedger(t, s, 20, 20)
			latest, _ := cosignLatest()
			s = growLedger(t, s, 3)

			r := run(t, "ledger", "verify", "--strict", "--json", "--witness", w.vkey, "--nats", url, "--ledger", s.Path)
			r.wantCode(t, cli.ExitOK)
			wj, _ := r.jsonObject(t)["witness"].(map[string]any)
			if wj["tree_size"] != jsonNumber(fmt.Sprint(latest)) || wj["stream_messages"] != jsonNumber("3") || wj["stream_warning"] != nil {
				t.Fatalf("the intact ledger: %v", wj)
			}

			// Truncated after the witness cosigned `latest` entries
			// (export, cut, manifest dropped, import).
			const keep = 25
			if !(first < keep && keep < latest) {
				t.Fatalf("cosigned at %d and %d", first, latest)
			}
			truncated := forge(t, s, func(es []map[string]any) []map[string]any { return es[:keep] })
			run(t, "ledger", "verify", "--strict", "--ledger", truncated).wantCode(t, cli.ExitOK)
			r = run(t, "ledger", "verify", "--strict", "--json", "--witness", w.vkey, "--nats", url, "--ledger", truncated)
			r.wantCode(t, cli.ExitIntegrity)
			wantOnlyKind(t, r, "not-extension")

			// The replay: the ledger's own oldest cosigned note, published
			// again on the subject (no key forged).
			old := oldestCosigned(t, truncated)
			if !strings.Contains(old, fmt.Sprintf("\n%d\n", first)) {
				t.Fatalf("the oldest cosigned note is not of size %d:\n%s", first, old)
			}
			publishCosig(t, url, id, old)
			r = run(t, "ledger", "verify", "--strict", "--json", "--witness", w.vkey, "--nats", url, "--ledger", truncated)
			r.wantCode(t, cli.ExitIntegrity)
			wantOnlyKind(t, r, "not-extension")
			r = run(t, "ledger", "verify", "--strict", "--witness", w.vkey, "--nats", url, "--ledger", truncated)
			r.wantCode(t, cli.ExitIntegrity)
			r.wantOut(t, "not-extension", fmt.Sprintf("covers %d entries", latest))

			// A cosigned note of another ledger published here (genuine,
			// larger) is not this ledger's: the reference stays.
			other := signedLedger(t, 60, 60)
			var big uint64
			for sz := range other.Notes {
				big = max(big, sz)
			}
			publishCosig(t, url, id, w.cosign(t, other, other.Notes[big]))
			// Junk claiming a huge tree: no wire header, or a note that is
			// none. Skipped.
			junk := fleet.CosigMessage(fleet.DefaultPrefix, id, 1<<40, []byte("opx.local/ledger/"+id+"\n1099511627776\nAAAA\n\n— witness.example AAAA\n"))
			publishRaw(t, url, junk)
			junk = fleet.CosigMessage(fleet.DefaultPrefix, id, 1<<40, []byte(old))
			junk.Header.Del(fleet.HdrWire)
			publishRaw(t, url, junk)
			r = run(t, "ledger", "verify", "--json", "--witness", w.vkey, "--nats", url, "--ledger", s.Path)
			r.wantCode(t, cli.ExitOK)
			wj, _ = r.jsonObject(t)["witness"].(map[string]any)
			if wj["tree_size"] != jsonNumber(fmt.Sprint(latest)) || wj["stream_messages"] != jsonNumber("7") {
				t.Fatalf("after the replays: %v", wj)
			}
		})
	}
}

// A cosignature stream made by an earlier opx keeps one message per
// ledger: the collector makes it keep every one (fleet.KeepCosigHistory),
// and until then verify --witness says what the limit allows.
func TestLedgerVerifyWitness_LegacyStreamWarns(t *testing.T) {
	srv, err := natsrv.Start(natsrv.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	legacy := fleet.CosigStreamConfig(fleet.DefaultPrefix, 1)
	legacy.MaxMsgsPerSubject = 1
	if _, err := js.CreateStream(ctx, legacy); err != nil {
		t.Fatal(err)
	}
	w := newTestWitness(t, "witness.example")
	s := signedLedger(t, 10, 10)
	l, err := ledger.OpenReadOnly(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	id := l.ID()
	l.Close()
	publishCosig(t, srv.ClientURL(), id, w.cosign(t, s, s.Notes[12]))
	r := run(t, "ledger", "verify", "--witness", w.vkey, "--nats", srv.ClientURL(), "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "warning", "at most 1 per source", "--max-msgs-per-subject=-1")
	if up, err := fleet.KeepCosigHistory(ctx, js, fleet.DefaultPrefix); err != nil || !up {
		t.Fatalf("KeepCosigHistory: %v %v", up, err)
	}
	r = run(t, "ledger", "verify", "--witness", w.vkey, "--nats", srv.ClientURL(), "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	if strings.Contains(r.stdout, "warning") {
		t.Errorf("a stream that keeps every cosignature: %s", r.stdout)
	}
}
