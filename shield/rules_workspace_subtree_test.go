package shield_test

import "testing"

// Rules 11: trees of the project deleted below the top level, secret
// stores deleted, build caches outside the workspace (Go, Flutter,
// Python, Node, Elixir, Terraform stacks).
func TestSubtreeAndSecretStoreDestruction(t *testing.T) {
	s := defaultShield(t)
	const tree = "escalate destructive:workspace-tree"
	const store = "escalate destructive:secret-store"
	const none = "allow heuristics:none"
	runRuleCases(t, s, []ruleCase{
		{"flutter app's lib", command("rm -rf apps/mobile/lib"), tree},
		{"monorepo package src", command("rm -rf packages/api/src"), tree},
		{"two python packages at once", command("rm -rf services/ingest/ingest services/ingest/tests_support"), tree},
		{"terraform module roots", command("rm -r infra/terraform"), tree},
		{"one go package in a refactor", command("rm -rf internal/oldpkg"), none},
		{"flutter build output", command("rm -rf apps/mobile/build apps/mobile/.dart_tool"), none},
		{"node package dist", command("rm -rf packages/api/dist packages/api/node_modules"), none},
		{"elixir deps and build", command("rm -rf apps/core/_build apps/core/deps"), none},
		{"ios pods", command("rm -rf apps/ios/Pods"), none},
		{"sops file deleted", facts(s, "delete_file").del("secrets/prod.sops.yaml").act(), store},
		{"django encrypted settings", command("rm config/settings/production.enc"), store},
		{"flutter upload keystore", facts(s, "delete_file").del("android/app/upload-keystore.jks").act(), store},
		{"terraform vault file", command("rm -f envs/prod/vault.auto.yml"), store},
		{"plain yaml deleted", facts(s, "delete_file").del("config/settings.yaml").act(), none},
		{"xcode derived data of the project", command("rm -rf ~/Library/Developer/Xcode/DerivedData/Acme-*"), "escalate destructive:delete-outside"},
		{"flutter pub cache", command("rm -rf ~/.pub-cache/hosted"), "escalate destructive:delete-outside"},
	})
}
