package shield

import (
	"path"
	"strings"
)

// resolution says what resolvePath could make of a path.
type resolution int

const (
	resolved resolution = iota
	// resolvedNoDir: the path is relative to a directory that cannot be
	// known (the working directory computed at run time, ~- or
	// /proc/self/cwd there).
	resolvedNoDir
	// resolvedOpaque: the path names what a process has open, not a path
	// (/dev/fd/N and /proc/*/fd/N past the standard streams), or another
	// process's working directory (/proc/N/cwd): what it reaches cannot
	// be known from the line.
	resolvedOpaque
)

// resolvePath is the one way a path as written becomes the absolute,
// cleaned path Shield judges (Shield.ResolvePath and every command's
// paths use it), for a user whose home is home and a working directory
// cwd ("" when it cannot be known).
//
//   - "~", "~/x", "$HOME", "${HOME}" (and their /x forms) are under home;
//     "~+" is cwd, "~-" (the previous directory) cannot be known.
//   - "~user" is that user's home, judged as /root for root and
//     /home/user for anyone else (nothing on disk is consulted; these
//     are where a home is in practice, and a rule about ~/.ssh applies
//     to the agent's own home only).
//   - A relative path is under cwd; "//", "/./", a trailing "/." and ".."
//     are applied lexically.
//   - /proc aliases are followed as the kernel does: /proc/P/root (P
//     self, thread-self, a pid, a pattern; also /proc/P/task/T/root) is
//     "/", so /proc/self/root/etc/shadow is /etc/shadow and a ".." after
//     it stays at "/"; /proc/self/cwd and /proc/thread-self/cwd are cwd;
//     /proc/self/environ and /proc/thread-self/environ (and the task
//     forms) are /proc/self/environ, the Read the model gives for
//     reading the environment; /dev/fd/0..2 and /proc/self/fd/0..2 are
//     /dev/stdin, /dev/stdout and /dev/stderr. Another process's cwd and
//     any other open descriptor (/dev/fd/N, /proc/P/fd/N: the opx
//     process's own ledger may be one) are resolvedOpaque: the callers
//     make an Unknown of them, which escalates.
//
// The work is linear in the length of the path.
func resolvePath(home, cwd, t string) (string, resolution) {
	switch {
	case t == "~" || strings.HasPrefix(t, "~/"):
		t = "/" + home + "/" + t[1:]
	case t == "~+" || strings.HasPrefix(t, "~+/"):
		if cwd == "" {
			return "", resolvedNoDir
		}
		t = cwd + "/" + t[2:]
	case t == "~-" || strings.HasPrefix(t, "~-/"):
		return "", resolvedNoDir
	case strings.HasPrefix(t, "~"):
		user, rest, _ := strings.Cut(t[1:], "/")
		h := "/home/" + user
		if user == "root" {
			h = "/root"
		}
		t = h + "/" + rest
	case t == "$HOME" || strings.HasPrefix(t, "$HOME/"):
		t = "/" + home + "/" + t[len("$HOME"):]
	case t == "${HOME}" || strings.HasPrefix(t, "${HOME}/"):
		t = "/" + home + "/" + t[len("${HOME}"):]
	}
	if !strings.HasPrefix(t, "/") {
		if cwd == "" {
			return "", resolvedNoDir
		}
		t = cwd + "/" + t
	}
	var segs []string
	rest := t
	for rest != "" {
		var seg string
		seg, rest, _ = strings.Cut(rest, "/")
		switch seg {
		case "", ".":
			continue
		case "..":
			if len(segs) > 0 {
				segs = segs[:len(segs)-1]
			}
			continue
		}
		segs = append(segs, seg)
		switch procAlias(segs) {
		case "root":
			segs = segs[:0]
		case "cwd":
			if !selfProc(segs[1]) {
				return "", resolvedOpaque
			}
			if cwd == "" {
				return "", resolvedNoDir
			}
			c, r := resolvePath(home, "", path.Clean("/"+cwd))
			if r != resolved {
				return "", r
			}
			segs = append(segs[:0], strings.Split(strings.TrimPrefix(c, "/"), "/")...)
			if c == "/" {
				segs = segs[:0]
			}
		case "environ":
			if selfProc(segs[1]) {
				segs = append(segs[:0], "proc", "self", "environ")
			} else {
				segs = append(segs[:0], "proc", segs[1], "environ")
			}
		case "fd":
			n := segs[len(segs)-1]
			if (segs[0] == "dev" || selfProc(segs[1])) && len(n) == 1 && n[0] >= '0' && n[0] <= '2' && rest == "" {
				segs = append(segs[:0], "dev", []string{"stdin", "stdout", "stderr"}[n[0]-'0'])
				continue
			}
			return "", resolvedOpaque
		}
	}
	return "/" + strings.Join(segs, "/"), resolved
}

// procAlias names the /proc alias segs (a path's segments so far) ends
// in: "root", "cwd", "environ" or "fd" (an entry of a descriptor table:
// /proc/P/fd/N, /proc/P/task/T/fd/N, /dev/fd/N), or "".
func procAlias(segs []string) string {
	if len(segs) == 3 && segs[0] == "dev" && segs[1] == "fd" {
		return "fd"
	}
	if len(segs) < 3 || segs[0] != "proc" {
		return ""
	}
	i := 2
	if len(segs) >= 5 && segCould(segs[2], "task") {
		i = 4
	}
	switch {
	case len(segs) == i+1 && segCould(segs[i], "root"):
		return "root"
	case len(segs) == i+1 && segCould(segs[i], "cwd"):
		return "cwd"
	case len(segs) == i+1 && segs[i] == "environ":
		return "environ"
	case len(segs) == i+2 && segCould(segs[i], "fd"):
		return "fd"
	}
	return ""
}

// selfProc reports whether a /proc entry is the process itself.
func selfProc(p string) bool { return p == "self" || p == "thread-self" }

// segCould reports whether a path segment as written (possibly a
// pattern) could be name; a malformed pattern could be anything.
func segCould(seg, name string) bool {
	if seg == name {
		return true
	}
	if !strings.ContainsAny(seg, "*?[") {
		return false
	}
	ok, err := path.Match(seg, name)
	return ok || err != nil
}

// slashesCollapsed is s with runs of "/" and "/./" written as one "/"
// (for literal matches of a path in a command line: ~/.local//state).
func slashesCollapsed(s string) string {
	if !strings.Contains(s, "//") && !strings.Contains(s, "/./") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			for {
				if i+1 < len(s) && s[i+1] == '/' {
					i++
				} else if i+2 < len(s) && s[i+1] == '.' && s[i+2] == '/' {
					i += 2
				} else {
					break
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
