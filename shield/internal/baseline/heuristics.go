package baseline

import (
	"net"
	"path"
	"regexp"
	"strings"
)

// Tier 1: built-in heuristics, each a named rule. They look at what an
// action touches and says; the first that matches blocks.

// credentialGlobs are paths that hold secrets, relative to home ("~/")
// or anywhere (base-name patterns and "**/" patterns).
var credentialGlobs = []string{
	"~/.ssh/**", "~/.aws/**", "~/.config/gcloud/**", "~/.azure/**", "~/.kube/config", "~/.docker/config.json",
	"~/.netrc", "~/.npmrc", "~/.pypirc", "~/.gnupg/**", "~/.git-credentials", "~/.config/gh/hosts.yml",
	"**/.env", "**/.env.*", "*.pem", "*.key", "*.p12", "*.pfx", "id_rsa*", "id_ed25519*", "id_ecdsa*",
}

// laterExecGlobs are files whose content runs later, outside any sandbox:
// git hooks and config, shell start-up files, direnv, editor settings.
var laterExecGlobs = []string{
	"**/.git/hooks/**", "**/.git/config", "~/.bashrc", "~/.bash_profile", "~/.profile", "~/.zshrc", "~/.zprofile",
	"~/.config/fish/**", "**/.envrc", "**/.vscode/**", "**/.idea/**", "~/.vimrc", "~/.config/nvim/**", "~/.emacs.d/**",
}

var (
	netTool      = regexp.MustCompile(`(?:^|[\s;&|(])(curl|wget|nc|ncat|netcat|ssh|scp|sftp|rsync|ftp|telnet|socat)\b`)
	hostInURL    = regexp.MustCompile(`(?i)\b(?:https?|ftp|ssh)://([a-z0-9.\-]+|\[[0-9a-f:]+\])`)
	hostAtPath   = regexp.MustCompile(`(?:^|\s)(?:[\w.\-]+@)?([a-z0-9\-]+(?:\.[a-z0-9\-]+)+):`) // scp/rsync user@host:path
	pipeToShell  = regexp.MustCompile(`\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi)?sh\b|\|\s*(?:python3?|perl|ruby|node)\b|\b(?:ba|z)?sh\s+-c\s+["']?\$\(\s*(?:curl|wget)`)
	base64Secret = regexp.MustCompile(`\bbase64\b[^|;&]*(?:\.ssh|\.pem|\.env|id_rsa|id_ed25519|\.aws|credentials)|(?:\.ssh|\.pem|\.env|id_rsa|id_ed25519|credentials)[^|;&]*\|\s*base64\b`)
	rmRF         = regexp.MustCompile(`\brm\s+(?:-[a-zA-Z]*[rR][a-zA-Z]*\s+(?:-[a-zA-Z]+\s+)*|--recursive\s+)(.+)`)
	chmodSystem  = regexp.MustCompile(`\b(?:chmod|chown|chgrp)\b[^;&|]*\s(/(?:etc|usr|bin|sbin|lib|lib64|boot|sys|proc|var|root|dev)\b\S*|/\s|/$)`)
	injection    = regexp.MustCompile(`(?i)ignore (?:all )?(?:previous|prior|above) instructions|disregard (?:the |your )?(?:previous|prior|system)|\bAI agents?:|<!--\s*(?:AI|assistant|LLM)\b|do not (?:mention|tell) (?:this|the user)|you are now (?:in )?(?:developer|DAN) mode|system prompt:`)
)

// tier1 returns the first heuristic that blocks a.
func (s *Shield) tier1(a *Action) (Verdict, bool) {
	home := s.cfg.Home
	for _, p := range a.Paths {
		for _, g := range credentialGlobs {
			if matchGlob(resolvePattern(g, s.cfg.Workspace, home), p) {
				return Verdict{Block, 1, "credential-path", p + " holds credentials"}, true
			}
		}
	}
	for _, p := range a.Writes {
		for _, g := range laterExecGlobs {
			if matchGlob(resolvePattern(g, s.cfg.Workspace, home), p) {
				return Verdict{Block, 1, "runs-later-unsandboxed", p + " is run later by another program, outside any sandbox"}, true
			}
		}
	}
	if c := a.Command; c != "" {
		if v, ok := s.commandHeuristics(c); ok {
			return v, true
		}
	}
	for _, h := range a.Hosts {
		if !s.hostAllowed(h) {
			return Verdict{Block, 1, "exfiltration:host", "request to " + h + ", which the policy does not allow"}, true
		}
	}
	if a.Content != "" && injection.MatchString(a.Content) {
		return Verdict{Block, 1, "prompt-injection", "the content carries instructions aimed at an AI agent: " + clip(injection.FindString(a.Content), 80)}, true
	}
	return Verdict{}, false
}

func (s *Shield) commandHeuristics(c string) (Verdict, bool) {
	if pipeToShell.MatchString(c) {
		return Verdict{Block, 1, "pipe-to-shell", "pipes data into an interpreter"}, true
	}
	if base64Secret.MatchString(c) {
		return Verdict{Block, 1, "exfiltration:encode-secret", "encodes a secret file"}, true
	}
	for _, g := range credentialGlobs {
		for _, word := range strings.Fields(c) {
			word = strings.Trim(word, `"'<>()`)
			word = strings.TrimPrefix(word, "@")
			if word == "" || strings.HasPrefix(word, "-") {
				continue
			}
			if matchGlob(resolvePattern(g, s.cfg.Workspace, s.cfg.Home), s.ResolvePath(word)) {
				return Verdict{Block, 1, "credential-path", "the command names " + word + ", which holds credentials"}, true
			}
		}
	}
	if netTool.MatchString(c) {
		hosts := commandHosts(c)
		if len(hosts) == 0 {
			return Verdict{Block, 1, "exfiltration:network-tool", "runs a network tool (" + netTool.FindStringSubmatch(c)[1] + ") to a host that cannot be checked"}, true
		}
		for _, h := range hosts {
			if !s.hostAllowed(h) {
				return Verdict{Block, 1, "exfiltration:host", "sends to " + h + ", which the policy does not allow"}, true
			}
		}
	}
	if m := rmRF.FindStringSubmatch(c); m != nil {
		for _, target := range strings.Fields(m[1]) {
			target = strings.Trim(target, `"'`)
			if strings.ContainsAny(target, ";&|") {
				break
			}
			if t := s.ResolvePath(target); !s.inWorkspace(t) || t == s.cfg.Workspace {
				return Verdict{Block, 1, "destructive:rm-outside", "recursive delete of " + target + ", outside the workspace (or all of it)"}, true
			}
		}
	}
	if chmodSystem.MatchString(c) {
		return Verdict{Block, 1, "destructive:system-perms", "changes permissions or owners of system paths"}, true
	}
	for _, g := range laterExecGlobs {
		for _, word := range strings.Fields(c) {
			word = strings.Trim(word, `"'>`)
			if word != "" && matchGlob(resolvePattern(g, s.cfg.Workspace, s.cfg.Home), s.ResolvePath(word)) && strings.Contains(c, ">") {
				return Verdict{Block, 1, "runs-later-unsandboxed", "writes " + word + ", which runs later outside any sandbox"}, true
			}
		}
	}
	if injection.MatchString(c) {
		return Verdict{Block, 1, "prompt-injection", "the command carries instructions aimed at an AI agent"}, true
	}
	return Verdict{}, false
}

// commandHosts finds the hosts a command line names.
func commandHosts(c string) []string {
	var out []string
	for _, m := range hostInURL.FindAllStringSubmatch(c, -1) {
		out = append(out, strings.Trim(strings.ToLower(m[1]), "[]"))
	}
	for _, m := range hostAtPath.FindAllStringSubmatch(c, -1) {
		out = append(out, strings.ToLower(m[1]))
	}
	// Bare "tool host port" (nc, telnet) and "ssh host".
	f := strings.Fields(c)
	for i, w := range f {
		switch path.Base(w) {
		case "nc", "ncat", "netcat", "telnet", "ssh", "socat":
			for _, arg := range f[i+1:] {
				if strings.HasPrefix(arg, "-") {
					continue
				}
				arg = strings.TrimPrefix(arg[strings.LastIndex(arg, "@")+1:], "tcp:")
				if net.ParseIP(arg) != nil || strings.Contains(arg, ".") {
					out = append(out, strings.ToLower(arg))
				}
				break
			}
		}
	}
	return out
}

// hostAllowed reports whether the policy lets tools reach host.
func (s *Shield) hostAllowed(host string) bool {
	for _, g := range s.cfg.Policy.Network.AllowHosts {
		if ok, _ := path.Match(g, host); ok {
			return true
		}
	}
	return false
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
