package shield

import (
	"context"
	"testing"
)

// Rules 13: access widened in any file kind — a granted pattern made
// broader, a credential's life lengthened more than tenfold, a reader of
// encrypted secrets added — and the narrowing, ordinary and code-side
// look-alikes that pass.
func TestRules13_AccessWidened(t *testing.T) {
	s := testShield()
	edit := func(p, old, new string) Action {
		return Action{Tool: "edit_file", Facts: Facts{Writes: []Ref{{Path: "/ws/" + p}},
			Texts: []Text{{Source: "content:/ws/" + p, Body: new}}, Removed: []Text{{Source: "content:/ws/" + p, Body: old}}}}
	}
	const weak, none = "appsec:control-weakened", "heuristics:none"
	for _, c := range []struct {
		name, p, old, new, want string
	}{
		{"vault policy path widened", "ops/vault/app-policy.hcl", `path "kv/data/app/prod/*" {`, `path "kv/data/*" {`, weak},
		{"bucket resource widened", "iam/policy.json", `"Resource": "arn:aws:s3:::acme-logs/app/*"`, `"Resource": "arn:aws:s3:::acme-logs/*"`, weak},
		{"token ttl a year", "ops/vault/role.json", "\"token_ttl\": \"15m\",", "\"token_ttl\": \"8760h\",", weak},
		{"session max age a month", "config/app.yaml", "session_max_age: 3600", "session_max_age: 2592000", weak},
		{"a sops recipient added", ".sops.yaml", "    age: age1aaaa", "    age: age1aaaa,age1bbbb", weak},
		{"policy path narrowed", "ops/vault/app-policy.hcl", `path "kv/data/*" {`, `path "kv/data/app/prod/*" {`, none},
		{"a request timeout raised", "config/app.yaml", "request_timeout: 30s", "request_timeout: 600s", none},
		{"a session ttl doubled", "config/app.yaml", "session_ttl: 1h", "session_ttl: 2h", none},
		{"a glob in code", "src/collect.py", `files = glob("src/app/*.py")`, `files = glob("src/*.py")`, none},
		{"a sops recipient rotated", ".sops.yaml", "    age: age1aaaa", "    age: age1cccc", none},
	} {
		vs := s.Evaluate(context.Background(), edit(c.p, c.old, c.new))
		v := vs[len(vs)-1]
		if v.Rule == "learned:risk" {
			v = vs[len(vs)-2]
		}
		if v.Rule != c.want {
			t.Errorf("%s: got %s %s (%s), want %s", c.name, v.Decision, v.Rule, v.Reason, c.want)
		}
	}
}
