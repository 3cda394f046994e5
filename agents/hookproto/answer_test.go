package hookproto_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/agents/hookproto"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/answers")

// TestEncode_Golden: the exact bytes and exit status of every answer each
// CLI takes (go test -run TestEncode_Golden -update rewrites them).
func TestEncode_Golden(t *testing.T) {
	rewrite := []byte(`{"command":"opx internal-sandbox-exec -- sh -c 'make test'"}`)
	answers := []struct {
		name string
		a    hookproto.Answer
	}{
		{"allow", hookproto.Answer{Decision: hookproto.Allow}},
		{"deny", hookproto.Answer{Decision: hookproto.Deny, Reason: "shield: credentials:ssh-key: reads ~/.ssh/id_ed25519"}},
		{"deny_no_reason", hookproto.Answer{Decision: hookproto.Deny}},
		{"deny_hostile_reason", hookproto.Answer{Decision: hookproto.Deny, Reason: "line1\nrm \x1b[2J\u202e<b>&\"x\"\t" + strings.Repeat("r", hookproto.MaxReasonBytes)}},
		{"ask", hookproto.Answer{Decision: hookproto.Ask, Reason: "escalated: writes outside the workspace"}},
		{"rewrite", hookproto.Answer{Decision: hookproto.Allow, UpdatedInput: rewrite}},
	}
	for _, agent := range hookproto.Agents {
		for _, ans := range answers {
			name := fmt.Sprintf("%s_%s", agent, ans.name)
			t.Run(name, func(t *testing.T) {
				r, err := hookproto.Encode(agent, hookproto.KindPreTool, ans.a)
				got := render(r, err)
				file := filepath.Join("testdata", "answers", name+".golden")
				if *update {
					if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(file, got, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				wantb, err := os.ReadFile(file)
				if err != nil {
					t.Fatalf("%v (run with -update)", err)
				}
				if !bytes.Equal(got, wantb) {
					t.Errorf("got\n%s\nwant\n%s", got, wantb)
				}
			})
		}
	}
}

// render is a reply as its golden file holds it.
func render(r hookproto.Reply, err error) []byte {
	if err != nil {
		return []byte("error: " + err.Error() + "\n")
	}
	return fmt.Appendf(nil, "exit %d\n--- stdout\n%s--- stderr\n%s", r.ExitCode, r.Stdout, r.Stderr)
}

func TestEncode_Refused(t *testing.T) {
	tests := []struct {
		name    string
		agent   hookproto.Agent
		kind    hookproto.Kind
		a       hookproto.Answer
		wantErr error
	}{
		{"codex ask", hookproto.Codex, hookproto.KindPreTool, hookproto.Answer{Decision: hookproto.Ask}, hookproto.ErrUnsupported},
		{"deny a prompt", hookproto.Claude, hookproto.KindPrompt, hookproto.Answer{Decision: hookproto.Deny}, hookproto.ErrUnsupported},
		{"deny a stop (exit 2 would make Claude go on)", hookproto.Claude, hookproto.KindStop, hookproto.Answer{Decision: hookproto.Deny}, hookproto.ErrUnsupported},
		{"rewrite after the tool", hookproto.Gemini, hookproto.KindPostTool, hookproto.Answer{Decision: hookproto.Allow, UpdatedInput: []byte(`{}`)}, hookproto.ErrUnsupported},
		{"unknown decision", hookproto.Claude, hookproto.KindPreTool, hookproto.Answer{Decision: "maybe"}, hookproto.ErrBadAnswer},
		{"rewrite not an object", hookproto.Claude, hookproto.KindPreTool, hookproto.Answer{Decision: hookproto.Allow, UpdatedInput: []byte(`"ls"`)}, hookproto.ErrBadAnswer},
		{"rewrite not json", hookproto.Gemini, hookproto.KindPreTool, hookproto.Answer{Decision: hookproto.Allow, UpdatedInput: []byte(`{"command":`)}, hookproto.ErrBadAnswer},
		{"codex rewrite without command", hookproto.Codex, hookproto.KindPreTool, hookproto.Answer{Decision: hookproto.Allow, UpdatedInput: []byte(`{"cmd":"ls"}`)}, hookproto.ErrBadAnswer},
		{"gemini ask with rewrite", hookproto.Gemini, hookproto.KindPreTool, hookproto.Answer{Decision: hookproto.Ask, UpdatedInput: []byte(`{}`)}, hookproto.ErrUnsupported},
		{"unknown agent", "cursor", hookproto.KindPreTool, hookproto.Answer{Decision: hookproto.Allow}, hookproto.ErrUnknownAgent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := hookproto.Encode(tt.agent, tt.kind, tt.a)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err %v, reply %+v; want %v", err, r, tt.wantErr)
			}
		})
	}
}

// TestEncode_OtherEvents: every event other than pre-tool is answered by
// exiting 0 in silence.
func TestEncode_OtherEvents(t *testing.T) {
	for _, agent := range hookproto.Agents {
		for _, k := range []hookproto.Kind{hookproto.KindSessionStart, hookproto.KindPrompt, hookproto.KindPostTool, hookproto.KindStop, hookproto.KindSessionEnd, hookproto.KindOther} {
			r, err := hookproto.Encode(agent, k, hookproto.Answer{Decision: hookproto.Allow})
			if err != nil || r.ExitCode != 0 || len(r.Stdout) != 0 || len(r.Stderr) != 0 {
				t.Errorf("%s %s: %+v, %v", agent, k, r, err)
			}
		}
	}
}

// TestRefuse: fail closed, exit 2 with the reason on stderr, made safe.
func TestRefuse(t *testing.T) {
	r := hookproto.Refuse("hook event too large: more than 16777216 bytes\x1b]0;pwn\x07")
	if r.ExitCode != 2 || len(r.Stdout) != 0 || string(r.Stderr) != "opx: hook event too large: more than 16777216 bytes\uFFFD]0;pwn\uFFFD\n" {
		t.Errorf("%+v %q", r, r.Stderr)
	}
	if r := hookproto.Refuse(""); string(r.Stderr) != "opx: "+hookproto.DefaultReason+"\n" {
		t.Errorf("%q", r.Stderr)
	}
}
