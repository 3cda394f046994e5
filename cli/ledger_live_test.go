package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/checkpoint"
	"github.com/opx-dev/opx/engine/grpcapi"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/engine/registry"
	"github.com/opx-dev/opx/fixtures"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	bolt "go.etcd.io/bbolt"
)

// servedLedger is a real engine (in this process, real gRPC on loopback)
// holding a ledger file, published in the registry of the ledger's
// directory the way opx start publishes it.
type servedLedger struct {
	l    *ledger.Ledger
	stop func()
}

// serveLedger starts an engine on the ledger at path and returns once the
// entries it appends at start are durable: with no agent connecting, it
// appends nothing more until the test stops it (stop, or at the end).
func serveLedger(t testing.TB, path string) *servedLedger {
	t.Helper()
	return serveLedgerWith(t, path, nil)
}

// serveLedgerWith is serveLedger with the engine signing checkpoints
// with k's key, as opx start's engine does (nil: none).
func serveLedgerWith(t testing.TB, path string, k *checkpoint.Keeper) *servedLedger {
	t.Helper()
	return serveLedgerOpts(t, path, k, nil)
}

// serveLedgerOpts is serveLedgerWith with the engine's options changed
// by set (nil: none) before it starts.
func serveLedgerOpts(t testing.TB, path string, k *checkpoint.Keeper, set func(*engine.Options)) *servedLedger {
	t.Helper()
	lock, err := registry.Acquire(registry.Dir(filepath.Dir(path)))
	if err != nil {
		t.Fatal(err)
	}
	token, err := lock.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	lopts := cli.WriteOptionsForTest()
	if k != nil {
		lopts.SignCheckpoint = k.Sign
	}
	l, err := ledger.Open(path, lopts)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := llm.ParseTranscript(fixtures.DefaultTranscript)
	if err != nil {
		t.Fatal(err)
	}
	spawned := make(chan *exec.Cmd, 1)
	pr, pw := io.Pipe()
	opts := engine.Options{Services: grpcapi.Register, Workspace: t.TempDir(), Ledger: l, Provider: llm.NewScripted(tr), ClientToken: token, Version: "test",
		Policy: "read-only", Stdout: pw, Logf: t.Logf,
		SpawnAgent: func(ctx context.Context, launch engine.AgentLaunch) (*exec.Cmd, error) {
			cmd := exec.Command("sleep", "600")
			err := cmd.Start()
			spawned <- cmd
			return cmd, err
		}, Checkpoints: k}
	if set != nil {
		set(&opts)
	}
	e, err := engine.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	port := enginePort(t, pr)
	if err := lock.Publish(registry.Entry{Workspace: t.TempDir(), ManagerPID: os.Getpid(), EnginePID: os.Getpid(), Port: port, Ledger: path}); err != nil {
		t.Fatal(err)
	}
	agent := <-spawned
	// agent.spawned is recorded when SpawnAgent returns: wait for it (not
	// for it to be the last entry: something may follow it).
	waitFor(t, func() bool {
		if err := l.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		found := false
		l.Backward(func(_ uint64, raw []byte) (bool, error) {
			found = bytes.HasSuffix(raw, []byte(`"type":"`+event.TypeAgentSpawned+`"}`))
			return !found, nil
		})
		return found
	})
	s := &servedLedger{l: l}
	stopped := false
	s.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("engine Run: %v", err)
		}
		if err := l.Close(); err != nil {
			t.Error(err)
		}
		agent.Process.Kill()
		agent.Wait()
		lock.Release()
	}
	t.Cleanup(s.stop)
	return s
}

// liveCases are ledgers an engine opens, each a fresh copy: clean, and
// damaged in the middle in ways only verify sees.
func liveCases(t *testing.T) map[string]func(dir string) string {
	lg := newLedger(t, 40)
	big := newLedger(t, 300)
	cp := func(dir string) string { return ledgertest.Copy(t, lg.Path, filepath.Join(dir, "ledger.db")) }
	return map[string]func(string) string{
		"clean": cp,
		"flipped": func(dir string) string {
			p := cp(dir)
			ledgertest.FlipEntryByte(t, p, 7, 20)
			return p
		},
		"missing-blob": func(dir string) string {
			p := cp(dir)
			ledgertest.Edit(t, p, func(tx *bolt.Tx) error { return tx.Bucket([]byte("blobs")).Delete(lg.Blobs[2][:]) })
			return p
		},
		"tile": func(dir string) string {
			// A full level-0 tile is stored from 256 entries on.
			p := ledgertest.Copy(t, big.Path, filepath.Join(dir, "ledger.db"))
			ledgertest.Edit(t, p, func(tx *bolt.Tx) error {
				b := tx.Bucket([]byte("tree"))
				k, v := b.Cursor().First()
				mod := append([]byte(nil), v...)
				mod[40] ^= 1 // the second leaf hash of the first tile
				return b.Put(append([]byte(nil), k...), mod)
			})
			return p
		},
		"corrupt-blob": func(dir string) string {
			p := cp(dir)
			ledgertest.Edit(t, p, func(tx *bolt.Tx) error {
				return tx.Bucket([]byte("blobs")).Put(lg.Blobs[1][:], []byte("not a zstd frame"))
			})
			return p
		},
	}
}

// TestLedgerLive_SameAsOffline runs every reading ledger command through
// a running engine and then offline on a copy of the same file at the
// same head (same relative path, so the paths printed match): stdout,
// stderr, exit code and every file written must be the same, byte for
// byte, for clean and damaged ledgers alike.
func TestLedgerLive_SameAsOffline(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	t.Setenv("OPX_LEDGER", "")
	commands := [][]string{
		{"ledger", "verify"}, {"ledger", "verify", "--json"}, {"ledger", "verify", "--strict"}, {"ledger", "verify", "--strict", "--json"},
		{"ledger", "head"}, {"ledger", "head", "--json"},
		{"ledger", "tail"}, {"ledger", "tail", "-n", "100", "--json"},
		{"ledger", "show", "4"}, {"ledger", "show", "8", "--json"}, {"ledger", "show", "12"}, {"ledger", "show", "9999"},
		{"ledger", "export", "-o", "out/full.jsonl"}, {"ledger", "export", "-o", "out/full.jsonl.zst", "--json"},
		{"ledger", "export", "--session", "s2", "-o", "out/s2.jsonl"}, {"ledger", "export", "--session", "s1", "-o", "out/s1.jsonl.zst", "--json"},
		{"ledger", "export", "--session", "nosuch", "-o", "out/none.jsonl"}, {"ledger", "export", "--tiles", "out/tiles"},
	}
	for name, mk := range liveCases(t) {
		t.Run(name, func(t *testing.T) {
			live, off := t.TempDir(), t.TempDir()
			path := mk(live)
			srv := serveLedger(t, path)
			ledgertest.Copy(t, path, filepath.Join(off, "ledger.db")) // the engine is quiet: the file is its durable state
			for _, dir := range []string{live, off} {
				if err := os.Mkdir(filepath.Join(dir, "out"), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if l, err := ledger.OpenReadOnly(path); !errors.Is(err, ledger.ErrLocked) {
				if l != nil {
					l.Close()
				}
				t.Fatalf("the engine does not hold the file: %v", err)
			}
			head, _ := srv.l.Head()
			for _, args := range commands {
				args = append(args, "--ledger", "ledger.db")
				t.Chdir(live)
				got := run(t, args...)
				switch {
				case args[1] == "head" && !strings.Contains(got.stdout, head.Hash.String()):
					t.Errorf("head through the engine is not the engine's head %d: %s", head.Seq, got.stdout)
				case args[1] == "verify" && got.code != map[bool]int{true: cli.ExitOK, false: cli.ExitIntegrity}[name == "clean"]:
					t.Errorf("%v through the engine exits %d:\n%s%s", args, got.code, got.stdout, got.stderr)
				}
				t.Chdir(off)
				want := run(t, args...)
				if got.stdout != want.stdout || got.stderr != want.stderr || got.code != want.code {
					t.Errorf("%v through the engine:\n%d %s%s\noffline:\n%d %s%s", args, got.code, got.stdout, got.stderr, want.code, want.stdout, want.stderr)
				}
			}
			sameFiles(t, filepath.Join(live, "out"), filepath.Join(off, "out"))
			srv.stop()
		})
	}
}

// sameFiles fails unless directories a and b hold the same files with the
// same bytes.
func sameFiles(t *testing.T, a, b string) {
	t.Helper()
	read := func(root string) map[string]string {
		out := map[string]string{}
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(root, p)
				b, _ := os.ReadFile(p)
				out[rel] = string(b)
			}
			return nil
		})
		return out
	}
	fa, fb := read(a), read(b)
	if len(fa) != len(fb) {
		t.Errorf("%s holds %d files, %s %d", a, len(fa), b, len(fb))
	}
	for name, content := range fa {
		if fb[name] != content {
			t.Errorf("%s differs between the engine's export and the offline one", name)
		}
	}
}

// TestLedgerLive_NoteAndRebuild: note through the engine is appended by
// it, durable when the command returns, recorded with the client's name;
// rebuild through the engine prints what an offline rebuild of the same
// entries prints.
func TestLedgerLive_NoteAndRebuild(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	t.Setenv("OPX_LEDGER", "")
	t.Setenv("USER", "investigator")
	live, off := t.TempDir(), t.TempDir()
	path := ledgertest.Copy(t, newLedger(t, 10).Path, filepath.Join(live, "ledger.db"))
	srv := serveLedger(t, path)
	t.Chdir(live)
	r := run(t, "ledger", "note", "--ledger", "ledger.db", "--session", "s1", "seen", "it")
	r.wantCode(t, cli.ExitOK)
	m := regexp.MustCompile(`^noted: seq (\d+) ([0-9a-f]{64})\n$`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("note through the engine printed %q", r.stdout)
	}
	seq, _ := strconv.ParseUint(m[1], 10, 64)
	// Durable when note returned: the engine's watermark is past it.
	if w, err := srv.l.Watermark(); err != nil || w.Durable < seq {
		t.Fatalf("note %d not durable when note returned: %+v %v", seq, w, err)
	}
	e, err := srv.l.Get(seq)
	if err != nil || e.Hash().String() != m[2] || e.Session != "s1" {
		t.Fatalf("entry %d: %v %+v", seq, err, e)
	}
	var note event.Note
	if err := json.Unmarshal(e.Data, &note); err != nil || note.Author != "investigator" || note.Text != "seen it" || note.Client != "opx ledger note" {
		t.Errorf("note %s: %v", e.Data, err)
	}
	j := run(t, "ledger", "note", "--ledger", "ledger.db", "--json", "again")
	j.wantCode(t, cli.ExitOK)
	if o := j.jsonObject(t); o["seq"].(jsonNumber).String() != strconv.FormatUint(seq+1, 10) || o["ledger"] != "ledger.db" || o["created"] != false {
		t.Errorf("note --json through the engine: %s", j.stdout)
	}

	for _, args := range [][]string{{"ledger", "rebuild"}, {"ledger", "rebuild", "--json"}} {
		args = append(args, "--ledger", "ledger.db")
		t.Chdir(live)
		got := run(t, args...)
		ledgertest.Copy(t, path, filepath.Join(off, "ledger.db"))
		t.Chdir(off)
		want := run(t, args...)
		os.Remove(filepath.Join(off, "ledger.db"))
		if got.stdout != want.stdout || got.stderr != want.stderr || got.code != want.code {
			t.Errorf("%v through the engine:\n%d %s%s\noffline:\n%d %s%s", args, got.code, got.stdout, got.stderr, want.code, want.stdout, want.stderr)
		}
	}
	srv.stop()
	ledgertest.MustVerify(t, path, event.StrictOptions())
}

// TestLedgerLive_OtherFileInEngineDir: a locked ledger beside the one the
// engine serves is not read through that engine (it would print the
// engine's ledger under the other file's name).
func TestLedgerLive_OtherFileInEngineDir(t *testing.T) {
	t.Setenv("OPX_LEDGER", "")
	dir := t.TempDir()
	lg := newLedger(t, 4)
	serveLedger(t, ledgertest.Copy(t, lg.Path, filepath.Join(dir, "ledger.db")))
	other := ledgertest.Copy(t, lg.Path, filepath.Join(dir, "other.db"))
	l, err := ledger.Open(other, ledger.Options{}) // held, as by another writer
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r := run(t, "ledger", "head", "--ledger", other)
	r.wantCode(t, cli.ExitError)
	r.wantErr(t, "serves "+filepath.Join(dir, "ledger.db")+", not "+other)
}
