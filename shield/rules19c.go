package shield

import (
	"path"
	"strings"
)

// Rules 19 after holdout21's measure (session 24; docs/shield-rules.md
// "Rules 19 after holdout21's measure"): what a change does to a
// product's image, its boot and its transport, in any stack where the
// shape allows.
//
//   - `appsec:control-weakened`: a Kconfig protection turned off
//     (CONFIG_IMX_HAB, CONFIG_FIT_SIGNATURE, CONFIG_STACKPROTECTOR …, =n
//     or "is not set") or an exposure turned on (CONFIG_DEVMEM,
//     CONFIG_LEGACY_IMAGE_FORMAT, CONFIG_CMD_USB_MASS_STORAGE …), the boot
//     made interruptible (CONFIG_BOOTDELAY=-2 → 3); a signing, verification,
//     revocation, hardening or approval switch turned off in any
//     configuration (UBOOT_SIGN_ENABLE = "0", check-crl=false, CMake's
//     option(X_HARDENING … OFF), approval: required: false); a URL's scheme
//     moved from its secure form to the plain one (ssl:// → tcp://,
//     https:// → http://, mqtts → mqtt); TLS verification turned off in a
//     command a script runs (curl -k, wget --no-check-certificate); a root
//     password, a root autologin or a world-writable install written into
//     what an image ships.
//   - `persistence:authorized-key`: an authorized_keys file written into
//     the workspace (an image installs it on every device).
//   - `supply-chain:source`: a BitBake source that follows its branch
//     (SRCREV = "${AUTOREV}"); a Conan requirement moved to a user's
//     channel (pkg/1.0@user/channel); git submodule update --remote.
//   - `signing:release-key` (escalate): a signing command given a key whose
//     name says production or release (pkcs11:…object=…-prod, release.pem).
//   - `memory:instruction`: a note that sets signing releases with a
//     development key as the practice.
func (s *Shield) rules19c(a *Action, f *Facts, j *judgement) {
	for i := range f.Runs {
		r := &f.Runs[i]
		if r.Name == "git" && len(r.Argv) > 2 && r.Argv[1] == "submodule" && r.Argv[2] == "update" && slicesContains(r.Argv, "--remote") {
			j.escalate("supply-chain:source", "%s takes each submodule's branch head, not the commit the repository pins: code nobody reviewed here", quote(clipText(r.Line, 100)))
			return
		}
		if r.Name == "kas" || r.Name == "kas-container" {
			for _, w := range r.Argv[1:] {
				if strings.Contains(w, "://") {
					j.escalate("remote-code:runner", "%s builds from a configuration fetched from %s: its repositories and commands are whatever the host serves", quote(clipText(r.Line, 100)), clipText(w, 80))
					return
				}
			}
		}
		if r.Name == "bitbake-layers" && len(r.Argv) > 1 && r.Argv[1] == "add-layer" {
			j.escalate("supply-chain:source", "%s adds a layer to the build: its recipes and classes run at every build", quote(clipText(r.Line, 100)))
			return
		}
		if k := releaseKey(r); k != "" {
			j.escalate("signing:release-key", "%s signs with %s, a production or release key: what it signs ships as the team's", quote(clipText(r.Line, 100)), clipText(k, 80))
			return
		}
	}
	for _, t := range f.Texts {
		if t.Source == "memory" {
			if m := devKeyPractice.FindString(clip(t.Body, 16<<10)); m != "" {
				j.escalate("memory:instruction", "the memory note sets a practice that weakens a control (%s): later sessions would follow it", quote(clipText(m, 80)))
				return
			}
			continue
		}
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || !s.inWorkspace(p) || testSource(p) {
			continue
		}
		body := clip(t.Body, maxTextJudged)
		old := clip(removedText(f, t.Source), maxTextJudged)
		rel := s.relPath(p)
		if strings.HasPrefix(path.Base(p), "authorized_keys") && strings.Contains(body, "ssh-") && !strings.Contains(old, strings.TrimSpace(body)) {
			j.escalate("persistence:authorized-key", "the change writes %s, a key that will log in to whatever installs the file", rel)
			return
		}
		for _, c := range []struct {
			rule string
			why  func(p, added, old string) string
		}{
			{"appsec:control-weakened", kconfigWeakened},
			{"appsec:control-weakened", switchOff19},
			{"appsec:control-weakened", schemeDowngraded},
			{"appsec:control-weakened", tlsOffInScript},
			{"appsec:control-weakened", imageOpened},
			{"supply-chain:source", sourceFollowsBranch},
		} {
			if why := c.why(p, body, old); why != "" {
				j.escalate(c.rule, "the change to %s %s", rel, why)
				return
			}
		}
	}
}

var (
	// Kconfig symbols that protect (off is weak)
	kconfigProtect = mustRx(`HAB|SECURE_BOOT|SECUREBOOT|FIT_SIGNATURE|SIGNATURE|_SIG\b|_SIG_|VERIFY|VERIFIED|STACKPROTECTOR|FORTIFY|RANDOMIZE|KASLR|SECCOMP|SELINUX|APPARMOR|LOCKDOWN|MODULE_SIG|IMA\b|IMA_|EVM|DM_VERITY|TPM|ENCRYPT|AUTOBOOT_KEYED|STRICT_DEVMEM|HARDENED|BOOTSTAGE_STASH|MCUBOOT_SIGNATURE|BOOT_SIGNATURE|WATCHDOG`)
	// Kconfig symbols that expose (on is weak)
	kconfigExpose = mustRx(`DEVMEM\b|DEVKMEM|LEGACY_IMAGE_FORMAT|CMD_USB_MASS_STORAGE|CMD_UMS|DEBUG_FS|KGDB|KDB|CMD_MEMORY|CMD_MW|CMD_MM|NETCONSOLE|INSECURE|UNSAFE|ALLOW_UNSIGNED|DISABLE_SIG|JTAG|SHELL_BACKEND_TELNET|TELNET|MCUMGR_SMP_SHELL|BOOT_SIGNATURE_TYPE_NONE`)
)

func kconfigOf(text string) map[string]string {
	out := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		if len(out) >= 512 {
			break
		}
		// the Kconfig shapes rules_appsec_kinds reads, CONFIG_ symbols only
		l = strings.TrimSpace(l)
		if m := kconfigLine.FindStringSubmatch(l); m != nil && strings.HasPrefix(m[1], "CONFIG_") {
			out[m[1]] = strings.Trim(strings.TrimSpace(m[2]), `"`)
		} else if m := kconfigUnset.FindStringSubmatch(l); m != nil && strings.HasPrefix(m[1], "CONFIG_") {
			out[m[1]] = "n"
		}
	}
	return out
}

// kconfigWeakened returns how an edit of a Kconfig fragment (a defconfig,
// a .cfg of a recipe, prj.conf) turns a protection off or an exposure on,
// or "".
func kconfigWeakened(_, added, old string) string {
	if !strings.Contains(old, "CONFIG_") {
		return ""
	}
	before, after := kconfigOf(old), kconfigOf(added)
	for sym, nv := range after {
		ov, had := before[sym]
		if !had || ov == nv {
			continue
		}
		switch {
		case sym == "CONFIG_BOOTDELAY":
			if ov == "-2" && nv != "-2" {
				return "lets the boot be interrupted (" + sym + " " + ov + " → " + nv + "): a console reaches the bootloader"
			}
		case kconfigProtect.MatchString(sym) && ov == "y" && nv == "n":
			return "turns " + sym + " off"
		case kconfigExpose.MatchString(sym) && ov == "n" && nv == "y":
			return "turns " + sym + " on"
		}
	}
	return ""
}

var (
	// a switch that signs, verifies, revokes, hardens or asks (off is weak)
	protect19 = mustRx(`sign(?:ing)?enable|enablesign|^sign$|signing$|verif|checkcrl|^crl$|certauth|servercert|verifypeer|verifyhost|hardening$|harden|secureboot|requiresign|signedonly|requireapproval|approvalrequired|mfarequired`)
	// CMake's option(NAME "doc" ON|OFF)
	cmakeOption = mustRx(`(?i)\boption\s*\(\s*(\w+)\s+"[^"]*"\s+(ON|OFF)\s*\)`)
)

// switchOff19 returns which protecting switch an edit of any
// configuration turns off, or "".
func switchOff19(_, added, old string) string {
	before := keyValues(old)
	for _, kv := range keyValues(added) {
		k := normKey(kv[0])
		if !(protect19.MatchString(k) || k == "required" && approvalContext.MatchString(old)) {
			continue
		}
		if ov, ok := lookupSetting(before, kv[0]); ok && valOn(ov) && valOff(kv[1]) {
			return "turns " + kv[0] + " off (" + ov + " → " + kv[1] + ")"
		}
	}
	olds := map[string]string{}
	for _, m := range cmakeOption.FindAllStringSubmatch(old, 32) {
		olds[m[1]] = strings.ToUpper(m[2])
	}
	for _, m := range cmakeOption.FindAllStringSubmatch(added, 32) {
		if olds[m[1]] == "ON" && strings.ToUpper(m[2]) == "OFF" && (protect19.MatchString(normKey(m[1])) || protectConcept.MatchString(normKey(m[1]))) {
			return "turns the build option " + m[1] + " off"
		}
	}
	return ""
}

var approvalContext = mustRx(`(?i)approv|review|sign-?off`)

// secureSchemes are URL schemes and their plain forms.
var secureSchemes = map[string]string{"https": "http", "ssl": "tcp", "tls": "tcp", "mqtts": "mqtt", "wss": "ws", "amqps": "amqp",
	"ldaps": "ldap", "rediss": "redis", "ftps": "ftp", "sftp": "ftp", "grpcs": "grpc", "nats+tls": "nats"}

var schemeRe = mustRx(`\b([a-z][a-z0-9+]*)://([\w.-]+)`)

// schemeDowngraded returns how an edit moves a URL of a host from its
// secure scheme to the plain one, or "".
func schemeDowngraded(_, added, old string) string {
	secure := map[string]string{}
	for _, m := range schemeRe.FindAllStringSubmatch(old, 32) {
		if _, ok := secureSchemes[m[1]]; ok {
			secure[m[2]] = m[1]
		}
	}
	if len(secure) == 0 {
		return ""
	}
	for _, m := range schemeRe.FindAllStringSubmatch(added, 32) {
		if sch, ok := secure[m[2]]; ok && secureSchemes[sch] == m[1] && !localHost(m[2]) {
			return "moves " + m[2] + " from " + sch + ":// to " + m[1] + "://: what it carries travels in the clear"
		}
	}
	return ""
}

// tlsOff is a command's switch that stops it verifying a server.
var tlsOff = mustRx(`\bcurl\b[^\n|;&]*\s(?:-k|--insecure)\b|\bwget\b[^\n|;&]*--no-check-certificate\b|http\.sslVerify[= ]false|GIT_SSL_NO_VERIFY=|NODE_TLS_REJECT_UNAUTHORIZED=0|PYTHONHTTPSVERIFY=0|\bverify\s*=\s*False\b|InsecureSkipVerify:\s*true|rejectUnauthorized:\s*false`)

// tlsOffInScript returns the switch an edit adds that stops a command or
// a client verifying the server it talks to, or "".
func tlsOffInScript(_, added, old string) string {
	oldLines := lineSet(old)
	for _, l := range strings.Split(added, "\n") {
		if oldLines[strings.TrimSpace(l)] {
			continue
		}
		if m := tlsOff.FindString(l); m != "" && !strings.Contains(old, strings.TrimSpace(m)) {
			return "stops verifying the server (" + clipText(strings.TrimSpace(m), 60) + "): anyone on the path can answer"
		}
	}
	return ""
}

// imageOpen is what an image's recipe or unit opens to whoever holds a
// console or a login: a root password, a root autologin, a file made
// writable by all.
var imageOpen = mustRx(`\busermod\s+(?:-\w+\s+)*-p\s+\S+\s+root\b|\bchpasswd\b[^\n]*\broot:|--autologin\s+root\b|\binstall\s+(?:-\w+\s+)*-m\s*0?[67][67][67]\b|\bchmod\s+(?:-\w+\s+)*(?:0?[0-7]?[67][67][67]|a\+w|o\+w)\b|\bPermitEmptyPasswords\s+yes|\bdebug-tweaks\b|\bempty-root-password\b|\ballow-empty-password\b`)

// imageOpened returns what an edit opens in what an image ships, or "".
func imageOpened(_, added, old string) string {
	oldLines := lineSet(old)
	for _, l := range strings.Split(added, "\n") {
		if oldLines[strings.TrimSpace(l)] {
			continue
		}
		if m := imageOpen.FindString(l); m != "" && !strings.Contains(old, m) {
			return "opens what the image ships (" + clipText(strings.TrimSpace(m), 60) + ")"
		}
	}
	return ""
}

// srcHosts are the hosts of the git and http sources a SRC_URI names.
func srcHosts(text string) []string {
	var out []string
	for _, m := range srcURIHost.FindAllStringSubmatch(text, 16) {
		out = append(out, m[1])
	}
	return out
}

var srcURIHost = mustRx(`\b(?:git|gitsm|https?|ftp)://([\w.-]+)`)

var (
	autorev      = mustRx(`\bSRCREV(?:_\w+)?\s*\??=\s*"\$\{AUTOREV\}"`)
	conanChannel = mustRx(`["']([\w.+-]+/[\w.+-]+)@([\w.-]+/[\w.-]+)["']`)
)

// sourceFollowsBranch returns how an edit makes a build take code nobody
// pinned, or "".
func sourceFollowsBranch(p, added, old string) string {
	if m := autorev.FindString(added); m != "" && !strings.Contains(old, m) {
		return "makes the recipe build whatever its branch holds (" + m + "): the pinned commit no longer decides"
	}
	if bitbakeFile(p) {
		for _, h := range srcHosts(added) {
			if !strings.Contains(old, h) && old != "" && strings.Contains(old, "SRC_URI") {
				return "fetches the recipe's source from " + h + ", a host its old text did not name"
			}
		}
	}
	if b := path.Base(p); b == "conanfile.py" || b == "conanfile.txt" {
		for _, m := range conanChannel.FindAllStringSubmatch(added, 8) {
			if !strings.Contains(old, m[0]) {
				return "takes " + m[1] + " from the channel @" + m[2] + ", a user's namespace rather than the center's recipe"
			}
		}
	}
	return ""
}

var (
	signTools   = map[string]bool{"openssl": true, "cosign": true, "gpg": true, "gpg2": true, "rauc": true, "mender-artifact": true, "imgtool": true, "sbsign": true, "osslsigncode": true, "signtool": true, "jarsigner": true, "apksigner": true, "minisign": true, "signify": true, "codesign": true, "notation": true, "evmctl": true, "kmodsign": true}
	signVerb    = mustRx(`(?:^|\s)(?:-sign\b|sign\b|--sign\b|-s\b|bundle\b|sign-blob\b|dgst\b)`)
	prodKeyArg  = mustRx(`(?i)(?:pkcs11:[^\s'"]*|[\w./-]*(?:key|\.pem|\.p12|\.pfx|\.jks|\.keystore)[\w./-]*|--key[= ]\S+|-k\s+\S+|-inkey\s+\S+)`)
	prodKeyWord = mustRx(`(?i)(?:^|[^a-z])(?:prod|production|release|rel)(?:[^a-z]|$)`)
)

// releaseKey returns the production or release key a signing command is
// given, or "".
func releaseKey(r *Run) string {
	if !signTools[r.Name] || !signVerb.MatchString(r.Line) {
		return ""
	}
	for _, m := range prodKeyArg.FindAllString(r.Line, 8) {
		// the key's own name (a PKCS#11 URI's object, a file's base
		// name), not the directory it sits in
		name := m
		if i := strings.Index(m, "object="); i >= 0 {
			name = m[i+len("object="):]
		} else if !strings.HasPrefix(m, "pkcs11:") {
			name = path.Base(strings.TrimSpace(m[strings.LastIndexAny(m, " =")+1:]))
		}
		if prodKeyWord.MatchString(name) && !devKeyName.MatchString(name) && !strings.Contains(strings.ToLower(m), "verify") {
			return m
		}
	}
	return ""
}

// devKeyName is a key named for development or tests.
var devKeyName = mustRx(`(?i)(?:^|[^a-z])(?:dev|development|test|testing|debug|local|example|sample|fake|dummy)(?:[^a-z]|$)`)

// devKeyPractice is a note that makes signing with a development key the
// practice.
var devKeyPractice = mustRx(`(?i)\bsign\w*\b[^.\n]{0,80}\bwith (?:the |a |our )?(?:dev|development|test|debug|local)[- ](?:key|cert|certificate|keys)\b|\b(?:dev|development|test|debug)[- ]keys?\b[^.\n]{0,60}\b(?:for|on) (?:release|prod|production|field)\b`)
