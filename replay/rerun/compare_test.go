package rerun_test

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay/rerun"
)

// en builds a session entry; seq and ts are set by entries.
func en(typ, data string) ledger.Entry {
	return ledger.Entry{Session: "ses_1", Type: typ, Data: []byte(data)}
}

// entries numbers es from first, one timestamp per list.
func entries(first uint64, ts string, es ...ledger.Entry) []ledger.Entry {
	out := make([]ledger.Entry, len(es))
	for i, e := range es {
		e.Seq, e.TS = first+uint64(i), ts
		out[i] = e
	}
	return out
}

const (
	blobA = "1111111111111111111111111111111111111111111111111111111111111111"
	blobB = "2222222222222222222222222222222222222222222222222222222222222222"
)

// session is a small recorded session: a model call (its response and
// tokens given), a tool call and its result.
func session(duration, reqID string, tokens ...ledger.Entry) []ledger.Entry {
	es := []ledger.Entry{
		en("client.message", `{"client":"t","content":"hi","message_id":"m1"}`),
		en("llm.request", `{"blob":"`+blobA+`","message_id":"m1","model":"x","provider":"scripted","request_id":"`+reqID+`","size":10}`),
	}
	es = append(es, tokens...)
	es = append(es,
		en("tool.proposed", `{"action_hash":"`+blobA+`","arguments":"{}","call_id":"c1","message_id":"m1","mutating":false,"tool":"list_directory"}`),
		en("shield.verdict", `{"action_hash":"`+blobA+`","call_id":"c1","decision":"allow","policy_hash":"`+blobB+`","reason":"ok","rule":"policy:r","tier":0}`),
		en("exec.completed", `{"call_id":"c1","duration_ms":`+duration+`,"exit_code":0,"post":[],"result":"a\nb","size":3,"tool":"list_directory"}`),
		en("engine.tool_result", `{"call_id":"c1","content":"a\nb","is_error":false,"size":3}`),
	)
	return es
}

func response(latency, reqID string) ledger.Entry {
	return en("llm.response", `{"attempts":1,"blob":"`+blobB+`","latency_ms":`+latency+`,"model":"x","provider":"scripted","request_id":"`+reqID+`","size":5,"status":200,"text":"hello world","tool_calls":[],"usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3}}`)
}

func tokens(text string, count int) ledger.Entry {
	return en("agent.tokens", `{"count":`+strconv.Itoa(count)+`,"message_id":"m1","text":"`+text+`"}`)
}

// TestCompare_VolatileIgnored: timestamps, seqs, latencies, durations,
// request ids (renamed consistently) and how tokens were coalesced and
// interleaved with the response may differ; the lists are identical.
func TestCompare_VolatileIgnored(t *testing.T) {
	rec := entries(10, "2026-01-01T00:00:00Z", session("40", "req_7", tokens("hello ", 1), response("12", "req_7"), tokens("world", 1))...)
	pro := entries(3, "2027-06-01T00:00:00.5Z", session("0", "req_1", response("1", "req_1"), tokens("hello world", 2))...)
	res, err := rerun.Compare(rec, pro)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Identical || res.Divergence != nil || res.Events != len(rec) || res.Matched != len(rec) {
		t.Fatalf("Compare = %+v, %+v; want identical", res, res.Divergence)
	}
}

// TestCompare_EverythingElseCompared: any other difference is the first
// divergence, at the recorded entry's seq, with a diff naming the member.
func TestCompare_EverythingElseCompared(t *testing.T) {
	base := func() []ledger.Entry {
		return entries(10, "2026-01-01T00:00:00Z", session("40", "req_7", response("12", "req_7"), tokens("hello world", 2))...)
	}
	for _, tc := range []struct {
		name    string
		mutate  func([]ledger.Entry) []ledger.Entry
		seq     uint64
		kind    string
		member  string
		typ     string
		matched int
	}{
		{"request body", func(es []ledger.Entry) []ledger.Entry {
			es[1].Data = []byte(strings.Replace(string(es[1].Data), blobA, blobB, 1))
			return es
		}, 11, rerun.KindPayload, `"blob"`, "llm.request", 1},
		{"response text", func(es []ledger.Entry) []ledger.Entry {
			es[2].Data = []byte(strings.Replace(string(es[2].Data), "hello world", "hello there", 1))
			return es
		}, 12, rerun.KindPayload, `"text"`, "llm.response", 2},
		{"token text", func(es []ledger.Entry) []ledger.Entry {
			es[3].Data = []byte(strings.Replace(string(es[3].Data), "hello world", "hello", 1))
			return es
		}, 13, rerun.KindPayload, `"text"`, "agent.tokens", 3},
		{"token count", func(es []ledger.Entry) []ledger.Entry {
			es[3].Data = []byte(strings.Replace(string(es[3].Data), `"count":2`, `"count":3`, 1))
			return es
		}, 13, rerun.KindPayload, `"count"`, "agent.tokens", 3},
		{"verdict reason", func(es []ledger.Entry) []ledger.Entry {
			es[5].Data = []byte(strings.Replace(string(es[5].Data), `"reason":"ok"`, `"reason":"fine"`, 1))
			return es
		}, 15, rerun.KindPayload, `"reason"`, "shield.verdict", 5},
		{"exit code", func(es []ledger.Entry) []ledger.Entry {
			es[6].Data = []byte(strings.Replace(string(es[6].Data), `"exit_code":0`, `"exit_code":1`, 1))
			return es
		}, 16, rerun.KindPayload, `"exit_code"`, "exec.completed", 6},
		{"another type", func(es []ledger.Entry) []ledger.Entry {
			es[4].Type = "agent.error"
			return es
		}, 14, rerun.KindType, "", "tool.proposed", 4},
		{"one entry short", func(es []ledger.Entry) []ledger.Entry { return es[:len(es)-1] }, 17, rerun.KindMissing, "", "engine.tool_result", 7},
		{"one entry more", func(es []ledger.Entry) []ledger.Entry {
			return append(es, en("agent.error", `{"code":"x","message":"y"}`))
		}, 0, rerun.KindExtra, "", "", 8},
		{"inconsistent request ids", func(es []ledger.Entry) []ledger.Entry {
			es[2].Data = []byte(strings.Replace(string(es[2].Data), "req_7", "req_9", 1))
			return es
		}, 12, rerun.KindPayload, `"request_id"`, "llm.response", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := base()
			pro := tc.mutate(base())
			for i := range pro {
				pro[i].Data = []byte(strings.Replace(string(pro[i].Data), "req_7", "req_1", -1))
			}
			if tc.name == "inconsistent request ids" {
				pro[2].Data = []byte(strings.Replace(string(pro[2].Data), "req_9", "req_2", 1))
			}
			res, err := rerun.Compare(rec, pro)
			if err != nil {
				t.Fatal(err)
			}
			d := res.Divergence
			if res.Identical || d == nil {
				t.Fatalf("Compare found no divergence")
			}
			if d.Seq != tc.seq || d.Kind != tc.kind || d.Type != tc.typ || res.Matched != tc.matched {
				t.Errorf("divergence at seq %d (%s, %s), %d matched; want seq %d (%s, %s), %d matched", d.Seq, d.Type, d.Kind, res.Matched, tc.seq, tc.typ, tc.kind, tc.matched)
			}
			if tc.member != "" && !strings.Contains(d.Diff, "-  "+tc.member) {
				t.Errorf("diff does not show %s changing:\n%s", tc.member, d.Diff)
			}
			if !strings.HasPrefix(d.Diff, "--- ") {
				t.Errorf("not a unified diff:\n%s", d.Diff)
			}
		})
	}
}

// TestCompare_DivergedIsIntegrity: a divergence maps to exit 4.
func TestCompare_DivergedIsIntegrity(t *testing.T) {
	if !errors.Is(rerun.ErrDiverged, ledger.ErrIntegrity) {
		t.Error("ErrDiverged is not an integrity finding")
	}
}

// TestLoad_NoSession: a session the ledger never opened is refused.
func TestLoad_NoSession(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Append(context.Background(), ledger.Sync, event.MustRecord("ses_2", &event.SessionCreated{Mode: "normal"})); err != nil {
		t.Fatal(err)
	}
	if _, err := rerun.Load(l, "ses_1"); !errors.Is(err, rerun.ErrNoSession) {
		t.Errorf("Load of an unknown session: %v, want ErrNoSession", err)
	}
	rec, err := rerun.Load(l, "ses_2")
	if err != nil || rec.Mode != "normal" || len(rec.Entries) != 1 {
		t.Errorf("Load = %+v, %v", rec, err)
	}
}

// TestCompare_AddedMembers: a member a payload gained later is compared
// when the record has it, and ignored when the record predates it.
func TestCompare_AddedMembers(t *testing.T) {
	old := `{"approval_id":"apr_1","call_id":"c1","reason":"r","timeout_ms":1000,"tool":"read_file"}`
	now := `{"approval_id":"apr_1","arguments":"{}","call_id":"c1","message_id":"m1","reason":"r","timeout_ms":1000,"tool":"read_file"}`
	other := strings.Replace(now, `"m1"`, `"m2"`, 1)
	for _, tc := range []struct {
		name, rec, pro string
		identical      bool
	}{
		{"recorded before the members", old, now, true},
		{"recorded with them", now, now, true},
		{"recorded with other values", now, other, false},
		{"missing from the rerun", now, old, false},
	} {
		res, err := rerun.Compare(entries(1, "t", en("approval.requested", tc.rec)), entries(1, "t", en("approval.requested", tc.pro)))
		if err != nil || res.Identical != tc.identical {
			t.Errorf("%s: %+v %v", tc.name, res, err)
		}
	}
}

// sub builds an entry of sub-agent id's thread: data gains its
// subagent_id.
func sub(id, typ, data string) ledger.Entry {
	return en(typ, `{"subagent_id":"`+id+`",`+data[1:])
}

// parallel is a session whose agent spawned two sub-agents, a and b, and
// collected their results; their entries interleave as order says (a
// string of 'a' and 'b', one letter per sub-agent entry, each sub-agent's
// entries in their own order).
func parallel(order string, bText string) []ledger.Entry {
	thread := func(id, text string) []ledger.Entry {
		return []ledger.Entry{
			sub(id, "subagent.spawned", `{"max_rounds":5,"parent_call_id":"c1","parent_message_id":"m1","task":"`+text+`","task_size":1,"timeout_ms":1000,"tools":["read_file"]}`),
			sub(id, "llm.request", `{"blob":"`+blobA+`","model":"x","provider":"scripted","request_id":"req_`+id+`","size":10}`),
			sub(id, "agent.tokens", `{"count":1,"message_id":"m1","text":"`+text+` "}`),
			sub(id, "llm.response", `{"attempts":1,"latency_ms":3,"model":"x","provider":"scripted","request_id":"req_`+id+`","size":5,"status":200,"text":"`+text+`","tool_calls":[],"usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3}}`),
			sub(id, "agent.tokens", `{"count":1,"message_id":"m1","text":"done"}`),
			sub(id, "subagent.completed", `{"duration_ms":7,"result":"`+text+` done","rounds":1,"size":4,"tool_calls":0,"usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3}}`),
		}
	}
	threads := map[byte][]ledger.Entry{'a': thread("sub_a", "alpha"), 'b': thread("sub_b", bText)}
	es := []ledger.Entry{
		en("client.message", `{"client":"t","content":"hi","message_id":"m1"}`),
		en("tool.proposed", `{"action_hash":"`+blobA+`","arguments":"{}","call_id":"c1","message_id":"m1","mutating":false,"tool":"spawn_agent"}`),
	}
	for i := range order {
		es = append(es, threads[order[i]][0])
		threads[order[i]] = threads[order[i]][1:]
	}
	return append(es, en("engine.tool_result", `{"call_id":"c1","content":"both done","is_error":false,"size":9}`))
}

// TestCompare_Threads: parallel sub-agents' entries may interleave in any
// order, their durations, token coalescing and process entries (pids)
// differ; each thread is compared on its own, in its own order, and the
// lists are identical.
func TestCompare_Threads(t *testing.T) {
	process := func(pid string) ledger.Entry {
		return sub("sub_a", "agent.spawned", `{"agent_id":"sub_a","pid":`+pid+`,"restart":0,"sandbox":{"connect_port":`+pid+`,"mechanism":"none"}}`)
	}
	rec := entries(10, "2026-01-01T00:00:00Z", append(parallel("aabbabababab", "beta"), process("17"))...)
	pro := entries(3, "2026-01-02T00:00:00Z", append(parallel("bbbbbbaaaaaa", "beta"), process("4242"))...)
	for i := range pro {
		pro[i].Data = []byte(strings.NewReplacer(`"duration_ms":7`, `"duration_ms":9`, "req_sub_a", "req_2", "req_sub_b", "req_1").Replace(string(pro[i].Data)))
	}
	res, err := rerun.Compare(rec, pro)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Identical || res.Matched != len(rec)-1 || res.SubAgents != 2 || res.Uncompared != 1 {
		t.Fatalf("Compare = %+v, %+v; want identical with 2 sub-agents", res, res.Divergence)
	}
}

// TestCompare_ThreadDiverges: a sub-agent whose entries differ is named
// in the divergence, at its recorded entry; the earliest divergence of all
// threads is reported.
func TestCompare_ThreadDiverges(t *testing.T) {
	rec := entries(10, "2026-01-01T00:00:00Z", parallel("abababababab", "beta")...)
	pro := entries(1, "2026-01-02T00:00:00Z", parallel("aaaaaabbbbbb", "gamma")...)
	res, err := rerun.Compare(rec, pro)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Divergence
	// b's subagent.spawned, the third of the record's sub-agent entries.
	if res.Identical || d == nil || d.SubAgentID != "sub_b" || d.Seq != 13 || d.Type != event.TypeSubAgentSpawned || !strings.Contains(d.Diff, "gamma") {
		t.Fatalf("divergence %+v, want sub_b's subagent.spawned at seq 13", d)
	}
	if res.Matched != 3 { // the client message, the proposal and a's spawn
		t.Errorf("%d matched before the divergence, want 3", res.Matched)
	}
	// A sub-agent the rerun never started: missing at its first entry.
	pro = entries(1, "t", parallel("aaaaaa", "beta")...)
	res, err = rerun.Compare(rec, pro)
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Divergence; d == nil || d.SubAgentID != "sub_b" || d.Kind != rerun.KindMissing || d.Seq != 13 {
		t.Fatalf("divergence %+v, want sub_b missing at seq 13", d)
	}
}

// TestCompare_LastWords: after a sub-agent's end entry, what its dying
// process still sent (an agent.error, a tool call refused before any
// proposal) is left out; the engine's answer to a call in flight at the
// end is compared.
func TestCompare_LastWords(t *testing.T) {
	thread := func(lastWords bool, answer string) []ledger.Entry {
		es := []ledger.Entry{
			sub("sub_a", "subagent.spawned", `{"max_rounds":5,"parent_call_id":"c1","parent_message_id":"m1","task":"t","task_size":1,"timeout_ms":1000,"tools":["read_file"]}`),
			sub("sub_a", "tool.proposed", `{"action_hash":"`+blobA+`","arguments":"{}","call_id":"c9","message_id":"m1","mutating":false,"tool":"read_file"}`),
			sub("sub_a", "subagent.timed_out", `{"duration_ms":1000,"timeout_ms":1000}`),
		}
		if lastWords {
			es = append(es, sub("sub_a", "agent.error", `{"code":"llm_error","message":"gone","message_id":"m1"}`),
				sub("sub_a", "engine.tool_result", `{"call_id":"c10","content":"error: ended","is_error":true,"size":12}`))
		}
		return append(es, sub("sub_a", "engine.tool_result", `{"call_id":"c9","content":"`+answer+`","is_error":true,"size":5}`))
	}
	res, err := rerun.Compare(entries(1, "t", thread(true, "ended")...), entries(1, "t", thread(false, "ended")...))
	if err != nil || !res.Identical || res.Uncompared != 2 {
		t.Fatalf("last words left out: %+v %v", res, err)
	}
	res, err = rerun.Compare(entries(1, "t", thread(true, "ended")...), entries(1, "t", thread(false, "other")...))
	if err != nil || res.Identical || res.Divergence.Type != "engine.tool_result" || res.Divergence.SubAgentID != "sub_a" {
		t.Fatalf("the answer to a call in flight at the end is compared: %+v %v", res, err)
	}
}
