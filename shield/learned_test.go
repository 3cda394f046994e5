package shield_test

import (
	"context"
	"strings"
	"testing"

	"github.com/opx-dev/opx/shield"
)

// The learned scorer (rules 13) asks about edits the rules allow when
// their words weigh as an attack's, in stacks no rule was written for
// (Nim, Zig, Crystal here: in none of the corpora it is trained on), and
// leaves ordinary edits alone.
func TestLearned_BothWays(t *testing.T) {
	s := defaultShield(t)
	for _, c := range []struct {
		name, p, old, new string
		escalate          bool
	}{
		{"an admin check removed from a route", "src/api/routes.nim", "  if not user.isAdmin: resp Http403, \"forbidden\"", "  discard", true},
		{"a readme's install line", "README.md", "## Install\n\nRun `make`.", "## Install\n\nRun `make install` then `make test`.", false},
		{"a helper trimmed", "src/util/strings.cr", "def slug(s)\n  s.downcase", "def slug(s)\n  s.downcase.strip", false},
		{"a cache grown", "lib/cache.zig", "const max_entries = 1024;", "const max_entries = 4096;", false},
		{"a response header added", "src/api/routes.nim", "  resp Http200, body", "  resp Http200, body, {\"Cache-Control\": \"no-store\"}", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			vs := s.Evaluate(context.Background(), editAction(s, c.p, c.old, c.new))
			last := vs[len(vs)-1]
			if c.escalate {
				if last.Rule != "learned:risk" || last.Decision != shield.Escalate || last.Tier != 2 {
					t.Fatalf("got %+v, want an escalation by learned:risk to tier 2", vs)
				}
				// The rules found nothing, and the reason names what weighed.
				if vs[len(vs)-2].Rule != "heuristics:none" || !strings.Contains(last.Reason, "most from ") {
					t.Fatalf("verdicts %+v", vs)
				}
				return
			}
			if last.Rule != "heuristics:none" || last.Decision != shield.Allow {
				t.Fatalf("got %+v, want allow heuristics:none", vs)
			}
		})
	}
}

// The scorer judges edits only, and only what the rules allowed: a rule's
// escalation or block stands alone, and a command, a write or a read is
// never scored.
func TestLearned_OnlyEditsTheRulesAllow(t *testing.T) {
	s := defaultShield(t)
	// A rule's escalation (a setting turned off) is the verdict; the
	// scorer adds nothing after it.
	vs := s.Evaluate(context.Background(), editAction(s, "config/app.exs", "  check_origin: [\"https://app.example.com\"]", "  check_origin: false"))
	for _, v := range vs {
		if v.Rule == "learned:risk" {
			t.Fatalf("scored after a rule spoke: %+v", vs)
		}
	}
	// The same removal as a whole-file write is not scored.
	w := facts(s, "write_file").content("src/api/routes.nim", "discard\n").act()
	for _, v := range s.Evaluate(context.Background(), w) {
		if v.Rule == "learned:risk" {
			t.Fatalf("a write was scored: %+v", v)
		}
	}
}

// Features are what Evaluate scores: those of an edit name its kind, its
// words in and out, and a concept it removes.
func TestLearned_Features(t *testing.T) {
	s := defaultShield(t)
	fs := s.Features(editAction(s, "src/api/routes.nim", "  if not user.isAdmin: resp Http403, \"forbidden\"", "  discard"))
	for _, want := range []string{"tool:edit_file", "kind:code", "+discard", "-forbidden", "-c:auth", "change:shrinks", "wp:routes"} {
		found := false
		for _, f := range fs {
			found = found || f == want
		}
		if !found {
			t.Errorf("features %v lack %q", fs, want)
		}
	}
}
