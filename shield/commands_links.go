package shield

import (
	"path"
	"strings"

	"github.com/opx-dev/opx/shield/shellx"
)

// Links a line makes (ln -s, ln, cp -s, cp -l) and the paths that reach
// through them later in the same line: `ln -s / r; cat r/etc/shadow`
// reads /etc/shadow.

// link is a link the line made: from names what to is (a symbolic link's
// target, or the file a hard link shares); to is "" when the target is
// computed at run time.
type link struct{ from, to string }

// maxLinks bounds the links a line is followed through.
const maxLinks = 64

// throughLinks returns p with every link made earlier in the line that it
// starts with replaced by the link's target (links to links followed, a
// bounded number of times); ok is false when a link's target is unknown.
func (m *model) throughLinks(p string) (string, bool) {
	for hops := 0; hops < 8; hops++ {
		moved := false
		for k := len(m.links) - 1; k >= 0; k-- {
			l := m.links[k]
			rest, under := strings.CutPrefix(p, l.from)
			if !under || rest != "" && rest[0] != '/' {
				continue
			}
			if l.to == "" {
				return p, false
			}
			q := path.Clean(l.to + rest)
			if q == p {
				continue
			}
			p, moved = q, true
			break
		}
		if !moved {
			return p, true
		}
	}
	return p, false
}

// followLinks is r as a path reached through the links the line made
// (see throughLinks); a link whose target is computed makes it unknown. A
// pattern that could name a link (r*/etc/shadow for the link r) also
// names what lies beneath the link's target: that Ref is added too.
func (x *call) followLinks(k int, r Ref) Ref {
	if len(x.m.links) == 0 {
		return r
	}
	p, ok := x.m.throughLinks(r.Path)
	if !ok {
		x.m.unknown(x.name + " " + kindVerb[k] + " " + r.Path + " through a link to a path computed at run time")
		return r
	}
	r.Path = p
	if r.Glob && !x.m.inLinkGlob {
		x.m.inLinkGlob = true
		for _, l := range x.m.links {
			rest, ok := globThrough(r.Path, l.from)
			if !ok {
				continue
			}
			if l.to == "" {
				x.m.unknown(x.name + " " + kindVerb[k] + " " + r.Path + " through a link to a path computed at run time")
				continue
			}
			e := r
			e.Path = path.Join(l.to, rest)
			e.Glob = strings.ContainsAny(rest, "*?[")
			x.add(k, e)
		}
		x.m.inLinkGlob = false
	}
	return r
}

// globThrough reports whether the pattern pat could name the path from
// or a path beneath it (segment by segment; a bracket expression could
// match anything, "**" any number of segments), and returns what of pat
// follows from.
func globThrough(pat, from string) (string, bool) {
	ps := strings.Split(strings.TrimPrefix(pat, "/"), "/")
	fs := strings.Split(strings.TrimPrefix(from, "/"), "/")
	if len(ps) < len(fs) {
		return "", false
	}
	glob := false
	for i, f := range fs {
		s := ps[i]
		switch {
		case s == "**":
			return strings.Join(ps[i:], "/"), true
		case strings.Contains(s, "["):
			glob = true
		case strings.ContainsAny(s, "*?"):
			if ok, err := path.Match(s, f); err != nil || !ok {
				return "", false
			}
			glob = true
		case s != f:
			return "", false
		}
	}
	if !glob {
		return "", false // a literal prefix: throughLinks followed it
	}
	return strings.Join(ps[len(fs):], "/"), true
}

// resolveLinked resolves t against cwd one segment at a time, following
// the links the line made before each "..", as the kernel does: with
// s -> /etc/ssh, s/../shadow is /etc/shadow, not ./shadow. ok is false
// when a link's target is computed or cwd is unknown.
func (m *model) resolveLinked(cwd, t string) (string, bool) {
	cur := ""
	switch {
	case t == "~" || strings.HasPrefix(t, "~"):
		user, rest, _ := strings.Cut(t, "/")
		p, ok := resolveIn(m.s, cwd, user)
		if !ok {
			return "", false
		}
		cur, t = p, rest
	case path.IsAbs(t):
		cur = "/"
	case cwd == "":
		return "", false
	default:
		cur = cwd
	}
	cur, ok := m.throughLinks(cur)
	if !ok {
		return "", false
	}
	for _, seg := range strings.Split(t, "/") {
		switch seg {
		case "", ".":
			continue
		case "..":
			cur = parentDir(cur)
		default:
			cur = path.Join(cur, seg)
		}
		if cur, ok = m.throughLinks(cur); !ok {
			return "", false
		}
	}
	return cur, true
}

// linked notes the links ln and cp -s/-l make: each source is reached
// through dest (or dest/NAME when dest is a directory, which cannot be
// told: both are noted). It returns the sources' targets, resolved, for
// the facts of the link itself.
func (x *call) linked(srcs []shellx.Word, dest shellx.Word, intoDir, symbolic bool) {
	if dest.Dynamic {
		return // the destination's write is already unknown
	}
	d, ok := x.abs(dest.Text)
	if !ok {
		return
	}
	d, _ = x.m.throughLinks(d)
	for _, w := range srcs {
		to := ""
		if !w.Dynamic && w.Text != "" {
			base := x.cwd
			if symbolic && !path.IsAbs(w.Text) && !strings.HasPrefix(w.Text, "~") {
				// A relative symlink target is relative to the
				// link's directory.
				base = d
				if !intoDir {
					base = parentDir(d)
				}
			}
			if p, ok := resolveIn(x.m.s, base, w.Text); ok && base != "" || ok && path.IsAbs(w.Text) {
				to, _ = x.m.throughLinks(p)
			}
		}
		if len(x.m.links) >= maxLinks {
			x.m.unknown("the line makes more links than are followed")
			return
		}
		if !intoDir {
			x.m.links = append(x.m.links, link{from: d, to: to})
		}
		if name := path.Base(w.Text); name != "" && name != "." && name != "/" && !w.Dynamic {
			x.m.links = append(x.m.links, link{from: path.Join(d, name), to: to})
		}
		x.linkTarget(w, to, symbolic)
	}
}

// linkTarget adds the facts of making a link to target: what is beneath
// it can be read through the link, now and by later actions, and in the
// workspace written too (a link to .git/hooks makes a later write there
// look like a plain workspace file); a link that leads out of the
// workspace cannot be judged by what later actions name.
func (x *call) linkTarget(w shellx.Word, to string, symbolic bool) {
	if to == "" {
		x.ref(kRead, w, true) // computed: unknown, judged by ref
		if !w.Dynamic {
			x.m.unknown(x.name + " links to " + w.Text + " in a directory computed at run time")
		}
		return
	}
	x.add(kRead, Ref{Path: to, Glob: w.Glob, Tree: symbolic, By: x.name})
	if x.m.s.inWorkspace(to) {
		x.add(kWrite, Ref{Path: to, Glob: w.Glob, Tree: symbolic, By: x.name})
		return
	}
	x.m.unknown(x.name + " makes a link to " + to + ", outside the workspace: what later reaches it through the link is not seen")
}

// linkMoved notes that a link the line made and that mv or cp names as a
// source now (also) lies at dest: moved, copied as a link (cp -a, -P), or
// copied as what it leads to, which is the same content.
func (x *call) linkMoved(srcs []shellx.Word, dest shellx.Word, intoDir bool) {
	if len(x.m.links) == 0 || dest.Dynamic {
		return
	}
	d, ok := x.abs(dest.Text)
	if !ok {
		return
	}
	for _, w := range srcs {
		if w.Dynamic {
			continue
		}
		p, ok := x.abs(w.Text)
		if !ok {
			continue
		}
		for k := len(x.m.links) - 1; k >= 0; k-- {
			l := x.m.links[k]
			if l.from != p {
				continue
			}
			if len(x.m.links) >= maxLinks {
				x.m.unknown("the line makes more links than are followed")
				return
			}
			if !intoDir {
				x.m.links = append(x.m.links, link{from: d, to: l.to})
			}
			x.m.links = append(x.m.links, link{from: path.Join(d, path.Base(p)), to: l.to})
			break
		}
	}
}
