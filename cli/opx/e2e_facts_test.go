package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
)

// failingCalls are the calls the failures transcript makes, one model
// answer holding them all, with the outcome each must have: a failure of
// every tool kind, a command exiting non-zero, a command that cannot be
// started, a block, a human's no (the approval times out), and three that
// succeed. git_status outside a repository is git exiting non-zero when
// git runs at all ("exited|failed").
var failingCalls = []struct{ tool, args, want string }{
	{"read_file", `{"path":"missing.txt"}`, "failed"},
	{"write_file", `{"path":"adir","content":"x"}`, "failed"},
	{"edit_file", `{"path":"invoice.sh","old":"a","new":"b"}`, "failed"},
	{"delete_file", `{"path":"missing.txt"}`, "failed"},
	{"move_file", `{"from":"missing.txt","to":"moved.txt"}`, "failed"},
	{"make_dir", `{"path":"README.md"}`, "failed"},
	{"list_directory", `{"path":"missing"}`, "failed"},
	{"search_files", `{"pattern":"("}`, "failed"},
	{"execute_command", `{"command":"exit 3"}`, "exited"},
	{"execute_command", `{"command":"true","cwd":"missing"}`, "failed"},
	{"git_status", `{}`, "exited|failed"},
	{"git_commit", `{"message":""}`, "failed"},
	{"http_request", `{"url":"http://127.0.0.1:1/"}`, "failed"},
	{"memory_read", `{}`, "failed"},
	{"memory_append", `{"text":"x"}`, "failed"},
	{"memory_search", `{"query":"x"}`, "failed"},
	{"read_file", `{"path":"secret.txt"}`, "blocked"},
	{"delete_file", `{"path":"ask.txt"}`, "denied"},
	{"read_file", `{"path":"README.md"}`, "completed"},
	{"write_file", `{"path":"new.txt","content":"hello\n"}`, "completed"},
	{"execute_command", `{"command":"echo hi"}`, "completed"},
}

// rawCall is one call as the test reads it from the raw entries, with
// nothing of opx's own derivation (no event.ExecOutcome, no replay).
type rawCall struct {
	seq               uint64 // tool.proposed
	id, tool, args    string
	blocked, denied   bool
	started           bool
	end               string // exec.completed or exec.failed, "" if none
	failedField       bool   // exec.completed's failed
	exitCode          int64
	deliveredError    bool // engine.tool_result is_error
	outcome           string
	snapshot          uint64
	snapKind          string
	preAbsent, postOK bool
}

func (c *rawCall) derive() {
	switch {
	case c.denied:
		c.outcome = "denied"
	case c.blocked:
		c.outcome = "blocked"
	case c.end == "exec.failed" || c.failedField:
		c.outcome = "failed"
	case c.end == "exec.completed" && c.exitCode != 0:
		c.outcome = "exited"
	case c.end == "exec.completed":
		c.outcome = "completed"
	default:
		c.outcome = "none"
	}
}

// readRaw reads the session's calls from the ledger file's entries.
func readRaw(t *testing.T, path, session string) []*rawCall {
	t.Helper()
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var calls []*rawCall
	byID := map[string]*rawCall{}
	err = l.Range(0, ^uint64(0), func(e ledger.Entry) error {
		if e.Session != session {
			return nil
		}
		var d map[string]any
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		id, _ := d["call_id"].(string)
		c := byID[id]
		switch e.Type {
		case "tool.proposed":
			c = &rawCall{seq: e.Seq, id: id, tool: d["tool"].(string), args: d["arguments"].(string)}
			byID[id] = c
			calls = append(calls, c)
		case "shield.verdict":
			c.blocked = c.blocked || d["decision"] == "block"
		case "approval.resolved":
			c.denied = d["approved"] == false
		case "chronicle.snapshot":
			c.snapshot, c.snapKind = e.Seq, d["kind"].(string)
		case "exec.started":
			c.started = true
		case "exec.completed":
			c.end, c.failedField = e.Type, d["failed"] == true
			c.exitCode = int64(d["exit_code"].(float64))
		case "exec.failed":
			c.end = e.Type
		case "engine.tool_result":
			if c != nil {
				c.deliveredError = d["is_error"] == true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		c.derive()
	}
	return calls
}

// TestE2E_FailuresAgreeAcrossViews drives the real engine (opx start, the
// scripted model, the sandboxed agent, Shield, Chronicle and every
// executor) through a failure of every tool kind, a block and a denial,
// then reads the ledger's raw entries and checks each view against them:
// replay (text and --json), report (HTML), metrics, snapshots, snapshot
// show, and the model's answer in history. A failed call is failed in
// every view; a command that exited non-zero is "ran, exit N" in every
// view; a failed call that changed nothing is not listed as a change.
func TestE2E_FailuresAgreeAcrossViews(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var script []map[string]string
	for _, c := range failingCalls {
		script = append(script, map[string]string{"name": c.tool, "arguments": c.args})
	}
	calls, _ := json.Marshal(script)
	transcript := `{"model":"opx-scripted-1","turns":[{"match":"","steps":[{"tool_calls":` + string(calls) + `},` +
		`{"text":"{{.Errors}} of {{len .Results}} calls went wrong, {{.Refused}} of them refused.{{range .Results}}\n- {{.Tool}}: {{if .Refused}}refused{{else if .Error}}error{{else}}ok{{end}}{{end}}"}]}]}`
	files := map[string]string{
		".opx/config.yaml": "provider:\n  kind: scripted\n  transcript: .opx/failures.json\npolicy: .opx/policy.yaml\n" +
			"limits:\n  max_tool_calls_per_message: 100\nshield:\n  approval_timeout: 1s\n",
		".opx/failures.json": transcript,
		".opx/policy.yaml": "version: 1\ndefault: allow\nnetwork:\n  allow_hosts: [127.0.0.1]\n  commands: false\n" +
			"deny:\n  - name: no-secrets\n    paths: [secret.txt]\n" +
			"verify:\n  - name: ask-first\n    tools: [delete_file]\n    paths: [ask.txt]\n    tier: 3\n",
		"secret.txt":      "s3cret\n",
		"ask.txt":         "ask me\n",
		"adir/keep.txt":   "kept\n",
		"MEMORY.md/x.txt": "MEMORY.md is a directory here, so the memory tools fail\n",
	}
	for name, content := range files {
		p := filepath.Join(w.ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m := w.start()
	st, _ := w.status()
	out, errOut, code := w.run("send", "break things")
	if code != 0 {
		t.Fatalf("opx send: exit %d\n%s%s", code, out, errOut)
	}
	session := regexp.MustCompile(`ses_[0-9a-f]{16}`).FindString(errOut)
	w.stop(m)
	if out, errOut, code := w.run("ledger", "verify", "--strict"); code != 0 {
		t.Fatalf("ledger verify --strict: exit %d\n%s%s", code, out, errOut)
	}

	// The raw entries, and what the test expects of them.
	raw := readRaw(t, st.LedgerPath, session)
	if len(raw) != len(failingCalls) {
		t.Fatalf("%d calls proposed, want %d", len(raw), len(failingCalls))
	}
	count := map[string]int{}
	for i, c := range raw {
		want := failingCalls[i]
		if c.tool != want.tool || !regexp.MustCompile("^("+want.want+")$").MatchString(c.outcome) {
			t.Errorf("call %d %s %s: outcome %q (end %s, failed %v, exit %d), want %s %s", i, c.tool, c.args, c.outcome, c.end, c.failedField, c.exitCode, want.tool, want.want)
		}
		if c.end == "exec.completed" && !c.failedField && c.exitCode != 0 && c.tool != "execute_command" && !strings.HasPrefix(c.tool, "git_") {
			t.Errorf("call %d %s: exit %d recorded without failed, for a tool that runs no process", i, c.tool, c.exitCode)
		}
		if c.deliveredError != (c.outcome != "completed") {
			t.Errorf("call %d %s (%s): the agent was told is_error %v", i, c.tool, c.outcome, c.deliveredError)
		}
		count[c.outcome]++
	}
	t.Logf("outcomes from the raw entries: %v", count)

	t.Run("replay json", func(t *testing.T) {
		out, errOut, code := w.run("replay", session, "--json")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		var r struct {
			Timeline struct {
				Turns []struct {
					ToolCalls []struct {
						CallID  string `json:"call_id"`
						Outcome string `json:"outcome"`
						Exec    *struct {
							Status   string   `json:"status"`
							ExitCode int64    `json:"exit_code"`
							Changed  []string `json:"changed"`
						} `json:"exec"`
					} `json:"tool_calls"`
				} `json:"turns"`
				Totals struct {
					Executed, Completed, Exited, Failed, Blocked, Denied int
					ByTool                                               []struct {
						Tool                            string
						Calls, Executed, Failed, Exited int
					} `json:"by_tool"`
				} `json:"totals"`
			} `json:"timeline"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		got := r.Timeline.Turns[0].ToolCalls
		if len(got) != len(raw) {
			t.Fatalf("%d calls, raw %d", len(got), len(raw))
		}
		type perTool struct{ calls, executed, failed, exited int }
		want := map[string]*perTool{}
		executed := 0
		for i, c := range raw {
			if got[i].CallID != c.id || got[i].Outcome != c.outcome {
				t.Errorf("call %s %s: outcome %q, raw %q", c.id, c.tool, got[i].Outcome, c.outcome)
			}
			if x := got[i].Exec; x != nil && c.outcome == "failed" && len(x.Changed) != 0 {
				t.Errorf("call %s %s failed but changed %v", c.id, c.tool, x.Changed)
			}
			p := want[c.tool]
			if p == nil {
				p = &perTool{}
				want[c.tool] = p
			}
			p.calls++
			if c.started {
				p.executed++
				executed++
			}
			switch c.outcome {
			case "failed":
				p.failed++
			case "exited":
				p.exited++
			}
		}
		tt := r.Timeline.Totals
		if tt.Executed != executed || tt.Completed != count["completed"] || tt.Exited != count["exited"] || tt.Failed != count["failed"] ||
			tt.Blocked != count["blocked"]+count["denied"] || tt.Denied != count["denied"] {
			t.Errorf("totals %+v, raw %v with %d executed", tt, count, executed)
		}
		for _, bt := range tt.ByTool {
			p := want[bt.Tool]
			if p == nil || bt.Calls != p.calls || bt.Executed != p.executed || bt.Failed != p.failed || bt.Exited != p.exited {
				t.Errorf("by tool %+v, raw %+v", bt, p)
			}
		}
	})

	t.Run("replay text", func(t *testing.T) {
		out, errOut, code := w.run("replay", session)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		for _, c := range raw {
			word := map[string]string{"failed": "→ failed", "blocked": "→ BLOCKED", "denied": "→ DENIED", "completed": "→ completed",
				"exited": fmt.Sprintf("→ ran, exit %d", c.exitCode)}[c.outcome]
			line := lineWith(out, fmt.Sprintf("#%d %s ", c.seq, c.tool))
			if !strings.HasSuffix(line, word) {
				t.Errorf("call %s %s (%s): line %q, want it to end %q", c.id, c.tool, c.outcome, line, word)
			}
		}
		executed := count["completed"] + count["exited"] + count["failed"]
		want := fmt.Sprintf("%d ran (%d exited non-zero), %d blocked, %d failed, 0 results flagged;", executed, count["exited"], count["blocked"]+count["denied"], count["failed"])
		if !strings.Contains(out, want) {
			t.Errorf("totals lack %q:\n%s", want, lineWith(out, "totals:"))
		}
		if got := strings.Count(out[strings.Index(out, "\ntotals:"):], " — "); got != count["failed"]+count["blocked"]+count["denied"] {
			t.Errorf("the blocked and failed lists after the totals hold %d calls, raw %d blocked or denied and %d failed", got, count["blocked"]+count["denied"], count["failed"])
		}
		if regexp.MustCompile(`ran \d+ ms, exit 1: "(read_file|edit_file|write_file)`).MatchString(out) {
			t.Errorf("a failed file tool is shown as ran:\n%s", out)
		}
	})

	t.Run("report", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "r.html")
		if _, errOut, code := w.run("report", session, "-o", path); code != 0 {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		html := string(b)
		executed := count["completed"] + count["exited"] + count["failed"]
		want := fmt.Sprintf("%d ran (%d completed, %d exited non-zero, <span class=\"d-block\">%d failed</span>)", executed, count["completed"], count["exited"], count["failed"])
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
		for outcome, n := range count {
			if got := len(regexp.MustCompile(`→ <span class="o-[a-z]+">`+outcome+`</span>`).FindAllString(html, -1)); got != n {
				t.Errorf("report shows %d calls %s, raw %d", got, outcome, n)
			}
		}
	})

	t.Run("metrics", func(t *testing.T) {
		out, errOut, code := w.run("metrics", "--json")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		var m struct {
			Tools []struct {
				Tool                  string
				Calls, Failed, Exited int
			}
		}
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		want := map[string][3]int{}
		for _, c := range raw {
			if c.end == "" {
				continue
			}
			v := want[c.tool]
			v[0]++
			if c.outcome == "failed" {
				v[1]++
			}
			if c.outcome == "exited" {
				v[2]++
			}
			want[c.tool] = v
		}
		if len(m.Tools) != len(want) {
			t.Errorf("%d tools, raw %d: %+v", len(m.Tools), len(want), m.Tools)
		}
		for _, tm := range m.Tools {
			if v := want[tm.Tool]; [3]int{tm.Calls, tm.Failed, tm.Exited} != v {
				t.Errorf("metrics %+v, raw calls/failed/exited %v", tm, v)
			}
		}
	})

	t.Run("snapshots", func(t *testing.T) {
		out, errOut, code := w.run("snapshots", "--json", "--session", session)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		var list struct {
			Snapshots []struct {
				ID           uint64
				Tool, Status string
				Changed      []string
				ChangesKnown bool `json:"changes_known"`
			}
		}
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatal(err)
		}
		bySnap := map[uint64]*rawCall{}
		for _, c := range raw {
			if c.snapshot != 0 {
				bySnap[c.snapshot] = c
			}
		}
		if len(list.Snapshots) != len(bySnap) {
			t.Errorf("%d snapshots listed, raw %d", len(list.Snapshots), len(bySnap))
		}
		text, _, _ := w.run("snapshots", "--session", session)
		for _, s := range list.Snapshots {
			c := bySnap[s.ID]
			if c == nil {
				t.Errorf("snapshot %d is of no call", s.ID)
				continue
			}
			want := map[string]string{"failed": "failed", "completed": "completed", "exited": fmt.Sprintf("ran, exit %d", c.exitCode)}[c.outcome]
			if s.Status != want {
				t.Errorf("snapshot %d (%s %s): status %q, raw %s", s.ID, c.tool, c.args, s.Status, want)
			}
			line := lineWith(text, fmt.Sprintf("%d ", s.ID))
			if c.outcome == "failed" {
				if !s.ChangesKnown || len(s.Changed) != 0 {
					t.Errorf("snapshot %d (%s) failed, changed %v (known %v)", s.ID, c.tool, s.Changed, s.ChangesKnown)
				}
				if !strings.Contains(line, "nothing changed") || !strings.HasSuffix(line, "[failed]") {
					t.Errorf("snapshot %d (%s) listed as %q", s.ID, c.tool, line)
				}
				show, _, code := w.run("snapshot", "show", fmt.Sprint(s.ID))
				if code != 0 || !strings.Contains(show, "status    failed\n") || !strings.Contains(show, "changed   nothing\n") {
					t.Errorf("snapshot show %d: exit %d\n%s", s.ID, code, show)
				}
				js, _, _ := w.run("snapshot", "show", fmt.Sprint(s.ID), "--json")
				if !strings.Contains(js, `"status":"failed"`) || !strings.Contains(js, `"outcome":"failed"`) {
					t.Errorf("snapshot show %d --json:\n%s", s.ID, js)
				}
			}
			if c.tool == "write_file" && c.outcome == "completed" && (len(s.Changed) != 1 || s.Changed[0] != "new.txt") {
				t.Errorf("the write of new.txt changed %v", s.Changed)
			}
		}
	})

	t.Run("history", func(t *testing.T) {
		out, errOut, code := w.run("history", session, "--json")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		wrong := len(raw) - count["completed"]
		want := fmt.Sprintf("%d of %d calls went wrong, %d of them refused.", wrong, len(raw), count["blocked"]+count["denied"])
		if !strings.Contains(out, want) {
			t.Errorf("the model's answer lacks %q:\n%s", want, out)
		}
	})
}

// lineWith returns the first line of out that contains s, trimmed.
func lineWith(out, s string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// TestE2E_TestsTurn_NoInvoice is the reported case: "run the tests and fix
// what fails" in a workspace without invoice.sh. The read of invoice.sh
// fails and every view says so; the model edits nothing and says the
// tests fail, never that they pass.
func TestE2E_TestsTurn_NoInvoice(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	if err := os.WriteFile(filepath.Join(w.ws, "test.sh"), []byte("#!/bin/sh\necho 'FAIL invoice.sh is missing'\nexit 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := w.start()
	out, errOut, code := w.run("send", "run the tests and fix what fails")
	if code != 0 {
		t.Fatalf("opx send: exit %d\n%s%s", code, out, errOut)
	}
	session := regexp.MustCompile(`ses_[0-9a-f]{16}`).FindString(errOut)
	w.stop(m)
	for _, want := range []string{"The tests fail", "FAIL invoice.sh is missing", "I could not read invoice.sh either", "so I changed nothing"} {
		if !strings.Contains(out, want) {
			t.Errorf("the answer lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "pass") {
		t.Errorf("the answer claims a pass:\n%s", out)
	}
	rep, _, code := w.run("replay", session)
	if code != 0 {
		t.Fatalf("replay: exit %d", code)
	}
	for _, want := range []string{`execute_command {"command":"sh test.sh"} → ran, exit 1`, `read_file {"path":"invoice.sh"} → failed`,
		"2 ran (1 exited non-zero), 0 blocked, 1 failed, 0 results flagged;"} {
		if !strings.Contains(rep, want) {
			t.Errorf("replay lacks %q:\n%s", want, rep)
		}
	}
	if strings.Contains(rep, "edit_file") {
		t.Errorf("the model edited a file it could not read:\n%s", rep)
	}
	met, _, _ := w.run("metrics")
	if line := lineWith(met, "read_file "); !regexp.MustCompile(`read_file\s+1\s+1\s+0\s`).MatchString(line) {
		t.Errorf("metrics: %q, want read_file with 1 call, 1 failed", line)
	}
}
