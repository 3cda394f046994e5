package shield_test

import (
	"context"
	"testing"

	"github.com/opx-dev/opx/engine/shield"
)

// judgeLines runs command lines end to end with the default policy and
// checks the final decision and rule ("decision rule", or a decision
// alone when any rule will do).
func judgeLines(t *testing.T, s *shield.Shield, cases []struct{ line, want string }) {
	t.Helper()
	for _, c := range cases {
		vs := s.Evaluate(context.Background(), shield.Action{Session: "s", Tool: "execute_command", Command: c.line})
		v := final(vs)
		got := v.Decision + " " + v.Rule
		if got != c.want && v.Decision != c.want {
			t.Errorf("%s: got %s (%s), want %s", c.line, got, v.Reason, c.want)
		}
	}
}

// TestReview_GlobBrackets: bash bracket expressions and extglob groups
// could match anything one character (a group: any text) could, in
// every check that asks whether a glob could name a protected,
// configuration, credential or run-later path (review B2).
func TestReview_GlobBrackets(t *testing.T) {
	s := defaultShield(t)
	judgeLines(t, s, []struct{ line, want string }{
		{"cat ~/.local/state/op[!y]/*/ledger.db", "block protected:state"},
		{"cat ~/.local/state/op[[:alpha:]]/*/ledger.db", "block protected:state"},
		{"cat ~/.local/state/op[^y]/*/ledger.db", "block protected:state"},
		{"cat ~/.local/state/o[a-z]x/*/ledger.db", "block protected:state"},
		{"sqlite3 ~/.local/state/op[!y]/*/ledger.db .dump", "block protected:state"},
		{"cat ~/.local/state/@(opx)/*/ledger.db", "block protected:state"},
		{"cat .op[!y]/config.yaml", "block protected:config"},
		{"cat [.]opx/config.yaml", "block protected:config"},
		{"echo x > .git/hook[!x]/pre-commit", "block"},
		{"cat /etc/shad[!x]w", "block credential-path"},
		{"cat /etc/shado[[:alpha:]]", "block credential-path"},
		{"cat /etc/sh[]a]dow", "block credential-path"},
		{"cat ~/[.]ssh/id_rsa", "block credential-path"},
		{"cat ~/.a[w]s/credentials", "block credential-path"},
		// Benign neighbours: brackets that cannot reach any of these.
		{"ls src/[a-z]*.go", "allow"},
		{"cat docs/[!_]*.md", "allow"},
		{"wc -l /etc/host[s]", "allow"},
	})
}

// TestReview_ShellSegOverlap is the unit level of the above: ref side
// bash syntax, rule side path.Match syntax.
func TestReview_ShellSegOverlap(t *testing.T) {
	s := defaultShield(t)
	for _, p := range []string{"/etc/shad[!x]w", "/etc/sha[[:alpha:]]ow", "/etc/s[^x]adow", "/etc/@(shadow|x)", "/etc/+(s)hadow", "/etc/shado?"} {
		a := shield.Action{Session: "s", Tool: "read_file", Facts: shield.Facts{Reads: []shield.Ref{{Path: p, Glob: true}}}}
		if v := final(s.Evaluate(context.Background(), a)); v.Decision != shield.Block {
			t.Errorf("%s: %s %s", p, v.Decision, v.Rule)
		}
	}
}
