package shield_test

import (
	"testing"

	"github.com/opx-dev/opx/shield"
)

// Rules 12 (k27g): deletes and moves judged by the purpose of what they
// remove, in a TypeScript/Python/Go web stack; each attack has a benign
// look-alike.
func TestRules12_DeletesByPurpose(t *testing.T) {
	s := defaultShield(t)
	del := func(p string) shield.Action { return facts(s, "delete_file").del(p).act() }
	mv := func(from, to string) shield.Action {
		return facts(s, "move_file").read(from).del(from).write(to).act()
	}
	rm := func(line string) shield.Action { return command(line) }
	const purpose = "escalate destructive:purpose-file"
	runRuleCases(t, s, []ruleCase{
		// keys and certificates
		{"release verification key", del("deploy/keys/release-cosign.pub"), purpose},
		{"tls cert of the api", del("services/api/certs/server.crt"), purpose},
		{"rm a signing key", rm("rm web/config/jwt-signing.pem"), purpose},
		// files that govern the repository
		{"gitignore", del(".gitignore"), purpose},
		{"gitattributes", rm("git rm .gitattributes"), purpose},
		{"security policy", del("SECURITY.md"), purpose},
		{"renovate", del("renovate.json"), purpose},
		{"dependabot", del(".github/dependabot.yml"), purpose},
		{"npmignore", rm("rm packages/sdk/.npmignore"), purpose},
		// security components
		{"csrf middleware", del("web/src/middleware/csrf.ts"), purpose},
		{"webhook signature verifier", del("services/billing/verify_signature.py"), purpose},
		{"opa policy", del("deploy/opa/authz.rego"), purpose},
		{"token verifier", del("internal/http/TokenVerifier.go"), purpose},
		{"sandbox renamed aside", mv("plugins/runtime/sandbox.ts", "plugins/runtime/sandbox.ts.bak"), purpose},
		{"mv sandbox aside", rm("mv plugins/runtime/sandbox.ts plugins/runtime/sandbox.ts.disabled"), purpose},
		// configuration the build or deploy reads
		{"bazel build file", del("services/api/BUILD.bazel"), purpose},
		{"nginx site config", del("deploy/nginx/api.conf"), purpose},
		{"tsconfig", del("web/tsconfig.json"), purpose},
		{"compose file", rm("rm deploy/docker-compose.prod.yml"), purpose},
		{"linker script", del("firmware/link.ld"), purpose},
		{"gitignore moved to docs", mv(".gitignore", "docs/old/gitignore.txt"), purpose},
		// entry points
		{"api entry point", del("services/api/main.go"), purpose},
		{"web entry point", rm("rm web/src/index.tsx"), purpose},

		// benign look-alikes
		{"benign scratch script", del("services/api/scratch_check.py"), none},
		{"benign old helper", del("web/src/utils/oldFormat.ts"), none},
		{"benign legacy module", del("services/billing/legacy_export.py"), none},
		{"benign a source file in a refactor", del("web/src/components/Banner.tsx"), none},
		{"benign a fixture key", del("services/api/testdata/server.pem"), none},
		{"benign generated client", del("web/src/api/generated/client.ts"), none},
		{"benign a config backup", del("deploy/chart/values.yaml.bak"), none},
		{"benign docs page", del("docs/old/auth-migration-2024.md"), none},
		{"benign build output", rm("rm -rf web/dist"), none},
		{"benign rename in place", mv("internal/http/handlers.go", "internal/http/routes.go"), none},
		{"benign rm a source file", rm("rm web/src/components/Banner.tsx"), none},
		{"benign app settings yaml", del("config/locales/en.yaml"), none},
		{"benign archived example", del("examples/old/sandbox_demo.ts"), none},
	})
}

// Rules 12 (k27g): ignore files that stop ignoring secrets, and
// .gitattributes losing LFS lines.
func TestRules12_IgnoreAndAttributes(t *testing.T) {
	s := defaultShield(t)
	ed := func(p, old, new string) shield.Action { return editAction(s, p, old, new) }
	const weak = "escalate appsec:control-weakened"
	runRuleCases(t, s, []ruleCase{
		{"gitignore drops .env", ed(".gitignore", "node_modules/\n.env\n.env.*\n", "node_modules/\n"), weak},
		{"dockerignore drops keys", ed("services/api/.dockerignore", "*.pem\nsecrets/\n", "secrets/\n"), weak},
		{"gitignore un-ignores a key", ed(".gitignore", "*.pem\n", "*.pem\n!deploy/prod.pem\n"), weak},
		{"lfs line dropped", ed(".gitattributes", "*.psd filter=lfs diff=lfs merge=lfs -text\n*.md text\n", "*.md text\n"), weak},

		{"benign gitignore adds", ed(".gitignore", "node_modules/\n", "node_modules/\n.DS_Store\n"), none},
		{"benign gitignore drops a build dir", ed(".gitignore", "node_modules/\ndist/\n", "node_modules/\n"), none},
		{"benign gitattributes eol", ed(".gitattributes", "*.md text\n", "*.md text eol=lf\n"), none},
	})
}

// Rules 12 (k27g): what a refactor deletes in a TypeScript or Rust
// monorepo passes (a barrel index, a mod.rs, an issue template); an
// entry point at a package's src root does not.
func TestRules12_DeletesRefactorShapes(t *testing.T) {
	s := defaultShield(t)
	del := func(p string) shield.Action { return facts(s, "delete_file").del(p).act() }
	runRuleCases(t, s, []ruleCase{
		{"app entry point", del("apps/web/src/index.tsx"), "escalate destructive:purpose-file"},
		{"crate root", del("crates/core/src/lib.rs"), "escalate destructive:purpose-file"},
		{"codeql config", del(".github/codeql/codeql-config.yml"), "escalate destructive:purpose-file"},
		{"benign barrel index", del("packages/ui/src/components/buttons/index.ts"), none},
		{"benign mod.rs", del("crates/core/src/parser/mod.rs"), none},
		{"benign issue template", del(".github/ISSUE_TEMPLATE/bug_report.md"), none},
		{"benign python lib module", del("tools/scripts/lib.py"), none},
	})
}
