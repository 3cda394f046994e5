package shield_test

import "testing"

// Rules 11: the default policy's grammar over frameworks' and platform
// SDKs' dev and read verbs (Rails/rake, Xcode, Ansible/Molecule,
// checksums, launchd, Homebrew, local database dumps); each allowed shape
// has a production, shipping or remote look-alike that stays asked.
func TestPolicy_FrameworkDevVerbs(t *testing.T) {
	const ok = "allow policy:check-and-inspect"
	const asked = "escalate policy:default"
	runFinalCases(t, []ruleCase{
		{"rails routes grep-free", command("bin/rails routes -g orders"), ok},
		{"rails stats", command("bin/rails stats"), ok},
		{"rails test file", command("bin/rails test test/models/order_test.rb:42"), ok},
		{"rake migrate status", command("bin/rake db:migrate:status"), "allow policy:dev-commands"},
		{"rails tmp clear", command("bin/rails tmp:clear"), ok},
		{"rails schema load test", command("RAILS_ENV=test bin/rails db:schema:load"), ok},
		{"rails migrate production", command("RAILS_ENV=production bin/rails db:migrate"), asked},
		{"rails runner code", command("bin/rails runner 'Order.delete_all'"), asked},
		{"rails drop no env", command("bin/rails db:drop"), asked},
		{"xcodebuild macOS tests", command("xcodebuild -project Notes.xcodeproj -scheme NotesMac -destination 'platform=macOS' test"), ok},
		{"xcodebuild list", command("xcodebuild -list -workspace Notes.xcworkspace"), ok},
		{"xcodebuild archive", command("xcodebuild -scheme Notes archive -archivePath build/Notes.xcarchive"), asked},
		{"simctl boot", command("xcrun simctl boot 'iPad Air (5th generation)'"), ok},
		{"simctl spawn", command("xcrun simctl spawn booted log stream"), asked},
		{"ansible check prod-free", command("ansible-playbook -i inventories/dev/hosts site.yml --check --diff"), ok},
		{"ansible syntax", command("ansible-playbook site.yml --syntax-check"), ok},
		{"ansible real run", command("ansible-playbook -i inventories/dev/hosts site.yml"), asked},
		{"molecule scenario", command("molecule test -s ubuntu"), ok},
		{"molecule login", command("molecule login -h instance"), asked},
		{"sha512 of a tarball", command("sha512sum dist/app-1.4.0.tar.gz"), ok},
		{"launchctl print", command("launchctl print gui/501/com.acme.agent"), ok},
		{"launchctl load", command("launchctl load ~/Library/LaunchAgents/com.acme.agent.plist"), "block runs-later:autostart"},
		{"brew install formula", command("brew install jq"), ok},
		{"brew install from a tap", command("brew install acme/tools/deployer"), asked},
		{"mysqldump local", command("mysqldump -h 127.0.0.1 -u dev shop_dev"), ok},
		{"ci workflow on a topic branch", command("gh workflow run tests.yml --ref fix/flaky-upload"), ok},
		{"deploy workflow", command("gh workflow run deploy.yml --ref fix/flaky-upload"), asked},
		{"ci workflow on main", command("gh workflow run ci.yml --ref main"), asked},
		{"pg_dump remote", command("pg_dump -h db.internal.acme.io -U app shop"), asked},
	})
}
