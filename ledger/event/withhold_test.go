package event_test

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger/event"
)

// envelope lists, per entry type recordable off the record, the string
// members Withhold keeps: the envelope. Every other string member must come
// out withheld. A member added to a payload must be added here (as
// envelope, after thinking about it) or withheld in withhold_entries.go;
// docs/otr.md is the same table for readers.
var envelope = map[string][]string{
	event.TypeSessionCreated:    {"mode", "parent_session", "subagent_id"},
	event.TypeSessionTitled:     {},
	event.TypeClientMessage:     {"message_id", "client", "traceparent"},
	event.TypeProcessRequest:    {"subagent_id", "message_id", "mode"},
	event.TypeAgentTokens:       {"subagent_id", "message_id"},
	event.TypeAgentToolCall:     {"subagent_id", "message_id"},
	event.TypeMemoryFlush:       {"subagent_id"},
	event.TypeResponseComplete:  {"subagent_id", "message_id", "thoughts[].stage"},
	event.TypeAgentError:        {"subagent_id", "message_id", "code"},
	event.TypeAgentCrashed:      {"agent_id", "subagent_id", "signal"},
	event.TypeLLMRequest:        {"subagent_id", "request_id", "message_id", "provider"},
	event.TypeLLMResponse:       {"subagent_id", "request_id", "provider", "finish_reason"},
	event.TypeToolProposed:      {"subagent_id", "message_id", "manifests[].format", "manifests[].changes[].kind", "taint[].subagent_id"},
	event.TypeShieldVerdict:     {"subagent_id", "decision", "rule", "policy_hash"},
	event.TypeApprovalRequested: {"subagent_id", "approval_id", "message_id"},
	event.TypeApprovalResolved:  {"subagent_id", "approval_id", "by"},
	event.TypeToolResult:        {"subagent_id"},
	event.TypeExecStarted:       {"subagent_id"},
	event.TypeExecCompleted:     {"subagent_id", "pre[].state", "pre[].omitted"},
	event.TypeExecFailed:        {"subagent_id"},
	event.TypeSnapshot:          {"subagent_id", "kind", "files[].state", "files[].omitted", "excluded[]"},
	event.TypeSubAgentSpawned:   {"subagent_id", "parent_message_id"},
	event.TypeSubAgentCompleted: {"subagent_id"},
	event.TypeSubAgentFailed:    {"subagent_id", "reason"},
	event.TypeSubAgentCancelled: {"subagent_id"},
	event.TypeSubAgentTimedOut:  {"subagent_id"},
	event.TypeAgentSpawned:      {"agent_id", "subagent_id", "sandbox.mechanism", "sandbox.read_paths[]", "sandbox.write_paths[]"},
	event.TypeAgentExited:       {"agent_id", "subagent_id", "reason"},
	event.TypeSandboxCanary: {"agent_id", "subagent_id", "result.status", "result.platform", "result.mechanism", "result.probes[].name",
		"result.probes[].status", "result.probes[].target", "result.probes[].error", "result.summary", "result.timestamp", "action", "reason"},
	event.TypeAgentReady:      {"agent_id", "subagent_id", "canary_status"},
	event.TypeToolDefsRequest: {"subagent_id"},
	event.TypeToolDefs:        {"subagent_id"},
	event.TypeShutdown:        {"subagent_id", "reason"},
	event.TypeResultFlagged:   {"subagent_id", "rule", "action"},
	event.TypeMCPServerStarted: {"server", "command[]", "sandbox.read_only[]", "sandbox.home", "protocol_version", "server_name",
		"server_version"},
	event.TypeMCPToolsListed:   {"server", "tools[].name", "tools[].tool", "tools[].schema_hash", "refused[]"},
	event.TypeMCPServerExited:  {"server", "signal", "reason"},
	event.TypeMCPServerFailed:  {"server"},
	event.TypeMCPProtocolError: {"server", "kind"},
	event.TypeMCPClient:        {"client_name", "client_version", "protocol_version", "capabilities[]", "upstream", "command[]"},
	event.TypeMCPRequest:       {},
	event.TypeMCPResponse:      {},
}

// named lists, per entry type, the members that name something: a tool,
// a tool group, a model, a call. Withhold keeps them in clear only when
// the engine knows the name (event.Known) or the call id is a plain
// bounded id; otherwise they are model output and withheld, which is how
// TestWithhold_EveryMemberClassified (knowing nothing, with markers that
// are no plain ids) sees them.
var named = map[string][]string{
	event.TypeProcessRequest:    {"tools[]"},
	event.TypeAgentToolCall:     {"call_id", "tool"},
	event.TypeLLMRequest:        {"model"},
	event.TypeLLMResponse:       {"model", "tool_calls[].call_id", "tool_calls[].tool"},
	event.TypeToolProposed:      {"call_id", "tool"},
	event.TypeShieldVerdict:     {"call_id"},
	event.TypeApprovalRequested: {"call_id", "tool"},
	event.TypeApprovalResolved:  {"call_id"},
	event.TypeToolResult:        {"call_id"},
	event.TypeExecStarted:       {"call_id", "tool"},
	event.TypeExecCompleted:     {"call_id", "tool"},
	event.TypeExecFailed:        {"call_id", "tool"},
	event.TypeSnapshot:          {"call_id", "tool"},
	event.TypeSubAgentSpawned:   {"parent_call_id", "tools[]", "model"},
	event.TypeToolDefsRequest:   {"call_id", "groups[]"},
	event.TypeToolDefs:          {"call_id", "groups[]", "tools[]"},
	event.TypeSubAgentCancelled: {"by_call_id"},
	event.TypeResultFlagged:     {"call_id", "tool"},
	event.TypeMCPProtocolError:  {"call_id"},
}

// fill sets every string reachable in v (fields, one-element slices of
// strings and structs) to a marker naming its path, and returns the paths.
// A member that could hold text in another shape (bytes, a map, an
// interface) is returned under a path no table lists, so the test fails
// until the test learns to fill it and the member is classified.
func fill(v reflect.Value, path string, paths map[string]bool) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("marker<" + path + ">")
		paths[path] = true
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(v.Elem(), path, paths)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			name := strings.Split(f.Tag.Get("json"), ",")[0]
			if !f.IsExported() || name == "-" {
				continue
			}
			p := name
			if path != "" {
				p = path + "." + name
			}
			fill(v.Field(i), p, paths)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			paths[path+" (bytes: classify it)"] = true
			return
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), path+"[]", paths)
		v.Set(s)
	case reflect.Map, reflect.Interface:
		paths[path+" (a map or interface: classify it)"] = true
	}
}

// strings collects every string reachable in v by path.
func collect(v reflect.Value, path string, out map[string]string) {
	switch v.Kind() {
	case reflect.String:
		out[path] = v.String()
	case reflect.Pointer:
		if !v.IsNil() {
			collect(v.Elem(), path, out)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			name := strings.Split(f.Tag.Get("json"), ",")[0]
			if !f.IsExported() || name == "-" {
				continue
			}
			p := name
			if path != "" {
				p = path + "." + name
			}
			collect(v.Field(i), p, out)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			collect(v.Index(i), path+"[]", out)
		}
	}
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

func testCommitments() *event.Commitments {
	var key [32]byte
	for i := range key {
		key[i] = byte(i)
	}
	return event.NewCommitments(key)
}

// TestWithhold_EveryMemberClassified fills every string member of every
// registered type with a marker and checks that Withhold keeps exactly the
// envelope members of the table above and withholds all others; a type
// it refuses is never recorded in a session, so it cannot leak either.
func TestWithhold_EveryMemberClassified(t *testing.T) {
	c := testCommitments()
	for _, typ := range event.Types() {
		p, _ := event.New(typ)
		paths := map[string]bool{}
		fill(reflect.ValueOf(p), "", paths)
		q, err := event.Withhold(p, c)
		if errors.Is(err, event.ErrNotWithholdable) {
			if _, listed := envelope[typ]; listed {
				t.Errorf("%s: refused, but the envelope table lists it", typ)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		env, listed := envelope[typ]
		if !listed {
			t.Errorf("%s: withheld, but the envelope table does not classify it", typ)
			continue
		}
		keep := map[string]bool{}
		for _, e := range env {
			keep[e] = true
			if !paths[e] {
				t.Errorf("%s: the envelope table names %s, which the payload does not have", typ, e)
			}
		}
		got := map[string]string{}
		collect(reflect.ValueOf(q), "", got)
		var ps []string
		for p := range paths {
			ps = append(ps, p)
		}
		sort.Strings(ps)
		for _, path := range ps {
			v, marker := got[path], "marker<"+path+">"
			switch {
			case keep[path] && v != marker:
				t.Errorf("%s.%s: envelope, but changed to %q", typ, path, v)
			case !keep[path] && v == marker:
				t.Errorf("%s.%s: kept as is, but neither withheld nor classified as envelope", typ, path)
			case !keep[path] && strings.Contains(v, "marker"):
				t.Errorf("%s.%s: withheld form %q still holds content", typ, path, v)
			case !keep[path]:
				if _, ok := event.Withheld(v); !ok && !hex64.MatchString(v) {
					t.Errorf("%s.%s: %q is neither a withheld form nor a hash", typ, path, v)
				}
			}
		}
		if reflect.DeepEqual(p, q) && len(env) < len(paths) {
			t.Errorf("%s: Withhold returned the payload unchanged", typ)
		}
	}
}

// TestWithhold_KnownNamesKept: the named members stay in clear when the
// engine knows the name (a call id: when it is plain and bounded), and
// only then: an unknown name, or a call id too long or of other
// characters, is withheld, the same form wherever it is recorded.
func TestWithhold_KnownNamesKept(t *testing.T) {
	yes := func(string) bool { return true }
	knowing := testCommitments().WithKnown(event.Known{Tool: yes, Group: yes, Model: yes})
	for typ, members := range named {
		for _, c := range []*event.Commitments{knowing, testCommitments()} {
			p, _ := event.New(typ)
			fill(reflect.ValueOf(p), "", map[string]bool{})
			setNamed(reflect.ValueOf(p), "", members, "call_01Abc.d:e-f")
			q, err := event.Withhold(p, c)
			if err != nil {
				t.Fatalf("%s: %v", typ, err)
			}
			got := map[string]string{}
			collect(reflect.ValueOf(q), "", got)
			for _, m := range members {
				isID := strings.HasSuffix(m, "call_id")
				switch {
				case (c == knowing || isID) && got[m] != "call_01Abc.d:e-f":
					t.Errorf("%s.%s: a known name or plain id changed to %q", typ, m, got[m])
				case c != knowing && !isID && got[m] == "call_01Abc.d:e-f":
					t.Errorf("%s.%s: an unknown name kept in clear", typ, m)
				}
			}
		}
	}
	c := testCommitments()
	for _, id := range []string{strings.Repeat("a", 65), "call id", "call/1", "call_\u00e9"} {
		if _, ok := event.Withheld(c.CallID(id)); !ok {
			t.Errorf("call id %q kept in clear", id)
		}
		if c.CallID(id) != c.CallID(id) {
			t.Errorf("call id %q withheld inconsistently", id)
		}
	}
	if id := strings.Repeat("a", 64); c.CallID(id) != id {
		t.Errorf("a 64-byte plain call id withheld")
	}
}

// setNamed sets the string members of v at the given paths to s.
func setNamed(v reflect.Value, path string, members []string, s string) {
	switch v.Kind() {
	case reflect.String:
		for _, m := range members {
			if m == path {
				v.SetString(s)
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			setNamed(v.Elem(), path, members, s)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			name := strings.Split(f.Tag.Get("json"), ",")[0]
			if !f.IsExported() || name == "-" {
				continue
			}
			p := name
			if path != "" {
				p = path + "." + name
			}
			setNamed(v.Field(i), p, members, s)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			setNamed(v.Index(i), path+"[]", members, s)
		}
	}
}

// TestWithhold_DoesNotChangeInput: the pipeline goes on using a payload
// after recording it (a verdict is published to the session's clients).
func TestWithhold_DoesNotChangeInput(t *testing.T) {
	in := &event.ResponseComplete{MessageID: "m", Content: "secret", Thoughts: []event.Thought{{Stage: "reasoning", Summary: "s"}}}
	if _, err := event.Withhold(in, testCommitments()); err != nil {
		t.Fatal(err)
	}
	if in.Content != "secret" || in.Thoughts[0].Summary != "s" {
		t.Fatalf("input changed: %+v", in)
	}
}

// TestWithhold_ValidatesStrictly: a valid payload stays valid once
// withheld, so `opx ledger verify --strict` accepts an off-the-record
// ledger: inline and blob contents, sizes and hash-shaped members.
func TestWithhold_ValidatesStrictly(t *testing.T) {
	h := strings.Repeat("ab", 32)
	big := strings.Repeat("x", event.InlineLimit+1)
	c := testCommitments()
	for _, p := range []event.Payload{
		&event.SessionCreated{Mode: "otr", Title: "read the secret plan"},
		&event.ClientMessage{MessageID: "m", Content: "the secret plan"},
		&event.ProcessRequest{MessageID: "m", Content: "the secret plan", Mode: "otr"},
		&event.ToolProposed{CallID: "c", Tool: "read_file", Arguments: `{"path":"plan.txt"}`, ActionHash: h},
		&event.ShieldVerdict{CallID: "c", Decision: event.Block, Tier: -1, Rule: "otr:read-only", Reason: "write_file plan.txt", ActionHash: h, PolicyHash: h},
		&event.ToolResult{CallID: "c", Content: "the plan", Size: 8},
		&event.ToolResult{CallID: "c", Blob: h, Size: int64(len(big))},
		&event.ExecCompleted{CallID: "c", Tool: "read_file", Result: "the plan", Size: 8, Post: []event.PostState{{Path: "a", Hash: h}}},
		&event.ExecCompleted{CallID: "c", Tool: "read_file", ResultBlob: h, Size: 9000, Post: []event.PostState{}},
		&event.LLMRequest{RequestID: "r", Provider: "p", Model: "m", Blob: h, Size: 300},
		&event.LLMResponse{RequestID: "r", Provider: "p", Model: "m", Blob: h, Size: 30, Attempts: 1, Text: "ok",
			ToolCalls: []event.ToolCall{{CallID: "c", Tool: "read_file", Arguments: "{}"}}},
		&event.MemoryFlush{Content: "remember", Size: 8},
		&event.Snapshot{CallID: "c", Tool: "write_file", Kind: event.KindFiles, Files: []event.FileState{{Path: "a", State: event.StateFile, Blob: h, Size: 3}}},
		&event.SubAgentSpawned{SubAgentID: "s", ParentCallID: "c", Task: "look", TaskSize: 4, Tools: []string{}, MaxRounds: 1, TimeoutMS: 1},
		&event.SubAgentCompleted{SubAgentID: "s", ResultBlob: h, Size: 5000},
	} {
		if err := p.Validate(); err != nil {
			t.Fatalf("%s: the test payload is invalid: %v", p.Type(), err)
		}
		q, err := event.Withhold(p, c)
		if err != nil {
			t.Fatalf("%s: %v", p.Type(), err)
		}
		if err := q.Validate(); err != nil {
			t.Errorf("%s: withheld payload does not validate: %v", p.Type(), err)
		}
	}
}

// TestWithhold_Consistent: one action hash commits equally in every entry
// of a session (the causality checks compare them), differently under
// another session's key, and domains separate equal contents.
func TestWithhold_Consistent(t *testing.T) {
	h := strings.Repeat("cd", 32)
	c := testCommitments()
	p, _ := event.Withhold(&event.ToolProposed{CallID: "c", Tool: "t", ActionHash: h}, c)
	v, _ := event.Withhold(&event.ShieldVerdict{CallID: "c", Decision: event.Allow, Rule: "r", ActionHash: h, PolicyHash: h}, c)
	s, _ := event.Withhold(&event.ExecStarted{CallID: "c", Tool: "t", ActionHash: h}, c)
	a := p.(*event.ToolProposed).ActionHash
	if a == h || a != v.(*event.ShieldVerdict).ActionHash || a != s.(*event.ExecStarted).ActionHash {
		t.Fatalf("action hashes: %s %s %s", a, v.(*event.ShieldVerdict).ActionHash, s.(*event.ExecStarted).ActionHash)
	}
	var other [32]byte
	if event.NewCommitments(other).Hash(event.DomainActionHash, h) == a {
		t.Fatal("another key gives the same commitment")
	}
	if c.Text(event.DomainUserText, "x") == c.Text(event.DomainModelText, "x") {
		t.Fatal("domains are not separated")
	}
}

// TestCommitments_KnownAnswer pins the construction (docs/otr.md). With
// key = bytes 0..31 it is reproducible with b3sum:
//
//	printf '%b' "$(printf '\\x%02x' $(seq 0 31))" > key
//	dk=$(b3sum --derive-key "opx otr v1 user-text" --no-names < key)
//	printf '%s' "$dk" | xxd -r -p | b3sum --keyed --no-names <(printf hello)
func TestCommitments_KnownAnswer(t *testing.T) {
	got := testCommitments().Text(event.DomainUserText, "hello")
	const want = "otr:v1:5:a41dc16e7f32fe34c1b3091f0fa5c3764422f7e63bbf8440b0292a635c897ac0"
	if got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestWithheld_Form(t *testing.T) {
	h := strings.Repeat("0f", 32)
	for _, tc := range []struct {
		in   string
		size int64
		ok   bool
	}{
		{"otr:v1:5:" + h, 5, true},
		{"otr:v1:0:" + h, 0, true},
		{"otr:v1:05:" + h, 0, false},
		{"otr:v1:-5:" + h, 0, false},
		{"otr:v1::" + h, 0, false},
		{"otr:v1:5:" + strings.ToUpper(h), 0, false},
		{"otr:v1:5:" + h + " ", 0, false},
		{"otr:v2:5:" + h, 0, false},
		{"hello", 0, false},
		{"otr:v1:99999999999999999999:" + h, 0, false},
	} {
		size, ok := event.Withheld(tc.in)
		if size != tc.size || ok != tc.ok {
			t.Errorf("Withheld(%q) = %d, %v; want %d, %v", tc.in, size, ok, tc.size, tc.ok)
		}
	}
	if got := event.Display("otr:v1:12:" + h); got != "[off the record: 12 bytes]" {
		t.Errorf("Display: %q", got)
	}
	if got := event.DisplayText(`user: "otr:v1:3:` + h + `", tool otr:v1:0:` + h); got != `user: "[off the record: 3 bytes]", tool [off the record: 0 bytes]` {
		t.Errorf("DisplayText: %q", got)
	}
	if got := event.Display("plain"); got != "plain" {
		t.Errorf("Display: %q", got)
	}
}

// FuzzWithheld: whatever the text, Withheld accepts exactly the canonical
// form (so a size reads back as it was written) and DisplayText never
// fails.
func FuzzWithheld(f *testing.F) {
	h := strings.Repeat("0f", 32)
	for _, s := range []string{"otr:v1:5:" + h, "otr:v1:05:" + h, "otr:v1:", "x otr:v1:1:" + h + " y", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, ok := event.Withheld(s); ok {
			if want := fmt.Sprintf("otr:v1:%d:%s", n, s[len(s)-64:]); want != s || !hex64.MatchString(s[len(s)-64:]) {
				t.Fatalf("accepted %q as %d", s, n)
			}
		}
		_ = event.DisplayText(s)
	})
}

// TestWithhold_MCPRequest: a proxied request's id is kept like a call id
// (plain and bounded), its method when it is an MCP method; anything
// else a client wrote there is withheld, as its params and result are.
func TestWithhold_MCPRequest(t *testing.T) {
	c := testCommitments()
	for _, tt := range []struct {
		id, method string
		keepID     bool
		keepMethod bool
	}{
		{"7", "resources/read", true, true},
		{"req-1", "tools/list", true, true},
		{"my secret request", "tools/list", false, true},
		{"8", "x-private/leak the plan", true, false},
	} {
		q, err := event.Withhold(&event.MCPResponse{RequestID: tt.id, Method: tt.method, Result: `{"contents":[]}`, Size: 15}, c)
		if err != nil {
			t.Fatal(err)
		}
		r := q.(*event.MCPResponse)
		if (r.RequestID == tt.id) != tt.keepID || (r.Method == tt.method) != tt.keepMethod {
			t.Errorf("%q %q recorded as %q %q", tt.id, tt.method, r.RequestID, r.Method)
		}
		if _, ok := event.Withheld(r.Result); !ok {
			t.Errorf("result kept: %q", r.Result)
		}
	}
}
