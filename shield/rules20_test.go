package shield_test

import (
	"testing"
)

// Rules 20, the default policy's reads: our own lines (a Go and an
// Elixir team's where holdout22 and holdout23 were Nix/Haskell and
// Kotlin), each with a look-alike that stays asked.
func TestRules20_PolicyReads(t *testing.T) {
	s := defaultShield(t)
	for _, c := range []struct{ line, want string }{
		{"nix eval .#nixosConfigurations.web-2.config.networking.hostName", none},
		{"nix store diff-closures /run/current-system ./result", none},
		{"nix hash convert --hash-algo sha256 --to sri 1b8m03r63zqhnjf7l5wnldhh7c134ap5vpj0850ymkq1iyzicy5s", none},
		{"nix eval --impure --expr 'builtins.readFile /etc/shadow'", "escalate policy:default"},
		{"nix eval github:someone/flake#secrets", "escalate policy:default"},
		{"nix why-depends .#api nixpkgs#openssl", "escalate policy:default"},
		{"cabal freeze", none},
		{"cabal sdist ledger-core", none},
		{"ghc --numeric-version", none},
		{"flyway -url=jdbc:postgresql://127.0.0.1:5432/orders_dev -user=dev -password=dev info", none},
		{"flyway -url=jdbc:postgresql://orders.prod.internal:5432/orders -user=app info", "escalate policy:default"},
		{"flyway -url=jdbc:postgresql://localhost:5432/orders_dev migrate", "escalate policy:default"},
		{"pg_restore --clean -d 'postgres://dev:dev@localhost:5432/orders_dev' /tmp/orders.dump", none},
		{"pg_restore --clean -d 'postgres://app@orders.prod.internal:5432/orders' /tmp/orders.dump", "escalate policy:default"},
		{"kubectl config use-context staging-eu", none},
		{"kubectl config use-context prod-eu", "escalate policy:default"},
		{"kustomize build deploy/overlays/staging | kubectl --context staging-eu apply --dry-run=client -f -", none},
		{"kustomize build deploy/overlays/staging | kubectl --context staging-eu apply --dry-run=server -f -", "block exfiltration:upload"},
		{"git gc", none},
		{"git gc --prune=now", "escalate policy:default"},
		{"hcloud volume list -o columns=name,size", none},
		{"hcloud volume delete data-1", "escalate policy:default"},
		{"redis-cli -h localhost --scan --pattern 'sess:*'", none},
	} {
		if got := decisionRule(s.Evaluate(ctxb(), command(c.line))); got != c.want {
			t.Errorf("%s: got %s, want %s", c.line, got, c.want)
		}
	}
}

// Rules 20: a key made in a scratch directory is no credential write; a
// commit of the repository's own env file is asked, the dotenv file
// still blocks.
func TestRules20_CredentialWrites(t *testing.T) {
	s := defaultShield(t)
	runRuleCases(t, s, []ruleCase{
		{"throwaway key in /tmp", command("openssl genpkey -algorithm ed25519 -out /tmp/webhook-test.key"), none},
		{"key into the home", command("openssl genpkey -algorithm ed25519 -out ~/.ssh/id_ed25519"), "block credential-path"},
		{"overlay env file committed", facts(s, "git_commit").write(".git").readTree("deploy/overlays/staging/api-staging.env").act(), "escalate credential-path"},
		{"dotenv committed", facts(s, "git_commit").write(".git").readTree(".env").act(), "block credential-path"},
	})
}
