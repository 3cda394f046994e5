package ledger_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

// hostileMaxRSS is the documented bound on the memory of verifying or
// importing any export (ledger doc.go, "Reading outside input"): the peak
// resident set of the whole test binary doing it, runtime included.
const hostileMaxRSS = 320 << 20

// hostileChild is the child mode that verifies (or imports) one export
// and prints what happened and its peak resident set as one JSON line.
const hostileChild = "hostile"

func init() { childModes[hostileChild] = runHostileChild }

// hostileOutcome is what the child reports.
type hostileOutcome struct {
	Class    string // ok, integrity or operational
	Err      string
	Listed   int
	Omitted  uint64
	Kinds    []ledger.Kind
	Details  string // the listed failures' details, joined
	PeakKiB  int64
	Leftover []string // files in the import target's directory afterwards
}

func runHostileChild() error {
	path, op := os.Getenv("OPX_HOSTILE_PATH"), os.Getenv("OPX_HOSTILE_OP")
	var rep *ledger.Report
	var err error
	out := hostileOutcome{}
	switch op {
	case "verify":
		rep, _, err = ledger.VerifyExport(path, ledger.VerifyOptions{Strict: true})
		if err == nil {
			err = rep.Err()
		}
	case "import":
		dir := os.Getenv("OPX_HOSTILE_DST")
		rep, err = ledger.Import(path, filepath.Join(dir, "ledger.db"), ledger.ImportOptions{})
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			out.Leftover = append(out.Leftover, e.Name())
		}
	default:
		return fmt.Errorf("OPX_HOSTILE_OP %q", op)
	}
	switch {
	case err == nil:
		out.Class = "ok"
	case errors.Is(err, ledger.ErrIntegrity):
		out.Class = "integrity"
	default:
		out.Class = "operational"
	}
	if err != nil {
		out.Err = err.Error()
	}
	if rep != nil {
		out.Listed, out.Omitted, out.Kinds = len(rep.Failures), rep.FailuresOmitted, rep.Kinds()
		var d []string
		for _, f := range rep.Failures {
			d = append(d, f.Detail)
			if len(d) == 20 {
				break
			}
		}
		out.Details = strings.Join(d, "\n")
	}
	out.PeakKiB = peakRSSKiB()
	return json.NewEncoder(os.Stdout).Encode(out)
}

// peakRSSKiB reads this process's peak resident set (VmHWM) from
// /proc/self/status: what the kernel saw, whatever the GC did, and not
// dependent on timing.
func peakRSSKiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return -1
}

// runHostile runs the child on path and returns its outcome.
func runHostile(t *testing.T, op, path string) hostileOutcome {
	t.Helper()
	dst := t.TempDir()
	cmd := childCommand(hostileChild, "OPX_HOSTILE_PATH="+path, "OPX_HOSTILE_OP="+op, "OPX_HOSTILE_DST="+dst)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child %s %s: %v\nstderr:\n%.3000s", op, path, err, stderr.String())
	}
	if s := stderr.String(); strings.Contains(s, "goroutine ") || strings.Contains(s, "panic") {
		t.Fatalf("child %s %s printed a trace:\n%.3000s", op, path, s)
	}
	var out hostileOutcome
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("child output %q: %v", stdout.String(), err)
	}
	return out
}

// hostileBase makes a good ledger of 40 notes (6 with blobs) and returns
// its entries as JSONL and its bundle directory (from a real export).
func hostileBase(t *testing.T) (lines [][]byte, bundle string) {
	t.Helper()
	dir := t.TempDir()
	base := ledgertest.New(t, filepath.Join(dir, "ledger.db"), 40)
	l, err := ledger.OpenReadOnly(base.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	out := filepath.Join(dir, "good.jsonl")
	if _, err := l.ExportFile(out, ledger.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")), ledger.BundlePath(out)
}

// writeStream writes r to path, through a zstd encoder when path ends in
// .zst, without holding it in memory.
func writeStream(t *testing.T, path string, r io.Reader) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var w io.Writer = f
	var zw *zstd.Encoder
	if strings.HasSuffix(path, ".zst") {
		zw, _ = zstd.NewWriter(f, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		w = zw
	}
	if _, err := io.Copy(w, r); err != nil {
		t.Fatal(err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// repeatReader yields n bytes repeating pattern.
type repeatReader struct {
	pattern []byte
	n, off  int64
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && r.n > 0 {
		c := copy(p[k:min(len(p), k+int(r.n))], r.pattern[r.off:])
		k += c
		r.n -= int64(c)
		r.off = (r.off + int64(c)) % int64(len(r.pattern))
	}
	return k, nil
}

func repeat(pattern string, n int64) io.Reader {
	return &repeatReader{pattern: []byte(pattern), n: n}
}

func copyBundle(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o700); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(from)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(to, e.Name()), b, 0o600)
	}
}

// zstBomb writes a blob of n zero bytes (some 100 KiB per GiB).
func zstBomb(t *testing.T, path string, n int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Zstd frames concatenated decompress to their contents concatenated,
	// so one compressed MiB of zeros, repeated, is the same stream of zeros
	// as one frame of n: compressing a GiB under -race took most of a
	// row's time. The reader learns the size only by decompressing, as
	// from one frame (a streamed frame says no content size).
	w := bufio.NewWriterSize(f, 1<<20)
	mib := zstZeros(t, 1<<20)
	for ; n >= 1<<20; n -= 1 << 20 {
		w.Write(mib)
	}
	if n > 0 {
		w.Write(zstZeros(t, n))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// zstZeros returns one zstd frame of n zeros, written as a stream (its
// header says no content size).
func zstZeros(t *testing.T, n int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if _, err := io.Copy(zw, io.LimitReader(zeros{}, n)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestHostileExport is the hostile-input table for exports (.jsonl and
// .jsonl.zst) and their bundles (directory, manifest, blob files): each
// input is verified and imported in a child process, which must end in
// the documented class (exit 1 operational, exit 4 integrity), say why,
// stay under hostileMaxRSS of peak memory, print no trace, and (import)
// leave nothing behind.
func TestHostileExport(t *testing.T) {
	if testing.Short() {
		t.Skip("hostile inputs expand to gigabytes; skipped with -short")
	}
	t.Parallel() // child processes on files of its own
	lines, bundle := hostileBase(t)
	join := func(ls ...[]byte) []byte { return append(bytes.Join(ls, []byte("\n")), '\n') }
	good := join(lines...)
	with := func(i int, l []byte) []byte {
		c := append([][]byte{}, lines...)
		c[i] = l
		return join(c...)
	}
	insert := func(i int, l []byte) []byte {
		c := append(append(append([][]byte{}, lines[:i]...), l), lines[i:]...)
		return join(c...)
	}
	random := make([]byte, 1<<20)
	rand.New(rand.NewSource(1)).Read(random)
	longLine := func() io.Reader {
		return io.MultiReader(bytes.NewReader(join(lines[:20]...)), strings.NewReader(`{"data":{"text":"`),
			repeat("a", 17<<20), strings.NewReader("\"},\"prev\":\"x\"}\n"), bytes.NewReader(join(lines[20:]...)))
	}
	nest := append(append([]byte(`{"data":{"a":`), bytes.Repeat([]byte("["), 1<<20)...), bytes.Repeat([]byte("]"), 1<<20)...)
	badUTF8 := bytes.Replace(lines[5], []byte("entry number"), []byte("entry \xff\xfe number"), 1)

	type row struct {
		name   string
		zst    bool // also as .jsonl.zst
		stream func() io.Reader
		// setup prepares anything else (bundle damage, special files);
		// it returns the export path to use, or "" for the default.
		setup  func(t *testing.T, path string) string
		class  string
		detail string // in the error or a listed failure
	}
	rows := []row{
		{name: "good", zst: true, stream: func() io.Reader { return bytes.NewReader(good) }, class: "ok"},
		{name: "empty", zst: true, stream: func() io.Reader { return strings.NewReader("") }, class: "integrity", detail: "no entries"},
		{name: "random bytes", zst: true, stream: func() io.Reader { return bytes.NewReader(random) }, class: "integrity"},
		{name: "cut at a third", zst: true, stream: func() io.Reader { return bytes.NewReader(good[:len(good)/3]) }, class: "integrity"},
		{name: "cut one byte short", zst: true, stream: func() io.Reader { return bytes.NewReader(good[:len(good)-1]) }, class: "integrity", detail: "no newline"},
		{name: "over-long line inserted", zst: true, stream: longLine, class: "integrity", detail: "longer than the maximum entry size"},
		// Under -race the next three rows are smaller (raceSmaller): see
		// there why they still take the same paths.
		{name: "5 MB of newlines", stream: func() io.Reader { return repeat("\n", raceSmaller(5<<20, 5<<16)) }, class: "integrity", detail: "empty line"},
		{name: "8 MiB of newlines", zst: true, stream: func() io.Reader { return repeat("\n", raceSmaller(8<<20, 8<<16)) }, class: "integrity", detail: "empty line"},
		{name: "20 lines of 15 MiB", zst: true, stream: func() io.Reader {
			return repeat(`{"data":{"text":"`+strings.Repeat("b", 15<<20)+`"}}`+"\n", raceSmaller(20, 5)*(15<<20+16))
		}, class: "integrity"},
		{name: "nesting bomb", zst: true, stream: func() io.Reader { return bytes.NewReader(insert(3, nest)) }, class: "integrity", detail: "nest"},
		{name: "invalid UTF-8", stream: func() io.Reader { return bytes.NewReader(with(5, badUTF8)) }, class: "integrity"},
		{name: "CRLF line ends", stream: func() io.Reader { return bytes.NewReader(bytes.ReplaceAll(good, []byte("\n"), []byte("\r\n"))) }, class: "integrity", detail: "carriage return"},
		{name: "NUL byte", stream: func() io.Reader { return bytes.NewReader(with(7, append(append([]byte{}, lines[7]...), 0))) }, class: "integrity", detail: "NUL byte"},
		{name: "blank line", stream: func() io.Reader { return bytes.NewReader(insert(9, nil)) }, class: "integrity", detail: "empty line"},
		{name: "trailing bytes after the last frame", stream: func() io.Reader { return bytes.NewReader(good) }, setup: func(t *testing.T, path string) string {
			p := path + ".zst"
			writeStream(t, p, bytes.NewReader(good))
			f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			f.Write([]byte("trailing garbage"))
			f.Close()
			copyBundle(t, bundle, ledger.BundlePath(p))
			return p
		}, class: "integrity"},
		{name: "a directory", setup: func(t *testing.T, path string) string {
			os.Mkdir(path, 0o700)
			return path
		}, class: "operational", detail: "directory"},
		{name: "a FIFO", setup: func(t *testing.T, path string) string {
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
			return path
		}, class: "operational", detail: "FIFO"},
		{name: "/dev/zero", setup: func(t *testing.T, path string) string {
			os.Symlink("/dev/zero", path)
			return path
		}, class: "operational", detail: "device"},
		{name: "bundle is a file", stream: func() io.Reader { return bytes.NewReader(good) }, setup: func(t *testing.T, path string) string {
			os.RemoveAll(ledger.BundlePath(path))
			os.WriteFile(ledger.BundlePath(path), []byte("x"), 0o600)
			return path
		}, class: "operational", detail: "not a directory"},
		{name: "manifest is a FIFO", stream: func() io.Reader { return bytes.NewReader(good) }, setup: func(t *testing.T, path string) string {
			m := filepath.Join(ledger.BundlePath(path), ledger.ManifestName)
			os.Remove(m)
			syscall.Mkfifo(m, 0o600)
			return path
		}, class: "operational", detail: "FIFO"},
		{name: "manifest of 2 MiB", stream: func() io.Reader { return bytes.NewReader(good) }, setup: func(t *testing.T, path string) string {
			m := filepath.Join(ledger.BundlePath(path), ledger.ManifestName)
			os.WriteFile(m, bytes.Repeat([]byte(" "), 2<<20), 0o600)
			return path
		}, class: "operational", detail: "larger than"},
		{name: "blob is a FIFO", stream: func() io.Reader { return bytes.NewReader(good) }, setup: func(t *testing.T, path string) string {
			b := firstBlob(t, ledger.BundlePath(path))
			os.Remove(b)
			syscall.Mkfifo(b, 0o600)
			return path
		}, class: "integrity", detail: "FIFO"},
		{name: "blob is /dev/zero", stream: func() io.Reader { return bytes.NewReader(good) }, setup: func(t *testing.T, path string) string {
			b := firstBlob(t, ledger.BundlePath(path))
			os.Remove(b)
			os.Symlink("/dev/zero", b)
			return path
		}, class: "integrity", detail: "device"},
		{name: "blob is random bytes", stream: func() io.Reader { return bytes.NewReader(good) }, setup: func(t *testing.T, path string) string {
			os.WriteFile(firstBlob(t, ledger.BundlePath(path)), random[:4096], 0o600)
			return path
		}, class: "integrity", detail: "does not decompress"},
		{name: "blob cut short", stream: func() io.Reader { return bytes.NewReader(good) }, setup: func(t *testing.T, path string) string {
			b := firstBlob(t, ledger.BundlePath(path))
			c, _ := os.ReadFile(b)
			os.WriteFile(b, c[:len(c)/2], 0o600)
			return path
		}, class: "integrity", detail: "does not decompress"},
		{name: "blob over the maximum blob size", stream: func() io.Reader { return bytes.NewReader(good) }, setup: func(t *testing.T, path string) string {
			zstBomb(t, firstBlob(t, ledger.BundlePath(path)), ledger.MaxBlobSize+1)
			return path
		}, class: "integrity", detail: "larger than the maximum blob size"},
		{name: "four blobs of 256 MiB", stream: func() io.Reader { return bytes.NewReader(good) }, setup: func(t *testing.T, path string) string {
			// One bomb, copied: the four are the same bytes, and
			// compressing 256 MiB costs far more than copying 50 KiB.
			ents, _ := filepath.Glob(filepath.Join(ledger.BundlePath(path), "*.zst"))
			zstBomb(t, ents[0], 256<<20)
			bomb, err := os.ReadFile(ents[0])
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range ents[1:4] {
				if err := os.WriteFile(b, bomb, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			return path
		}, class: "integrity", detail: "hashes to"},
	}
	for _, r := range rows {
		for _, zst := range []bool{false, true} {
			if zst && !r.zst {
				continue
			}
			name := r.name
			if zst {
				name += " (zst)"
			}
			t.Run(name, func(t *testing.T) {
				// Each row works in its own directory and child
				// processes (whose peak memory is their own), on
				// inputs the rows only read: rows run side by side.
				t.Parallel()
				path := filepath.Join(t.TempDir(), "in.jsonl")
				if zst {
					path += ".zst"
				}
				if r.stream != nil {
					writeStream(t, path, r.stream())
					copyBundle(t, bundle, ledger.BundlePath(path))
				}
				if r.setup != nil {
					if p := r.setup(t, path); p != "" {
						path = p
					}
				}
				for _, op := range []string{"verify", "import"} {
					out := runHostile(t, op, path)
					t.Logf("%s: %s, %d listed, %d omitted, peak %d MiB: %.200s", op, out.Class, out.Listed, out.Omitted, out.PeakKiB>>10, out.Err)
					want := r.class
					if op == "import" && want == "integrity" && strings.HasPrefix(out.Err, "import: ") && !strings.Contains(out.Err, "refused") {
						t.Errorf("import: %s", out.Err)
					}
					if out.Class != want {
						t.Errorf("%s: %s (%s), want %s", op, out.Class, out.Err, want)
					}
					if r.detail != "" && !strings.Contains(out.Err+"\n"+out.Details, r.detail) {
						t.Errorf("%s: neither the error nor the failures say %q:\n%s\n%s", op, r.detail, out.Err, out.Details)
					}
					if (out.PeakKiB<<10 > hostileMaxRSS && !raceEnabled) || out.PeakKiB < 0 {
						t.Errorf("%s: peak resident set %d MiB, over the bound of %d MiB", op, out.PeakKiB>>10, hostileMaxRSS>>20)
					}
					if out.Listed > ledger.MaxListedFailures {
						t.Errorf("%s: %d failures listed, over %d", op, out.Listed, ledger.MaxListedFailures)
					}
					if op == "import" && want != "ok" && len(out.Leftover) > 0 {
						t.Errorf("refused import left %v", out.Leftover)
					}
				}
			})
		}
	}
}

// raceSmaller returns n, or small under the race detector. The rows that
// use it are there for their size: millions of failures counted rather
// than listed, lines near MaxLineSize filling the in-flight budget, all
// in bounded memory, and that bound (hostileMaxRSS) is not checked under
// -race (raceEnabled). The detector slows the per-line work five- to
// tenfold, and at full size these rows were most of `go test -race
// ./ledger`. The smaller inputs take the same paths: 5<<16 and 8<<16
// newlines are 80 and 128 chunks of chunkSize (4096) lines, each chunk
// over MaxListedFailures, so every chunk counts what it cannot list and
// the join adds the counts up, as at full size (and 8<<16 bytes are still
// several zstd blocks of 128 KiB); 5 lines of 15 MiB (75 MiB) still
// exceed the stream verifier's 48 MiB in flight, so the feeder still
// waits on the budget. Without -race the rows run at full size.
func raceSmaller(n, small int64) int64 {
	if raceEnabled {
		return small
	}
	return n
}

// firstBlob returns the path of one blob file in a bundle.
func firstBlob(t *testing.T, bundle string) string {
	t.Helper()
	ents, _ := filepath.Glob(filepath.Join(bundle, "*.zst"))
	if len(ents) == 0 {
		t.Fatalf("no blobs in %s", bundle)
	}
	return ents[0]
}

// TestImport_Interrupted: an import whose context is cancelled (the
// command's SIGINT or SIGTERM) stops, and leaves neither the ledger nor
// its temporary file, whether it is cancelled while verifying or while
// writing.
func TestImport_Interrupted(t *testing.T) {
	lines, bundle := hostileBase(t)
	src := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(src, append(bytes.Join(lines, []byte("\n")), '\n'), 0o600)
	copyBundle(t, bundle, ledger.BundlePath(src))
	for _, when := range []string{"verifying", "writing"} {
		t.Run(when, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			opts := ledger.ImportOptions{Context: ctx, Progress: func(done, total uint64) { cancel() }}
			if when == "verifying" {
				cancel()
			}
			dir := t.TempDir()
			_, err := ledger.Import(src, filepath.Join(dir, "ledger.db"), opts)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Import = %v, want context.Canceled", err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("interrupted import left %v", ents)
			}
		})
	}
}
