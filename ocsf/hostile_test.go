package ocsf_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ocsf"
)

// chain builds entries of the given payloads, chained, as a ledger would
// hold them (the mapper reads the parsed entry; the bytes only for the
// hash).
func chain(t *testing.T, session string, ps ...event.Payload) []ledger.Entry {
	t.Helper()
	var out []ledger.Entry
	var prev ledger.Hash
	for i, p := range ps {
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(map[string]any{"data": json.RawMessage(data), "prev": prev.String(), "seq": i,
			"session": session, "ts": "2026-12-02T10:00:00.000000001Z", "type": p.Type()})
		e := ledger.Entry{Seq: uint64(i), Prev: prev, TS: "2026-12-02T10:00:00.000000001Z", Session: session, Type: p.Type(), Data: data, Raw: raw}
		prev = e.Hash()
		out = append(out, e)
	}
	return out
}

// TestMapper_Map_HostileContent: recorded content is outside input (the
// model chose the command, a source its host). Huge values, control
// characters, escape sequences, bidirectional overrides, line separators
// and markup come out cut to their bounds, one valid event per line, and
// never as a second event.
func TestMapper_Map_HostileContent(t *testing.T) {
	nasty := "\x1b[2J\x1b]0;pwned\x07<script>alert(1)</script>\u202e\u2028\u2029\r\n" +
		`"}` + "\n" + `{"class_uid":2004,"type_uid":200401}` + "\n"
	huge := strings.Repeat(nasty, 1<<12) // about 400 KiB, far over every bound
	session := "ses\n" + nasty
	call := strings.Repeat("c", 1<<18)
	cmd, _ := json.Marshal(map[string]string{"command": huge})
	posts := make([]event.PostState, 1000)
	for i := range posts {
		posts[i] = event.PostState{Path: fmt.Sprintf("d/%s%d", nasty, i), Hash: strings.Repeat("a", 64)}
	}
	entries := chain(t, session,
		&event.EngineStarted{Version: huge, Model: huge, Provider: "p"},
		&event.SessionCreated{Mode: "normal"},
		&event.ToolProposed{CallID: call, Tool: "execute_command", Arguments: string(cmd)},
		&event.ShieldVerdict{CallID: call, Decision: event.Escalate, Rule: huge, Reason: huge},
		&event.ApprovalResolved{CallID: call, ApprovalID: "a", Approved: true, By: huge, Reason: huge},
		&event.ExecCompleted{CallID: call, Tool: "execute_command", Post: posts, ExitCode: 3},
		&event.ToolProposed{CallID: "w", Tool: huge, Arguments: "{}"},
		&event.ExecFailed{CallID: "w", Tool: huge, Error: huge},
		&event.ResultFlagged{CallID: "w", Tool: huge, Rule: huge, Reason: huge, Action: "withheld"},
		&event.MCPResponse{RequestID: huge, Method: huge, Error: huge},
	)
	m := ocsf.NewMapper(ocsf.Options{LedgerID: "L", Host: nasty + strings.Repeat("h", 1<<18)})
	var lines [][]byte
	for i := range entries {
		buf, n, err := m.Map(nil, &entries[i])
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.Count(buf, []byte("\n")); got != n || n > 1+ocsf.MaxFileEvents {
			t.Fatalf("entry %d: %d events, %d lines", i, n, got)
		}
		lines = append(lines, bytes.SplitAfter(buf, []byte("\n"))[:n]...)
	}
	evs := checkLines(t, lines)
	if len(evs) != 1+1+1+ocsf.MaxFileEvents+1+1+1 {
		t.Errorf("%d events", len(evs))
	}
	for i, l := range lines {
		if len(l) > 32<<10 {
			t.Errorf("line %d is %d bytes", i, len(l))
		}
		for _, bad := range []string{"\x1b", "\u202e", "\u2028", "\r", "<script>"} {
			if bytes.Contains(l, []byte(bad)) {
				t.Errorf("line %d holds %q raw", i, bad)
			}
		}
	}
	exec := evs[2]
	if more := exec["unmapped"].(map[string]any)["opx"].(map[string]any)["more_files"].(float64); more != 1000-ocsf.MaxFileEvents {
		t.Errorf("more_files %v", more)
	}
	if !exec["metadata"].(map[string]any)["is_truncated"].(bool) {
		t.Error("a cut command line without metadata.is_truncated")
	}
}
