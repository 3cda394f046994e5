package shield

import (
	"path"
	"slices"
	"strings"

	"github.com/opx-dev/opx/shield/manifest"
)

// credentialGlobs are paths that hold secrets: "~/" for every home (see
// homes), absolute, or base names anywhere ("*.pem", "**/.env").
var credentialGlobs = []string{
	// Keys and tokens of the usual tools.
	"~/.ssh/**", "~/.aws/**", "~/.config/gcloud/**", "~/.azure/**", "~/.kube/config", "~/.kube/**/config", "**/kubeconfig",
	// Rules 15: kubeconfigs by name wherever they are (kubeconfig-prod.yaml,
	// aks-claims.kubeconfig), secrets by their extension (signing.pfx.password,
	// deploy.token), browsers' cookie and login stores on any system (a
	// Windows profile reached through WSL's /mnt/c included).
	"kubeconfig*", "*.kubeconfig", "*-kubeconfig.y*ml", "*.password", "*.passwd", "*.secret", "*.secrets", "*.token", "*.credentials",
	"Cookies", "Login Data", "Web Data", "key4.db", "logins.json", "cookies.sqlite", "Cookies.binarycookies",
	"~/.docker/config.json", "~/.netrc", "~/.npmrc", "~/.yarnrc.yml", "~/.pypirc", "~/.git-credentials", "~/.config/git/credentials",
	"~/.config/gh/hosts.yml", "~/.gnupg/**", "~/.vault-token", "~/.terraform.d/credentials.tfrc.json", "~/.cargo/credentials*",
	"~/.config/hub", "~/.pgpass", "~/.my.cnf", "~/.m2/settings*.xml", "~/.gradle/gradle.properties",
	// Keychains and password stores.
	"~/Library/Keychains/**", "~/.local/share/keyrings/**", "~/.password-store/**",
	// Browser credential stores.
	"~/.mozilla/firefox/**", "~/.config/google-chrome/**", "~/.config/chromium/**", "~/.config/BraveSoftware/**",
	"~/Library/Application Support/Google/Chrome/**", "~/Library/Application Support/Firefox/**",
	// The system's secrets.
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d/**", "/etc/security/opasswd",
	"/etc/ssh/ssh_host_*_key", "/etc/ssl/private/**", "/etc/pki/tls/private/**", "/etc/kubernetes/**/*.conf", "/etc/kubernetes/pki/**",
	"/proc/[0-9]*/environ", "/run/secrets/**", "/var/run/secrets/**", "/var/lib/docker/**",
	// Anywhere: key material, env files, Terraform state.
	"*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
	// Rules 14: key files named by their algorithm or as private (a
	// signing key release.ed25519, minisign's and signify's .sec).
	"*.ed25519", "*.ed448", "*.x25519", "*.priv", "*.privkey", "*.sec",
	"**/.env", "*.env", ".env.*", "*.tfstate", "*.tfstate.backup", "credentials.json", "*service-account*.json", "*service_account*.json",
	"client_secret*.json", "*.keytab", ".htpasswd",
	// Rules 19: a keystore's password or a wallet's words kept in a file.
	"*.pass", "*.passphrase", "*.mnemonic", "mnemonic.txt", "seed-phrase*", "*.pin",
	// Cloud, hosting, package and wallet tools' tokens.
	"~/.config/rclone/rclone.conf", "~/.s3cfg", "~/.boto", "~/.gem/credentials", "~/.config/gh/config.yml",
	// Rules 22: database and broker clients' own files (cqlsh's, a Kafka client's properties, MongoDB's
	// shell, Oracle's wallet and names), Pulumi's access token.
	// Session 28: the mainframe CLI's profiles (Zowe keeps credentials in them or beside them), IBM key
	// databases and their password stashes (MQ, GSKit).
	"~/.zowe/**", "*.sth", "*.kdb", "*.env.bak", "*.env.orig", "*.env.old", "*.env.backup", "*.key.bak", "*.pem.bak",
	"~/.cassandra/cqlshrc", "~/.cqlshrc", "~/.kafka/*.properties", "~/.kafka/*.conf", "~/.mongorc.js", "~/.mongoshrc.js",
	"~/.oracle/**", "~/.pulumi/credentials.json",
	// Rules 22: netrc files anywhere, Copernicus' and ECMWF's API keys, the Globus CLI's tokens, Google's
	// application default credentials by their short name.
	"deploy_key", "deploy_key.*", "*_deploy_key", "deploy-key", "*.netrc", "~/.cdsapirc", "~/.ecmwfapirc", "~/.globus/**", "~/.globus*.cfg", "~/.globus*.json", "adc.json",
	"~/.config/doctl/**", "~/.netlify/**", "~/.fly/**", "~/.kaggle/kaggle.json", "~/.cache/huggingface/token",
	"~/.huggingface/token", "~/.config/sops/**", "~/.oci/**", "~/.config/openstack/clouds.yaml", "~/.ngrok2/**",
	"~/.config/ngrok/**", "~/.databrickscfg", "~/.config/stripe/**", "~/.config/solana/id.json", "~/.bitcoin/**",
	"wallet.dat", "~/.config/heroku/**", "~/.netrc-*", "~/.wrangler/**", "~/.config/configstore/**", "~/.dockercfg",
	"~/.config/hcloud/**", "~/.ovh.conf", "~/.aliyun/**", "~/.config/gcloud*/**", "~/.terraformrc", "~/.config/op/**",
	"~/.snowsql/**", "~/.dbt/profiles.yml", "~/.bluemix/**", "~/.linode-cli", "~/.config/vercel/**", "~/.vercel/**",
	// Rules 18: a binary cache's, a database platform's and an edge
	// platform's tokens.
	"~/.config/cachix/**", "~/.supabase/access-token", "~/.config/supabase/**", "~/.config/.wrangler/**",
	"~/.config/flyctl/**", "~/.config/sentry/**", "~/.sentryclirc", "~/.config/nix/access-tokens*",
	// Rules 20 (after holdout26's and holdout27's measures): GitLab's
	// CLI token, VPN configurations (their private keys), Fastly's CLI.
	"~/.config/glab-cli/**", "~/.config/wireguard/**", "/etc/wireguard/**", "*.ovpn", "~/.config/fastly/**",
	// rules 21: Nextflow's secrets store; Apptainer's and Singularity's registry logins
	"~/.nextflow/secrets/**", "~/.influxdbv2/**", "**/.node-red/.config.runtime.json", "**/.node-red/*_cred.json", "**/.node-red/flows_cred.json", "~/.apptainer/remote.yaml", "~/.apptainer/docker-config.json", "~/.singularity/remote.yaml", "~/.singularity/docker-config.json",
	// rules 21: Keycloak's admin CLI caches tokens; Okta's CLI and SDKs keep an API token
	"~/.keycloak/**", "~/.okta/**",
	// Rules 18: Expo's and fastlane's sessions, App Store Connect API keys.
	"~/.expo/state.json", "~/.expo/**/state.json", "~/.fastlane/spaceship/**", "~/.appstoreconnect/private_keys/**",
	"~/.private_keys/**", "AuthKey_*.p8",
	// Rules 28: the Salesforce CLI's auth files, and an application's key,
	// secret or credential directory under the user's data or config.
	"~/.sfdx/**", "~/.sf/**", "~/.pause", "~/.local/share/*/*keys/**", "~/.config/*/*keys/**", "~/.local/share/*/secrets/**",
	"~/.config/*/secrets/**", "~/.local/share/*/credentials/**", "~/.config/*/credentials/**",
	// Rules 29: the MinIO client's aliases with their keys.
	"~/.mc/config.json", "~/.mcli/config.json",
	// Editors' state databases: extensions' and AI assistants' tokens.
	"**/state.vscdb", "**/state.vscdb.backup", "~/.config/Code/User/globalStorage/**", "~/.config/Cursor/User/globalStorage/**",
	"~/.config/Code - Insiders/User/globalStorage/**", "~/.config/VSCodium/User/globalStorage/**", "~/.config/Windsurf/User/globalStorage/**",
	"~/Library/Application Support/Code/User/globalStorage/**", "~/Library/Application Support/Cursor/User/globalStorage/**",
	// Shell and REPL histories: passwords and tokens typed on a command line.
	".*_history", "fish_history", ".*history.db",
	// Rules 11: stores named by their purpose, whatever the stack: a
	// vault's password file, signing keystores' password files
	// (Android's keystore.properties, Flutter's key.properties), PKCS#8
	// API keys (App Store Connect's AuthKey_*.p8), package managers' and
	// store tools' user-level credentials.
	".vault_pass*", ".vault-pass*", "vault_pass*", "vault-pass*", ".vault_password*", "vault_password*", "vault-password*",
	"keystore.properties", "key.properties", "signing.properties", "*.p8",
	"~/.nuget/NuGet/NuGet.Config", "~/.config/NuGet/NuGet.Config", "~/.appstoreconnect/**", "~/.fastlane/**",
	"~/.bundle/config", "~/.composer/auth.json", "~/.config/composer/auth.json", "~/.ansible/**/vault*",
}

// laterGlob is a path whose content another program runs later, outside
// any sandbox.
type laterGlob struct {
	glob, rule string
	ask        bool // in the workspace: escalate (content judged), else block
}

var laterGlobs = []laterGlob{
	{"**/.git/hooks/**", "runs-later:git-hook", false},
	{"**/.git/config", "runs-later:git-hook", false},
	{"~/.gitconfig", "runs-later:git-hook", false},
	{"~/.config/git/config", "runs-later:git-hook", false},
	{"w:.husky/**", "runs-later:git-hook", true},
	{"w:.githooks/**", "runs-later:git-hook", true},
	{"w:githooks/**", "runs-later:git-hook", true},
	{"w:.git-hooks/**", "runs-later:git-hook", true},
	{"w:git-hooks/**", "runs-later:git-hook", true},
	{"w:.hooks/**", "runs-later:git-hook", true},
	{"**/.pre-commit-config.yaml", "runs-later:git-hook", true},
	{"**/lefthook.yml", "runs-later:git-hook", true},
	{"w:.github/workflows/**", "runs-later:ci-workflow", true},
	{"w:.github/actions/**", "runs-later:ci-workflow", true},
	{"**/.gitlab-ci.yml", "runs-later:ci-workflow", true},
	{"w:.circleci/**", "runs-later:ci-workflow", true},
	{"**/Jenkinsfile", "runs-later:ci-workflow", true},
	{"**/azure-pipelines.yml", "runs-later:ci-workflow", true},
	{"**/.travis.yml", "runs-later:ci-workflow", true},
	{"**/bitbucket-pipelines.yml", "runs-later:ci-workflow", true},
	{"w:.buildkite/**", "runs-later:ci-workflow", true},
	{"**/.drone.yml", "runs-later:ci-workflow", true},
	{"/etc/cron*", "runs-later:cron", false},
	{"/etc/cron*/**", "runs-later:cron", false},
	{"/etc/anacrontab", "runs-later:cron", false},
	{"/var/spool/cron/**", "runs-later:cron", false},
	{"/etc/systemd/**", "runs-later:systemd", false},
	{"/lib/systemd/**", "runs-later:systemd", false},
	{"/usr/lib/systemd/**", "runs-later:systemd", false},
	{"~/.config/systemd/**", "runs-later:systemd", false},
	{"/etc/init.d/**", "runs-later:systemd", false},
	{"/etc/rc.local", "runs-later:systemd", false},
	{"~/.bashrc", "runs-later:shell-rc", false},
	{"~/.bash_profile", "runs-later:shell-rc", false},
	{"~/.bash_login", "runs-later:shell-rc", false},
	{"~/.bash_logout", "runs-later:shell-rc", false},
	{"~/.profile", "runs-later:shell-rc", false},
	{"~/.zshrc", "runs-later:shell-rc", false},
	{"~/.zshenv", "runs-later:shell-rc", false},
	{"~/.zprofile", "runs-later:shell-rc", false},
	{"~/.zlogin", "runs-later:shell-rc", false},
	{"~/.config/fish/**", "runs-later:shell-rc", false},
	{"/etc/profile", "runs-later:shell-rc", false},
	{"/etc/profile.d/**", "runs-later:shell-rc", false},
	{"/etc/bash.bashrc", "runs-later:shell-rc", false},
	{"/etc/zsh/**", "runs-later:shell-rc", false},
	{"/etc/environment", "runs-later:shell-rc", false},
	{"/etc/ld.so.preload", "runs-later:shell-rc", false},
	{"**/.envrc", "runs-later:direnv", true},
	{"**/.vscode/**", "runs-later:editor", true},
	{"**/.idea/**", "runs-later:editor", true},
	{"~/.vimrc", "runs-later:editor", false},
	{"~/.config/nvim/**", "runs-later:editor", false},
	{"~/.emacs", "runs-later:editor", false},
	{"~/.emacs.d/**", "runs-later:editor", false},
	{"~/.config/autostart/**", "runs-later:autostart", false},
	{"/etc/xdg/autostart/**", "runs-later:autostart", false},
	{"~/Library/LaunchAgents/**", "runs-later:autostart", false},
	{"/Library/LaunchAgents/**", "runs-later:autostart", false},
	{"/Library/LaunchDaemons/**", "runs-later:autostart", false},
	{"~/.ssh/authorized_keys*", "runs-later:ssh", false},
	{"~/.ssh/rc", "runs-later:ssh", false},
	{"~/.ssh/config", "runs-later:ssh", false},
	{"~/.ssh/environment", "runs-later:ssh", false},
	{"/etc/ssh/**", "runs-later:ssh", false},
	{"/etc/sudoers", "runs-later:sudoers", false},
	{"/etc/sudoers.d/**", "runs-later:sudoers", false},
	// Other agents' settings, instructions and tool servers: what they
	// hold runs, or is obeyed, when that agent starts.
	{"~/.claude/**", "runs-later:agent-config", false},
	{"~/.claude.json", "runs-later:agent-config", false},
	{"~/.codex/**", "runs-later:agent-config", false},
	{"~/.cursor/**", "runs-later:agent-config", false},
	{"~/.gemini/**", "runs-later:agent-config", false},
	{"~/.continue/**", "runs-later:agent-config", false},
	{"~/.config/opencode/**", "runs-later:agent-config", false},
	{"~/.config/github-copilot/**", "runs-later:agent-config", false},
	{"~/.aider*", "runs-later:agent-config", false},
	// In the workspace, the agents' instruction and settings files are
	// instructions:agent-file's (instructionFiles, rules_instructions.go);
	// these are the tool servers' configurations beside them.
	{"**/.mcp.json", "runs-later:agent-config", true},
	{"**/.cursor/**", "runs-later:agent-config", true},
	// Python start-up: a .pth file's import lines, sitecustomize and
	// usercustomize run at every interpreter start.
	{"**/site-packages/*.pth", "runs-later:python-startup", true},
	{"**/dist-packages/*.pth", "runs-later:python-startup", true},
	{"**/sitecustomize.py", "runs-later:python-startup", true},
	{"**/usercustomize.py", "runs-later:python-startup", true},
	// Dev containers: postCreateCommand and friends run when the
	// container is built or opened.
	{"w:.devcontainer/**", "runs-later:devcontainer", true},
	{"**/.devcontainer.json", "runs-later:devcontainer", true},
}

// historyGlobs are the user's shell and tool histories: changing them
// covers tracks.
var historyGlobs = []string{"~/.bash_history", "~/.zsh_history", "~/.history", "~/.sh_history", "~/.local/share/fish/fish_history",
	"~/.python_history", "~/.node_repl_history", "~/.mysql_history", "~/.psql_history", "~/.lesshst", "~/.viminfo", "/var/log/**"}

// deviceGlobs are block devices and memory: writing them destroys data
// below any file system.
var deviceGlobs = []string{
	"/dev/sd*", "/dev/hd*", "/dev/vd*", "/dev/xvd*", "/dev/nvme*", "/dev/mmcblk*", "/dev/disk/**", "/dev/mapper/**",
	"/dev/dm-*", "/dev/md*", "/dev/loop*", "/dev/sr*", "/dev/mem", "/dev/kmem", "/dev/port", "/dev/root",
}

// systemDirs are directories of the system, outside any home: writing
// beneath them changes the machine, not the project.
var systemDirs = []string{"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/opt", "/srv",
	"/var", "/sys", "/proc", "/dev", "/root", "/snap", "/Library", "/System", "/Applications"}

// scratchDirs may be written and deleted in freely: nothing there is
// anyone's but a program's scratch.
var scratchDirs = []string{"/tmp", "/var/tmp", "/dev/shm"}

// harmlessDevices are the devices a redirection may write.
var harmlessDevices = []string{"/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/**", "/dev/full", "/dev/random", "/dev/urandom"}

// cronOnlyDropped reports whether the facts say a crontab was rewritten
// with lines dropped only (crontabH: a read of the crontabs, no write).
func cronOnlyDropped(f *Facts) bool {
	isCron := func(r Ref) bool { return r.Path == cronDir }
	return slices.ContainsFunc(f.Reads, isCron) && !slices.ContainsFunc(f.Writes, isCron)
}

// credentials is `credential-path`: reading a path that holds secrets
// blocks (as does sending one, or writing or deleting one outside the
// workspace).
func (s *Shield) credentials(_ *Action, f *Facts, j *judgement) {
	for i := range f.Reads {
		r := &f.Reads[i]
		if g := s.credential(r); g != "" && !s.keyUsed(f, r) {
			what := r.Path
			if r.Tree {
				what = "everything under " + r.Path
			}
			if r.By == "history" && !r.Tree && !r.Glob {
				// The shell's own history shown (history | tail, fc -l):
				// what was typed may hold a token, but showing it is
				// how one finds the last command. Asked about; reading
				// the file itself (cat ~/.bash_history) or sending it
				// still blocks.
				j.escalate("credential-path", "%s shows the shell's history (%s), which may hold tokens typed on a command line", r.By, r.Path)
				continue
			}
			if !r.Tree && !r.Glob && path.Base(r.Path) == "config" && path.Base(path.Dir(r.Path)) == ".ssh" {
				// ~/.ssh/config names hosts and key files, no secret.
				j.escalate("credential-path", "%s reads %s, which names hosts and key files", by(r), r.Path)
				continue
			}
			if !r.Tree && !r.Glob && s.scratch(r.Path) && writesPath(f, r.Path) {
				continue // rules 28: a throwaway key the line itself makes in a scratch directory, then uses
			}
			if !r.Tree && !r.Glob && verifierCertificate(r, g) {
				continue // rules 16: a certificate a signature verifier checks is public
			}
			if !r.Tree && !r.Glob && publicPartRead(f, r) {
				continue // rules 20: openssl x509 on a certificate, a key's public half printed
			}
			if !r.Tree && !r.Glob && buildSecret(f, r) {
				// rules 20: BuildKit's secret mount keeps it out of the
				// image's layers, but the Dockerfile's steps read it
				j.escalate("credential-path", "docker build mounts %s as a build secret (%s): what the Dockerfile runs can read it", r.Path, g)
				continue
			}
			if b := path.Base(r.Path); r.By == "git_commit" && s.inWorkspace(r.Path) && !r.Glob && b != ".env" && !strings.HasPrefix(b, ".env.") && strings.HasSuffix(b, ".env") {
				// rules 20: an env file of the repository's own (a
				// Kustomize overlay's app-dev.env, not the dotenv .env)
				// committed: it stays on this machine until a push, but
				// once pushed it is in the history for good — a human
				// looks at what it holds
				j.escalate("credential-path", "git_commit commits %s, a file named like credentials (%s): once pushed it stays in the history", s.relPath(r.Path), g)
				continue
			}
			if !r.Tree && !r.Glob && (certificateDir(r.Path) || certificateName(path.Base(r.Path))) && !strings.Contains(strings.ToLower(path.Base(r.Path)), "key") {
				// rules 21: a .pem among trusted or CA certificates is a
				// certificate, public by purpose; asked, not refused
				j.escalate("credential-path", "%s reads %s, a file among certificates (%s): public if it is one", by(r), r.Path, g)
				continue
			}
			if listingProgram[r.By] {
				// rules 21: ls -l, stat, du show a file's name, size,
				// owner and mode, never what it holds
				j.escalate("credential-path", "%s shows the metadata of %s (%s), not what it holds", r.By, r.Path, g)
				continue
			}
			if !r.Tree && !r.Glob && credentialDir(g, r.Path) {
				// The directory itself, not what is in it: a listing
				// (ls ~/.ssh) shows names, a plain read of a directory
				// fails. Asked about: names are reconnaissance.
				j.escalate("credential-path", "%s lists %s, a directory of credentials (%s)", by(r), r.Path, g)
				continue
			}
			if !r.Tree && !r.Glob && (s.inWorkspace(r.Path) && buildOutput(s.relPath(r.Path)) || s.scratch(r.Path)) && devName.MatchString(path.Base(r.Path)) {
				// rules 21: a key or keystore named for development in
				// the workspace's build output (out/dev-tls.p12): asked
				j.escalate("credential-path", "%s reads %s in the workspace's build output, a file named like credentials (%s)", by(r), s.relPath(r.Path), g)
				continue
			}
			j.block("credential-path", "%s reads %s, which holds credentials (%s)", by(r), what, g)
			return
		}
	}
	for _, q := range f.Requests {
		for _, p := range q.Files {
			if g := s.credential(&Ref{Path: p}); g != "" {
				j.block("credential-path", "%s sends %s, which holds credentials (%s)", q.By, p, g)
				return
			}
		}
	}
	// A write or delete of one outside the workspace blocks; in the
	// workspace it passes (cp .env.example .env is setup, and Chronicle
	// can undo it).
	for _, refs := range []struct {
		verb string
		refs []Ref
	}{{"writes", f.Writes}, {"deletes", f.Deletes}} {
		for i := range refs.refs {
			r := &refs.refs[i]
			if s.inWorkspace(r.Path) || s.history(r) != "" {
				continue // a history changed is destructive:history's
			}
			if !r.Tree && !r.Glob && s.scratch(r.Path) || refs.verb == "deletes" && s.scratch(globPrefix(r.Path)) {
				// rules 20: a throwaway key made in a scratch directory
				// (openssl req -keyout /tmp/test.key); rules 21: and
				// removed from there; rules 28: by rm -rf or a pattern
				// too (a delete leaks nothing: destructive:* judges it)
				continue
			}
			if g := s.credential(r); g != "" {
				if refs.verb == "writes" && r.By == "ssh-keygen" && !r.Tree && !r.Glob && strings.HasPrefix(path.Base(r.Path), "id_") {
					// rules 28: a new key pair made for the user, asked
					j.escalate("credential-path", "ssh-keygen makes a key pair at %s, among the user's keys (%s): a human says yes", r.Path, g)
					continue
				}
				if refs.verb == "writes" && loginRun(f, r.By) {
					// rules 21: a client's login storing its own
					// credential (docker login): asked, not refused
					j.escalate("credential-path", "%s login writes %s, its own store of credentials (%s)", r.By, r.Path, g)
					continue
				}
				j.block("credential-path", "%s %s %s, which holds credentials (%s)", by(r), refs.verb, r.Path, g)
				return
			}
		}
	}
}

// listingProgram are programs that show files' names and metadata, not
// their content.
var listingProgram = map[string]bool{"ls": true, "dir": true, "vdir": true, "exa": true, "eza": true, "lsd": true, "stat": true, "du": true, "tree": true, "realpath": true, "readlink": true, "namei": true}

// certificateDir reports whether p's directory holds certificates by its
// name (trusted/, ca/, cacerts/, issuers/: a CA or trust store; not
// certs/, where a server.pem may hold its key).
func certificateDir(p string) bool {
	switch strings.ToLower(path.Base(path.Dir(p))) {
	case "trusted", "ca", "cacerts", "ca-certificates", "trust", "truststore", "issuers", "rejected":
		return true
	}
	return false
}

// certificateName reports whether a .pem or .crt's name says it is a
// certificate (qmcore1-ca.pem, fullchain.pem, ca-bundle.pem, root-cert.pem,
// trust/…): a word of its name names one, none names a key (rules 28).
func certificateName(base string) bool {
	l := strings.ToLower(base)
	if ext := path.Ext(l); ext != ".pem" && ext != ".crt" && ext != ".cer" {
		return false
	}
	cert := false
	for _, w := range strings.FieldsFunc(strings.TrimSuffix(l, path.Ext(l)), func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		switch w {
		case "key", "priv", "private", "secret", "keypair", "p12", "pfx":
			return false
		case "ca", "cacert", "cacerts", "chain", "fullchain", "bundle", "cert", "certificate", "crt", "trust", "truststore", "root", "intermediate", "x509", "pub", "public":
			cert = true
		}
	}
	return cert
}

// buildOutput reports whether rel (relative to the workspace) is beneath
// a build output or scratch directory of the workspace.
func buildOutput(rel string) bool {
	first, _, ok := strings.Cut(rel, "/")
	if !ok {
		return false
	}
	switch first {
	case "out", "build", "target", "dist", "tmp", ".tmp", "_build", "bin", "obj":
		return true
	}
	return false
}

// devName is a file named for development or tests (dev-tls.p12,
// localhost.key, test-signing.pem).
var devName = mustRx(`(?i)(?:^|[-_.])(?:dev|devel|development|test|testing|local|localhost|example|dummy|fake|sample|throwaway|selfsigned|self-signed|snakeoil)(?:[-_.]|$)`)

// loginRun reports whether the line runs program's login verb (docker
// login, helm registry login, gh auth login, npm login).
func loginRun(f *Facts, program string) bool {
	for _, r := range f.Runs {
		if r.Name == program && slices.Contains(r.Argv[1:], "login") {
			return true
		}
	}
	return false
}

// credentialDir reports whether the credential glob g ("~/.ssh/**")
// matched p as the directory it is about rather than something in it.
func credentialDir(g, p string) bool {
	d, ok := strings.CutSuffix(g, "/**")
	return ok && !hasMeta(d) && path.Base(d) == path.Base(p)
}

// cacheDirs hold what tools download or build again on demand: deleting
// beneath them outside the workspace is asked about, not blocked.
var cacheDirs = []string{"~/.cache", "~/go/pkg/mod", "~/.npm", "~/.pnpm-store", "~/.yarn/cache", "~/.cargo/registry", "~/.cargo/git",
	"~/.m2/repository", "~/.gradle/caches", "~/Library/Caches", "~/.nuget/packages", "~/.rustup/downloads",
	// Rules 11: build caches of IDEs and SDKs (regenerated by the next build).
	"~/Library/Developer/Xcode/DerivedData", "~/Library/Developer/CoreSimulator/Caches", "~/.pub-cache", "~/.android/build-cache", "~/.gradle/build-cache"}

// cache reports whether p is beneath a cache directory, or beneath (not
// at) a scratch directory but not beside the workspace.
func (s *Shield) cache(p string) bool {
	for _, d := range cacheDirs {
		if s.cfg.Home != "" && within(p, s.cfg.Home+d[1:]) {
			return true
		}
	}
	if within(p, path.Dir(s.cfg.Workspace)) {
		return false // a sibling of the workspace is a project, not scratch
	}
	for _, d := range scratchDirs {
		if p != d && within(p, d) {
			return true
		}
	}
	// rules 22: a cluster's scratch file systems, purged by design: a
	// project's or user's directory beneath them (asked, not refused)
	for _, d := range clusterScratch {
		if p != d && within(p, d) {
			return true
		}
	}
	return false
}

// clusterScratch are HPC systems' scratch file systems.
var clusterScratch = []string{"/scratch", "/lustre/scratch", "/gpfs/scratch", "/scratch1", "/scratch2", "/work/scratch"}

// destructive is `destructive:*`: deleting outside the workspace, the
// workspace itself or its history; writing devices or the system;
// changing a whole tree above the workspace; stopping the machine or the
// engine. Inside the workspace deletes and rewrites pass: Chronicle
// snapshots before every mutating tool and command, so they can be
// rolled back.
func (s *Shield) destructive(_ *Action, f *Facts, j *judgement) {
	for _, refs := range [][]Ref{f.Writes, f.Deletes} {
		for i := range refs {
			if h := s.history(&refs[i]); h != "" {
				j.block("destructive:history", "%s changes %s, a history or log (%s): that covers tracks", by(&refs[i]), refs[i].Path, h)
				return
			}
		}
	}
	// Programs first: what a line runs says more than the paths it writes
	// (shutdown writes /proc/sysrq-trigger; it is a shutdown).
	for i := range f.Runs {
		if r := &f.Runs[i]; elsewhere(r.Via) {
			// Rules 17: on another machine (ssh, a container): what
			// would destroy this one is asked about there, not refused
			// (a drained staging node rebooted); what leaves this
			// machine is judged apart.
			inner := judgement{keep: j.keep}
			s.destructiveRun(r, f, &inner)
			if inner.set && inner.v.Decision == Block {
				j.escalate(inner.v.Rule, "on %s: %s", lastVia(r.Via), inner.v.Reason)
			}
			continue
		}
		s.destructiveRun(&f.Runs[i], f, j)
		if j.blocked() {
			return
		}
	}
	ws := s.cfg.Workspace
	git := path.Join(ws, ".git")
	for i := range f.Deletes {
		r := &f.Deletes[i]
		if _, above := reaches(r, ws); above {
			j.block("destructive:delete-workspace", "%s deletes %s, which holds the workspace", by(r), r.Path)
			return
		}
		if r.By == "git" && r.Path == ws && r.Tree {
			// git clean: the untracked files beneath, never the
			// workspace or its history (tier -1 judges .opx).
			continue
		}
		rs := splitPath(r.Path)
		if r.Path == ws || r.Glob && overlap(rs, splitPath(ws)) {
			j.block("destructive:delete-workspace", "%s deletes the whole workspace (%s)", by(r), r.Path)
			return
		}
		if r.Path == git || within(r.Path, path.Join(git, "objects")) || within(r.Path, path.Join(git, "refs")) || r.Glob && overlap(rs, splitPath(git)) {
			j.block("destructive:delete-workspace", "%s deletes the workspace's git history (%s)", by(r), r.Path)
			return
		}
		p := r.Path
		if r.Glob {
			p = globPrefix(p)
		}
		if s.inWorkspace(p) || !r.Tree && !r.Glob && s.scratch(r.Path) {
			continue
		}
		if s.scratchLogs(r) {
			continue // a run's own logs in a scratch directory
		}
		if s.cache(p) {
			j.escalate("destructive:delete-outside", "%s deletes %s, a cache or scratch directory outside the workspace", by(r), r.Path)
			continue
		}
		if s.scratchGlob(r) {
			j.escalate("destructive:delete-outside", "%s deletes %s, files named by a pattern in a scratch directory: Shield cannot know who made them", by(r), r.Path)
			continue
		}
		j.block("destructive:delete-outside", "%s deletes %s, outside the workspace", by(r), r.Path)
		return
	}
	for i := range f.Writes {
		r := &f.Writes[i]
		p := r.Path
		if r.Glob {
			p = globPrefix(p)
		}
		device := false
		segs := splitPath(r.Path)
		s.rules.devIx.each(segs, func(k int) bool {
			device = s.rules.devices[k].matchSplit(r, segs)
			return device
		})
		if device && !harmlessDevice(r.Path) {
			j.block("destructive:device", "%s writes %s, a device: that destroys data below any file system", by(r), r.Path)
			return
		}
		if r.Tree && (within(ws, p) || (s.cfg.Home != "" && within(s.cfg.Home, p)) || p == "/") && !s.inWorkspace(p) {
			j.block("destructive:tree-write", "%s changes everything under %s", by(r), r.Path)
			return
		}
		if s.inWorkspace(p) || harmlessDevice(r.Path) || (s.scratch(p) && !r.Glob) {
			continue
		}
		if system(p) && (r.By == "npm" || r.By == "pnpm" || r.By == "yarn" || r.By == "bun") && strings.Contains(p, "/lib/node_modules") && globalPinned(f, r.By) {
			// rules 28: a tool installed globally at a pinned version
			// (npm install -g @salesforce/cli@2.56.7), asked
			j.escalate("destructive:system-packages", "%s installs a package globally into %s: a human says yes", r.By, r.Path)
			continue
		}
		if system(p) && p == "/usr" && distroInstall(f, r.By) {
			// rules 28: the distribution's packages installed by name, a
			// human's to allow (policy system-packages asks too)
			j.escalate("destructive:system-packages", "%s installs the distribution's packages into /usr as root: a human says yes", r.By)
			continue
		}
		if system(p) {
			j.block("destructive:system-write", "%s writes %s, a system path outside the workspace", by(r), r.Path)
			return
		}
		j.escalate("destructive:write-outside", "%s writes %s, outside the workspace", by(r), r.Path)
	}
}

// destructiveRun judges programs that destroy by what they are.
func (s *Shield) destructiveRun(r *Run, f *Facts, j *judgement) {
	args := r.Argv
	if len(args) > 0 {
		args = args[1:]
	}
	switch r.Name {
	case "shutdown", "reboot", "halt", "poweroff", "kexec", "telinit":
		j.block("destructive:system-control", "%s stops or restarts the machine", quote(r.Line))
	case "init":
		if len(args) > 0 && strings.Trim(args[0], "0123456sS") == "" {
			j.block("destructive:system-control", "%s changes the machine's run level", quote(r.Line))
		}
	case "systemctl":
		for _, a := range args {
			switch a {
			case "poweroff", "reboot", "halt", "kexec", "emergency", "rescue", "isolate", "suspend", "hibernate":
				j.block("destructive:system-control", "%s stops or restarts the machine", quote(r.Line))
				return
			}
		}
	case "kill":
		pids := args
		if len(pids) > 0 && strings.HasPrefix(pids[0], "-") && pids[0] != "--" {
			pids = pids[1:] // the signal
			if len(args) > 1 && (args[0] == "-s" || args[0] == "-n") {
				pids = pids[1:]
			}
		}
		for _, a := range pids {
			if a == "1" || a == "-1" {
				j.block("destructive:kill", "%s kills init or every process", quote(r.Line))
				return
			}
		}
		for _, o := range f.Runs {
			if (o.Name == "pgrep" || o.Name == "pidof") && mentionsOpx(o.Argv) {
				j.block("destructive:kill", "%s kills opx's own processes", quote(r.Line))
				return
			}
		}
	case "history":
		if slices.Contains(r.Argv, "-c") || slices.Contains(r.Argv, "-w") {
			j.block("destructive:history", "%s clears the shell's history", quote(r.Line))
		}
	case "opx":
		// The agent driving opx itself: approving its own escalations,
		// rolling back, stopping the engine.
		for _, a := range args {
			switch a {
			case "approve", "deny", "rollback", "stop", "start", "restart", "policy", "config", "init", "daemon", "internal-engine", "chat", "send":
				j.block("destructive:opx-control", "%s drives opx itself; the agent may not approve, deny, roll back or restart its own run", quote(r.Line))
				return
			}
		}
	case "pkill", "killall":
		if mentionsOpx(r.Argv) {
			j.block("destructive:kill", "%s kills opx's own processes", quote(r.Line))
			return
		}
		for _, a := range args {
			if a == "-u" || a == "-U" || a == "--user" || strings.HasPrefix(a, "--user=") || a == "." || a == ".*" || a == "" {
				j.block("destructive:kill", "%s kills every process of a user (opx's among them)", quote(r.Line))
				return
			}
		}
	case "wipefs", "fdisk", "sfdisk", "cfdisk", "parted", "sgdisk", "gdisk", "mkswap", "blkdiscard", "cryptsetup":
		j.block("destructive:disk", "%s changes disks or partitions", quote(r.Line))
	case "dd":
		for _, a := range args {
			if o, ok := strings.CutPrefix(a, "of="); ok && strings.HasPrefix(s.ResolvePath(o), "/dev/") && !harmlessDevice(s.ResolvePath(o)) {
				j.block("destructive:device", "%s writes the device %s", quote(r.Line), o)
				return
			}
		}
	default:
		if strings.HasPrefix(r.Name, "mkfs") {
			for _, a := range args {
				if !strings.HasPrefix(a, "-") && !s.inWorkspace(s.ResolvePath(a)) {
					j.block("destructive:disk", "%s makes a file system on %s", quote(r.Line), a)
					return
				}
			}
		}
	}
}

// history returns the history pattern r touches, or "".
func (s *Shield) history(r *Ref) string {
	segs := splitPath(r.Path)
	found := ""
	s.rules.histIx.each(segs, func(i int) bool {
		if h := &s.rules.history[i]; h.matchSplit(r, segs) {
			found = h.src
		}
		return found != ""
	})
	return found
}

func mentionsOpx(argv []string) bool {
	for _, a := range argv[min(1, len(argv)):] {
		if strings.Contains(a, "opx") {
			return true
		}
	}
	return false
}

// scratch reports whether p is a scratch path (beneath /tmp and the
// like, not a scratch directory itself), and not beside the workspace:
// when the workspace lives in /tmp, its neighbours are someone's work.
func (s *Shield) scratch(p string) bool {
	return inScratch(p) && !slices.Contains(scratchDirs, p) && !within(p, path.Dir(s.cfg.Workspace))
}

// scratchLogs reports whether a delete removes logs from a scratch
// directory (/tmp/opx-run-*.log, /tmp/agent-logs): beneath /tmp, not
// beside the workspace, named as logs, and not the scratch directory
// itself or everything in it.
func (s *Shield) scratchLogs(r *Ref) bool {
	base := strings.ToLower(path.Base(r.Path))
	if !strings.Contains(base, "log") || pureWildcard(base) || !inScratch(r.Path) || slices.Contains(scratchDirs, path.Dir(r.Path)) && r.Tree && !strings.Contains(base, "log") {
		return false
	}
	return !slices.Contains(scratchDirs, r.Path) && !within(r.Path, path.Dir(s.cfg.Workspace))
}

func inScratch(p string) bool {
	for _, d := range scratchDirs {
		if within(p, d) {
			return true
		}
	}
	return false
}

func system(p string) bool {
	if p == "/" {
		return true
	}
	for _, d := range systemDirs {
		if within(p, d) && !inScratch(p) {
			return true
		}
	}
	return false
}

func harmlessDevice(p string) bool {
	for _, d := range harmlessDevices {
		if matchGlob(d, p) {
			return true
		}
	}
	return false
}

// runsLater is `runs-later:*`: writing what another program runs later,
// outside any sandbox (CI, git hooks, cron, systemd, shell start-up
// files, editor tasks, autostart, ssh, sudoers). Outside the workspace
// it blocks; for the workspace's own CI, hook managers, .envrc and
// editor settings it escalates (benign work edits them too), and their
// content is judged by script-content.
func (s *Shield) runsLater(_ *Action, f *Facts, j *judgement) {
	for i := range f.Writes {
		r := &f.Writes[i]
		// A recursive change (gofmt -w ., chmod -R) is judged by the
		// directory it starts at: it rewrites what is there, it does not
		// plant a CI workflow or a unit file beneath it.
		direct := Ref{Path: r.Path, Glob: r.Glob}
		segs := splitPath(r.Path)
		s.rules.laterIx.each(segs, func(k int) bool {
			l := &s.rules.later[k]
			if !l.matchSplit(&direct, segs) {
				return false
			}
			if r.By == "git" && (strings.HasSuffix(l.src, ".git/config") || strings.HasSuffix(l.src, ".gitconfig") || strings.HasSuffix(l.src, "/git/config")) {
				return false // git config: judged by the key it sets (below)
			}
			if l.rule == "runs-later:direnv" && s.inWorkspace(r.Path) && onlyActivatesVenv(f, r.Path) {
				return true // a workspace .envrc that only activates a virtualenv
			}
			if l.ask && s.inWorkspace(r.Path) && r.By == "edit_file" && s.quietLaterEdit(textOf(f, r.Path)) {
				return true // an edit adding only settings, a version of the same source, a known check
			}
			if l.ask && s.inWorkspace(r.Path) {
				j.escalate(l.rule, "%s writes %s, which runs later outside any sandbox (%s)", by(r), r.Path, l.src)
			} else {
				j.block(l.rule, "%s writes %s, which runs later outside any sandbox (%s)", by(r), r.Path, l.src)
			}
			return true
		})
		if j.blocked() {
			return
		}
	}
	s.scriptReplaced(f, j)
	for i := range f.Runs {
		r := &f.Runs[i]
		switch r.Name {
		case "git":
			if k := gitConfigKey(r.Argv); k != "" {
				if v := gitConfigValue(r.Argv); strings.EqualFold(k, "core.hooksPath") && repoDir(v) {
					// The repository's own versioned hooks (.githooks):
					// what they run is in the workspace, judged when
					// written (runs-later:git-hook); which hooks a
					// session turns on is asked about, not refused.
					j.escalate("runs-later:git-hook", "%s makes git run the hooks in %s, inside the repository, at every commit", quote(r.Line), v)
					continue
				}
				j.block("runs-later:git-hook", "%s sets %s, which makes git run a program later", quote(r.Line), k)
				return
			}
			if k, v, ok := gitConfigSet(r.Argv); ok {
				// session 28: a setting that weakens how git fetches
				// (http.sslVerify false, transfer.fsckObjects false)
				if kind := manifest.WeakSetting(k, v); kind != "" {
					s.supplyVerdict(Supply{Kind: kind, Key: k, Detail: "set to " + v, By: "git config"}, j)
					if j.blocked() {
						return
					}
				}
			}
		case "crontab":
			if len(r.Argv) > 1 && !slices.Contains(r.Argv[1:], "-l") && !cronOnlyDropped(f) {
				// (Without a write of the crontabs, the line only drops
				// entries: crontab -l | grep -v mine | crontab -.)
				j.block("runs-later:cron", "%s changes the crontab", quote(r.Line))
				return
			}
		case "systemctl":
			for _, a := range r.Argv {
				if a == "enable" || a == "link" || a == "edit" {
					j.block("runs-later:systemd", "%s makes systemd run a unit later", quote(r.Line))
					return
				}
			}
		case "at", "batch":
			j.block("runs-later:cron", "%s schedules a command", quote(r.Line))
			return
		}
	}
}

// scriptReplaced is `runs-later:script-replaced`: a file another program
// runs later by its name (a Makefile, package.json, conftest.py, a shell
// script, a Dockerfile, .envrc...) written with content Shield cannot
// see: moved or copied there (move_file, mv, cp), downloaded, edited in
// place. Written with its content in view it is judged by that content
// (script-content); here nothing is known of what it would run.
func (s *Shield) scriptReplaced(f *Facts, j *judgement) {
	for i := range f.Writes {
		r := &f.Writes[i]
		if r.Glob || metaWriters[r.By] || !runByName(r.Path) {
			continue
		}
		if r.By == "" && len(f.Runs) > 0 && !slices.ContainsFunc(f.Runs, func(x Run) bool { return !metaWriters[x.Name] }) {
			continue
		}
		seen := false
		for _, t := range f.Texts {
			if t.Source == "content:"+r.Path {
				seen = true
				break
			}
		}
		if !seen && !fromSameKind(f, r) {
			j.escalate("runs-later:script-replaced", "%s writes %s, which is run later by its name, with content Shield cannot see", by(r), r.Path)
			return
		}
	}
}

// fromSameKind reports whether w's content comes from files of its own
// kind (mv build.sh scripts/build.sh, a Makefile moved to a subdirectory):
// the program writing w reads something, and all it reads are scripts
// of w's kind, which were judged as such when written.
func fromSameKind(f *Facts, w *Ref) bool {
	kind := func(p string) string {
		if e := path.Ext(p); e != "" {
			return e
		}
		return path.Base(p)
	}
	n := 0
	for i := range f.Reads {
		r := &f.Reads[i]
		if r.By != w.By {
			continue
		}
		if r.Glob || !runByName(r.Path) || kind(r.Path) != kind(w.Path) {
			return false
		}
		n++
	}
	return n > 0
}

// metaWriters change a file's metadata (mode, owner, times), not what it
// holds; touch creates an empty file at most.
var metaWriters = map[string]bool{"chmod": true, "chown": true, "chgrp": true, "touch": true, "setfacl": true, "chattr": true}

// runByName reports whether a file at p is run by a build tool, test
// runner, package manager or shell by its name alone.
func runByName(p string) bool {
	base := path.Base(p)
	switch base {
	case "conftest.py", "setup.py", "noxfile.py", "fabfile.py", "sitecustomize.py", "usercustomize.py", "manage.py",
		"gulpfile.js", "Gruntfile.js", "Rakefile", "Jenkinsfile", "Vagrantfile", "build.gradle", "build.gradle.kts", "settings.gradle",
		"pom.xml", "build.rs", ".npmrc", ".yarnrc", ".yarnrc.yml", "Taskfile.yml", "magefile.go":
		return true
	}
	if ciYAML(p) || agentFiles[base] || strings.HasSuffix(base, ".pth") {
		return true
	}
	switch ext := path.Ext(base); {
	case base == "Makefile" || base == "makefile" || base == "GNUmakefile" || ext == ".mk",
		base == "justfile" || base == "Justfile" || base == ".justfile" || ext == ".just",
		containerFile(p), base == "package.json", base == ".envrc", base == ".mcp.json",
		ext == ".sh" || ext == ".bash" || ext == ".zsh" || ext == ".ksh" || ext == ".command",
		strings.Contains(p, "/.husky/") || strings.Contains(p, "/.git/hooks/"):
		return true
	}
	return false
}

// gitConfigKey returns the key a `git config` run sets when that key
// makes git run a program (hooks, aliases to shell, ssh, editors,
// filters), or "". A read sets nothing: --get, --get-all, --get-regexp,
// --list, -l, the get and list subcommands, a key with no value; nor does
// an unset, which removes what would run.
func gitConfigKey(argv []string) string {
	i := slices.Index(argv, "config")
	if i < 0 {
		return ""
	}
	var ops []string
	for k := i + 1; k < len(argv); k++ {
		a := argv[k]
		name, _, eq := strings.Cut(a, "=")
		switch {
		case a == "--":
			ops = append(ops, argv[k+1:]...)
			k = len(argv)
		case name == "-f" || name == "--file" || name == "--blob" || name == "--type" || name == "--default" || name == "--comment" || name == "--value":
			if !eq {
				k++
			}
		case strings.HasPrefix(a, "--get") || a == "-l" || a == "--list" || strings.HasPrefix(a, "--unset") || a == "--remove-section":
			return ""
		case strings.HasPrefix(a, "-"):
		default:
			ops = append(ops, a)
			if strings.Contains(a, ".") && (len(ops) == 1 || len(ops) == 2 && ops[0] == "set") && k+1 < len(argv) {
				// rules 15: the word after the key is its value, even
				// when it begins with a dash (alias.st '-c core.hooksPath=…')
				ops = append(ops, argv[k+1])
				k = len(argv)
			}
		}
	}
	if len(ops) > 0 {
		switch ops[0] {
		case "get", "list", "unset", "remove-section":
			return ""
		case "set":
			ops = ops[1:]
		}
	}
	if len(ops) < 2 {
		return "" // a key alone is read
	}
	if plainGitAlias(ops[0], ops[1]) {
		return "" // rules 15: git's own subcommand under another name
	}
	// one list with the facts' (gitRunsLater: a program git runs later),
	// and what makes git fetch or run from elsewhere: URL rewrites, an
	// included file, the ext transport (which runs a command) allowed
	k := strings.ToLower(ops[0])
	if gitRunsLater(k) || strings.HasPrefix(k, "url.") || k == "include.path" || strings.HasPrefix(k, "includeif.") ||
		(k == "protocol.ext.allow" || k == "protocol.allow") && !strings.EqualFold(ops[1], "never") {
		return ops[0]
	}
	return ""
}

// gitConfigSet returns the key and value a `git config KEY VALUE` run
// sets in the repository's own configuration (not --global, --system or
// a --file: those are writes judged by their path), or false.
func gitConfigSet(argv []string) (string, string, bool) {
	i := slices.Index(argv, "config")
	if i < 0 || len(argv) < i+3 {
		return "", "", false
	}
	var ops []string
	for _, a := range argv[i+1:] {
		switch {
		case a == "--global" || a == "--system" || a == "-f" || strings.HasPrefix(a, "--file") || strings.HasPrefix(a, "--get") ||
			strings.HasPrefix(a, "--unset") || a == "-l" || a == "--list" || strings.HasPrefix(a, "--type") || a == "--blob":
			return "", "", false
		case strings.HasPrefix(a, "-"):
		default:
			ops = append(ops, a)
		}
	}
	if len(ops) > 0 && ops[0] == "set" {
		ops = ops[1:]
	}
	if len(ops) != 2 || !strings.Contains(ops[0], ".") {
		return "", "", false
	}
	return ops[0], ops[1], true
}

// gitConfigValue is the value a `git config KEY VALUE` run sets (the
// last operand), or "".
func gitConfigValue(argv []string) string {
	if len(argv) < 3 || strings.HasPrefix(argv[len(argv)-1], "-") {
		return ""
	}
	return argv[len(argv)-1]
}

// repoDir reports whether v names a directory inside the repository,
// relative to its top, without leaving it (.githooks, tools/hooks).
func repoDir(v string) bool {
	if v == "" || strings.ContainsAny(v, "$`~\\") || path.IsAbs(v) {
		return false
	}
	c := path.Clean(v)
	return c != "." && c != ".." && !strings.HasPrefix(c, "../") && !strings.HasPrefix(c, ".git/") && c != ".git"
}

// envrcVenvLine is a line of an .envrc that only activates a virtualenv
// in the workspace (or is blank or a comment).
var envrcVenvLine = mustRx(`^\s*(?:#.*|(?:source|\.)\s+(?:\./)?\.?venv/bin/activate|layout\s+python3?|layout\s+pyenv\s+[\d.]+|(?:export\s+)?VIRTUAL_ENV=["']?(?:\./)?\.?venv["']?|PATH_add\s+(?:\./)?\.?venv/bin)?\s*$`)

// envrcDotenv loads a dotenv file beside the .envrc (variables, not code:
// direnv parses it), and envrcExport sets a variable to a literal.
var (
	envrcDotenv = mustRx(`^\s*dotenv(?:_if_exists)?(?:\s+(?:\./)?\.?[\w-]+(?:\.[\w-]+)*)?\s*$`)
	envrcExport = mustRx(`^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(?:"[^"$\x60\\]*"|'[^']*'|[\w./:@,+=-]*)\s*$`)
	// envrcRisky names variables that make programs load or run
	// something, or fetch code from elsewhere (rules 10: never data).
	envrcRisky = mustRx(`(?i)preload|options|opts|startup|command|cmd|hook|path|shell|^bash_env$|^env$|editor|pager|prompt|rc$|library|plugin|init|exec|proxy|registry|index|mirror|sumdb|nosum|insecure|noverify|trust|cert|ca_bundle|_ca$|^home$|^user$|token|secret|password|key`)
)

// envrcDataLine reports whether an .envrc line only loads a dotenv file
// or sets a variable to a literal whose name does not load, run or fetch
// anything (DBT_TARGET=dev, AWS_PROFILE=dev, DJANGO_SETTINGS_MODULE=…).
func envrcDataLine(line string) bool {
	if envrcDotenv.MatchString(line) {
		return true
	}
	m := envrcExport.FindStringSubmatch(line)
	return m != nil && !envrcRisky.MatchString(m[1])
}

// onlyActivatesVenv reports whether the content written to p (an .envrc)
// is known and every line of it only activates a virtualenv.
func onlyActivatesVenv(f *Facts, p string) bool {
	seen := false
	for _, t := range f.Texts {
		if t.Source != "content:"+p {
			continue
		}
		if len(t.Body) > 4096 {
			return false
		}
		for _, line := range strings.Split(t.Body, "\n") {
			if !envrcVenvLine.MatchString(line) && !envrcDataLine(line) {
				return false
			}
		}
		seen = true
	}
	return seen
}

// scratchGlob reports whether a delete names files by a pattern directly
// in a scratch directory or beneath one (rm -f /tmp/job-*.parquet), with
// a name that is more than wildcards (two letters or digits at least)
// and no pattern above the last segment: a run's scratch files, or
// someone else's, which a human can tell apart and Shield cannot (rules
// 10: asked, not blocked).
func (s *Shield) scratchGlob(r *Ref) bool {
	if !r.Glob || !inScratch(r.Path) || slices.Contains(scratchDirs, r.Path) || within(r.Path, path.Dir(s.cfg.Workspace)) {
		return false
	}
	dir, base := path.Dir(r.Path), path.Base(r.Path)
	if hasMeta(dir) || !hasMeta(base) {
		return false
	}
	n := 0
	for _, c := range base {
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			n++
		}
	}
	return n >= 1 // rules 28: /tmp/p.* names files by a prefix too
}

// verifierCertificate reports whether r is a certificate a signature or
// provenance verifier reads to check a signature (cosign verify-blob
// --certificate x.pem): public by its role, whatever its extension —
// only a .pem, .crt or .cert read by a verifier, never a key.
func verifierCertificate(r *Ref, g string) bool {
	switch r.By {
	case "cosign", "notation", "slsa-verifier", "rekor-cli", "sigstore-verify":
	default:
		return false
	}
	base := strings.ToLower(path.Base(r.Path))
	return (strings.HasSuffix(base, ".pem") || strings.HasSuffix(base, ".crt") || strings.HasSuffix(base, ".cert")) && !strings.Contains(base, "key")
}

// publicPartRead reports whether r is read by an openssl run that can
// print only what is public: a certificate reader (x509, verify, crl:
// given a private key they fail without printing it) or a key tool
// asked for the public half (rsa, pkey, ec with -pubout, without -text
// and -passin, which print or unlock the private parts).
func publicPartRead(f *Facts, r *Ref) bool {
	if r.By != "openssl" {
		return false
	}
	for i := range f.Runs {
		run := &f.Runs[i]
		if run.Name != "openssl" || len(run.Argv) < 2 || literalVia(run.Via) {
			continue
		}
		sub := run.Argv[1]
		certOnly := sub == "x509" || sub == "verify" || sub == "crl"
		pubOnly := (sub == "rsa" || sub == "pkey" || sub == "ec") && slices.Contains(run.Argv, "-pubout") && !slices.Contains(run.Argv, "-text") && !slices.Contains(run.Argv, "-passin")
		if !certOnly && !pubOnly {
			continue
		}
		for k := 2; k+1 < len(run.Argv); k++ {
			if a := run.Argv[k]; (a == "-in" || a == "-CAfile" || a == "-untrusted") && run.Argv[k+1] != "" && (run.Argv[k+1] == r.Path || strings.HasSuffix(r.Path, "/"+path.Clean(run.Argv[k+1])) || r.Via != "" && strings.HasSuffix(r.Via, "/"+path.Clean(run.Argv[k+1]))) {
				return true
			}
		}
	}
	return false
}

// buildSecret reports whether r is the source of a docker build's
// --secret (id=x,src=PATH), written literally on the line.
func buildSecret(f *Facts, r *Ref) bool {
	if r.By != "docker" {
		return false
	}
	for i := range f.Runs {
		run := &f.Runs[i]
		if run.Name != "docker" || literalVia(run.Via) || !slices.Contains(run.Argv, "build") && !slices.Contains(run.Argv, "buildx") {
			continue
		}
		for k, a := range run.Argv {
			v, ok := strings.CutPrefix(a, "--secret=")
			if !ok && a == "--secret" && k+1 < len(run.Argv) {
				v, ok = run.Argv[k+1], true
			}
			if !ok {
				continue
			}
			for _, part := range strings.Split(v, ",") {
				if src, ok := strings.CutPrefix(part, "src="); ok && src != "" && (path.Base(src) == path.Base(r.Path)) {
					return true
				}
			}
		}
	}
	return false
}

// distroInstall reports whether prog, a distribution's package manager,
// runs in f only to install or refresh packages by name: no file, no
// URL, no option beyond -y, -q and --no-install-recommends (rules 28).
func distroInstall(f *Facts, prog string) bool {
	switch prog {
	case "apt-get", "apt", "dnf", "yum", "zypper", "apk":
	default:
		return false
	}
	found := false
	for i := range f.Runs {
		r := &f.Runs[i]
		if r.Name != prog {
			continue
		}
		verb := false
		for _, a := range r.Argv[1:] {
			switch {
			case a == "-y" || a == "-q" || a == "--yes" || a == "--assume-yes" || a == "--quiet" || a == "--no-install-recommends":
			case !verb && (a == "install" || a == "add" || a == "update"):
				verb = true
			case verb && distroPackageName.MatchString(a):
			default:
				return false
			}
		}
		if !verb {
			return false
		}
		found = true
	}
	return found
}

// distroPackageName is a package named as the distribution names it
// (libdpdk-dev=23.11.2-1~deb12u1, openjdk-17-jdk-headless).
var distroPackageName = mustRx(`^[a-z0-9][a-z0-9.+:=~-]{0,120}$`)

// writesPath reports whether f writes p (not a glob).
func writesPath(f *Facts, p string) bool {
	for i := range f.Writes {
		if w := &f.Writes[i]; !w.Glob && w.Path == p {
			return true
		}
	}
	return false
}

// globalPinned reports whether prog installs packages globally (-g,
// --global) each named at an exact version (name@1.2.3) and nothing else
// (rules 28).
func globalPinned(f *Facts, prog string) bool {
	found := false
	for i := range f.Runs {
		r := &f.Runs[i]
		if r.Name != prog {
			continue
		}
		global, verb, n := false, false, 0
		for _, a := range r.Argv[1:] {
			switch {
			case a == "-g" || a == "--global" || a == "global":
				global = true
			case !verb && (a == "install" || a == "i" || a == "add"):
				verb = true
			case verb && exactPackage.MatchString(a):
				n++
			default:
				return false
			}
		}
		if !global || !verb || n == 0 {
			return false
		}
		found = true
	}
	return found
}

// exactPackage is an npm package named at an exact version.
var exactPackage = mustRx(`^(?:@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*@\d+\.\d+\.\d+(?:-[\w.]+)?$`)
