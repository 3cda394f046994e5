package fleet_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	sumtlog "golang.org/x/mod/sumdb/tlog"

	"github.com/opx-dev/opx/fleet/collector"
	"github.com/opx-dev/opx/fleet/witnesshttp"
	"github.com/opx-dev/opx/ledger/tlog"
)

// benchLog is an RFC 6962 tree in memory and its signer: the log whose
// checkpoints the collector witnesses over HTTP.
type benchLog struct {
	hashes []sumtlog.Hash
	n      int64
}

func (l *benchLog) ReadHashes(idx []int64) ([]sumtlog.Hash, error) {
	out := make([]sumtlog.Hash, len(idx))
	for i, x := range idx {
		out[i] = l.hashes[x]
	}
	return out, nil
}

// witnessRequests returns k add-checkpoint bodies of one log, each
// extending the one before by step leaves, the first from old size 0.
func witnessRequests(b *testing.B, s *tlog.Signer, k, step int) [][]byte {
	l := &benchLog{}
	var out [][]byte
	var old int64
	for range k {
		for range step {
			hs, err := sumtlog.StoredHashes(l.n, fmt.Appendf(nil, "leaf %d", l.n), l)
			if err != nil {
				b.Fatal(err)
			}
			l.hashes, l.n = append(l.hashes, hs...), l.n+1
		}
		root, _ := sumtlog.TreeHash(l.n, l)
		cp, err := s.Sign(uint64(l.n), root)
		if err != nil {
			b.Fatal(err)
		}
		r := tlog.AddCheckpointRequest{OldSize: uint64(old), Checkpoint: []byte(cp)}
		if old > 0 {
			p, err := sumtlog.ProveTree(l.n, old, l)
			if err != nil {
				b.Fatal(err)
			}
			for _, h := range p {
				r.Proof = append(r.Proof, h)
			}
		}
		out = append(out, r.Marshal())
		old = l.n
	}
	return out
}

// witnessHTTP serves origins' request sequences (one goroutine per
// origin, keep-alive loopback HTTP) to a fresh collector store (fsync
// on: each cosignature is recorded and synced before its answer) and
// returns the time taken.
func witnessHTTP(b *testing.B, origins, k int) (time.Duration, int) {
	var logs []collector.WitnessLog
	var reqs [][][]byte
	for i := range origins {
		origin := fmt.Sprintf("example.com/bench%d", i)
		skey, _, err := tlog.GenerateKey(origin)
		if err != nil {
			b.Fatal(err)
		}
		s, _ := tlog.NewSigner(skey)
		logs = append(logs, collector.WitnessLog{Origin: origin, Key: s.Verifier().String()})
		reqs = append(reqs, witnessRequests(b, s, k, 1000))
	}
	col, err := collector.New(collector.Config{URL: "nats://127.0.0.1:1", Store: b.TempDir(), WitnessLogs: logs, Logf: b.Logf})
	if err != nil {
		b.Fatal(err)
	}
	defer col.Close()
	srv := httptest.NewServer(col.WitnessHandler(witnesshttp.Options{Rate: 1e9, Burst: 1 << 30, ClientRate: 1e9, ClientBurst: 1 << 30}))
	defer srv.Close()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range origins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, body := range reqs[i] {
				resp, err := http.Post(srv.URL+tlog.AddCheckpointPath, "text/plain", bytes.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Errorf("add-checkpoint: %d", resp.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start), origins * k
}

// BenchmarkWitness: add-checkpoint requests per second the collector
// serves over loopback HTTP (parse, the log's signature, a consistency
// proof of a tree grown by 1,000 leaves, the cosignature, a fleet.witnessed
// record synced before the answer), one origin and four in parallel,
// beside the same collector's NATS cosigning path in the same run
// (BenchmarkIngest's source: a signed checkpoint every 1,000 entries,
// shipped, verified against the mirror's tree and cosigned: checkpoints
// cosigned per second, the entries' ingest included, since that path
// cosigns only what it mirrored).
func BenchmarkWitness(b *testing.B) {
	src := newBenchSource(b, b.TempDir(), *ingestEntries)
	_, js, url := benchServer(b)
	var nats, http1, http4 time.Duration
	var n1, n4 int
	for i := 0; b.Loop(); i++ {
		nats += collectorIngest(b, url, js, fmt.Sprintf("wit%d", i), src)
		d, n := witnessHTTP(b, 1, 200)
		http1, n1 = http1+d, n1+n
		d, n = witnessHTTP(b, 4, 100)
		http4, n4 = http4+d, n4+n
	}
	natsRate := float64(src.n/1000*b.N) / nats.Seconds()
	r1 := float64(n1) / http1.Seconds()
	r4 := float64(n4) / http4.Seconds()
	b.ReportMetric(natsRate, "nats-cosigns/s")
	b.ReportMetric(r1, "http-1origin-req/s")
	b.ReportMetric(r4, "http-4origins-req/s")
	b.ReportMetric(r1/natsRate, "http1/nats")
}
