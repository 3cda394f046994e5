package shield

import (
	"path"
	"regexp"
	"strings"
)

// Rules 29, commands (session 30): shapes of command lines that passed
// with no rule to say anything (heuristics:none), each judged as a class.
//
//   - A command run inside a container or a pod (docker exec, docker
//     compose exec, podman and nerdctl exec, kubectl and oc exec, with
//     or without sh -c): the inner command is judged as the line it is
//     (what it reads, sends, prints), its paths being the container's:
//     a credential read, the environment dumped, a log emptied there is
//     what it would be here (containerExec).
//   - Password files by name (passwd, htpasswd, shadow, *.passwd,
//     passwords.txt) read whole outside the system's own /etc/passwd,
//     in a home, a container or a workspace's configuration
//     (passwordFileRead).
//   - Key material committed: a git_commit or git add/commit whose paths
//     are named as keys, secrets or tokens (not code named so: keys.ts,
//     token_test.go), and git add -f, which forces in what .gitignore
//     keeps out (keyMaterialCommitted).
//   - git rm (and git rm --cached) judged as the deletion of what it
//     removes from the repository, a submodule de-initialised and
//     removed, and a build tool's own settings deleted (.mvn, the Gradle
//     wrapper, .cargo, Yarn's releases) (gitRemovals, buildSettingsDeleted).
//   - Model and data files in pickle's family (.pkl, .joblib, .pt, .ckpt
//     …) fetched from a host, or a model repository downloaded unpinned:
//     loading them runs their code (pickleFetched).
//   - DNS lookups of names fed by xargs from an encoder (… | base32 |
//     xargs -n1 dig +short): data carried out in names (dnsFedNames).
//   - Deny lists (hotlists, blocklists, revoked, sanctions …) rewritten
//     by a command or written empty: who was refused now passes
//     (denyListRewritten).
//
// Every reader is bounded: at most 64 runs, refs or paths, words and
// lines clipped, no regexp that backtracks.
func (s *Shield) rules29Commands(a *Action, f *Facts, j *judgement) {
	if j.set {
		return
	}
	for _, rule := range [...]func(*Action, *Facts, *judgement){
		s.containerExec, s.passwordFileRead, s.keyMaterialCommitted, s.gitRemovals, s.buildSettingsDeleted,
		s.pickleFetched, s.dnsFedNames, s.denyListRewritten,
	} {
		rule(a, f, j)
		if j.set {
			return
		}
	}
}

// r29Max bounds what each reader walks.
const r29Max = 64

// ---- containers ----

// containerExecInner returns where the command a container or pod runs
// begins in argv (docker exec C CMD…, docker compose exec SVC CMD…,
// kubectl exec POD -- CMD…), or -1.
func containerExecInner(name string, argv []string) int {
	if len(argv) > r29Max {
		argv = argv[:r29Max]
	}
	i := 1
	valued := func(a string, names ...string) bool {
		for _, n := range names {
			if a == n {
				return true
			}
		}
		return false
	}
	switch name {
	case "docker", "podman", "nerdctl", "docker-compose", "podman-compose":
		compose := name == "docker-compose" || name == "podman-compose"
		for i < len(argv) && strings.HasPrefix(argv[i], "-") {
			if !strings.Contains(argv[i], "=") && valued(argv[i], "-H", "--host", "-c", "--context", "--config", "-l", "--log-level", "-f", "--file", "-p", "--project-name", "--project-directory", "--env-file", "--profile", "--ansi", "--progress") {
				i++
			}
			i++
		}
		if i < len(argv) && !compose && (argv[i] == "compose" || argv[i] == "container") {
			compose = argv[i] == "compose"
			i++
			for compose && i < len(argv) && strings.HasPrefix(argv[i], "-") {
				if !strings.Contains(argv[i], "=") && valued(argv[i], "-f", "--file", "-p", "--project-name", "--project-directory", "--env-file", "--profile", "--ansi", "--progress") {
					i++
				}
				i++
			}
		}
		if i >= len(argv) || argv[i] != "exec" {
			return -1
		}
		i++
		for i < len(argv) && strings.HasPrefix(argv[i], "-") {
			if argv[i] == "--" {
				i++
				break
			}
			if !strings.Contains(argv[i], "=") && valued(argv[i], "-e", "--env", "--env-file", "-u", "--user", "-w", "--workdir", "--detach-keys", "--index") {
				i++
			}
			i++
		}
		i++ // the container or service
	case "kubectl", "oc":
		exec := false
		for ; i < len(argv); i++ {
			a := argv[i]
			if a == "--" {
				if !exec {
					return -1
				}
				i++
				break
			}
			if strings.HasPrefix(a, "-") {
				if !strings.Contains(a, "=") && valued(a, "-n", "--namespace", "--context", "--cluster", "--kubeconfig", "-s", "--server", "--user", "--token", "-c", "--container", "-f", "--filename", "--pod-running-timeout", "--as", "--request-timeout") {
					i++
				}
				continue
			}
			if !exec {
				if a != "exec" {
					return -1
				}
				exec = true
				continue
			}
			// kubectl exec POD CMD (no --): the pod, then the command
			if !slicesContains(argv[i+1:], "--") {
				i++
				break
			}
		}
		if !exec {
			return -1
		}
	default:
		return -1
	}
	if i >= len(argv) {
		return -1
	}
	return i
}

// skipWords returns the offset in line after n shell words (quotes,
// escapes and $( ) kept whole), or -1.
func skipWords(line string, n int) int {
	i := 0
	for w := 0; w < n; w++ {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i >= len(line) {
			return -1
		}
		depth := 0
		for i < len(line) {
			c := line[i]
			if depth == 0 && (c == ' ' || c == '\t') {
				break
			}
			switch c {
			case '\\':
				i++
			case '\'':
				if k := strings.IndexByte(line[i+1:], '\''); k >= 0 {
					i += k + 1
				}
			case '"':
				for i++; i < len(line) && line[i] != '"'; i++ {
					if line[i] == '\\' {
						i++
					}
				}
			case '(':
				depth++
			case ')':
				if depth > 0 {
					depth--
				}
			}
			i++
		}
	}
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	if i > len(line) {
		return -1
	}
	return i
}

// containerKept are the rule families an inner command's judgement
// keeps: what it reads, prints, sends and runs. Paths outside the
// workspace (it is the container's filesystem) and a dev database's
// resets there are not this machine's.
func containerKept(rule string) bool {
	for _, p := range []string{"credential", "exfiltration", "pipe-to-shell", "remote-code", "encoded-payload", "destructive:history", "evasion:", "persistence:"} {
		if strings.HasPrefix(rule, p) {
			return true
		}
	}
	return false
}

// containerExec judges the command a container or pod runs.
func (s *Shield) containerExec(a *Action, f *Facts, j *judgement) {
	if j.inner || a.Command == "" {
		return
	}
	for i := range f.Runs {
		if i >= r29Max {
			return
		}
		r := &f.Runs[i]
		k := containerExecInner(r.Name, r.Argv)
		if k < 0 || literalVia(r.Via) {
			continue
		}
		for n := 0; n < 4 && k < len(r.Argv); n++ {
			// an exec in an exec (docker exec a docker exec b CMD)
			m := containerExecInner(path.Base(r.Argv[k]), r.Argv[k:])
			if m < 0 {
				break
			}
			k += m
		}
		off := skipWords(r.Line, k)
		if off < 0 || off >= len(r.Line) {
			continue
		}
		inner := clip(r.Line[off:], 4000)
		where := clip(strings.Join(r.Argv[:k], " "), 80)
		// the line with the container's command in place of the exec:
		// what it pipes into on this machine judges it as here (env |
		// grep '^DB_NAME=' prints one name)
		line := inner
		if len(a.Command) <= maxTextJudged && strings.Count(a.Command, r.Line) == 1 {
			line = strings.Replace(a.Command, r.Line, inner, 1)
		}
		v, ok, inf := s.judgeLine(line, containerKept)
		if ok && v.Decision != Allow {
			j.escalate(v.Rule, "%s runs %s in the container, judged as a command there: %s", where, quote(inner), v.Reason)
			return
		}
		// what only the container's paths say: a log emptied or deleted
		for _, w := range append(append([]Ref(nil), inf.Writes...), inf.Deletes...) {
			if !logPath(w.Path) {
				continue
			}
			empties := w.By == "truncate" || w.By == "shred" || w.By == "rm" || w.By == "find -delete" || w.By == "redirect" && onlyNull(&inf) || w.By == "cp" && readsDevNull(&inf)
			if empties {
				j.escalate("destructive:history", "%s empties or deletes %s in the container, a log: that covers tracks", where, w.Path)
				return
			}
		}
		for _, rd := range inf.Reads {
			if passwordFile(rd.Path) && !listingProgram[rd.By] && !passwordTools[rd.By] {
				j.escalate("credential-path", "%s reads %s in the container, a password file", where, rd.Path)
				return
			}
		}
	}
}

// onlyNull reports whether a line runs nothing that writes output
// beside the shells that run it (sh -c ': > x').
func onlyNull(f *Facts) bool {
	for i := range f.Runs {
		switch f.Runs[i].Name {
		case ":", "true", "false", "sh", "bash", "dash", "ash", "zsh", "busybox":
		default:
			return false
		}
	}
	return true
}

func readsDevNull(f *Facts) bool {
	for _, r := range f.Reads {
		if r.Path == "/dev/null" {
			return true
		}
	}
	return false
}

// logPath reports whether p is a log: in a log directory or named .log.
func logPath(p string) bool {
	segs := splitPath(p)
	if len(segs) > 24 {
		return false
	}
	for _, seg := range segs[:len(segs)-1] {
		switch strings.ToLower(seg) {
		case "log", "logs", "audit", "journal":
			return true
		}
	}
	b := strings.ToLower(segs[len(segs)-1])
	return strings.HasSuffix(b, ".log") || strings.Contains(b, ".log.") || b == "audit.log" || strings.HasSuffix(b, ".journal")
}

// ---- password files ----

// passwordFile reports whether p is a file of passwords by its name
// (passwd, htpasswd, shadow, users.passwd, passwords.txt), the system's
// world-readable /etc/passwd and what the system ships beside it aside.
func passwordFile(p string) bool {
	if p == "/etc/passwd" || p == "/etc/group" || strings.HasPrefix(p, "/etc/pam.d/") || strings.HasPrefix(p, "/usr/") ||
		strings.HasPrefix(p, "/bin/") || strings.HasPrefix(p, "/sbin/") || strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/etc/default/") {
		return false
	}
	b := strings.ToLower(path.Base(p))
	if isTemplate(b) {
		return false
	}
	switch b {
	case "passwd", "htpasswd", ".htpasswd", "shadow", "gshadow", "master.passwd", "passwords", "password", ".passwords",
		"passwords.txt", "password.txt", "passwd.txt", "passwords.csv", "passwords.json", "passwords.yaml", "passwords.yml", "pwfile", "pwdfile":
		return true
	}
	return strings.HasSuffix(b, ".passwd") || strings.HasSuffix(b, ".htpasswd") || strings.HasSuffix(b, "_passwd") || strings.HasSuffix(b, "-passwd")
}

// passwordTools change a password file in place (a user added, a mode
// set): they do not show what it holds.
var passwordTools = setOf("mosquitto_passwd", "htpasswd", "chpasswd", "passwd", "vipw", "chmod", "chown", "chgrp", "touch", "wc", "file", "test", "[", "sha256sum", "md5sum")

// passwordFileRead is credential-path for a password file read whole.
func (s *Shield) passwordFileRead(_ *Action, f *Facts, j *judgement) {
	for i := range f.Reads {
		if i >= r29Max {
			return
		}
		r := &f.Reads[i]
		if r.Glob || r.Tree || listingProgram[r.By] || passwordTools[r.By] || r.By == "git" || r.By == "git_commit" || !passwordFile(r.Path) {
			continue
		}
		if s.inWorkspace(r.Path) {
			rel := s.relPath(r.Path)
			if testSource(r.Path) || fixtureData(rel) || strings.Contains("/"+rel, "/test") || strings.Contains("/"+rel, "/example") {
				continue // a passwd in /etc/passwd's format, to parse
			}
		}
		j.escalate("credential-path", "%s reads %s, a password file by its name: what it holds are hashes or passwords of accounts", by(r), r.Path)
		return
	}
}

// ---- key material committed ----

// keyDataExts are extensions a secret is kept in as data (not code).
var keyDataExts = setOf("", ".txt", ".json", ".yaml", ".yml", ".env", ".ini", ".conf", ".cfg", ".properties", ".xml", ".b64",
	".bin", ".dat", ".csv", ".toml", ".secret", ".token", ".cred", ".creds", ".out", ".bak")

// keyMaterialExts are extensions of key material whatever the name.
var keyMaterialExts = setOf(".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".asc", ".kdbx", ".p8", ".ppk", ".bks")

var keyWords = setOf("key", "keys", "secret", "secrets", "token", "tokens", "credential", "credentials", "creds", "passwd",
	"password", "passwords", "apikey", "privkey", "masterkey", "signingkey", "deploykey", "pat")

// keyMaterialName reports whether a file's base name says it holds key
// material: a key's extension, or a key's word in a data file's name
// (keys.txt, api_token, deploy_key; not keys.ts, token_test.go).
func keyMaterialName(base string) bool {
	b := strings.ToLower(base)
	if strings.HasSuffix(b, ".pub") || isTemplate(b) || strings.Contains(b, "public") || strings.Contains(b, "jwks") {
		return false
	}
	for _, p := range []string{"id_rsa", "id_ed25519", "id_ecdsa", "id_dsa"} {
		if strings.HasPrefix(b, p) {
			return true
		}
	}
	ext := path.Ext(b)
	if keyMaterialExts[ext] {
		if ext == ".pem" || ext == ".asc" {
			stem := strings.TrimSuffix(b, ext)
			if !strings.Contains(stem, "key") && !strings.Contains(stem, "priv") && !strings.Contains(stem, "secret") {
				return false // a certificate, a CA bundle, a signature
			}
		}
		return true
	}
	if !keyDataExts[ext] {
		return false
	}
	words := strings.FieldsFunc(strings.TrimSuffix(b, ext), func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') })
	if len(words) > 12 {
		return false
	}
	for _, w := range words {
		if keyWords[w] {
			return true
		}
	}
	return false
}

// keyMaterialCommitted judges key material committed or staged, and a
// forced add.
func (s *Shield) keyMaterialCommitted(a *Action, f *Facts, j *judgement) {
	for _, p := range s.committedPaths(a, f) {
		if p == s.cfg.Workspace || hasMeta(p) {
			continue
		}
		if s.inWorkspace(p) && (testSource(p) && !keyMaterialExts[strings.ToLower(path.Ext(p))]) {
			continue
		}
		if keyMaterialName(path.Base(p)) {
			j.escalate("credential-path", "the commit takes in %s, named as key material: once pushed it stays in the history of every clone", s.relPath(p))
			return
		}
	}
	for i := range f.Runs {
		if i >= r29Max {
			return
		}
		r := &f.Runs[i]
		if r.Name != "git" || len(r.Argv) < 3 || literalVia(r.Via) {
			continue
		}
		args := r.Argv[1:]
		for len(args) > 1 && (args[0] == "-C" || args[0] == "-c") {
			args = args[2:]
		}
		if len(args) < 2 || args[0] != "add" && args[0] != "stage" {
			continue
		}
		force, target := false, ""
		for _, x := range args[1:] {
			switch {
			case x == "-f" || x == "--force" || strings.HasPrefix(x, "-") && !strings.HasPrefix(x, "--") && strings.Contains(x, "f"):
				force = true
			case strings.HasPrefix(x, "-"):
			case target == "":
				if b := path.Base(x); b != ".gitkeep" && b != ".keep" && b != ".gitignore" {
					target = x
				}
			}
		}
		if force && target != "" {
			j.escalate("exfiltration:data", "git add -f stages %s past .gitignore: what the project keeps out of the repository (data exports, secrets, local settings) enters the next commit and every push", clipText(target, 80))
			return
		}
	}
}

// ---- git removals ----

// gitRemovals judges git rm (and git rm --cached) as the deletion of the
// paths it takes out of the repository, and a submodule de-initialised
// and removed.
func (s *Shield) gitRemovals(a *Action, f *Facts, j *judgement) {
	deinit := ""
	removes := false
	for i := range f.Runs {
		if i >= r29Max {
			return
		}
		r := &f.Runs[i]
		if literalVia(r.Via) {
			continue
		}
		if r.Name == "rm" {
			removes = true
		}
		if r.Name != "git" || len(r.Argv) < 3 {
			continue
		}
		args := r.Argv[1:]
		for len(args) > 1 && (args[0] == "-C" || args[0] == "-c") {
			args = args[2:]
		}
		if len(args) > 2 && args[0] == "submodule" && args[1] == "deinit" {
			force := false
			for _, x := range args[2:] {
				if x == "-f" || x == "--force" {
					force = true
				} else if !strings.HasPrefix(x, "-") && deinit == "" {
					deinit = x
				}
			}
			if !force {
				deinit = ""
			}
			continue
		}
		if len(args) < 2 || args[0] != "rm" {
			continue
		}
		removes = true
		cached, tree := false, false
		var paths []string
		for _, x := range args[1:] {
			switch {
			case x == "--cached":
				cached = true
			case x == "-n" || x == "--dry-run":
				paths = nil
				tree = false
				goto next
			case x == "-r" || strings.HasPrefix(x, "-") && !strings.HasPrefix(x, "--") && strings.Contains(x, "r"):
				tree = true
			case x == "--" || strings.HasPrefix(x, "-"):
			default:
				if len(paths) < r29Max {
					paths = append(paths, x)
				}
			}
		}
		if len(paths) == 0 {
			continue
		}
		{
			synth := Facts{}
			for _, p := range paths {
				ref := Ref{Path: s.ResolvePath(p), Glob: hasMeta(p), Tree: tree, By: "git rm"}
				if cached && !tree && s.credential(&ref) != "" {
					continue // a secret untracked: what .gitignore should have kept out
				}
				synth.Deletes = append(synth.Deletes, ref)
			}
			var sub judgement
			s.workspaceDestruction(a, &synth, &sub)
			if !sub.set {
				s.buildSettingsDeleted(a, &synth, &sub)
			}
			if sub.set && sub.v.Decision != Allow {
				what := "removes"
				if cached {
					what = "untracks (--cached)"
				}
				j.escalate(sub.v.Rule, "git rm %s %s: the files leave the repository at the next commit (%s)", what, clipText(strings.Join(paths, " "), 100), sub.v.Reason)
				return
			}
		}
	next:
	}
	if deinit != "" && removes {
		j.escalate("destructive:workspace-tree", "git submodule deinit -f empties %s and the line removes it: code the build takes from the submodule is gone", clipText(deinit, 80))
	}
}

// buildSettingsDirs are a build tool's own settings, by their path in a
// project (or a module of it): deleting them is deleting a manifest.
var buildSettingsDirs = []string{".mvn", "gradle/wrapper", ".cargo", ".yarn/releases", ".yarn/plugins", ".yarn/patches", ".config/dotnet-tools.json"}

var buildSettingsFiles = setOf("mvnw", "mvnw.cmd", "gradlew", "gradlew.bat", "gradle-wrapper.properties", "gradle-wrapper.jar",
	"libs.versions.toml", ".yarnrc.yml", ".yarnrc", "global.json", "rust-toolchain", "rust-toolchain.toml", ".tool-versions", ".nvmrc",
	".node-version", ".python-version", ".sdkmanrc", ".bazelversion", "Directory.Build.props", "Directory.Packages.props", "nuget.config", "NuGet.Config")

// buildSetting names the build tool setting p (beneath the workspace)
// is or holds, or "".
func (s *Shield) buildSetting(p string) string {
	if !s.inWorkspace(p) || p == s.cfg.Workspace {
		return ""
	}
	rel := s.relPath(p)
	for _, d := range buildSettingsDirs {
		if rel == d || strings.HasPrefix(rel, d+"/") || strings.HasSuffix(rel, "/"+d) || strings.Contains(rel, "/"+d+"/") {
			return d
		}
	}
	if b := path.Base(rel); buildSettingsFiles[b] {
		return b
	}
	return ""
}

// buildSettingsDeleted is destructive:workspace-key-file for a build
// tool's own settings deleted (its wrapper, its toolchain pins, its
// registry settings). Build outputs and caches (.gradle, target) pass.
func (s *Shield) buildSettingsDeleted(_ *Action, f *Facts, j *judgement) {
	for i := range f.Deletes {
		if i >= r29Max {
			return
		}
		r := &f.Deletes[i]
		if r.By == "mv" || r.By == "move_file" {
			continue
		}
		if d := s.buildSetting(r.Path); d != "" {
			j.escalate("destructive:workspace-key-file", "%s deletes %s, a build tool's own settings (%s): the build no longer runs as the project declares it", by(r), r.Path, d)
			return
		}
	}
}

// ---- pickle-family files fetched ----

var pickleExts = setOf(".pkl", ".pickle", ".joblib", ".pt", ".pth", ".ckpt", ".npz", ".dill", ".sav", ".h5model")

// pickleName reports whether a file's name is of pickle's family:
// loading it runs code it carries. A .bin is torch's when named as a
// model's weights (pytorch_model.bin).
func pickleName(base string) bool {
	b := strings.ToLower(base)
	if pickleExts[path.Ext(b)] {
		return true
	}
	return path.Ext(b) == ".bin" && hasAny(b, "pytorch", "model", "weights", "checkpoint", "ckpt")
}

var fetchers = setOf("curl", "wget", "aria2c", "http", "xh", "gsutil", "aws", "gcloud", "azcopy", "rclone", "s3cmd", "mc")

// pickleFetched is remote-code:runner for a pickle-family file fetched
// from outside, and a model repository downloaded at no pinned revision.
func (s *Shield) pickleFetched(_ *Action, f *Facts, j *judgement) {
	remote := map[string]string{}
	for _, q := range f.Requests {
		if fetchers[q.By] && !localHost(q.Host) && (q.Host == "" || !s.hostAllowed(q.Host)) {
			remote[q.By] = q.Host
		}
	}
	for i := range f.Writes {
		if i >= r29Max {
			break
		}
		w := &f.Writes[i]
		host, ok := remote[w.By]
		if !ok || w.Tree || !pickleName(path.Base(w.Path)) {
			continue
		}
		if host == "" {
			host = "a host"
		}
		j.escalate("remote-code:runner", "%s fetches %s from %s: a pickle-family file runs the code it carries when it is loaded", w.By, path.Base(w.Path), host)
		return
	}
	for i := range f.Runs {
		if i >= r29Max {
			return
		}
		r := &f.Runs[i]
		if literalVia(r.Via) || len(r.Argv) < 3 {
			continue
		}
		cli := r.Name == "huggingface-cli" && r.Argv[1] == "download" || r.Name == "hf" && r.Argv[1] == "download"
		if !cli {
			// aws s3 cp / gsutil cp of a pickle from a bucket's URL
			if (r.Name == "gsutil" || r.Name == "aws" || r.Name == "rclone" || r.Name == "s3cmd" || r.Name == "azcopy") && len(r.Argv) < r29Max {
				for _, x := range r.Argv[1:] {
					if strings.Contains(x, "://") && pickleName(path.Base(x)) && !strings.HasPrefix(x, "file://") {
						if slicesContains(r.Argv, "cp") || slicesContains(r.Argv, "copy") || slicesContains(r.Argv, "get") || slicesContains(r.Argv, "copyto") {
							j.escalate("remote-code:runner", "%s fetches %s from a bucket: a pickle-family file runs the code it carries when it is loaded", r.Name, clipText(x, 100))
							return
						}
					}
				}
			}
			continue
		}
		pinned, safe, repo := false, false, ""
		var files []string
		for k := 2; k < len(r.Argv) && k < r29Max; k++ {
			x := r.Argv[k]
			switch {
			case x == "--revision" && k+1 < len(r.Argv):
				pinned = fullCommitHash(r.Argv[k+1])
				k++
			case strings.HasPrefix(x, "--revision="):
				pinned = fullCommitHash(strings.TrimPrefix(x, "--revision="))
			case x == "--include" && k+1 < len(r.Argv):
				files = append(files, r.Argv[k+1])
				k++
			case x == "--local-dir" || x == "--cache-dir" || x == "--repo-type" || x == "--token" || x == "--exclude":
				k++
			case strings.HasPrefix(x, "-"):
			case repo == "":
				repo = x
			default:
				files = append(files, x)
			}
		}
		if len(files) > 0 {
			safe = true
			for _, x := range files {
				if pickleName(x) || strings.Contains(x, "*.bin") || x == "*" {
					safe = false
				}
			}
		}
		if repo != "" && !pinned && !safe {
			j.escalate("remote-code:runner", "%s downloads %s at no pinned revision: its pickle-family weights run the code they carry when loaded, and the repository can change under the name", r.Name, clipText(repo, 80))
			return
		}
	}
}

// fullCommitHash reports whether v is a full commit hash.
func fullCommitHash(v string) bool {
	if len(v) != 40 {
		return false
	}
	return strings.Trim(strings.ToLower(v), "0123456789abcdef") == ""
}

// ---- DNS lookups of computed names ----

var nameEncoders = setOf("base64", "base32", "basenc", "xxd", "od", "hexdump", "openssl", "gzip", "bzip2", "xz", "zstd", "fold", "rev", "uuencode")

var encodeCall = regexp.MustCompile(`(?i)b(?:32|64|16)encode|hexlify|\.hex\(|base64|base32|tohex|encode\(`)

// dnsFedNames is exfiltration:dns for a lookup whose names xargs (or
// parallel) feeds from an encoder or a program that encodes.
func (s *Shield) dnsFedNames(_ *Action, f *Facts, j *judgement) {
	fed := ""
	for i := range f.Runs {
		if i >= r29Max {
			return
		}
		r := &f.Runs[i]
		if (dnsTool(r.Name) || r.Name == "resolvectl" || r.Name == "drill") && r.Name != "ping" && r.Name != "ping6" &&
			(strings.Contains(r.Via, "xargs") || strings.Contains(r.Via, "parallel")) {
			fed = r.Name
		}
	}
	if fed == "" {
		return
	}
	for i := range f.Runs {
		if i >= r29Max {
			return
		}
		r := &f.Runs[i]
		enc := nameEncoders[r.Name]
		if !enc && r.Name != fed {
			enc = encodeCall.MatchString(clip(r.Line, 2000))
		}
		if enc {
			j.escalate("exfiltration:dns", "%s looks up names xargs builds from %s's output: data leaves in DNS queries", fed, r.Name)
			return
		}
	}
}

// ---- deny lists ----

var denyWords = []string{"hotlist", "hot-list", "hot_list", "blocklist", "block-list", "block_list", "blocked", "denylist", "deny-list",
	"deny_list", "denied", "blacklist", "black-list", "black_list", "banned", "revoked", "revocation", "sanction", "self-exclu",
	"self_exclu", "selfexclu", "excluded", "stolen", "watchlist", "watch-list", "watch_list", "embargo", "known-fraud", "known_fraud",
	"fraud-list", "fraud_list", "fraudlist", "fraud_cards", "fraud-cards", "fraud_accounts", "fraud-accounts", "fraud_devices", "fraud-devices", "lost-cards", "lost_cards"}

// listExts are the extensions a list is kept in as data (a migration,
// code or a document about it is not the list).
var listExts = setOf("", ".json", ".jsonl", ".yaml", ".yml", ".txt", ".csv", ".tsv", ".lst", ".list", ".conf", ".dat", ".crl", ".xml", ".ini", ".toml", ".db")

// refusalList reports whether p's name says it lists who is refused.
func refusalList(p string) bool {
	b := strings.ToLower(path.Base(p))
	if !listExts[path.Ext(b)] || testSource(p) {
		return false
	}
	return hasAny(b, denyWords...) || path.Ext(b) == ".crl"
}

// rewriters write a file from what they filter or compute.
var rewriters = setOf("redirect", "sed", "perl", "mv", "cp", "install", "rsync", "tee", "awk", "gawk", "jq", "yq", "sponge", "dd", "truncate", "shred", "python", "python3", "ruby", "node")

// denyListRewritten is destructive:workspace-file for a deny list
// rewritten by a command, or written empty.
func (s *Shield) denyListRewritten(a *Action, f *Facts, j *judgement) {
	for i := range f.Writes {
		if i >= r29Max {
			break
		}
		w := &f.Writes[i]
		if w.Glob || w.Tree && w.By != "mv" && w.By != "cp" && w.By != "install" && w.By != "rsync" || !refusalList(w.Path) || s.scratch(w.Path) {
			continue
		}
		if a.Command != "" && rewriters[w.By] {
			if w.By == "redirect" && appendedTo(a.Command, path.Base(w.Path)) {
				continue // entries added
			}
			if w.By == "tee" && strings.Contains(a.Command, "tee -a") {
				continue
			}
			j.escalate("destructive:workspace-file", "%s rewrites %s, a list of who is refused: whoever the command leaves out now passes", by(w), s.relPath(w.Path))
			return
		}
	}
	for i := range f.Deletes {
		if i >= r29Max {
			break
		}
		d := &f.Deletes[i]
		if !d.Glob && refusalList(d.Path) && !s.scratch(d.Path) && d.By != "mv" && d.By != "move_file" {
			j.escalate("destructive:workspace-file", "%s deletes %s, a list of who is refused: everyone on it now passes", by(d), s.relPath(d.Path))
			return
		}
	}
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || !refusalList(p) || s.scratch(p) {
			continue
		}
		if emptyList(t.Body, strings.ToLower(path.Ext(p))) {
			j.escalate("destructive:workspace-file", "%s is written with an empty list: everyone a list of who is refused held now passes", s.relPath(p))
			return
		}
	}
}

// appendedTo reports whether line appends (>>) to a file named base and
// never truncates it (>).
func appendedTo(line, base string) bool {
	line = clip(line, 4000)
	seen := false
	for off := 0; off < len(line); {
		k := strings.Index(line[off:], base)
		if k < 0 {
			break
		}
		at := off + k
		off = at + len(base)
		// the redirection before the name: skip the path's directory,
		// quotes and spaces back to the operator
		b := at
		for b > 0 && line[b-1] != ' ' && line[b-1] != '>' && line[b-1] != '\t' {
			b--
		}
		for b > 0 && (line[b-1] == ' ' || line[b-1] == '\t') {
			b--
		}
		if b == 0 || line[b-1] != '>' {
			continue
		}
		if b > 1 && line[b-2] == '>' {
			seen = true
			continue
		}
		return false
	}
	return seen
}

var emptyListValue = regexp.MustCompile(`(?m)(?:"[\w-]{1,40}"|^\s*[\w-]{1,40})\s*:\s*\[\s*\]`)

// emptyList reports whether a document written holds an empty list: an
// empty body, [] or {}, a key set to [], or a table with only its
// header.
func emptyList(body, ext string) bool {
	t := strings.TrimSpace(body)
	switch t {
	case "", "[]", "{}", "null":
		return true
	}
	if len(t) > 4000 {
		return false
	}
	if emptyListValue.MatchString(t) {
		// some list empty, and no other entry holds one
		return !strings.Contains(t, "\n  - ") && strings.Count(t, "[") == strings.Count(t, "[]")
	}
	return (ext == ".csv" || ext == ".tsv") && !strings.Contains(t, "\n")
}
