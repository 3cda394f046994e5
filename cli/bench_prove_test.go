package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/engine/checkpoint"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// bigSignedLedger makes a signed ledger of about n entries in a
// temporary directory removed when the benchmark ends: genesis, the key
// (entry 1), notes, and a signed checkpoint every 1000 entries, as the
// engine leaves one.
func bigSignedLedger(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	path := filepath.Join(dir, "ledger.db")
	ctx := context.Background()
	k := checkpoint.NewKeeper(dir)
	// The engine opens its ledger with projection.All(); of them, the
	// keys projection is the one prove reads.
	l, err := ledger.Create(path, ledger.Options{NoSync: true, SignCheckpoint: k.Sign, Projections: []ledger.Projection{event.KeysProjection{}}})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	if err := k.Setup(ctx, l); err != nil {
		b.Fatal(err)
	}
	recs := make([]ledger.Record, 0, 999)
	for i := 2; i < n; i += 1000 {
		recs = recs[:0]
		for j := 0; j < 999; j++ {
			recs = append(recs, event.MustRecord("s1", &event.Note{Author: "bench", Text: fmt.Sprintf("note %d, some text of the usual length for an entry", i+j)}))
		}
		if _, err := l.Append(ctx, ledger.Async, recs...); err != nil {
			b.Fatal(err)
		}
		if _, err := l.Checkpoint(ctx, ledger.Async); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Sync(ctx); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkLedgerProve: `opx ledger prove SEQ --json` on a 1M-entry
// ledger (open the file, find and check the latest signed checkpoint,
// build and check the inclusion proof, print it), beside the baseline
// `opx ledger show SEQ --json` (open the file, read the entry, print it)
// in the same run.
//
//	go test ./cli -run '^$' -bench BenchmarkLedgerProve -benchtime 200x
func BenchmarkLedgerProve(b *testing.B) {
	path := bigSignedLedger(b, 1_000_000)
	seq := strconv.Itoa(123_457)
	var base, prove float64
	b.Run("show", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if r := runB(b, "ledger", "show", seq, "--json", "--ledger", path); r.code != 0 {
				b.Fatal(r.stderr)
			}
		}
		base = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(base/1e6, "ms/op")
	})
	b.Run("prove", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if r := runB(b, "ledger", "prove", seq, "--json", "--ledger", path); r.code != 0 {
				b.Fatal(r.stderr)
			}
		}
		prove = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(prove/1e6, "ms/op")
		if base > 0 {
			b.ReportMetric(prove/base, "x_show")
		}
	})
}

// runB is run for benchmarks.
func runB(b *testing.B, args ...string) result {
	b.Helper()
	app := cli.NewApp()
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errOut
	err := app.Run(append([]string{"opx"}, args...))
	return result{stdout: out.String(), stderr: errOut.String(), code: cli.ExitCode(err), err: err}
}

// BenchmarkProveOpen: the work of prove on an open 1M-entry ledger (find
// and check the latest signed checkpoint: its entry, the key recorded
// before it, the note's signature, the stored tree's root; build the
// inclusion proof from the tiles; check it as a verifier would; encode
// it) beside the baseline, a plain Get of the same entry, in the same
// run.
//
//	go test ./cli -run '^$' -bench BenchmarkProveOpen -benchtime 2000x
func BenchmarkProveOpen(b *testing.B) {
	path := bigSignedLedger(b, 1_000_000)
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	const seq = 123_457
	var base float64
	b.Run("get", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := l.Get(seq); err != nil {
				b.Fatal(err)
			}
		}
		base = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(base/1e6, "ms/op")
	})
	b.Run("prove", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			p, err := cli.ProveLatestForTest(l, seq)
			if err == nil {
				_, err = p.Marshal()
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(ns/1e6, "ms/op")
		if base > 0 {
			b.ReportMetric(ns/base, "x_get")
		}
	})
}
