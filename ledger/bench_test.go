package ledger_test

// Benchmarks of the ledger's hot paths, each with its baseline run beside it
// in the same process (these machines are shared and absolute times drift),
// reporting both rates and their ratio. One b.N iteration is one round of a
// fixed size, so -benchtime=1x runs every benchmark once; see BENCHMARKS.md
// at the repository root for the command lines and the figures.
//
// Sizes are flags of the test binary (after -args):
//
//	-ledgerbench.sync1=2000        entries per side, one Sync writer
//	-ledgerbench.syncpar=100000    opx entries, concurrent Sync writers
//	-ledgerbench.syncpar-base=2000 baseline entries, concurrent writers
//	-ledgerbench.writers=256       concurrent writers
//	-ledgerbench.async=300000      entries, Async append
//	-ledgerbench.large=1000000     entries in the Verify/Export ledger
//	-ledgerbench.cache=DIR         where that ledger is cached (os.TempDir())
//	-ledgerbench.baseline=false    skip baselines (for -cpuprofile)
//
// The large ledger (and the JSONL files beside it) is built once and kept
// in DIR/opx-ledger-bench-v3-<n>/ across runs (v3: with the Merkle tree) (about 1.5 GB for 1M
// entries); delete that directory to rebuild it.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	bolt "go.etcd.io/bbolt"

	"github.com/opx-dev/opx/ledger"
)

var (
	benchSync1N       = flag.Int("ledgerbench.sync1", 2000, "entries per side in BenchmarkSyncAppendOneWriter")
	benchSyncParN     = flag.Int("ledgerbench.syncpar", 100000, "opx entries in BenchmarkSyncAppendConcurrent")
	benchSyncParBaseN = flag.Int("ledgerbench.syncpar-base", 2000, "baseline entries in BenchmarkSyncAppendConcurrent")
	benchWriters      = flag.Int("ledgerbench.writers", 256, "concurrent writers in BenchmarkSyncAppendConcurrent")
	benchAsyncN       = flag.Int("ledgerbench.async", 300000, "entries per side in BenchmarkAsyncAppend")
	benchLargeN       = flag.Int("ledgerbench.large", 1000000, "appended entries in the Verify/Export ledger")
	benchCacheDir     = flag.String("ledgerbench.cache", "", "directory for the cached large ledger (default os.TempDir())")
	benchBaseline     = flag.Bool("ledgerbench.baseline", true, "run the baselines (false to profile opx alone)")
)

// benchPayloadSize is the size of every record's data object, in bytes.
const benchPayloadSize = 300

var benchWords = []string{"alpha", "build", "cache", "delta", "engine", "fixture",
	"ledger", "parser", "runner", "shield", "snapshot", "verify"}

var (
	benchPayloadsOnce sync.Once
	benchPayloadRing  [][]byte
)

// benchPayloads returns 4096 distinct canonical JSON objects of exactly
// benchPayloadSize bytes, shaped like a tool proposal, so that hashing,
// parsing and compression see realistic text. They are built before any
// timing starts.
func benchPayloads() [][]byte {
	benchPayloadsOnce.Do(func() {
		for i := 0; i < 4096; i++ {
			r := uint64(i) * 0x9E3779B97F4A7C15
			w := func(k uint) string { return benchWords[(r>>(8*k))%uint64(len(benchWords))] }
			p := fmt.Appendf(nil, `{"args":{"argv":["go","test","./%s/..."],"cwd":"/home/dev/src/%s","timeout_ms":%d},"call_id":"call_%08d","risk":"low","tool":"shell.exec","why":"`,
				w(1), w(2), 1000*(1+i%120), i)
			why := "run the " + w(3) + " tests after editing " + w(4) + ".go to check that the change builds and that the " + w(5) + " cases still pass "
			for len(p) < benchPayloadSize-2 {
				p = append(p, why[len(p)%len(why)])
			}
			p = append(p, `"}`...)
			if len(p) != benchPayloadSize {
				panic(fmt.Sprintf("payload %d is %d bytes", i, len(p)))
			}
			benchPayloadRing = append(benchPayloadRing, p)
		}
	})
	return benchPayloadRing
}

func benchRecord(i int) ledger.Record {
	p := benchPayloads()
	return ledger.Record{Session: "sess-0001", Type: "tool.proposed", Data: json.RawMessage(p[i%len(p)])}
}

var (
	benchEntrySizeOnce sync.Once
	benchEntrySizeN    int
)

// benchEntrySize is the stored size of an opx entry carrying one bench
// payload (payload plus seq, prev, ts, session and type), so the raw bbolt
// baselines write values of the same size as the ledger does.
func benchEntrySize(b *testing.B) int {
	benchEntrySizeOnce.Do(func() {
		l, err := ledger.Create(filepath.Join(b.TempDir(), "size.db"), ledger.Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		if _, err := l.Append(context.Background(), ledger.Sync, benchRecord(0)); err != nil {
			b.Fatal(err)
		}
		e, err := l.Get(1)
		if err != nil {
			b.Fatal(err)
		}
		benchEntrySizeN = len(e.Raw)
	})
	return benchEntrySizeN
}

func benchRate(n int, d time.Duration) float64 { return float64(n) / d.Seconds() }

// benchBolt opens a raw bbolt baseline with default options and an
// "entries" bucket.
func benchBolt(b *testing.B, path string) *bolt.DB {
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucket([]byte("entries"))
		return err
	}); err != nil {
		b.Fatal(err)
	}
	return db
}

// benchBoltPut is the baseline event: one Put and one Commit (two
// fdatasyncs in bbolt: data pages, then the meta page). The key is the
// next seq, taken inside the transaction so keys arrive in order, as the
// ledger's do; FillPercent is 1.0, as in the ledger's writer.
func benchBoltPut(db *bolt.DB, seq *uint64, val []byte) error {
	return db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket([]byte("entries"))
		bk.FillPercent = 1.0
		*seq++
		var k [8]byte
		binary.BigEndian.PutUint64(k[:], *seq)
		return bk.Put(k[:], val)
	})
}

// BenchmarkFsyncFloor measures the disk's durability floor: one 470-byte
// write and one fsync, appending to a file and overwriting in place. A bbolt
// commit costs at least two of these.
func BenchmarkFsyncFloor(b *testing.B) {
	for _, mode := range []string{"append", "overwrite"} {
		b.Run(mode, func(b *testing.B) {
			const n = 1000
			f, err := os.Create(filepath.Join(b.TempDir(), "fsync"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			buf := bytes.Repeat([]byte("x"), 470)
			var d time.Duration
			for r := 0; r < b.N; r++ {
				start := time.Now()
				for i := 0; i < n; i++ {
					if mode == "append" {
						_, err = f.Write(buf)
					} else {
						_, err = f.WriteAt(buf, 0)
					}
					if err == nil {
						err = f.Sync()
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				d += time.Since(start)
			}
			b.ReportMetric(float64(d.Nanoseconds())/float64(n*b.N), "ns/op")
			b.ReportMetric(benchRate(n*b.N, d), "fsyncs/s")
		})
	}
}

// BenchmarkSyncAppendOneWriter: one writer, ledger.Sync, one record per
// Append, against raw bbolt with one Put+Commit per event. The two are
// interleaved event by event (alternating which goes first) so that both
// see the same disk. Target: slowdown (bbolt rate / opx rate) <= 1.2.
func BenchmarkSyncAppendOneWriter(b *testing.B) {
	ctx := context.Background()
	n := *benchSync1N
	val := make([]byte, benchEntrySize(b))
	copy(val, benchPayloads()[0])
	var opxT, baseT time.Duration
	for r := 0; r < b.N; r++ {
		dir := b.TempDir()
		l, err := ledger.Create(filepath.Join(dir, "ledger.db"), ledger.Options{})
		if err != nil {
			b.Fatal(err)
		}
		var db *bolt.DB
		if *benchBaseline {
			db = benchBolt(b, filepath.Join(dir, "bbolt.db"))
		}
		var seq uint64
		for i := 0; i < n; i++ {
			rec := benchRecord(i)
			opx := func() {
				start := time.Now()
				if _, err := l.Append(ctx, ledger.Sync, rec); err != nil {
					b.Fatal(err)
				}
				opxT += time.Since(start)
			}
			base := func() {
				if db == nil {
					return
				}
				start := time.Now()
				if err := benchBoltPut(db, &seq, val); err != nil {
					b.Fatal(err)
				}
				baseT += time.Since(start)
			}
			if i%2 == 0 {
				opx()
				base()
			} else {
				base()
				opx()
			}
		}
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
		if db != nil {
			db.Close()
		}
		os.RemoveAll(dir) // keep one round's files at a time
	}
	total := n * b.N
	b.ReportMetric(float64(opxT.Nanoseconds())/float64(total), "ns/op")
	b.ReportMetric(benchRate(total, opxT), "opx-entries/s")
	if *benchBaseline {
		b.ReportMetric(benchRate(total, baseT), "bbolt-entries/s")
		b.ReportMetric(opxT.Seconds()/baseT.Seconds(), "slowdown")
	}
}

// benchParallel runs fn(i) for i in [0,total) on the given number of
// goroutines and returns the wall time.
func benchParallel(b *testing.B, writers, total int, fn func(i int) error) time.Duration {
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	start := time.Now()
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= total {
					return
				}
				if err := fn(i); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	d := time.Since(start)
	if err, _ := firstErr.Load().(error); err != nil {
		b.Fatal(err)
	}
	return d
}

// BenchmarkSyncAppendConcurrent: 256 goroutines each appending one record
// per call with ledger.Sync (so group commit shares fsyncs), against raw
// bbolt with one Put+Commit per event from as many goroutines (bbolt
// serialises them). Targets: >= 50,000 durable entries/s and speedup >= 20.
func BenchmarkSyncAppendConcurrent(b *testing.B) {
	ctx := context.Background()
	n, nBase, writers := *benchSyncParN, *benchSyncParBaseN, *benchWriters
	val := make([]byte, benchEntrySize(b))
	copy(val, benchPayloads()[0])
	var opxT, baseT time.Duration
	for r := 0; r < b.N; r++ {
		dir := b.TempDir()
		opx := func() {
			l, err := ledger.Create(filepath.Join(dir, fmt.Sprintf("ledger-%d.db", r)), ledger.Options{})
			if err != nil {
				b.Fatal(err)
			}
			opxT += benchParallel(b, writers, n, func(i int) error {
				_, err := l.Append(ctx, ledger.Sync, benchRecord(i))
				return err
			})
			if err := l.Close(); err != nil {
				b.Fatal(err)
			}
		}
		base := func() {
			if !*benchBaseline {
				return
			}
			db := benchBolt(b, filepath.Join(dir, fmt.Sprintf("bbolt-%d.db", r)))
			var seq uint64
			baseT += benchParallel(b, writers, nBase, func(int) error { return benchBoltPut(db, &seq, val) })
			db.Close()
		}
		if r%2 == 0 {
			opx()
			base()
		} else {
			base()
			opx()
		}
		os.RemoveAll(dir)
	}
	b.ReportMetric(float64(opxT.Nanoseconds())/float64(n*b.N), "ns/op")
	b.ReportMetric(benchRate(n*b.N, opxT), "opx-entries/s")
	if *benchBaseline {
		b.ReportMetric(benchRate(nBase*b.N, baseT), "bbolt-entries/s")
		b.ReportMetric(benchRate(n*b.N, opxT)/benchRate(nBase*b.N, baseT), "speedup")
	}
}

// benchNaiveLine is one line of the baselines' naive JSONL chain: the same
// six members as an opx entry, encoded by encoding/json, chained by the
// SHA-256 of the previous line.
type benchNaiveLine struct {
	Data    json.RawMessage `json:"data"`
	Prev    string          `json:"prev"`
	Seq     uint64          `json:"seq"`
	Session string          `json:"session"`
	TS      string          `json:"ts"`
	Type    string          `json:"type"`
}

// benchNaiveWriter appends a naive SHA-256-chained JSONL stream: one
// json.Marshal, one SHA-256 and one buffered write per entry, no fsync
// until the end.
type benchNaiveWriter struct {
	f    *os.File
	bw   *bufio.Writer
	seq  uint64
	prev string
}

func newBenchNaiveWriter(path string) (*benchNaiveWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &benchNaiveWriter{f: f, bw: bufio.NewWriterSize(f, 64<<10), prev: strings.Repeat("0", 64)}, nil
}

func (w *benchNaiveWriter) append(rec ledger.Record) error {
	line, err := json.Marshal(benchNaiveLine{Data: rec.Data.(json.RawMessage), Prev: w.prev, Seq: w.seq,
		Session: rec.Session, TS: time.Now().UTC().Format(time.RFC3339Nano), Type: rec.Type})
	if err != nil {
		return err
	}
	w.seq++
	h := sha256.Sum256(line)
	w.prev = hex.EncodeToString(h[:])
	w.bw.Write(line)
	return w.bw.WriteByte('\n')
}

func (w *benchNaiveWriter) close(sync bool) error {
	err := w.bw.Flush()
	if err == nil && sync {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// BenchmarkAsyncAppend: one writer, ledger.Async, one record per Append,
// then one Sync, all timed, against a naive JSONL append (json.Marshal,
// SHA-256 chain, 64 KiB bufio, one fsync at the end). Target: >= 150,000
// entries/s.
func BenchmarkAsyncAppend(b *testing.B) {
	ctx := context.Background()
	n := *benchAsyncN
	benchPayloads()
	var opxT, baseT time.Duration
	for r := 0; r < b.N; r++ {
		dir := b.TempDir()
		opx := func() {
			l, err := ledger.Create(filepath.Join(dir, fmt.Sprintf("ledger-%d.db", r)), ledger.Options{})
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			for i := 0; i < n; i++ {
				if _, err := l.Append(ctx, ledger.Async, benchRecord(i)); err != nil {
					b.Fatal(err)
				}
			}
			if err := l.Sync(ctx); err != nil {
				b.Fatal(err)
			}
			opxT += time.Since(start)
			if err := l.Close(); err != nil {
				b.Fatal(err)
			}
		}
		base := func() {
			if !*benchBaseline {
				return
			}
			start := time.Now()
			w, err := newBenchNaiveWriter(filepath.Join(dir, fmt.Sprintf("naive-%d.jsonl", r)))
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < n; i++ {
				if err := w.append(benchRecord(i)); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.close(true); err != nil {
				b.Fatal(err)
			}
			baseT += time.Since(start)
		}
		if r%2 == 0 {
			opx()
			base()
		} else {
			base()
			opx()
		}
		os.RemoveAll(dir)
	}
	total := n * b.N
	b.ReportMetric(float64(opxT.Nanoseconds())/float64(total), "ns/op")
	b.ReportMetric(benchRate(total, opxT), "opx-entries/s")
	if *benchBaseline {
		b.ReportMetric(benchRate(total, baseT), "jsonl-entries/s")
		b.ReportMetric(baseT.Seconds()/opxT.Seconds(), "speedup")
	}
}

// benchLargeSet is the cached large ledger and its JSONL companions.
type benchLargeSet struct {
	entries    int    // entries in each file, genesis included
	db         string // the ledger, made through the ledger API
	jsonl      string // its JSONL export (the bytes Export writes)
	jsonlBytes int64
	naive      string // the same records as a naive SHA-256 JSONL chain
}

var (
	benchLargeMu   sync.Mutex
	benchLargeSets = map[int]*benchLargeSet{}
)

// benchLarge returns the large ledger, building it on first use: n records
// appended with Async in batches of 1024 under NoSync (only the files'
// content matters here), then exported to JSONL, plus the naive chain of
// the same records. A directory with a "complete" marker is reused across
// runs. The files are read once so that every round starts from the page
// cache.
func benchLarge(b *testing.B) *benchLargeSet {
	n := *benchLargeN
	benchLargeMu.Lock()
	defer benchLargeMu.Unlock()
	if s := benchLargeSets[n]; s != nil {
		return s
	}
	root := *benchCacheDir
	if root == "" {
		root = os.TempDir()
	}
	dir := filepath.Join(root, fmt.Sprintf("opx-ledger-bench-v3-%d", n))
	if _, err := os.Stat(filepath.Join(dir, "complete")); err != nil {
		start := time.Now()
		tmp, err := os.MkdirTemp(root, "opx-ledger-bench-build-")
		if err != nil {
			b.Fatal(err)
		}
		if err := benchBuildLarge(tmp, n); err != nil {
			os.RemoveAll(tmp)
			b.Fatal(err)
		}
		os.RemoveAll(dir)
		if err := os.Rename(tmp, dir); err != nil {
			os.RemoveAll(tmp)
			b.Fatal(err)
		}
		b.Logf("built %d-entry ledger and JSONL files in %s (%v)", n, dir, time.Since(start).Round(time.Millisecond))
	}
	s := &benchLargeSet{entries: n + 1, db: filepath.Join(dir, "ledger.db"),
		jsonl: filepath.Join(dir, "ledger.jsonl"), naive: filepath.Join(dir, "naive.jsonl")}
	for _, p := range []string{s.db, s.jsonl, s.naive} {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		size, err := io.Copy(io.Discard, f)
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		if p == s.jsonl {
			s.jsonlBytes = size
		}
	}
	benchLargeSets[n] = s
	return s
}

func benchBuildLarge(dir string, n int) error {
	ctx := context.Background()
	l, err := ledger.Create(filepath.Join(dir, "ledger.db"), ledger.Options{NoSync: true})
	if err != nil {
		return err
	}
	recs := make([]ledger.Record, 0, 1024)
	for i := 0; i < n; i++ {
		recs = append(recs, benchRecord(i))
		if len(recs) == cap(recs) || i == n-1 {
			if _, err := l.Append(ctx, ledger.Async, recs...); err != nil {
				l.Close()
				return err
			}
			recs = recs[:0]
		}
	}
	if err := l.Close(); err != nil {
		return err
	}

	l, err = ledger.OpenReadOnly(filepath.Join(dir, "ledger.db"))
	if err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "ledger.jsonl"))
	if err != nil {
		l.Close()
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	_, err = l.Export(bw, nil, ledger.ExportOptions{})
	l.Close()
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}

	// The naive chain holds the same number of lines: line 0 stands for
	// the genesis entry and carries a payload like the others.
	w, err := newBenchNaiveWriter(filepath.Join(dir, "naive.jsonl"))
	if err != nil {
		return err
	}
	for i := 0; i <= n; i++ {
		if err := w.append(benchRecord(i)); err != nil {
			w.close(false)
			return err
		}
	}
	if err := w.close(false); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "complete"), []byte(strconv.Itoa(n)+"\n"), 0o600)
}

// benchNaiveVerify is the deliberately naive verifier: for each line,
// unmarshal into map[string]any, check its prev against the hash of the
// previous line, json.Marshal the map (sorted keys) and SHA-256 it.
func benchNaiveVerify(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	prev := strings.Repeat("0", 64)
	n := 0
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return n, fmt.Errorf("line %d: %w", n, err)
		}
		if m["prev"] != prev {
			return n, fmt.Errorf("line %d: prev %v, want %s", n, m["prev"], prev)
		}
		out, err := json.Marshal(m)
		if err != nil {
			return n, err
		}
		h := sha256.Sum256(out)
		prev = hex.EncodeToString(h[:])
		n++
	}
	return n, sc.Err()
}

// BenchmarkVerify: Verify of the large ledger, opened read-only, in its
// default mode and with Strict, each against benchNaiveVerify over the same
// records as a SHA-256 JSONL chain (run beside it, alternating which goes
// first). Target: >= 1,000,000 entries/s in the default mode.
func BenchmarkVerify(b *testing.B) {
	s := benchLarge(b)
	l, err := ledger.OpenReadOnly(s.db)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	for _, strict := range []bool{false, true} {
		name := "mode=default"
		if strict {
			name = "mode=strict"
		}
		b.Run(name, func(b *testing.B) {
			opx := func() time.Duration {
				start := time.Now()
				rep, err := l.Verify(ledger.VerifyOptions{Strict: strict})
				d := time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				if !rep.OK || rep.Entries != uint64(s.entries) {
					b.Fatalf("verify: ok %v, %d entries (want %d), failures %v; remove %s if it is stale",
						rep.OK, rep.Entries, s.entries, rep.Failures, filepath.Dir(s.db))
				}
				return d
			}
			naive := func() time.Duration {
				if !*benchBaseline {
					return 0
				}
				start := time.Now()
				got, err := benchNaiveVerify(s.naive)
				d := time.Since(start)
				if err != nil || got != s.entries {
					b.Fatalf("naive verify: %d lines, %v", got, err)
				}
				return d
			}
			opxT, baseT := alternate(b.N, opx, naive)
			total := s.entries * b.N
			b.ReportMetric(float64(opxT.Nanoseconds())/float64(total), "ns/op")
			b.ReportMetric(benchRate(total, opxT), "opx-entries/s")
			if *benchBaseline {
				b.ReportMetric(benchRate(total, baseT), "naive-entries/s")
				b.ReportMetric(baseT.Seconds()/opxT.Seconds(), "speedup")
			}
		})
	}
}

// BenchmarkExportZstd: ExportFile of the large ledger to .jsonl.zst (chain
// re-check, zstd, fsync), against klauspost/compress zstd with its default
// settings (SpeedDefault, GOMAXPROCS goroutines) streaming the same JSONL
// file to a file and fsyncing it; also, when installed, the zstd CLI at its
// default level (3, one thread, no fsync). MB/s counts JSONL bytes.
// Target: >= 300 MB/s.
func BenchmarkExportZstd(b *testing.B) {
	s := benchLarge(b)
	l, err := ledger.OpenReadOnly(s.db)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	cli, _ := exec.LookPath("zstd")
	var opxT, baseT, cliT time.Duration
	var zstBytes int64
	b.SetBytes(s.jsonlBytes)
	b.ResetTimer()
	for r := 0; r < b.N; r++ {
		dir := b.TempDir()
		opx := func() {
			out := filepath.Join(dir, "opx.jsonl.zst")
			start := time.Now()
			m, err := l.ExportFile(out, ledger.ExportOptions{})
			opxT += time.Since(start)
			if err != nil {
				b.Fatal(err)
			}
			if m.Entries != uint64(s.entries) {
				b.Fatalf("exported %d entries, want %d", m.Entries, s.entries)
			}
			st, err := os.Stat(out)
			if err != nil {
				b.Fatal(err)
			}
			zstBytes += st.Size()
			os.Remove(out)
		}
		base := func() {
			if !*benchBaseline {
				return
			}
			start := time.Now()
			if err := benchZstdStream(s.jsonl, filepath.Join(dir, "base.jsonl.zst")); err != nil {
				b.Fatal(err)
			}
			baseT += time.Since(start)
			os.Remove(filepath.Join(dir, "base.jsonl.zst"))
			if cli == "" {
				return
			}
			start = time.Now()
			if out, err := exec.Command(cli, "-q", "-f", s.jsonl, "-o", filepath.Join(dir, "cli.jsonl.zst")).CombinedOutput(); err != nil {
				b.Fatalf("zstd: %v: %s", err, out)
			}
			cliT += time.Since(start)
			os.Remove(filepath.Join(dir, "cli.jsonl.zst"))
		}
		if r%2 == 0 {
			opx()
			base()
		} else {
			base()
			opx()
		}
	}
	mb := float64(s.jsonlBytes) * float64(b.N) / 1e6
	b.ReportMetric(float64(opxT.Nanoseconds())/float64(s.entries*b.N), "ns/op")
	b.ReportMetric(mb/opxT.Seconds(), "MB/s")
	b.ReportMetric(benchRate(s.entries*b.N, opxT), "opx-entries/s")
	b.ReportMetric(float64(s.jsonlBytes)*float64(b.N)/float64(zstBytes), "compression")
	if *benchBaseline {
		b.ReportMetric(mb/baseT.Seconds(), "kzstd-MB/s")
		b.ReportMetric(baseT.Seconds()/opxT.Seconds(), "speedup")
		if cli != "" {
			b.ReportMetric(mb/cliT.Seconds(), "zstdcli-MB/s")
		}
	}
}

// benchZstdStream compresses src into dst with klauspost/compress zstd at
// its defaults, then fsyncs dst.
func benchZstdStream(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer out.Close()
	zw, err := zstd.NewWriter(out)
	if err != nil {
		return err
	}
	if _, err := io.Copy(zw, in); err != nil {
		zw.Close()
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := out.Sync(); err != nil {
		return err
	}
	return out.Close()
}

// alternate runs ours and base n times each, alternating which goes first
// (so neither always runs on a warmer cache), and returns their totals.
func alternate(n int, ours, base func() time.Duration) (oursT, baseT time.Duration) {
	for r := 0; r < n; r++ {
		if r%2 == 0 {
			oursT += ours()
			baseT += base()
		} else {
			baseT += base()
			oursT += ours()
		}
	}
	return oursT, baseT
}
