package shield

import (
	"strings"

	"github.com/opx-dev/opx/shield/shellx"
)

// Persistence, privilege and system state; keys and secrets stores;
// cloud command-line tools.

const (
	cronDir    = "/var/spool/cron/crontabs"
	atDir      = "/var/spool/cron/atjobs"
	sysctlDir  = "/proc/sys"
	netState   = "/proc/sys/net"
	moduleDir  = "/sys/module"
	powerState = "/proc/sysrq-trigger"
)

// crontabH reads crontab: -l lists, anything else replaces the user's
// crontab (a Write of the crontabs directory, Tree) with a file or
// standard input.
func crontabH(x *call) {
	opts, ops := cachedSpec(0, "-u").parse(x.args)
	if has(opts, "-l") {
		x.refPath(kRead, cronDir, true)
		return
	}
	for _, w := range ops {
		if w.Text != "-" {
			x.ref(kRead, w, false)
		}
	}
	if (len(ops) == 0 || len(ops) == 1 && ops[0].Text == "-") && x.cronRemoval() {
		// crontab -l | grep -v mine | crontab -: the crontab rewritten
		// with lines removed, none added (rules 11). A read, not a
		// write of what runs later.
		x.refPath(kRead, cronDir, true)
		return
	}
	x.refPath(kWrite, cronDir, true)
	x.sinks = append(x.sinks, cronDir)
	x.pipedText()
}

// cronRemoval reports whether crontab's standard input is the crontab
// itself (crontab -l) passed only through filters that drop lines (grep
// -v, sed '/re/d', awk '!/re/'): what is installed is a subset of what
// was installed.
func (x *call) cronRemoval() bool {
	j, seen := x.c.PipeIn, 0
	for j >= 0 && j < x.i && seen < 8 {
		c := &x.m.a.Commands[j]
		name, args := peelName(c)
		if len(c.Redirects) > 0 {
			return false
		}
		switch name {
		case "crontab":
			return len(args) == 1 && args[0].Text == "-l"
		case "grep", "egrep", "fgrep":
			inverted := false
			for _, a := range args {
				t := a.Text
				if a.Dynamic {
					return false
				}
				if t == "--invert-match" || strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.Contains(t, "v") {
					inverted = true
				}
			}
			if !inverted {
				return false
			}
		case "sed":
			for _, a := range args {
				t := a.Text
				if a.Dynamic || t == "-i" || strings.HasPrefix(t, "-i") || strings.HasPrefix(t, "--in-place") {
					return false
				}
				if t == "-e" || t == "-E" || t == "-r" || t == "--" {
					continue
				}
				if !(strings.HasPrefix(t, "/") && strings.HasSuffix(t, "/d") && len(t) > 3 && !strings.ContainsAny(t[1:len(t)-2], "\n;{}")) {
					return false
				}
			}
		case "awk":
			if len(args) != 1 || args[0].Dynamic || !strings.HasPrefix(args[0].Text, "!/") || !strings.HasSuffix(args[0].Text, "/") || strings.ContainsAny(args[0].Text, "{}()\n;") {
				return false
			}
		default:
			return false
		}
		j, seen = c.PipeIn, seen+1
	}
	return false
}

// atH reads at and batch: the job (standard input or -f FILE) runs later.
func atH(x *call) {
	opts, _ := cachedSpec(0, "-f -q -t").parse(x.args)
	if has(opts, "-l", "-d", "-r", "-c") || x.name == "atq" {
		return
	}
	for _, w := range vals(opts, "-f") {
		x.ref(kRead, w, false)
	}
	x.refPath(kWrite, atDir, true)
	x.sinks = append(x.sinks, atDir)
	x.pipedText()
}

// systemctlH reads systemctl: enabling, linking or editing units writes
// the unit directory; power verbs change the power state.
func systemctlH(x *call) {
	opts, ops := cachedSpec(0, "-H --host -M --machine -t --type -p --property --root -s --signal -n --lines -o --output").parse(x.args)
	if len(ops) == 0 {
		return
	}
	dir := "/etc/systemd/system"
	if has(opts, "--user") {
		dir = "~/.config/systemd/user"
	}
	switch ops[0].Text {
	case "enable", "disable", "reenable", "link", "edit", "mask", "unmask", "preset", "preset-all", "set-property", "add-wants", "add-requires", "revert", "set-default":
		x.refPath(kWrite, dir, true)
		for _, w := range ops[1:] {
			if strings.Contains(w.Text, "/") {
				x.ref(kRead, w, false)
			}
		}
	case "poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "hybrid-sleep", "rescue", "emergency", "isolate", "default", "soft-reboot":
		x.refPath(kWrite, powerState, false)
	}
}

// launchctlH reads launchctl: loading an agent or daemon runs it at
// every login or boot.
func launchctlH(x *call) {
	if len(x.args) == 0 {
		return
	}
	switch x.args[0].Text {
	case "load", "bootstrap", "enable", "submit", "kickstart":
		x.refPath(kWrite, "~/Library/LaunchAgents", true)
		for _, w := range x.args[1:] {
			if strings.Contains(w.Text, "/") {
				x.ref(kRead, w, false)
			}
		}
	}
}

// usersH reads user and group management: the account databases change.
func usersH(x *call) {
	switch x.name {
	case "passwd", "chpasswd", "chage", "pwconv":
		if has(cachedSpec(0, "").parse2(x.args), "-S", "--status") {
			return
		}
		x.refPath(kWrite, "/etc/shadow", false)
	case "visudo":
		opts, _ := cachedSpec(0, "-f --file").parse(x.args)
		if has(opts, "-c", "--check") {
			return
		}
		if f, ok := val(opts, "-f", "--file"); ok {
			x.ref(kWrite, f, false)
			return
		}
		x.refPath(kWrite, "/etc/sudoers", false)
	default:
		x.refPath(kWrite, "/etc/passwd", false)
		x.refPath(kWrite, "/etc/shadow", false)
		x.refPath(kWrite, "/etc/group", false)
	}
}

// netConfH reads iptables, nft, ufw, firewall-cmd, ip, route, tc: a
// listing reads nothing; a change writes the kernel's network state.
func netConfH(x *call) {
	change := false
	switch x.name {
	case "iptables", "ip6tables", "iptables-legacy", "iptables-nft", "ebtables", "arptables":
		for _, w := range x.args {
			switch w.Text {
			case "-A", "-I", "-D", "-R", "-F", "-X", "-P", "-N", "-E", "-Z", "--append", "--insert", "--delete", "--replace", "--flush", "--policy", "--new-chain", "--delete-chain":
				change = true
			}
		}
	case "iptables-restore", "ip6tables-restore", "nft", "ufw", "firewall-cmd", "tc", "route", "ifconfig", "ifup", "ifdown", "nmcli", "wg", "wg-quick", "brctl":
		change = true
		if len(x.args) == 0 {
			change = x.name == "iptables-restore" || x.name == "ip6tables-restore"
		}
		for _, w := range x.args {
			switch w.Text {
			case "list", "status", "show", "-L", "--list", "-n", "--state", "--list-all", "-a", "-s":
				change = false
			case "-c", "--check", "--test", "--dry-run":
				// rules 21: nft -c, iptables-restore --test, wg-quick
				// strip: the rules are parsed and checked, never loaded
				if x.name == "nft" || x.name == "iptables-restore" || x.name == "ip6tables-restore" || x.name == "ufw" {
					change = false
				}
			}
		}
		if x.name == "ifconfig" && len(x.args) > 1 {
			change = true
		}
	case "ip":
		for _, w := range x.args {
			switch w.Text {
			case "add", "del", "delete", "change", "replace", "flush", "set", "append", "prepend", "exec":
				change = true
			}
		}
	}
	if change {
		x.refPath(kWrite, netState, true)
	}
}

// mountH reads mount, umount, swapon, swapoff: the mount points change.
func mountH(x *call) {
	opts, ops := cachedSpec(0, "-t -o -O -L -U --types --options --source --target -B --bind").parse(x.args)
	if x.name == "mount" && len(ops) == 0 && !has(opts, "-a", "--all") {
		return
	}
	for k, w := range ops {
		if x.name == "mount" && k == 0 && len(ops) > 1 {
			x.ref(kRead, w, true)
			continue
		}
		x.ref(kWrite, w, true)
	}
	if has(opts, "-a", "--all") {
		x.refPath(kWrite, "/", true)
	}
}

// moduleH reads modprobe, insmod, rmmod: kernel code is loaded or
// removed.
func moduleH(x *call) {
	opts, ops := cachedSpec(0, "-C --config -d --dirname -S --set-version").parse(x.args)
	if has(opts, "-n", "--dry-run", "--show-depends", "-c", "--showconfig") {
		return
	}
	if x.name == "insmod" && len(ops) > 0 {
		x.ref(kRead, ops[0], false)
	}
	x.refPath(kWrite, moduleDir, true)
}

// sysctlH reads sysctl: -w NAME=VALUE, NAME=VALUE and -p write kernel
// parameters; NAME and -a read them.
func sysctlH(x *call) {
	opts, ops := cachedSpec(0, "-p --load").parse(x.args)
	if f, ok := val(opts, "-p", "--load"); ok {
		x.ref(kRead, f, false)
		x.refPath(kWrite, sysctlDir, true)
		return
	}
	if has(opts, "-p", "--load", "--system") {
		x.refPath(kRead, "/etc/sysctl.conf", false)
		x.refPath(kWrite, sysctlDir, true)
		return
	}
	for _, w := range ops {
		name, _, set := strings.Cut(w.Text, "=")
		if !set {
			continue
		}
		if w.Dynamic {
			x.refPath(kWrite, sysctlDir, true)
			continue
		}
		x.refPath(kWrite, sysctlDir+"/"+strings.ReplaceAll(name, ".", "/"), false)
	}
}

// powerH reads shutdown, reboot, halt, poweroff, init and telinit.
func powerH(x *call) {
	if x.name == "init" || x.name == "telinit" {
		if len(x.args) == 0 || !strings.ContainsAny(x.args[0].Text, "06sS1") {
			return
		}
	}
	if x.name == "shutdown" && has(cachedSpec(0, "").parse2(x.args), "-c") {
		return
	}
	x.refPath(kWrite, powerState, false)
}

// killH reads kill, pkill, killall and killall5: signalling one's own
// servers is everyday work (a Run); killing every process (kill -1,
// kill 1, killall5, pkill or killall by user or with a match-all pattern)
// takes the session and its tools down: an Unknown, for a human.
func killH(x *call) {
	all := x.name == "killall5"
	for k, w := range x.args {
		t := w.Text
		switch x.name {
		case "kill":
			all = all || t == "-1" && k > 0 && strings.HasPrefix(x.args[k-1].Text, "-") || t == "1" || t == "--" && k+1 < len(x.args) && x.args[k+1].Text == "-1"
			all = all || t == "-1" && k == len(x.args)-1
		default:
			all = all || t == "-u" || t == "-U" || t == "--uid" || t == "--user" || strings.HasPrefix(t, "--uid=") || strings.HasPrefix(t, "--user=") || t == "." || t == ".*"
		}
	}
	if all {
		x.m.unknown(x.name + " signals every process (of a user, or all of them): " + clipText(x.c.Line, 80))
		return
	}
	if x.name == "kill" {
		if t := unknownPid(x.args); t != "" {
			x.m.unknown("kill signals " + t + ": " + clipText(x.c.Line, 80))
		}
	}
}

// unknownPid names a kill target Shield cannot identify: the parent
// ($PPID, ps -o ppid: the engine or the sandbox launcher) or a pid
// computed at run time (pgrep, pidof, a variable), else "". The last
// background job ($!, %1), a literal pid and the process listening on
// a port (lsof -t -i) are the agent's own servers.
func unknownPid(args []shellx.Word) string {
	for _, w := range args {
		t := w.Text
		switch {
		case !w.Dynamic || strings.HasPrefix(t, "-"):
			continue
		case strings.Contains(t, "PPID") || strings.Contains(t, "ppid"):
			return "the parent process (the engine or the sandbox launcher)"
		case t == "$!" || strings.HasPrefix(t, "$(lsof ") && strings.Contains(t, "-i"):
			continue
		default:
			return "a process computed at run time (" + clipText(t, 40) + ")"
		}
	}
	return ""
}

// hostnameH reads hostname and hostnamectl: a new name is a system
// change.
func hostnameH(x *call) {
	ops := 0
	for _, w := range x.args {
		if !strings.HasPrefix(w.Text, "-") && w.Text != "status" {
			ops++
		}
	}
	if ops > 0 {
		x.refPath(kWrite, "/etc/hostname", false)
	}
}

var opensslValued = map[string]bool{
	"-in": true, "-out": true, "-inkey": true, "-key": true, "-passin": true, "-passout": true, "-pass": true, "-k": true, "-kfile": true,
	"-cert": true, "-CAfile": true, "-CA": true, "-CAkey": true, "-signkey": true, "-certfile": true, "-config": true, "-extfile": true,
	"-connect": true, "-accept": true, "-port": true, "-servername": true, "-cipher": true, "-md": true, "-days": true, "-subj": true,
	"-newkey": true, "-keyout": true, "-sign": true, "-verify": true, "-signature": true, "-prverify": true, "-rand": true, "-writerand": true,
	"-iter": true, "-S": true, "-iv": true, "-K": true, "-keyform": true, "-inform": true, "-outform": true, "-name": true, "-set_serial": true,
	"-extensions": true, "-proxy": true, "-host": true, "-url": true, "-sess_out": true, "-sess_in": true, "-keylogfile": true,
}

// opensslH reads openssl: -in and key files read, -out written;
// s_client connects to a host; s_server listens.
func opensslH(x *call) {
	args := x.args
	if len(args) == 0 {
		return
	}
	sub := args[0].Text
	for i := 1; i < len(args); i++ {
		t := args[i].Text
		if !opensslValued[t] || i+1 >= len(args) {
			continue
		}
		i++
		v := args[i]
		switch t {
		case "-in", "-inkey", "-key", "-cert", "-CAfile", "-CA", "-CAkey", "-signkey", "-certfile", "-config", "-extfile", "-kfile", "-prverify", "-verify", "-signature", "-sess_in":
			x.ref(kRead, v, false)
		case "-out", "-keyout", "-writerand", "-sess_out", "-keylogfile":
			if !quietDevice(v.Text) {
				x.ref(kWrite, v, false)
			}
		case "-passin", "-passout", "-pass":
			if f, ok := strings.CutPrefix(v.Text, "file:"); ok {
				x.ref(kRead, shellx.Word{Text: f, Dynamic: v.Dynamic}, false)
			}
		case "-connect", "-host", "-url", "-proxy":
			k := x.request(Request{Host: hostOf(v.Text), Data: true})
			x.computed(k, v)
			x.fromStdin(k)
			if r := &x.m.f.Requests[k]; len(r.Files) == 0 && !v.Dynamic && x.constantStdin() {
				// rules 17: a handshake (echo | openssl s_client, or
				// </dev/null): a connection, nothing of this machine's sent
				r.Data = false
			}
		case "-accept", "-port":
			if sub == "s_server" || sub == "ocsp" {
				x.listener("", shellx.Word{Dynamic: true})
			}
		}
	}
	if sub == "s_client" {
		found := false
		for _, r := range x.m.f.Requests {
			if r.By == "openssl" {
				found = true
			}
		}
		if !found {
			x.request(Request{Host: "localhost", Data: true})
		}
	}
}

var gpgSpec = newSpec("-o --output -r --recipient -u --local-user --keyserver --homedir --passphrase-file --passphrase-fd --passphrase --default-key --trust-model --cipher-algo --digest-algo --compress-algo -z --status-fd --logger-fd --export-options --import-options --pinentry-mode")

// gpgH reads gpg: exporting secret keys reads the keyring (Tree);
// decrypting, signing and encrypting read their files; --output writes.
func gpgH(x *call) {
	opts, ops := gpgSpec.parse(x.args)
	home, ok := val(opts, "--homedir")
	if !ok {
		home = word("~/.gnupg")
	}
	for _, w := range vals(opts, "-o", "--output") {
		if w.Text != "-" {
			x.ref(kWrite, w, false)
		}
	}
	for _, w := range vals(opts, "--passphrase-file") {
		x.ref(kRead, w, false)
	}
	switch {
	case has(opts, "--export-secret-keys", "--export-secret-subkeys", "--export-ssh-key", "--export"):
		x.ref(kRead, home, true)
	case has(opts, "--import", "--recv-keys", "--receive-keys", "--fetch-keys", "--refresh-keys", "--gen-key", "--generate-key", "--full-generate-key", "--quick-generate-key", "--delete-secret-keys", "--delete-keys", "--edit-key", "--sign-key", "--lsign-key"):
		x.ref(kWrite, home, true)
		for _, w := range ops {
			if has(opts, "--import") {
				x.ref(kRead, w, false)
			}
		}
		if has(opts, "--recv-keys", "--receive-keys", "--fetch-keys", "--refresh-keys") {
			host := "keys.openpgp.org"
			if k, ok := val(opts, "--keyserver"); ok {
				host = hostOf(k.Text)
			}
			x.request(Request{Host: host, Method: "GET"})
		}
	case has(opts, "--send-keys"):
		host := "keys.openpgp.org"
		if k, ok := val(opts, "--keyserver"); ok {
			host = hostOf(k.Text)
		}
		x.request(Request{Host: host, Method: "POST", Data: true})
	case has(opts, "-d", "--decrypt", "-s", "--sign", "--clearsign", "--clear-sign", "-b", "--detach-sign", "--verify"):
		x.ref(kRead, home, true)
		for _, w := range ops {
			x.ref(kRead, w, false)
		}
	default:
		for _, w := range ops {
			x.ref(kRead, w, false)
		}
	}
}

// sshKeygenH reads ssh-keygen: generating writes the key pair; -y, -l
// and -e read a key; -R edits known_hosts.
func sshKeygenH(x *call) {
	opts, _ := cachedSpec(0, "-f -t -b -C -N -P -E -I -n -O -V -z -a -Z -R -F -D -s -r -w -Y").parse(x.args)
	f, hasF := val(opts, "-f")
	switch {
	case has(opts, "-R"):
		if !hasF {
			f = word("~/.ssh/known_hosts")
		}
		x.ref(kWrite, f, false)
	case has(opts, "-y", "-l", "-e", "-i", "-B", "-F", "-H", "-Y", "-D", "-s", "-L"):
		if hasF {
			x.ref(kRead, f, false)
		}
		if s, ok := val(opts, "-s"); ok {
			x.ref(kRead, s, false)
		}
	case has(opts, "-p", "-c"):
		if hasF {
			x.ref(kRead, f, false)
			x.ref(kWrite, f, false)
		}
	default:
		if !hasF {
			x.add(kWrite, Ref{Path: cleanAbs(x.m.s.cfg.Home + "/.ssh/id_*"), Glob: true, By: x.name})
			return
		}
		x.ref(kWrite, f, false)
		x.ref(kWrite, shellx.Word{Text: f.Text + ".pub", Dynamic: f.Dynamic}, false)
	}
}

// secretStoreH reads the keychains and password stores.
func secretStoreH(x *call) {
	sub := ""
	if len(x.args) > 0 {
		sub = x.args[0].Text
	}
	switch x.name {
	case "security":
		if strings.HasPrefix(sub, "find-") || strings.HasPrefix(sub, "dump-") || sub == "export" {
			x.refPath(kRead, "~/Library/Keychains", true)
		} else if strings.HasPrefix(sub, "add-") || strings.HasPrefix(sub, "delete-") || strings.HasPrefix(sub, "set-") || sub == "import" {
			x.refPath(kWrite, "~/Library/Keychains", true)
		}
	case "secret-tool":
		if sub == "lookup" || sub == "search" {
			x.refPath(kRead, "~/.local/share/keyrings", true)
		} else if sub == "store" || sub == "clear" {
			x.refPath(kWrite, "~/.local/share/keyrings", true)
		}
	case "pass", "gopass":
		if sub == "" || sub == "show" || sub == "ls" || sub == "list" || sub == "find" || sub == "grep" || sub == "otp" || !strings.HasPrefix(sub, "-") && !isPassVerb(sub) {
			x.refPath(kRead, "~/.password-store", true)
		} else {
			x.refPath(kWrite, "~/.password-store", true)
		}
	case "ssh-add":
		_, ops := cachedSpec(0, "-t -E -S -H -h").parse(x.args)
		if len(ops) == 0 && !has(cachedSpec(0, "").parse2(x.args), "-l", "-L", "-D", "-d") {
			x.add(kRead, Ref{Path: cleanAbs(x.m.s.cfg.Home + "/.ssh/id_*"), Glob: true, By: x.name})
		}
		for _, w := range ops {
			x.ref(kRead, w, false)
		}
	case "keyctl":
		if sub == "print" || sub == "read" || sub == "pipe" {
			x.refPath(kRead, "/proc/keys", false)
		}
	}
}

func isPassVerb(s string) bool {
	switch s {
	case "insert", "add", "edit", "generate", "rm", "remove", "mv", "cp", "init", "git":
		return true
	}
	return false
}

// cloudH reads aws, gcloud, az and gh: requests to the provider's API
// (GET for reads, data for changes); copies to and from object stores;
// the verbs that print credentials are Reads of the credential files.
func cloudH(x *call) {
	// The command's words: not its options, nor the values of the global
	// options that take one (rules 14: `aws configure list --profile dev`
	// read as "configure list dev", a write; `aws s3 cp f s3://b/
	// --profile dev` ended with "dev", so the bucket was not the last word
	// and the upload read as a download — an upload no rule saw).
	var words []shellx.Word
	// cmdWords are the words before the first option that follows one
	// (the command path: az pipelines runs list); an unknown option's
	// value after it is not a verb (rules 20: "--branch release-prep/x"
	// read as a release)
	cmdWords := 0
	optSeen := false
	for k := 0; k < len(x.args); k++ {
		w := x.args[k]
		if strings.HasPrefix(w.Text, "-") {
			if len(words) > 0 {
				optSeen = true
			}
			if cloudValueFlags[w.Text] && k+1 < len(x.args) {
				k++
			}
			continue
		}
		words = append(words, w)
		if !optSeen {
			cmdWords = len(words)
		}
	}
	verbs := wordTexts(words)
	api := map[string]string{"aws": "amazonaws.com", "gcloud": "googleapis.com", "gsutil": "storage.googleapis.com", "az": "management.azure.com", "gh": "api.github.com", "doctl": "api.digitalocean.com", "heroku": "api.heroku.com", "vercel": "api.vercel.com", "netlify": "api.netlify.com", "flyctl": "api.fly.io", "fly": "api.fly.io"}[x.name]
	creds := map[string]string{"aws": "~/.aws/credentials", "gcloud": "~/.config/gcloud", "gsutil": "~/.config/gcloud", "az": "~/.azure", "gh": "~/.config/gh/hosts.yml", "doctl": "~/.config/doctl", "heroku": "~/.netrc", "vercel": "~/.vercel", "netlify": "~/.netlify", "flyctl": "~/.fly", "fly": "~/.fly"}[x.name]
	if x.name == "az" && len(words) > 0 {
		switch words[0].Text {
		case "repos", "pipelines", "boards", "artifacts", "devops":
			// rules 15: Azure DevOps is its own service (a forge), not
			// Azure's management API: a policy lists it by that name
			api = "dev.azure.com"
		}
	}
	line := strings.Join(wordTexts(words), " ")
	switch {
	case x.name == "aws" && (line == "configure list" || line == "configure list-profiles" || strings.Join(verbs, " ") == "configure list"):
		// What is configured and where from, keys masked: no secret
		// printed, nothing written.
		return
	case strings.Contains(line, "configure export-credentials") || strings.Contains(line, "configure get") ||
		strings.Contains(line, "print-access-token") || strings.Contains(line, "print-identity-token") || strings.Contains(line, "auth token") ||
		strings.Contains(line, "get-access-token") || strings.Contains(line, "auth status") && has(cachedSpec(0, "").parse2(x.args), "--show-token", "-t"):
		x.refPath(kRead, creds, true)
		return
	case strings.Contains(line, "auth login") || strings.HasPrefix(line, "login") || strings.HasPrefix(line, "sso login"):
		// rules 15: a login writes the client's own store through the
		// client's own sign-in (a browser or a device code): a person's
		// act the policy asks about, not a write of credentials Shield
		// blocks (az login --use-device-code was blocked)
		x.request(Request{Host: api, Method: "POST", Data: true})
		return
	case strings.HasPrefix(line, "configure") || strings.Contains(line, "config set"):
		x.refPath(kWrite, creds, true)
		x.request(Request{Host: api, Method: "POST", Data: true})
		return
	}
	// Object copies: local sources of an upload are its Files. Only the
	// transfer verbs copy (cp, mv, sync, rsync); a listing (s3 ls
	// s3://b/) names a bucket last and sends nothing.
	transfer := func(w shellx.Word) bool {
		return w.Text == "cp" || w.Text == "mv" || w.Text == "sync" || w.Text == "rsync"
	}
	if len(words) >= 3 && (words[0].Text == "s3" || words[0].Text == "storage") && transfer(words[1]) || x.name == "gsutil" && len(words) >= 2 && transfer(words[0]) {
		var local []shellx.Word
		remoteDst := false
		for k, w := range words {
			if k == 0 || x.name != "gsutil" && k == 1 {
				continue
			}
			if strings.Contains(w.Text, "://") {
				if k == len(words)-1 {
					remoteDst = true
				}
				continue
			}
			local = append(local, w)
		}
		if remoteDst {
			k := x.request(Request{Host: api, Method: "PUT", Data: true})
			for _, w := range local {
				x.ref(kRead, w, true)
				if p, ok := x.abs(w.Text); ok && !w.Dynamic {
					x.m.f.Requests[k].Files = append(x.m.f.Requests[k].Files, p)
				}
			}
			return
		}
		x.request(Request{Host: api, Method: "GET"})
		for _, w := range local {
			x.ref(kWrite, w, true)
		}
		return
	}
	method, data := "GET", false
	for _, w := range words[:cmdWords] {
		t := w.Text
		for _, v := range []string{"create", "delete", "put", "update", "set", "run", "deploy", "apply", "remove", "edit", "merge", "comment", "upload", "send", "invoke", "start", "stop", "attach", "detach", "modify", "add", "publish", "close", "reopen", "review", "release", "fork", "transfer", "archive", "rename", "cancel", "rerun", "dispatch"} {
			// the verb as a word or a part of one (put-object,
			// start-instances, role-assignment-create), not a noun
			// that begins like one (rules 15: "pipelines runs list",
			// "deployment group what-if" were read as changes)
			if t == v || strings.HasPrefix(t, v+"-") || strings.HasSuffix(t, "-"+v) || strings.HasPrefix(t, v) && len(t) > len(v) && t[len(v)] >= 'A' && t[len(v)] <= 'Z' {
				method, data = "POST", true
			}
		}
	}
	if x.name == "gh" && len(words) > 0 && words[0].Text == "api" {
		opts, _ := cachedSpec(0, "-X --method -f --raw-field -F --field --input -H --header -q --jq -t --template --hostname").parse(x.args)
		if m, ok := val(opts, "-X", "--method"); ok {
			method = strings.ToUpper(m.Text)
			data = method != "GET"
		} else if has(opts, "-f", "--raw-field", "-F", "--field", "--input") {
			method, data = "POST", true
		} else {
			method, data = "GET", false
		}
	}
	k := x.request(Request{Host: api, Method: method, Data: data})
	x.forgePost(words)
	for _, o := range cachedSpec(0, "--body-file -F --body --input --cli-input-json --cli-input-yaml").parse2(x.args) {
		if o.name == "--body-file" || o.name == "--input" || o.name == "-F" && strings.Contains(o.val.Text, "=@") {
			f := o.val.Text
			if k2 := strings.Index(f, "=@"); k2 >= 0 {
				f = f[k2+2:]
			}
			f = strings.TrimPrefix(f, "file://")
			x.ref(kRead, word(f), false)
			if p, ok := x.abs(f); ok {
				x.m.f.Requests[k].Files = append(x.m.f.Requests[k].Files, p)
				x.m.f.Requests[k].Data = true
			}
		}
	}
	for _, w := range words {
		if strings.HasPrefix(w.Text, "file://") || strings.HasPrefix(w.Text, "fileb://") {
			f := w.Text[strings.Index(w.Text, "://")+3:]
			x.ref(kRead, word(f), false)
			if p, ok := x.abs(f); ok {
				x.m.f.Requests[k].Files = append(x.m.f.Requests[k].Files, p)
				x.m.f.Requests[k].Data = true
			}
		}
	}
	if x.name == "gh" && len(words) >= 2 && (words[0].Text == "gist" || words[0].Text == "release") && (words[1].Text == "create" || words[1].Text == "upload") {
		for _, w := range words[2:] {
			if looksLikePath(w.Text) || strings.Contains(w.Text, ".") {
				x.ref(kRead, w, false)
				if p, ok := x.abs(w.Text); ok && !w.Dynamic {
					x.m.f.Requests[k].Files = append(x.m.f.Requests[k].Files, p)
				}
			}
		}
	}
}

// forgePost adds, as Text "forge post", what a forge client posts for
// people and bots to read (rules 15): an issue's, a pull request's or a
// release's body, title, comment or notes, given on the line (gh issue
// comment N --body …, gh pr review N --comment -b …, gh pr close N -c …).
// What it holds is judged like what leaves: secrets, personal data,
// instructions addressed to agents and bots.
func (x *call) forgePost(words []shellx.Word) {
	if x.name == "az" && len(words) > 2 && words[0].Text == "repos" {
		words = words[1:] // az repos pr create …
	} else if x.name != "gh" && x.name != "glab" || len(words) < 2 {
		return
	}
	switch words[0].Text {
	case "issue", "pr", "mr", "release", "discussion", "gist":
	default:
		return
	}
	for _, o := range cachedSpec(0, "--body -b --title -t --comment -c --notes -n --message -m --description -d --reason").parse2(x.args) {
		switch o.name {
		case "--body", "-b", "--title", "-t", "--comment", "-c", "--notes", "-n", "--message", "-m", "--description", "-d":
			if o.val.Text != "" && len(x.m.f.Texts) < 64 {
				x.m.f.Texts = append(x.m.f.Texts, Text{Source: "forge post", Body: clip(o.val.Text, maxTextJudged)})
			}
		}
	}
}

// cloudValueFlags are cloud clients' global options that take a value as
// the next word.
var cloudValueFlags = setOf("--profile", "--region", "--output", "--query", "--endpoint-url", "--color", "--ca-bundle",
	"--cli-read-timeout", "--cli-connect-timeout", "--project", "--account", "--configuration", "--format", "--subscription",
	"--repo", "-R", "--hostname", "--context", "--app", "-a", "--team", "--scope")

// constantStdin reports whether the command's standard input is nothing
// or a constant: </dev/null, or a pipe from echo, printf or true with
// literal arguments only.
func (x *call) constantStdin() bool {
	for _, r := range x.c.Redirects {
		if strings.HasPrefix(r.Op, "<") {
			return r.Op == "<" && r.Target.Text == "/dev/null" && !r.Target.Dynamic
		}
	}
	j := x.c.PipeIn
	if j < 0 {
		return false
	}
	if j >= len(x.m.a.Commands) {
		return false
	}
	c := &x.m.a.Commands[j]
	if len(c.Args) == 0 || c.PipeIn >= 0 {
		return false
	}
	switch c.Args[0].Text {
	case "echo", "printf", "true", ":":
	default:
		return false
	}
	for _, a := range c.Args {
		if a.Dynamic {
			return false
		}
	}
	for _, r := range c.Redirects {
		if strings.HasPrefix(r.Op, "<") {
			return false
		}
	}
	return true
}
