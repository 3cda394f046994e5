package shield_test

import "testing"

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
