package ledger_test

// Benchmarks of the Merkle tree: what keeping it costs on the append path
// (against the same ledger without it), verify of the large ledger with
// the tree against the hash floor, and proofs on the large ledger.
//
//	go test ./ledger -run '^$' -bench 'Tree|Proof' -benchtime=1x

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/zeebo/blake3"
	bolt "go.etcd.io/bbolt"

	"github.com/opx-dev/opx/ledger"
)

// BenchmarkTreeAppendAsync: one writer, Async, one record per Append, then
// one Sync, all timed, with the tree and without it (the baseline: the
// same ledger code with the tree switched off), alternating which goes
// first. Target: overhead (tree time / baseline time) <= 1.2.
func BenchmarkTreeAppendAsync(b *testing.B) {
	ctx := context.Background()
	n := *benchAsyncN
	benchPayloads()
	run := func(dir string, opts ledger.Options) time.Duration {
		l, err := ledger.Create(filepath.Join(dir, "ledger.db"), opts)
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
		d := time.Since(start)
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
		os.RemoveAll(dir)
		return d
	}
	var treeT, baseT time.Duration
	for r := 0; r < b.N; r++ {
		tree := func() { treeT += run(b.TempDir(), ledger.Options{}) }
		base := func() { baseT += run(b.TempDir(), ledger.WithoutTree(ledger.Options{})) }
		if r%2 == 0 {
			tree()
			base()
		} else {
			base()
			tree()
		}
	}
	total := n * b.N
	b.ReportMetric(float64(treeT.Nanoseconds())/float64(total), "ns/op")
	b.ReportMetric(benchRate(total, treeT), "tree-entries/s")
	b.ReportMetric(benchRate(total, baseT), "notree-entries/s")
	b.ReportMetric(treeT.Seconds()/baseT.Seconds(), "overhead")
}

// BenchmarkTreeAppendSync: one writer, Sync (fsync per entry), one record
// per Append, on a ledger with the tree and one without, interleaved event
// by event (alternating which goes first) so both see the same disk.
// Target: overhead <= 1.05.
func BenchmarkTreeAppendSync(b *testing.B) {
	ctx := context.Background()
	n := *benchSync1N
	var treeT, baseT time.Duration
	for r := 0; r < b.N; r++ {
		dir := b.TempDir()
		tl, err := ledger.Create(filepath.Join(dir, "tree.db"), ledger.Options{})
		if err != nil {
			b.Fatal(err)
		}
		bl, err := ledger.Create(filepath.Join(dir, "notree.db"), ledger.WithoutTree(ledger.Options{}))
		if err != nil {
			b.Fatal(err)
		}
		one := func(l *ledger.Ledger, acc *time.Duration, i int) {
			start := time.Now()
			if _, err := l.Append(ctx, ledger.Sync, benchRecord(i)); err != nil {
				b.Fatal(err)
			}
			*acc += time.Since(start)
		}
		for i := 0; i < n; i++ {
			if i%2 == 0 {
				one(tl, &treeT, i)
				one(bl, &baseT, i)
			} else {
				one(bl, &baseT, i)
				one(tl, &treeT, i)
			}
		}
		tl.Close()
		bl.Close()
		os.RemoveAll(dir)
	}
	total := n * b.N
	b.ReportMetric(float64(treeT.Nanoseconds())/float64(total), "ns/op")
	b.ReportMetric(benchRate(total, treeT), "tree-entries/s")
	b.ReportMetric(benchRate(total, baseT), "notree-entries/s")
	b.ReportMetric(treeT.Seconds()/baseT.Seconds(), "overhead")
}

// benchHashFloor is the floor under verify: BLAKE3-256 (the chain) and
// SHA-256 with the RFC 6962 leaf prefix (the tree) of every line of the
// large ledger's JSONL export, on all cores, read from the page cache in
// chunks, with no parsing and no ledger.
func benchHashFloor(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	workers := runtime.GOMAXPROCS(0)
	chunks := make(chan [][]byte, workers*2)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := sha256.New()
			for lines := range chunks {
				for _, ln := range lines {
					blake3.Sum256(ln)
					h.Reset()
					h.Write([]byte{0})
					h.Write(ln)
					var out [32]byte
					h.Sum(out[:0])
				}
			}
		}()
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	n := 0
	lines := make([][]byte, 0, 4096)
	for sc.Scan() {
		lines = append(lines, bytes.Clone(sc.Bytes()))
		n++
		if len(lines) == cap(lines) {
			chunks <- lines
			lines = make([][]byte, 0, 4096)
		}
	}
	chunks <- lines
	close(chunks)
	wg.Wait()
	return n, sc.Err()
}

// BenchmarkVerifyTree: Verify of the large ledger (default mode: chain,
// head, blobs, every tile and every recorded root), against the hash
// floor of the same entry bytes (benchHashFloor), alternating which goes
// first. Target: >= 1,000,000 entries/s; floor-ratio is verify time over
// floor time, of-floor its inverse (verify's rate as a part of the
// floor's: the figure, target >= 0.8), of-floor-cpu the same of
// the CPU time each spent (steadier on a shared machine).
func BenchmarkVerifyTree(b *testing.B) {
	s := benchLarge(b)
	l, err := ledger.OpenReadOnly(s.db)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	if _, err := l.TreeHead(); err != nil {
		b.Fatalf("the large ledger has no tree (%v): remove %s", err, filepath.Dir(s.db))
	}
	var opxCPU, floorCPU time.Duration
	opx := func() time.Duration {
		start, cpu := time.Now(), benchCPU()
		rep, err := l.Verify(ledger.VerifyOptions{})
		d := time.Since(start)
		opxCPU += benchCPU() - cpu
		if err != nil || !rep.OK || rep.Entries != uint64(s.entries) {
			b.Fatalf("verify: %v, %+v", err, rep)
		}
		return d
	}
	floor := func() time.Duration {
		start, cpu := time.Now(), benchCPU()
		got, err := benchHashFloor(s.jsonl)
		d := time.Since(start)
		floorCPU += benchCPU() - cpu
		if err != nil || got != s.entries {
			b.Fatalf("hash floor: %d lines, %v", got, err)
		}
		return d
	}
	opxT, floorT := alternate(b.N, opx, floor)
	total := s.entries * b.N
	b.ReportMetric(float64(opxT.Nanoseconds())/float64(total), "ns/op")
	b.ReportMetric(benchRate(total, opxT), "opx-entries/s")
	b.ReportMetric(benchRate(total, floorT), "floor-entries/s")
	b.ReportMetric(opxT.Seconds()/floorT.Seconds(), "floor-ratio")
	b.ReportMetric(floorT.Seconds()/opxT.Seconds(), "of-floor")
	b.ReportMetric(float64(opxCPU.Nanoseconds())/float64(total), "opx-cpu-ns/entry")
	b.ReportMetric(float64(floorCPU.Nanoseconds())/float64(total), "floor-cpu-ns/entry")
	b.ReportMetric(floorCPU.Seconds()/opxCPU.Seconds(), "of-floor-cpu")
}

// benchCPU is the CPU time (user and system) the process has used: on a
// shared machine the wall time of a run depends on the neighbours, the
// CPU each side spends much less.
func benchCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkProof: inclusion proofs of random entries in the whole large
// ledger, and consistency proofs from random earlier sizes, each read from
// the tiles and checked with package proof (checking not timed), against
// the baseline of one read transaction that reads one entry. Target: <= 5 ms
// a proof.
func BenchmarkProof(b *testing.B) {
	s := benchLarge(b)
	l, err := ledger.OpenReadOnly(s.db)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	th, err := l.TreeHead()
	if err != nil {
		b.Fatal(err)
	}
	const proofs = 1000
	rng := rand.New(rand.NewPCG(1, 2))
	b.Run("kind=inclusion", func(b *testing.B) {
		var opxT, baseT time.Duration
		for r := 0; r < b.N*proofs; r++ {
			i := rng.Uint64N(th.Size)
			start := time.Now()
			p, err := l.InclusionProof(i, th.Size)
			opxT += time.Since(start)
			if err != nil {
				b.Fatal(err)
			}
			start = time.Now()
			e, err := l.Get(i)
			baseT += time.Since(start)
			if err != nil {
				b.Fatal(err)
			}
			lh := ledger.LeafHash(e.Raw)
			if err := proof.VerifyInclusion(rfc6962.DefaultHasher, i, th.Size, lh[:], p, th.Root[:]); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(opxT.Nanoseconds())/float64(b.N*proofs), "ns/op")
		b.ReportMetric(opxT.Seconds()*1000/float64(b.N*proofs), "ms/proof")
		b.ReportMetric(opxT.Seconds()/baseT.Seconds(), "vs-get-entry")
	})
	b.Run("kind=consistency", func(b *testing.B) {
		var opxT time.Duration
		for r := 0; r < b.N*proofs; r++ {
			size1 := 1 + rng.Uint64N(th.Size)
			start := time.Now()
			p, err := l.ConsistencyProof(size1, th.Size)
			opxT += time.Since(start)
			if err != nil {
				b.Fatal(err)
			}
			old, err := l.TreeHeadAt(size1)
			if err != nil {
				b.Fatal(err)
			}
			if err := proof.VerifyConsistency(rfc6962.DefaultHasher, size1, th.Size, p, old.Root[:], th.Root[:]); err != nil {
				b.Fatal(fmt.Errorf("consistency %d to %d: %w", size1, th.Size, err))
			}
		}
		b.ReportMetric(float64(opxT.Nanoseconds())/float64(b.N*proofs), "ns/op")
		b.ReportMetric(opxT.Seconds()*1000/float64(b.N*proofs), "ms/proof")
	})
}

// BenchmarkTreeBuild: the first writable Open of a ledger older than the
// tree (the large ledger with its tree bucket and meta "tree" removed)
// builds the tree in batches, against the baseline of reading every
// entry and hashing it as a leaf (RangeRaw + LeafHash, one goroutine, as
// the build does). Reports the peak Go heap during the build, which must
// not grow with the ledger (the build holds one batch's tiles).
func BenchmarkTreeBuild(b *testing.B) {
	s := benchLarge(b)
	var buildT, baseT time.Duration
	var peak uint64
	for r := 0; r < b.N; r++ {
		path := filepath.Join(b.TempDir(), "older.db")
		if err := benchCopyFile(s.db, path); err != nil {
			b.Fatal(err)
		}
		db, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			b.Fatal(err)
		}
		err = db.Update(func(tx *bolt.Tx) error {
			if err := tx.DeleteBucket([]byte("tree")); err != nil {
				return err
			}
			return tx.Bucket([]byte("meta")).Delete([]byte("tree"))
		})
		db.Close()
		if err != nil {
			b.Fatal(err)
		}

		ro, err := ledger.OpenReadOnly(path)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		n := 0
		err = ro.RangeRaw(0, ^uint64(0), func(_ uint64, raw []byte) error {
			ledger.LeafHash(raw)
			n++
			return nil
		})
		baseT += time.Since(start)
		ro.Close()
		if err != nil || n != s.entries {
			b.Fatalf("read %d entries: %v", n, err)
		}

		runtime.GC()
		stop := make(chan struct{})
		peaked := make(chan uint64)
		go func() {
			var max uint64
			var ms runtime.MemStats
			t := time.NewTicker(5 * time.Millisecond)
			defer t.Stop()
			for {
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > max {
					max = ms.HeapInuse
				}
				select {
				case <-stop:
					peaked <- max
					return
				case <-t.C:
				}
			}
		}()
		start = time.Now()
		l, err := ledger.Open(path, ledger.Options{NoSync: true})
		buildT += time.Since(start)
		close(stop)
		peak = max(peak, <-peaked)
		if err != nil {
			b.Fatal(err)
		}
		th, err := l.TreeHead()
		l.Close()
		if err != nil || th.Size != uint64(s.entries)+1 { // and ledger.tree_built
			b.Fatalf("tree head %d, %v", th.Size, err)
		}
		os.Remove(path)
	}
	total := s.entries * b.N
	b.ReportMetric(float64(buildT.Nanoseconds())/float64(total), "ns/op")
	b.ReportMetric(benchRate(total, buildT), "build-entries/s")
	b.ReportMetric(benchRate(total, baseT), "read+leafhash-entries/s")
	b.ReportMetric(buildT.Seconds()/baseT.Seconds(), "ratio")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}

func benchCopyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
