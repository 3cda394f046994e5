package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ocsf/ocsftest"
)

var (
	ocsfSchemaOnce sync.Once
	ocsfSchema     *ocsftest.Schema
	ocsfSchemaErr  error
)

// checkOCSF validates every line of an OCSF export against the schema
// files and returns the events, failing on a metadata.uid seen twice.
func checkOCSF(t *testing.T, text string) []map[string]any {
	t.Helper()
	ocsfSchemaOnce.Do(func() { ocsfSchema, ocsfSchemaErr = ocsftest.Load("../ocsf/testdata/schema") })
	if ocsfSchemaErr != nil {
		t.Fatal(ocsfSchemaErr)
	}
	var evs []map[string]any
	uids := map[string]bool{}
	for i, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if l == "" {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("line %d: %v: %q", i, err, l)
		}
		for _, p := range ocsfSchema.Validate(ev) {
			t.Errorf("line %d: %s", i, p)
		}
		uid := ev["metadata"].(map[string]any)["uid"].(string)
		if uids[uid] {
			t.Errorf("line %d: event %s written twice", i, uid)
		}
		uids[uid] = true
		evs = append(evs, ev)
	}
	return evs
}

// importSample imports the sample ledger fixture (every entry type, an
// off-the-record session, sub-agents, MCP) into a ledger file.
func importSample(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	run(t, "ledger", "import", "../fixtures/ledgers/sample.jsonl.zst", "--ledger", path).wantCode(t, cli.ExitOK)
	return path
}

func TestLedgerExportOCSF_SampleValidates(t *testing.T) {
	t.Setenv("OPX_LEDGER", "")
	path := importSample(t)
	out := filepath.Join(t.TempDir(), "events.ocsf.jsonl")
	run(t, "ledger", "export", "--format", "ocsf", "--ledger", path, "-o", out, "--host", "ci-host").wantCode(t, cli.ExitOK)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	evs := checkOCSF(t, string(b))
	classes := map[float64]bool{}
	for _, ev := range evs {
		classes[ev["class_uid"].(float64)] = true
	}
	if len(classes) != 5 {
		t.Errorf("classes %v, want the five", classes)
	}
	// Nothing is overwritten.
	run(t, "ledger", "export", "--format", "ocsf", "--ledger", path, "-o", out).wantCode(t, cli.ExitError)

	// One session, to stdout.
	sess := evs[0]["unmapped"].(map[string]any)["opx"].(map[string]any)["session"].(string)
	r := run(t, "ledger", "export", "--format", "ocsf", "--ledger", path, "--session", sess)
	r.wantCode(t, cli.ExitOK)
	one := checkOCSF(t, r.stdout)
	if len(one) == 0 || len(one) >= len(evs) {
		t.Errorf("session %s: %d of %d events", sess, len(one), len(evs))
	}
	for _, ev := range one {
		if s := ev["unmapped"].(map[string]any)["opx"].(map[string]any)["session"]; s != sess {
			t.Errorf("--session %s wrote an event of %v", sess, s)
		}
	}
}

// TestLedgerExportOCSF_SignedCheckpoint: the demo a real engine recorded
// (a signing ledger): the events of the entries its latest signed
// checkpoint covers carry it, found by reading backward from the head.
func TestLedgerExportOCSF_SignedCheckpoint(t *testing.T) {
	t.Setenv("OPX_LEDGER", "")
	path := filepath.Join(t.TempDir(), "ledger.db")
	run(t, "ledger", "import", "../fixtures/recorded/demo.jsonl.zst", "--ledger", path).wantCode(t, cli.ExitOK)
	r := run(t, "ledger", "export", "--format", "ocsf", "--ledger", path)
	r.wantCode(t, cli.ExitOK)
	signed := 0
	for _, ev := range checkOCSF(t, r.stdout) {
		att := ev["attestation_list"].([]any)[0].(map[string]any)
		seq := ev["metadata"].(map[string]any)["sequence"].(float64)
		if _, ok := att["signatures"]; ok {
			signed++
			cp := ev["unmapped"].(map[string]any)["opx"].(map[string]any)["checkpoint"].(map[string]any)
			if cp["tree_size"].(float64) <= seq {
				t.Errorf("entry %v carries checkpoint %v, which does not cover it", seq, cp["tree_size"])
			}
		}
	}
	if signed == 0 {
		t.Errorf("no event carries the signed checkpoint:\n%s", r.stdout)
	}
}

func TestLedgerExportOCSF_Usage(t *testing.T) {
	path := newLedger(t, 3).Path
	run(t, "ledger", "export", "--format", "xml", "--ledger", path, "-o", "x").wantCode(t, cli.ExitUsage)
	run(t, "ledger", "export", "--ledger", path, "-o", filepath.Join(t.TempDir(), "x.jsonl"), "--follow").wantCode(t, cli.ExitUsage)
	run(t, "ledger", "export", "--format", "ocsf", "--ledger", path, "--cursor", "c").wantCode(t, cli.ExitUsage)
	run(t, "ledger", "export", "--format", "ocsf", "--ledger", path, "--json").wantCode(t, cli.ExitUsage)
	run(t, "ledger", "export", "--format", "ocsf", "--ledger", path, "--tiles", t.TempDir()+"/t").wantCode(t, cli.ExitUsage)
}

// ocsfExport is an `opx ledger export --format ocsf --follow` running in
// the test process.
type ocsfExport struct {
	cancel context.CancelFunc
	done   chan error
	errOut *lockedBuffer
}

func startOCSFExport(t *testing.T, args ...string) *ocsfExport {
	t.Helper()
	x := &ocsfExport{done: make(chan error, 1), errOut: &lockedBuffer{}}
	app := cli.NewApp()
	app.Writer, app.ErrWriter = &lockedBuffer{}, x.errOut
	ctx, cancel := context.WithCancel(context.Background())
	x.cancel = cancel
	release := lockSetup(app)
	go func() {
		err := app.RunContext(ctx, append([]string{"opx", "ledger", "export", "--format", "ocsf", "--follow"}, args...))
		release()
		x.done <- err
	}()
	t.Cleanup(func() { x.stop() })
	return x
}

func (x *ocsfExport) stop() error {
	if x.cancel == nil {
		return nil
	}
	x.cancel()
	x.cancel = nil
	return <-x.done
}

// appendCalls appends n shell calls of a session (proposal, verdict,
// execution), each of which yields one Process Activity.
func appendCalls(t *testing.T, l *ledger.Ledger, session string, from, n int) {
	t.Helper()
	h := ledger.Sum([]byte("x")).String()
	var recs []ledger.Record
	for i := from; i < from+n; i++ {
		call := fmt.Sprintf("call_%d", i)
		recs = append(recs,
			event.MustRecord(session, &event.ToolProposed{CallID: call, Tool: "execute_command", Arguments: fmt.Sprintf(`{"command":"echo %d"}`, i), ActionHash: h}),
			event.MustRecord(session, &event.ShieldVerdict{CallID: call, Decision: event.Allow, Rule: "r", Reason: "ok", ActionHash: h, PolicyHash: h}),
			event.MustRecord(session, &event.ExecStarted{CallID: call, Tool: "execute_command", ActionHash: h}),
			event.MustRecord(session, &event.ExecCompleted{CallID: call, Tool: "execute_command", Result: "ok", Size: 2, Post: []event.PostState{}}))
	}
	if _, err := l.Append(context.Background(), ledger.Sync, recs...); err != nil {
		t.Fatal(err)
	}
}

// appendOffline appends calls to the ledger file while no engine holds it.
func appendOffline(t *testing.T, path, session string, from, n int) {
	t.Helper()
	open := ledger.Open
	if _, err := os.Stat(path); os.IsNotExist(err) {
		open = ledger.Create
	}
	l, err := open(path, cli.WriteOptionsForTest())
	if err != nil {
		t.Fatal(err)
	}
	appendCalls(t, l, session, from, n)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// processEvents reads the export and returns its Process Activity
// command lines, in order.
func processEvents(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		var ev struct {
			ClassUID int `json:"class_uid"`
			Process  struct {
				CmdLine string `json:"cmd_line"`
			} `json:"process"`
		}
		if json.Unmarshal([]byte(l), &ev) == nil && ev.ClassUID == 1007 {
			out = append(out, ev.Process.CmdLine)
		}
	}
	return out
}

// TestLedgerExportOCSF_FollowRestartsResume: --follow writes the events
// of entries as an engine makes them durable, goes on through an engine
// restart and while none runs, and a second run resumes from the cursor:
// every call's event once, in order, even after a run cut off in the
// middle of a write.
func TestLedgerExportOCSF_FollowRestartsResume(t *testing.T) {
	t.Setenv("OPX_LEDGER", "")
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.db")
	appendOffline(t, path, "s1", 0, 3)
	out := filepath.Join(t.TempDir(), "events.jsonl")
	wantN := func(n int) {
		t.Helper()
		waitFor(t, func() bool { return len(processEvents(t, out)) >= n })
	}

	srv := serveLedger(t, path)
	x := startOCSFExport(t, "--ledger", path, "-o", out)
	wantN(3)
	appendCalls(t, srv.l, "s1", 3, 2)
	wantN(5)
	srv.stop() // the engine goes: the file is read
	appendOffline(t, path, "s1", 5, 2)
	wantN(7)
	srv = serveLedger(t, path) // back
	appendCalls(t, srv.l, "s1", 7, 2)
	wantN(9)
	if err := x.stop(); err != nil {
		t.Fatalf("export after Ctrl-C: %v\n%s", err, x.errOut.String())
	}

	// A run killed after writing past its last saved cursor: the bytes
	// beyond it (here half an event) are cut on resume.
	f, err := os.OpenFile(out, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"activity_id":1,"class_uid":1007,"process":{"cmd_line":"echo 8"`)
	f.Close()
	appendCalls(t, srv.l, "s1", 9, 2)
	x = startOCSFExport(t, "--ledger", path, "-o", out)
	wantN(11)
	if err := x.stop(); err != nil {
		t.Fatalf("resumed export: %v\n%s", err, x.errOut.String())
	}
	b, _ := os.ReadFile(out)
	checkOCSF(t, string(b))
	got := processEvents(t, out)
	for i, cmd := range got {
		if want := fmt.Sprintf("echo %d", i); cmd != want || len(got) != 11 {
			t.Fatalf("events %q, want echo 0..10 once each", got)
		}
	}

	// Once, through the running engine: the same events.
	r := run(t, "ledger", "export", "--format", "ocsf", "--ledger", path)
	r.wantCode(t, cli.ExitOK)
	if n := strings.Count(r.stdout, `"class_uid":1007`); n != 11 {
		t.Errorf("through the engine: %d process events, want 11", n)
	}

	// The cursor is tied to its ledger: another ledger is refused (exit 4).
	other := filepath.Join(t.TempDir(), "ledger.db")
	appendOffline(t, other, "s2", 0, 1)
	r = run(t, "ledger", "export", "--format", "ocsf", "--follow", "--ledger", other, "-o", out)
	r.wantCode(t, cli.ExitIntegrity)
	// An output without its cursor is not guessed at.
	os.Remove(out + ".cursor")
	run(t, "ledger", "export", "--format", "ocsf", "--follow", "--ledger", path, "-o", out).wantCode(t, cli.ExitError)
}

// TestLedgerExportOCSF_DamagedLedger: a chain that breaks is exit 4, and
// no partial export is left behind.
func TestLedgerExportOCSF_DamagedLedger(t *testing.T) {
	path := tampered(t, newLedger(t, 10).Path, 5)
	out := filepath.Join(t.TempDir(), "events.jsonl")
	run(t, "ledger", "export", "--format", "ocsf", "--ledger", path, "-o", out).wantCode(t, cli.ExitIntegrity)
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a partial export is left: %v", err)
	}
}
