package main_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	bolt "go.etcd.io/bbolt"
)

// otrMarker returns a distinctive random marker: a text that can be in
// the state directory only if opx put it there.
func otrMarker(t *testing.T, what string) string {
	t.Helper()
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return what + "-" + hex.EncodeToString(b)
}

// otrTranscript reads the plan, tries to write it (blocked: the session
// is read-only), and answers with a marker and what it read.
const otrTranscript = `{"model":"opx-scripted-1","turns":[{"match":"","steps":[` +
	`{"tool_calls":[{"name":"read_file","arguments":"{\"path\": \"plan.txt\"}"}]},` +
	`{"tool_calls":[{"name":"write_file","arguments":"{\"path\": \"plan.txt\", \"content\": \"overwritten\"}"}]},` +
	`{"text":"MODELTEXT {{(index .Results 0).Content}} {{(index .Results 1).Content}}"}]}]}`

// TestE2E_OffTheRecordLeavesNoText runs an off-the-record session through
// the real binary (a model call that reads a file, a write that Shield
// blocks, a second message) and then looks for its texts in every byte
// of the state directory: the ledger file whole (bbolt's free pages
// included), exports (.jsonl, .jsonl.zst decompressed, blob bundles), and
// the engine's log; none may be there. The ledger verifies strictly, the
// session is hidden from opx sessions unless --include-otr, review shows
// "[off the record: N bytes]", and after a restart the session cannot be
// continued (its conversation was only in the first engine's memory).
func TestE2E_OffTheRecordLeavesNoText(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	user, second, file := otrMarker(t, "USERTEXT"), otrMarker(t, "SECONDTEXT"), otrMarker(t, "FILETEXT")
	// Over the inline limit, so its result and the model's answer would
	// be blobs.
	plan := file + "\n" + strings.Repeat("the plan goes on\n", 400) + file + "\n"
	for name, content := range map[string]string{
		".opx/config.yaml": "provider:\n  kind: scripted\n  transcript: .opx/otr.json\npolicy: .opx/policy.yaml\n",
		".opx/otr.json":    otrTranscript,
		".opx/policy.yaml": "version: 1\ndefault: allow\n",
		"plan.txt":         plan,
	} {
		p := filepath.Join(w.ws, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m := w.start()
	st, _ := w.status()
	// The keys and conversations live in the engine's and the agent's
	// memory only: no core dump may write them out.
	for what, pid := range map[string]int{"engine": st.EnginePID, "agent": st.AgentPID} {
		if core := coreLimit(t, pid); core != "0 0" {
			t.Errorf("the %s's core file size limit is %q, want 0 0", what, core)
		}
	}
	out, errOut, code := w.run("send", "--otr", user+" summarise the plan")
	if code != 0 || !strings.Contains(out, "MODELTEXT "+file) || !strings.Contains(out+errOut, "otr:read-only") {
		t.Fatalf("opx send --otr: exit %d: want the answer, the file and the blocked write live\n%s\n%s", code, out, errOut)
	}
	session := regexp.MustCompile(`ses_[0-9a-f]{16}`).FindString(errOut)
	if !strings.Contains(errOut, "(session "+session+", off the record: read-only") {
		t.Errorf("opx send --otr does not say the session is off the record:\n%s", errOut)
	}
	dbg, _, _ := w.run("replay", session)
	t.Log(dbg)
	if out, errOut, code := w.run("send", "--session", session, second+" and again"); code != 0 || !strings.Contains(out, "MODELTEXT") {
		t.Fatalf("second message: exit %d\n%s\n%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(w.ws, "plan.txt")); string(b) != plan {
		t.Fatal("plan.txt was changed in an off-the-record session")
	}
	// Review while the engine runs.
	if out, _, _ := w.run("sessions"); strings.Contains(out, session) || !strings.Contains(out, "1 off-the-record session hidden: --include-otr") {
		t.Errorf("opx sessions lists the off-the-record session, or does not say it hides it:\n%s", out)
	}
	if out, _, _ := w.run("sessions", "--include-otr"); !strings.Contains(out, session) || !strings.Contains(out, "otr") || !strings.Contains(out, "[off the record: ") {
		t.Errorf("opx sessions --include-otr:\n%s", out)
	}
	if out, _, code := w.run("history", session); code != 0 || strings.Count(out, "[off the record: ") != 4 {
		t.Errorf("opx history: exit %d, want four withheld messages:\n%s", code, out)
	}
	exports := filepath.Join(w.state, "exports")
	os.MkdirAll(exports, 0o700)
	for _, name := range []string{"live.jsonl", "live-z.jsonl.zst"} {
		if out, errOut, code := w.run("ledger", "export", "-o", filepath.Join(exports, name)); code != 0 {
			t.Fatalf("export %s: %d\n%s%s", name, code, out, errOut)
		}
	}
	w.stop(m)

	// A new engine has no key and no conversation for the session.
	m = w.start()
	if _, errOut, code := w.run("send", "--session", session, "go on"); code == 0 || !strings.Contains(errOut, "off the record") {
		t.Errorf("continuing after a restart: exit %d, want a refusal that says why:\n%s", code, errOut)
	}
	w.stop(m)

	if out, errOut, code := w.run("ledger", "verify", "--strict"); code != 0 {
		t.Fatalf("ledger verify --strict: exit %d\n%s%s", code, out, errOut)
	}
	for _, name := range []string{"offline.jsonl", "offline-z.jsonl.zst"} {
		if out, errOut, code := w.run("ledger", "export", "-o", filepath.Join(exports, name)); code != 0 {
			t.Fatalf("export %s: %d\n%s%s", name, code, out, errOut)
		}
	}
	// Review: what was withheld reads "[off the record: N bytes]"; what
	// cannot be rerun or re-judged says so.
	out, errOut, code = w.run("replay", session)
	if code != 0 || !strings.Contains(out, "[off the record: ") || strings.Contains(out, "otr:v1:") || !strings.Contains(out, "otr:read-only") {
		t.Errorf("opx replay: exit %d\n%s%s", code, out, errOut)
	}
	report := filepath.Join(w.state, "report.html")
	if out, errOut, code := w.run("report", "-o", report, session); code != 0 {
		t.Errorf("opx report: exit %d\n%s%s", code, out, errOut)
	} else if b, _ := os.ReadFile(report); !bytes.Contains(b, []byte("[off the record: ")) || bytes.Contains(b, []byte("otr:v1:")) {
		t.Errorf("the report does not show withheld content as such")
	}
	for _, args := range [][]string{{"replay", session, "--rerun"}, {"replay", session, "--policy", filepath.Join(w.ws, ".opx/policy.yaml")}} {
		if out, errOut, code := w.run(args...); code == 0 || !strings.Contains(errOut, "not replayable: the session is off the record") {
			t.Errorf("opx %v: exit %d, want a clear refusal\n%s%s", args, code, out, errOut)
		}
	}
	if out, _, code := w.run("ledger", "rebuild"); code != 0 {
		t.Fatalf("ledger rebuild: %d\n%s", code, out)
	}

	// Every byte of the state directory, decompressed where compressed,
	// and the engine's log.
	noTextIn(t, w, m, st.LedgerPath, user, second, file, "summarise the plan", "the plan goes on")
	// The session's envelope is there: its tools, verdicts and sizes.
	led, _ := os.ReadFile(st.LedgerPath)
	for _, want := range []string{`"rule":"otr:read-only"`, `"tool":"read_file"`, `"mode":"otr"`, `otr:v1:`} {
		if !bytes.Contains(led, []byte(want)) {
			t.Errorf("the ledger lacks %s", want)
		}
	}
}

// otrTeamTranscript: the parent spawns a sub-agent granted read_file and
// write_file, and collects its result; the sub-agent reads the plan and
// tries to write it.
const otrTeamTranscript = `{"model":"opx-scripted-1","turns":[` +
	`{"match":"^sub-otr:","steps":[` +
	`{"tool_calls":[{"name":"read_file","arguments":"{\"path\": \"plan.txt\"}"}]},` +
	`{"tool_calls":[{"name":"write_file","arguments":"{\"path\": \"plan.txt\", \"content\": \"overwritten\"}"}]},` +
	`{"text":"SUBTEXT {{(index .Results 0).Content}} {{(index .Results 1).Content}}"}]},` +
	`{"match":"otr-team","steps":[` +
	`{"tool_calls":[{"name":"spawn_agent","arguments":"{\"task\": \"sub-otr: read plan.txt\", \"tools\": [\"read_file\", \"write_file\"]}"}]},` +
	`{"tool_calls":[{"name":"agent_result","arguments":"{\"id\": {{json (slice (index .Results 0).Content 0 16)}}}"}]},` +
	`{"text":"PARENTTEXT [{{(index .Results 1).Content}}]"}]}]}`

// TestE2E_OffTheRecordSubAgent: a sub-agent of an off-the-record session
// is in its parent's session, so it is read-only (its granted write is
// blocked by otr:read-only) and withheld like its parent; the ledger,
// with the sub-agent's causality, verifies strictly.
func TestE2E_OffTheRecordSubAgent(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	w := newWorld(t)
	user, file := otrMarker(t, "USERTEXT"), otrMarker(t, "FILETEXT")
	plan := file + "\n"
	for name, content := range map[string]string{
		".opx/config.yaml": "provider:\n  kind: scripted\n  transcript: .opx/otr.json\npolicy: .opx/policy.yaml\n",
		".opx/otr.json":    otrTeamTranscript,
		".opx/policy.yaml": "version: 1\ndefault: allow\n",
		"plan.txt":         plan,
	} {
		p := filepath.Join(w.ws, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m := w.start()
	st, _ := w.status()
	out, errOut, code := w.run("send", "--otr", user+" otr-team")
	if code != 0 || !strings.Contains(out, "PARENTTEXT [SUBTEXT "+file) || !strings.Contains(out, "otr:read-only") {
		t.Fatalf("opx send --otr: exit %d: want the sub-agent's result with the file and its blocked write\n%s\n%s", code, out, errOut)
	}
	w.stop(m)
	if b, _ := os.ReadFile(filepath.Join(w.ws, "plan.txt")); string(b) != plan {
		t.Fatal("plan.txt was changed by a sub-agent of an off-the-record session")
	}
	if out, errOut, code := w.run("ledger", "verify", "--strict"); code != 0 {
		t.Fatalf("ledger verify --strict: exit %d\n%s%s", code, out, errOut)
	}
	session := regexp.MustCompile(`ses_[0-9a-f]{16}`).FindString(errOut)
	if !strings.Contains(errOut, "(session "+session+", off the record: read-only") {
		t.Errorf("opx send --otr does not say the session is off the record:\n%s", errOut)
	}
	if out, errOut, code := w.run("replay", session); code != 0 || !strings.Contains(out, "[off the record: ") || strings.Contains(out, "otr:v1:") {
		t.Errorf("opx replay: exit %d\n%s%s", code, out, errOut)
	}
	led, _ := os.ReadFile(st.LedgerPath)
	for _, want := range []string{`"type":"subagent.spawned"`, `"type":"subagent.completed"`, `"rule":"otr:read-only"`} {
		if !bytes.Contains(led, []byte(want)) {
			t.Errorf("the ledger lacks %s", want)
		}
	}
	noTextIn(t, w, m, st.LedgerPath, user, file, "sub-otr:", "SUBTEXT", "PARENTTEXT")
}

// noTextIn fails the test when any of markers is anywhere in the state
// directory of w (every file whole, and decompressed where it is zstd:
// exports, blob bundles), in any blob the ledger stores (decompressed), or
// in the output of m (the manager's and the engine's log).
func noTextIn(t *testing.T, w *world, m *manager, ledgerPath string, markers ...string) {
	t.Helper()
	look := func(where string, b []byte) {
		for _, mk := range markers {
			if i := bytes.Index(b, []byte(mk)); i >= 0 {
				t.Errorf("%s holds %q at byte %d", where, mk, i)
			}
		}
	}
	files := 0
	err := filepath.WalkDir(w.state, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		look(p, b)
		if dec, err := zstdAll(b); err == nil {
			look(p+" (decompressed)", dec)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 3 {
		t.Fatalf("only %d files in the state directory", files)
	}
	look("the manager's and engine's output", []byte(m.out.String()))
	// Blobs are zstd frames inside the file: each one decompressed, named
	// by an entry or not.
	db, err := bolt.Open(ledgerPath, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("blobs")).ForEach(func(k, v []byte) error {
			dec, err := zstdAll(v)
			if err != nil {
				return err
			}
			look("blob "+hex.EncodeToString(k), dec)
			return nil
		})
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
}

// zstdAll decompresses every zstd frame of b, or fails if b is not zstd.
func zstdAll(b []byte) ([]byte, error) {
	d, err := zstd.NewReader(bytes.NewReader(b), zstd.WithDecoderMaxMemory(1<<30))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return io.ReadAll(d)
}

// TestE2E_OffTheRecordChat: /otr in opx chat starts an off-the-record
// session (prompt "otr> "), read-only, hidden from /sessions; /new goes
// back to a normal one; opx chat --otr starts off the record.
func TestE2E_OffTheRecordChat(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	m := w.start()
	chat := func(stdin string, args ...string) string {
		cmd := exec.Command(w.bin, append([]string{"chat", "--workspace", w.ws}, args...)...)
		cmd.Env = w.env()
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("opx chat: %v\n%s", err, out)
		}
		return string(out)
	}
	s := chat("read README.md\n/otr\nread README.md\n/sessions\n/new\nlist the files\n/quit\n")
	for _, want := range []string{"(the next message starts a new off-the-record session", "otr> ", "the workspace of an end-to-end test", "→ list_directory"} {
		if !strings.Contains(s, want) {
			t.Errorf("chat output lacks %q:\n%s", want, s)
		}
	}
	s = chat("read README.md\n/quit\n", "--otr")
	if !strings.Contains(s, "otr> ") || !strings.Contains(s, "the workspace of an end-to-end test") {
		t.Errorf("opx chat --otr:\n%s", s)
	}
	out, _, _ := w.run("sessions", "--json", "--include-otr")
	if strings.Count(out, `"mode":"otr"`) != 2 || strings.Count(out, `"mode":"normal"`) != 2 {
		t.Errorf("want two normal and two off-the-record sessions:\n%s", out)
	}
	if out, _, _ := w.run("sessions", "--json"); strings.Contains(out, `"mode":"otr"`) {
		t.Errorf("opx sessions lists off-the-record sessions without --include-otr:\n%s", out)
	}
	w.stop(m)
}

// coreLimit returns the soft and hard "Max core file size" of pid.
func coreLimit(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "Max core file size"); ok {
			f := strings.Fields(rest)
			if len(f) >= 2 {
				return f[0] + " " + f[1]
			}
		}
	}
	t.Fatalf("no core limit in /proc/%d/limits:\n%s", pid, b)
	return ""
}
