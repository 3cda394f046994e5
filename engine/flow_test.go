package engine_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/opx-dev/opx/fixtures"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// flowTranscript reads a file the policy marks secret, then makes a
// request with a query string; in the second message, a credential read
// that Shield blocks, then the same request.
const flowTranscript = `{"model": "flow-test-1", "turns": [
 {"match": "(?i)config", "steps": [
  {"tool_calls": [{"name": "read_file", "arguments": "{\"path\": \"config/secrets.yml\"}"}]},
  {"tool_calls": [{"name": "http_request", "arguments": "{\"url\": \"https://docs.example.com/search?q=yaml\"}"}]},
  {"text": "Done: {{.LastResult}}"}
 ]}
]}`

// flowPolicy is the default policy with config/secrets.yml marked secret.
var flowPolicy = strings.Replace(string(fixtures.DefaultPolicy), "\ndeny:\n", "\nsecrets: [\"config/secrets.yml\"]\ndeny:\n", 1)

// TestFlow_TaintRecordedAndReplayed: a session that read a file the policy
// marks secret has its next request with a query string asked about
// (flow:tainted-egress, naming the read); the read is recorded as
// sensitive, the request's proposal records the taint it was judged with,
// and a rerun reproduces both. A session that did not read it is not
// asked.
func TestFlow_TaintRecordedAndReplayed(t *testing.T) {
	if !strings.Contains(flowPolicy, "secrets: [") {
		t.Fatal("the test policy does not mark the secret")
	}
	r := recordSession(t, recordSpec{transcript: flowTranscript, policy: flowPolicy, approve: false,
		files:    map[string]string{"config/secrets.yml": "db_password: hunter2\n", "README.md": "# flow\n"},
		messages: []string{"check the config"}})
	props, verdicts := proposalsAndVerdicts(t, r.path)
	if len(props) != 2 {
		t.Fatalf("proposals %+v, want the read and the request", props)
	}
	if len(props[0].Sensitive) != 1 || !strings.Contains(props[0].Sensitive[0], "config/secrets.yml") {
		t.Errorf("the read's sensitive: %q, want the secret file", props[0].Sensitive)
	}
	if len(props[1].Taint) != 1 || props[1].Taint[0].CallID != props[0].CallID || !strings.Contains(props[1].Taint[0].What, "secrets.yml") {
		t.Errorf("the request's taint: %+v, want the read (call %s)", props[1].Taint, props[0].CallID)
	}
	found := false
	for _, v := range verdicts {
		if v.CallID == props[1].CallID && v.Rule == "flow:tainted-egress" && v.Decision == event.Escalate && strings.Contains(v.Reason, "secrets.yml") {
			found = true
		}
	}
	if !found {
		t.Errorf("verdicts %+v, want flow:tainted-egress on the request", verdicts)
	}
	if rep := rerunSession(t, r.path, r.session); !rep.Identical {
		d := rep.Divergence
		t.Fatalf("rerun diverged at seq %d (%s, %s): %s", d.Seq, d.Type, d.Kind, d.Diff)
	}

	// Without the read, the same request is a plain read of the web.
	clean := recordSession(t, recordSpec{transcript: strings.Replace(flowTranscript, `config/secrets.yml\"}"}]},`, `README.md\"}"}]},`, 1),
		policy: flowPolicy, files: map[string]string{"config/secrets.yml": "db_password: hunter2\n", "README.md": "# flow\n"},
		messages: []string{"check the config"}})
	cprops, cverdicts := proposalsAndVerdicts(t, clean.path)
	for _, v := range cverdicts {
		if strings.Contains(v.Rule+v.Reason, "flow:") {
			t.Errorf("a session that read no secret: %+v", v)
		}
	}
	for _, p := range cprops {
		if len(p.Taint) > 0 {
			t.Errorf("a session that read no secret recorded taint: %+v", p)
		}
	}
}

// supplyTranscript bumps a dependency's version in package.json, then
// adds an install script to it.
const supplyTranscript = `{"model": "supply-test-1", "turns": [
 {"match": "(?i)deps", "steps": [
  {"tool_calls": [{"name": "edit_file", "arguments": "{\"path\": \"package.json\", \"old\": \"\\\"left-pad\\\": \\\"^1.2.0\\\"\", \"new\": \"\\\"left-pad\\\": \\\"^1.3.0\\\"\"}"}]},
  {"tool_calls": [{"name": "edit_file", "arguments": "{\"path\": \"package.json\", \"old\": \"\\\"test\\\": \\\"jest\\\"\", \"new\": \"\\\"test\\\": \\\"jest\\\", \\\"postinstall\\\": \\\"node scripts/setup.js\\\"\"}"}]},
  {"text": "Done: {{.LastResult}}"}
 ]}
]}`

const supplyPackageJSON = `{
  "name": "app",
  "version": "1.0.0",
  "scripts": {"test": "jest"},
  "dependencies": {"left-pad": "^1.2.0"}
}
`

// TestSupply_ManifestChangeRecordedAndReplayed: an edit of package.json
// is judged by the change it makes, computed by the engine from the file
// before and after: a version bump passes, an install script is asked
// about (supply-chain:runs-code); the change is recorded with the
// proposal (tool.proposed manifests), and a rerun, which judges the
// record and not the file of the day, reproduces both.
func TestSupply_ManifestChangeRecordedAndReplayed(t *testing.T) {
	r := recordSession(t, recordSpec{transcript: supplyTranscript, approve: false,
		files: map[string]string{"package.json": supplyPackageJSON, "README.md": "# supply\n"}, messages: []string{"update the deps"}})
	props, verdicts := proposalsAndVerdicts(t, r.path)
	rules := map[string][]string{}
	for _, v := range verdicts {
		rules[v.CallID] = append(rules[v.CallID], v.Decision+" "+v.Rule)
	}
	if len(props) != 2 {
		t.Fatalf("proposals %+v, want two edits", props)
	}
	if len(props[0].Manifests) != 0 || strings.Contains(strings.Join(rules[props[0].CallID], ","), "supply-chain") {
		t.Errorf("the version bump: manifests %+v, verdicts %v; want no change", props[0].Manifests, rules[props[0].CallID])
	}
	m := props[1].Manifests
	if len(m) != 1 || m[0].Path != "package.json" || len(m[0].Changes) != 1 || m[0].Changes[0].Kind != "runs" || m[0].Changes[0].Key != "scripts.postinstall" {
		t.Errorf("the install script: manifests %+v, want scripts.postinstall (runs)", m)
	}
	if !strings.Contains(strings.Join(rules[props[1].CallID], ","), "escalate supply-chain:runs-code") {
		t.Errorf("the install script: verdicts %v, want supply-chain:runs-code", rules[props[1].CallID])
	}
	if rep := rerunSession(t, r.path, r.session); !rep.Identical {
		d := rep.Divergence
		t.Fatalf("rerun diverged at seq %d (%s, %s): %s", d.Seq, d.Type, d.Kind, d.Diff)
	}
}

// proposalsAndVerdicts reads a closed ledger's tool.proposed and
// shield.verdict entries, in order.
func proposalsAndVerdicts(t *testing.T, path string) ([]event.ToolProposed, []event.ShieldVerdict) {
	t.Helper()
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	h, _ := l.Head()
	var props []event.ToolProposed
	var verdicts []event.ShieldVerdict
	l.Range(1, h.Seq, func(e ledger.Entry) error {
		switch e.Type {
		case event.TypeToolProposed:
			var p event.ToolProposed
			json.Unmarshal(e.Data, &p)
			props = append(props, p)
		case event.TypeShieldVerdict:
			var v event.ShieldVerdict
			json.Unmarshal(e.Data, &v)
			verdicts = append(verdicts, v)
		}
		return nil
	})
	return props, verdicts
}
