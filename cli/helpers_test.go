package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	urfave "github.com/urfave/cli/v2"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

// result is what one in-process run of opx printed and how it exited.
type result struct {
	stdout, stderr string
	code           int
	err            error
}

// appMu serialises the set-up of in-process runs of the app: urfave/cli's
// setup writes to package globals (its help command and help flag), so
// two apps must not be set up at once. A run holds it until its command's
// action starts (lockSetup), so runs still overlap (a send waiting for an
// approval while approve runs).
var appMu sync.Mutex

// lockSetup takes appMu and wraps every action of app to release it when
// the action starts; the returned func releases it too (for a run that
// ends before any action: help, a usage error).
func lockSetup(app *urfave.App) (release func()) {
	var once sync.Once
	release = func() { once.Do(appMu.Unlock) }
	wrap := func(a urfave.ActionFunc) urfave.ActionFunc {
		if a == nil {
			return nil
		}
		return func(c *urfave.Context) error {
			release()
			return a(c)
		}
	}
	var walk func([]*urfave.Command)
	walk = func(cmds []*urfave.Command) {
		for _, c := range cmds {
			c.Action = wrap(c.Action)
			walk(c.Subcommands)
		}
	}
	walk(app.Commands)
	app.Action = wrap(app.Action)
	appMu.Lock()
	return release
}

// run runs opx with args in-process, capturing its output, and maps the
// error to an exit code the way the binary does.
func run(t *testing.T, args ...string) result {
	t.Helper()
	app := cli.NewApp()
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errOut
	release := lockSetup(app)
	err := app.Run(append([]string{"opx"}, args...))
	release()
	return result{stdout: out.String(), stderr: errOut.String(), code: cli.ExitCode(err), err: err}
}

// wantCode fails the test unless r exited with code.
func (r result) wantCode(t *testing.T, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d (err %v)\nstdout:\n%s\nstderr:\n%s", r.code, code, r.err, r.stdout, r.stderr)
	}
}

// wantOut fails the test unless stdout contains every string in want.
func (r result) wantOut(t *testing.T, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, r.stdout)
		}
	}
}

// wantErr fails the test unless stderr contains every string in want.
func (r result) wantErr(t *testing.T, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
}

// jsonObject decodes stdout as exactly one JSON object and returns it.
func (r result) jsonObject(t *testing.T) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\n%s", err, r.stdout)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON value:\n%s", r.stdout)
	}
	return m
}

// keys returns m's keys, sorted.
func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// newLedger makes a ledger with n entries after genesis in a fresh
// temporary directory.
func newLedger(t *testing.T, n int) ledgertest.Ledger {
	t.Helper()
	return ledgertest.New(t, filepath.Join(t.TempDir(), "ledger.db"), n)
}

// tampered returns a copy of the ledger at path with the given entries'
// bytes flipped.
func tampered(t *testing.T, path string, seqs ...uint64) string {
	t.Helper()
	cp := ledgertest.Copy(t, path, filepath.Join(t.TempDir(), "tampered.db"))
	ledgertest.FlipEntryByte(t, cp, seqs...)
	return cp
}

// jsonNumber is how numbers decode in jsonObject.
type jsonNumber = json.Number

// enginePort reads the "PORT:N" line an engine writes to its stdout when
// it listens, and discards the rest of its output.
func enginePort(t testing.TB, stdout io.Reader) int {
	t.Helper()
	br := bufio.NewReader(stdout)
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "PORT:") {
		t.Fatalf("start-up line %q, %v", line, err)
	}
	go io.Copy(io.Discard, br)
	port, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "PORT:"))
	if err != nil {
		t.Fatal(err)
	}
	return port
}
