package shield

import (
	"path"
	"strings"

	"github.com/opx-dev/opx/shield/shellx"
)

// How a command's words become the Refs of its facts: the one resolver
// (resolvePath) and the model's helpers around it.

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
//     to the agent's own home only). A ".." after ~user (not root) cannot
//     be known: without such a user the shell keeps the word, a
//     directory of cwd. A "~" word that is no user name (~..) is a
//     relative path.
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
	case strings.HasPrefix(t, "~") && userName(t[1:strings.IndexByte(t+"/", '/')]):
		user, rest, _ := strings.Cut(t[1:], "/")
		if user != "root" && strings.Contains("/"+rest+"/", "/../") {
			// ~nouser/../.opx: when no such user exists the shell keeps
			// the word as written, a directory ~nouser of cwd (which the
			// line may have made), so ".." may lead anywhere.
			return "", resolvedNoDir
		}
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

// userName reports whether u is a user name the shell would look up for
// ~u (else it keeps ~u as written: a relative path).
func userName(u string) bool {
	if u == "" || len(u) > 32 {
		return false
	}
	for i := 0; i < len(u); i++ {
		c := u[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || i > 0 && (c >= '0' && c <= '9' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
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

// looksLikePath reports whether an argument of an unknown program names a
// file: absolute, ~, ./, ../ or holding a slash, and not a URL.
func looksLikePath(t string) bool {
	if t == "" || strings.Contains(t, "://") || strings.ContainsAny(t, "\n=") || len(t) > 4096 {
		return false
	}
	return t[0] == '/' || t[0] == '~' || t == "." || t == ".." || strings.HasPrefix(t, "./") || strings.HasPrefix(t, "../") || strings.Contains(t, "/")
}

// Kinds of access.
const (
	kRead = iota
	kWrite
	kDelete
)

var kindVerb = [...]string{"reads", "writes", "deletes"}

// abs resolves a path as written against the working directory; ok is
// false when it is relative to an unknown directory.
func (x *call) abs(t string) (string, bool) {
	if t == inputWord {
		return "", false // what xargs or find -exec pass: see ref
	}
	p, r := x.resolve(t)
	return p, r == resolved
}

// resolve is resolvePath in the call's working directory, with ".." after
// a link the line made applied as the kernel does (commands_links.go)
// before the rest (/proc aliases, descriptors).
func (x *call) resolve(t string) (string, resolution) {
	if len(x.m.links) > 0 && strings.Contains(t, "..") {
		p, ok := x.m.resolveLinked(x.cwd, t)
		if !ok {
			return "", resolvedNoDir
		}
		return resolveWith(x.m.s, "/", p)
	}
	return resolveWith(x.m.s, x.cwd, t)
}

// resolveIn is resolvePath for s's home (none: "/") in cwd; ok is false
// when the path cannot be known.
func resolveIn(s *Shield, cwd, t string) (string, bool) {
	p, r := resolveWith(s, cwd, t)
	return p, r == resolved
}

func resolveWith(s *Shield, cwd, t string) (string, resolution) {
	home := ""
	if s != nil {
		home = s.cfg.Home
	}
	return resolvePath(home, cwd, t)
}

// ref adds a Read, Write or Delete of the path w names.
func (x *call) ref(k int, w shellx.Word, tree bool) {
	if w.Text == inputWord {
		for _, r := range x.input {
			r.By = x.name
			x.add(k, r)
		}
		if !x.inputKnown {
			x.m.unknown(x.name + " " + kindVerb[k] + " paths read from its input at run time (" + x.via + ")")
		}
		return
	}
	if w.Dynamic && !(strings.HasPrefix(w.Text, "~") && !strings.ContainsAny(w.Text, "$`")) {
		// (~user is Dynamic to shellx: its home is /home/user here.)
		x.dynamicRef(k, w, tree)
		return
	}
	if w.Text == "" {
		return
	}
	p, r := x.resolve(w.Text)
	switch r {
	case resolvedNoDir:
		x.m.unknown(x.name + " " + kindVerb[k] + " " + w.Text + " in a directory computed at run time")
		return
	case resolvedOpaque:
		x.m.unknown(x.name + " " + kindVerb[k] + " " + w.Text + ", a file another process or descriptor holds open: what it is cannot be known")
		return
	}
	x.add(k, Ref{Path: p, Glob: w.Glob, Tree: tree, By: x.name})
}

// refPath adds a Ref for a path known statically.
func (x *call) refPath(k int, p string, tree bool) {
	if q, ok := x.abs(p); ok {
		x.add(k, Ref{Path: q, Tree: tree, By: x.name})
	}
}

func (x *call) add(k int, r Ref) {
	r = x.followLinks(k, r)
	switch k {
	case kRead:
		x.m.f.Reads = append(x.m.f.Reads, r)
		if x.i >= 0 && x.i < len(x.m.reads) {
			x.m.reads[x.i] = append(x.m.reads[x.i], r.Path)
		}
	case kWrite:
		x.m.f.Writes = append(x.m.f.Writes, r)
	case kDelete:
		x.m.f.Deletes = append(x.m.f.Deletes, r)
	}
}

// dynamicRef judges a path computed at run time (see CommandFacts).
func (x *call) dynamicRef(k int, w shellx.Word, tree bool) {
	refs, ok := x.m.substRefs(x.i, w.Text)
	if !ok {
		refs, ok = x.m.varRefs(w.Text)
	}
	if ok {
		for _, r := range refs {
			r.By = x.name
			x.add(k, r)
		}
		return
	}
	t := w.Text
	if d := strings.IndexAny(t, "$`"); d >= 0 {
		if s := strings.LastIndexByte(t[:d], '/'); s >= 0 {
			if p, ok := x.abs(t[:s+1]); ok {
				x.add(k, Ref{Path: path.Join(p, "*"), Glob: true, Tree: true, By: x.name})
			}
		}
	}
	x.m.unknown(x.name + " " + kindVerb[k] + " a path computed at run time: " + clipText(t, 120))
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
