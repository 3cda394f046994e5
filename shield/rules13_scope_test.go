package shield

import "testing"

// Rules 13: access widened in any file kind — a granted pattern made
// broader, a credential's life lengthened more than tenfold, a reader of
// encrypted secrets added — and the narrowing, ordinary and code-side
// look-alikes that pass.
func TestRules13_AccessWidened(t *testing.T) {
	s := testShield()
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
		v := rulesVerdict(s, editAct(c.p, c.old, c.new))
		if v.Rule != c.want {
			t.Errorf("%s: got %s %s (%s), want %s", c.name, v.Decision, v.Rule, v.Reason, c.want)
		}
	}
}
