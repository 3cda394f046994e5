package ledger_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

// TestHostileDB is the hostile-input table for ledger.db: every damaged
// file is refused by Open and OpenReadOnly with ErrNotLedger (ErrUnreadable
// for a bbolt file that is cut short or whose meta pages are bad), before
// bbolt maps it; nothing crashes (a read past the end of the map used to
// be SIGBUS) and nothing is written to the file.
func TestHostileDB(t *testing.T) {
	dir := t.TempDir()
	base := ledgertest.New(t, filepath.Join(dir, "base.db"), 300)
	good, err := os.ReadFile(base.Path)
	if err != nil {
		t.Fatal(err)
	}
	ps := int(binary.LittleEndian.Uint32(good[16+8:]))
	random := make([]byte, 64<<10)
	rand.New(rand.NewSource(2)).Read(random)
	flip := func(off int) []byte {
		b := bytes.Clone(good)
		b[off] ^= 0xff
		return b
	}
	tests := []struct {
		name       string
		make       func(path string)
		unreadable bool // ErrUnreadable, not just ErrNotLedger
	}{
		{"empty", func(p string) { os.WriteFile(p, nil, 0o600) }, false},
		{"a directory", func(p string) { os.Mkdir(p, 0o700) }, false},
		{"a FIFO", func(p string) { syscall.Mkfifo(p, 0o600) }, false},
		{"random bytes", func(p string) { os.WriteFile(p, random, 0o600) }, false},
		{"cut to 100 bytes", func(p string) { os.WriteFile(p, good[:100], 0o600) }, true},
		{"cut inside the second meta page", func(p string) { os.WriteFile(p, good[:ps+100], 0o600) }, true},
		{"cut after the meta pages", func(p string) { os.WriteFile(p, good[:2*ps+1], 0o600) }, true},
		{"cut to half its pages plus 1234", func(p string) {
			os.WriteFile(p, good[:int(binary.LittleEndian.Uint64(good[16+40:]))*ps/2+1234], 0o600)
		}, true},
		{"cut a byte short of its pages", func(p string) {
			os.WriteFile(p, good[:int(binary.LittleEndian.Uint64(good[16+40:]))*ps-1], 0o600)
		}, true},
		{"both meta checksums flipped", func(p string) {
			b := flip(16 + 56)
			b[ps+16+56] ^= 0xff
			os.WriteFile(p, b, 0o600)
		}, true},
		{"both meta magics flipped", func(p string) {
			b := flip(16)
			b[ps+16] ^= 0xff
			os.WriteFile(p, b, 0o600)
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ledger.db")
			tt.make(path)
			before := readRegular(path)
			for _, open := range []func() (*ledger.Ledger, error){
				func() (*ledger.Ledger, error) { return ledger.OpenReadOnly(path) },
				func() (*ledger.Ledger, error) { return ledger.Open(path, ledger.Options{}) },
			} {
				l, err := open()
				if err == nil {
					l.Close()
					t.Fatalf("opened a damaged file")
				}
				if !errors.Is(err, ledger.ErrNotLedger) || (tt.unreadable && !errors.Is(err, ledger.ErrUnreadable)) {
					t.Errorf("open: %v, want ErrNotLedger (unreadable %v)", err, tt.unreadable)
				}
				if strings.Count(err.Error(), "\n") > 0 {
					t.Errorf("error is more than one line: %q", err)
				}
			}
			if after := readRegular(path); !bytes.Equal(before, after) {
				t.Errorf("the file changed")
			}
		})
	}
}

// dbSweepChild is the child mode of TestHostileDB_FlippedPages: a fault
// in it is a crash of the child, reported by the parent.
const dbSweepChild = "db-sweep"

func init() { childModes[dbSweepChild] = runDBSweep }

// runDBSweep damages copies of the ledger at OPX_SWEEP_PATH, one byte in
// every page at several offsets, and opens, verifies and reads each; it
// prints how each ended. With OPX_SWEEP_SHARD=i/n it takes only the pages
// whose number is i modulo n, so n children share the sweep.
func runDBSweep() error {
	good, err := os.ReadFile(os.Getenv("OPX_SWEEP_PATH"))
	if err != nil {
		return err
	}
	shard, shards := 0, 1
	if v := os.Getenv("OPX_SWEEP_SHARD"); v != "" {
		if _, err := fmt.Sscanf(v, "%d/%d", &shard, &shards); err != nil || shards < 1 || shard < 0 || shard >= shards {
			return fmt.Errorf("OPX_SWEEP_SHARD=%q: want i/n", v)
		}
	}
	ps := int(binary.LittleEndian.Uint32(good[16+8:]))
	dir, err := os.MkdirTemp("", "opx-sweep-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// A damaged file must not make opx allocate without bound: fail
	// (and crash, which the parent reports) rather than take the machine.
	syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: 8 << 30, Max: 8 << 30})
	counts := map[string]int{}
	for page := shard; page*ps < len(good); page += shards {
		for _, off := range []int{0, 8, 10, 12, 13, 16, 20, 24, 40, ps / 2, ps - 1} {
			for _, v := range []byte{0xff, 0x00, 0x7f} {
				b := bytes.Clone(good)
				if page*ps+off >= len(b) || b[page*ps+off] == v {
					continue
				}
				b[page*ps+off] = v
				p := filepath.Join(dir, "x.db")
				os.Remove(p)
				if err := os.WriteFile(p, b, 0o600); err != nil {
					return err
				}
				fmt.Fprintf(os.Stderr, "page %d byte %d = %#x\n", page, off, v)
				counts[sweepOne(p)]++
			}
		}
	}
	fmt.Println(counts)
	return nil
}

// sweepOne opens, verifies and reads one damaged file and says how it
// ended: refused, verified with failures, or clean. It also opens it for
// writing (as the engine does), which must refuse it or open it cleanly.
func sweepOne(p string) string {
	if w, err := ledger.Open(p, ledger.Options{NoSync: true}); err == nil {
		w.Close()
	} else if !errors.Is(err, ledger.ErrNotLedger) && !errors.Is(err, ledger.ErrFormat) && !errors.Is(err, ledger.ErrInconsistent) {
		return "other-open-error: " + err.Error()
	}
	l, err := ledger.OpenReadOnly(p)
	if err != nil {
		if !errors.Is(err, ledger.ErrNotLedger) && !errors.Is(err, ledger.ErrFormat) {
			return "other-open-error"
		}
		return "refused"
	}
	defer l.Close()
	outcome := "clean"
	rep, err := l.Verify(ledger.VerifyOptions{Strict: true})
	switch {
	case err != nil:
		outcome = "verify-error"
	case !rep.OK:
		outcome = "integrity"
	}
	l.Head()
	l.RangeRaw(0, 1<<20, func(uint64, []byte) error { return nil })
	return outcome
}

// TestHostileDB_FlippedPages flips bytes in every page of a real ledger
// file (meta, freelist, branch and leaf pages) and opens, verifies and
// reads each copy in a child process: each must end as an error or a
// report, never a crash or a trace. The pages are shared among
// sweepShards children, which run side by side (the sweep is seconds of
// CPU under -race, and the children only read the base file).
func TestHostileDB_FlippedPages(t *testing.T) {
	t.Parallel()
	base := ledgertest.New(t, filepath.Join(t.TempDir(), "base.db"), 300)
	const sweepShards = 2
	for i := range sweepShards {
		t.Run(fmt.Sprintf("pages %d mod %d", i, sweepShards), func(t *testing.T) {
			t.Parallel()
			cmd := childCommand(dbSweepChild, "OPX_SWEEP_PATH="+base.Path, fmt.Sprintf("OPX_SWEEP_SHARD=%d/%d", i, sweepShards))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				e := stderr.String()
				t.Fatalf("sweep crashed: %v\n%s", err, e[max(0, len(e)-4000):])
			}
			if strings.Contains(stderr.String(), "goroutine ") || strings.Contains(stderr.String(), "panic") {
				t.Fatalf("sweep printed a trace:\n%.4000s", stderr.String())
			}
			t.Logf("outcomes: %s", stdout.String())
			if strings.Contains(stdout.String(), "other-open-error") {
				t.Errorf("an open failed with an error that is not ErrNotLedger: %s", stdout.String())
			}
		})
	}
}

// readRegular returns a regular file's bytes, or nil for anything else
// (reading a FIFO would block the test).
func readRegular(path string) []byte {
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	b, _ := os.ReadFile(path)
	return b
}
