package shield

import (
	"path"
	"strings"
)

// matchGlob matches a slash-separated path against a pattern in which "*"
// and "?" work within one segment (path.Match) and "**" stands for any
// number of segments, including none. A pattern without a slash matches
// the last segment (the base name) anywhere: "*.pem" matches "a/b/c.pem".
func matchGlob(pattern, name string) bool {
	if !strings.Contains(pattern, "/") {
		ok, _ := path.Match(pattern, path.Base(name))
		return ok
	}
	return matchSegments(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			pat = pat[1:]
			if len(pat) == 0 {
				return true
			}
			for i := 0; i <= len(name); i++ {
				if matchSegments(pat, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// splitPath splits an absolute, cleaned path into segments: "/a/b" is
// ["", "a", "b"] and "/" is [""], so that every path's segments begin
// with those of its ancestors.
func splitPath(p string) []string {
	if p == "/" {
		return []string{""}
	}
	segs := strings.Split(p, "/")
	// Collapse runs of "**": they mean the same as one, and a run would
	// only make overlap slower.
	out := segs[:0]
	for i, s := range segs {
		if s == "**" && i > 0 && segs[i-1] == "**" {
			continue
		}
		out = append(out, s)
	}
	return out
}

// hasMeta reports whether a segment holds a glob metacharacter (an
// extglob group "@(...)", "!(...)", "+(...)" included).
func hasMeta(s string) bool {
	return strings.ContainsAny(s, `*?[\`) || strings.Contains(s, "@(") || strings.Contains(s, "!(") || strings.Contains(s, "+(")
}

// shellSeg translates one segment of a shell glob (bash syntax) into the
// path.Match syntax the overlap checks read, over-approximating: a
// bracket expression ("[!x]", "[^x]", "[[:alpha:]]", "[a-z]") becomes
// "?" (any one character) and an extglob group ("@(a|b)", "!(x)", ...)
// becomes "*"; an unterminated "[" is a literal one. lead says the
// segment could match a name starting with "." although it does not
// start with one (a bracket expression, an escape or a group first: it
// is unspecified in POSIX whether "[.]x" matches ".x"), so the shell's
// dot rule must not rule that out.
func shellSeg(s string) (out string, lead bool) {
	if rest, ok := strings.CutPrefix(s, dotMatch); ok {
		out, _ = shellSeg(rest)
		return out, true
	}
	if !strings.ContainsAny(s, "[(\\") {
		return s, false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			if i == 0 {
				lead = true
			}
			b.WriteByte(c)
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case c == '[':
			j := bracketEnd(s, i)
			if j < 0 {
				b.WriteString(`\[`)
				continue
			}
			if i == 0 {
				lead = true
			}
			b.WriteByte('?')
			i = j
		case strings.IndexByte("@!+*?", c) >= 0 && i+1 < len(s) && s[i+1] == '(':
			j := groupEnd(s, i+1)
			if j < 0 {
				b.WriteByte(c)
				continue
			}
			if i == 0 {
				lead = true
			}
			b.WriteByte('*')
			i = j
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), lead
}

// dotMatch begins a glob segment that may match a leading dot although
// it does not start with one: the line turned on bash's dotglob (or set
// GLOBIGNORE), so "*" matches ".ssh" (see dotGlob).
const dotMatch = "\x01"

// dotGlob rewrites a glob Ref for a line with dotglob on: every segment
// may match dot names, and "**" descends into dot directories.
func dotGlob(r Ref) Ref {
	if !r.Glob {
		return r
	}
	segs := strings.Split(r.Path, "/")
	for i, sg := range segs {
		switch {
		case sg == "**":
			segs[i] = beneath
		case hasMeta(sg) && !strings.HasPrefix(sg, "."):
			segs[i] = dotMatch + sg
		}
	}
	r.Path = strings.Join(segs, "/")
	return r
}

// bracketEnd returns the index of the "]" closing the bash bracket
// expression opened at s[i], or -1: a leading "!" or "^" negates, a "]"
// first is a member, and "[:class:]", "[=c=]", "[.c.]" are members.
func bracketEnd(s string, i int) int {
	j := i + 1
	if j < len(s) && (s[j] == '!' || s[j] == '^') {
		j++
	}
	if j < len(s) && s[j] == ']' {
		j++
	}
	for j < len(s) {
		switch {
		case s[j] == '[' && j+1 < len(s) && strings.IndexByte(":=.", s[j+1]) >= 0:
			if k := strings.Index(s[j+2:], string(s[j+1])+"]"); k >= 0 {
				j += 2 + k + 2
				continue
			}
		case s[j] == '\\':
			j++
		case s[j] == ']':
			return j
		}
		j++
	}
	return -1
}

// groupEnd returns the index of the ")" closing the group opened at
// s[i], or -1.
func groupEnd(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// literalAffixes returns the literal text of a segment before its first
// metacharacter and after its last.
func literalAffixes(s string) (prefix, suffix string) {
	i := strings.IndexAny(s, `*?[\`)
	j := strings.LastIndexAny(s, `*?]\`)
	return s[:i], s[j+1:]
}

// segOverlap reports whether some name could match both segments: ref is
// a segment of a path an action names (a shell glob), rule one of a
// rule's pattern. Two patterns are compared by their literal prefixes
// and suffixes, which over-approximates (conservative: "could match").
// The shell's dot rule applies to ref: a segment not starting with "."
// never matches a name that does (sh without dotglob), so "~/*" does not
// reach ~/.ssh.
func segOverlap(ref, rule string) bool {
	ref, lead := shellSeg(ref)
	rm, pm := hasMeta(ref), hasMeta(rule)
	switch {
	case !rm && !pm:
		return ref == rule
	case !rm:
		ok, err := path.Match(rule, ref)
		return ok || err != nil
	case strings.HasPrefix(rule, ".") && !strings.HasPrefix(ref, ".") && !lead:
		return false
	case !pm:
		ok, err := path.Match(ref, rule)
		return ok || err != nil
	}
	rp, rs := literalAffixes(ref)
	pp, ps := literalAffixes(rule)
	return (strings.HasPrefix(rp, pp) || strings.HasPrefix(pp, rp)) &&
		(strings.HasSuffix(rs, ps) || strings.HasSuffix(ps, rs))
}

// beneath ends the segments of a Tree Ref: it stands for everything
// beneath the path, dot files included (unlike a glob's "**").
const beneath = "\x00**"

// overlapBudget bounds the steps overlap takes on one pair of patterns;
// past it the answer is "they could overlap" (conservative).
const overlapBudget = 4096

// overlap reports whether some path could match both segment lists, each
// of which may hold "**" (any number of segments) and per-segment globs;
// a is the action's side, b the rule's (see segOverlap).
func overlap(a, b []string) bool {
	budget := overlapBudget
	return overlapSteps(a, b, &budget)
}

func overlapSteps(a, b []string, budget *int) bool {
	*budget--
	if *budget < 0 {
		return true
	}
	switch {
	case len(a) > 0 && (a[0] == "**" || a[0] == beneath):
		// The action's "**" is the shell's (globstar): it does not
		// descend into dot directories either; a Tree's reaches all.
		return overlapSteps(a[1:], b, budget) || (len(b) > 0 && (a[0] == beneath || !strings.HasPrefix(b[0], ".")) && overlapSteps(a, b[1:], budget))
	case len(b) > 0 && b[0] == "**":
		return overlapSteps(a, b[1:], budget) || (len(a) > 0 && overlapSteps(a[1:], b, budget))
	case len(a) == 0 || len(b) == 0:
		return len(a) == len(b)
	}
	return segOverlap(a[0], b[0]) && overlapSteps(a[1:], b[1:], budget)
}

// pureWildcard reports whether a segment matches any name at all ("*",
// "?*", "**"): such a segment names nothing in particular.
func pureWildcard(s string) bool {
	return strings.Trim(s, "*?") == ""
}

// within reports whether p is base or beneath it (both absolute, cleaned).
func within(p, base string) bool {
	return p == base || base == "/" || strings.HasPrefix(p, base+"/")
}

// globPrefix is the literal directory a glob pattern starts with (its
// segments before the first one with a metacharacter): every path the
// pattern matches is beneath it.
func globPrefix(p string) string {
	segs := splitPath(p)
	i := 0
	for i < len(segs) && !hasMeta(segs[i]) {
		i++
	}
	if i <= 1 {
		return "/"
	}
	return strings.Join(segs[:i], "/")
}

// pathPattern is a path glob compiled once (in New or ParsePolicy) and
// matched against every Ref: either absolute (segments, "**" spanning
// directories) or a base-name pattern ("*.pem", ".env") that matches the
// last segment of any path.
type pathPattern struct {
	src  string   // as written, for reasons
	segs []string // absolute pattern; nil for a base-name pattern
	base string   // base-name pattern
	// anywhere: segs begin with "**" ("**/.git/hooks/**"): like a
	// base-name pattern, it does not reach into a Tree.
	anywhere bool
	meta     []bool // meta[i]: segs[i] holds a metacharacter (else compared as a string)
	// A base-name pattern of one of the simple shapes "x", "x*" and
	// "*x" is matched without path.Match: prefix and suffix are its
	// literal parts, and simple says it has that shape.
	simple         bool
	prefix, suffix string
	star           bool
}

// namedBy reports whether a glob's base segment names what the base-name
// pattern does: it could match the same name, and it says so with the
// pattern's literal parts ("*.env" for "*.env", "id_*" for "id_rsa*"),
// not merely by leaving them open ("*.go" could be called "id_rsa.go",
// but it names Go files).
func (pp *pathPattern) namedBy(g string) bool {
	g, _ = shellSeg(g)
	if !segOverlap(g, pp.base) {
		return false
	}
	if !hasMeta(pp.base) || !hasMeta(g) {
		return true
	}
	gp, gs := literalAffixes(g)
	pp0, ps := literalAffixes(pp.base)
	return (pp0 == "" || gp != "") && (ps == "" || gs != "")
}

// matchBase matches a literal base name against a base-name pattern.
func (pp *pathPattern) matchBase(name string) bool {
	if !pp.simple {
		ok, _ := path.Match(pp.base, name)
		return ok
	}
	if !pp.star {
		return name == pp.base
	}
	return strings.HasPrefix(name, pp.prefix) && strings.HasSuffix(name, pp.suffix) && len(name) >= len(pp.prefix)+len(pp.suffix)
}

// compilePattern compiles an absolute pattern or a base-name pattern
// (one without a slash). "**/x" is the base-name pattern "x".
func compilePattern(src, abs string) pathPattern {
	if b, ok := strings.CutPrefix(abs, "**/"); ok && !strings.Contains(b, "/") {
		abs = b
	}
	if !strings.Contains(abs, "/") {
		pp := pathPattern{src: src, base: abs}
		switch i := strings.IndexByte(abs, '*'); {
		case !hasMeta(abs):
			pp.simple = true
		case strings.Count(abs, "*") == 1 && !strings.ContainsAny(abs, `?[\`):
			pp.simple, pp.star, pp.prefix, pp.suffix = true, true, abs[:i], abs[i+1:]
		}
		return pp
	}
	segs := splitPath(abs)
	meta := make([]bool, len(segs))
	for i, s := range segs {
		meta[i] = hasMeta(s)
	}
	return pathPattern{src: src, segs: segs, anywhere: segs[0] == "**", meta: meta}
}

// match matches a split literal path against the pattern (matchSegments,
// with literal segments compared as strings).
func (pp *pathPattern) match(name []string) bool {
	return matchCompiled(pp.segs, pp.meta, name)
}

// matchPrefix reports whether some path beneath (or at) the split path
// name could match the pattern: the pattern matches name's segments and
// may go on.
func matchPrefix(pat []string, meta []bool, name []string) bool {
	for len(name) > 0 {
		if len(pat) == 0 {
			return false
		}
		if pat[0] == "**" {
			return true
		}
		if !segMatch(pat[0], meta[0], name[0]) {
			return false
		}
		pat, meta, name = pat[1:], meta[1:], name[1:]
	}
	return true
}

// segMatch matches one segment of a compiled pattern.
func segMatch(pat string, meta bool, name string) bool {
	switch {
	case !meta:
		return pat == name
	case pat == "*":
		return name != ""
	}
	ok, _ := path.Match(pat, name)
	return ok
}

func matchCompiled(pat []string, meta []bool, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			pat, meta = pat[1:], meta[1:]
			if len(pat) == 0 {
				return true
			}
			for i := 0; i <= len(name); i++ {
				if matchCompiled(pat, meta, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if !segMatch(pat[0], meta[0], name[0]) {
			return false
		}
		pat, meta, name = pat[1:], meta[1:], name[1:]
	}
	return len(name) == 0
}

// matchPath reports whether the pattern matches the literal path p.
func (pp *pathPattern) matchPath(p string) bool {
	if pp.segs == nil {
		return pp.matchBase(path.Base(p))
	}
	return pp.match(splitPath(p))
}

// matchRef reports whether the pattern could match a path r touches: the
// path itself, or for a Tree anything beneath it, or for a Glob anything
// the glob could match (see segOverlap). A base-name pattern reaches into
// a Tree or a Glob only through a glob's last segment that names
// something in particular ("*.env" does, "*" does not): a recursive read
// of the workspace is not a read of every .env it may hold, or every
// `grep -r` would be.
func (pp *pathPattern) matchRef(r *Ref) bool { return pp.matchSplit(r, splitPath(r.Path)) }

// matchSplit is matchRef with r.Path already split (splitPath), for
// callers that match one Ref against many patterns.
func (pp *pathPattern) matchSplit(r *Ref, segs []string) bool {
	base := segs[len(segs)-1]
	if pp.segs == nil {
		if !r.Glob {
			return pp.matchBase(base)
		}
		g, _ := shellSeg(base)
		return !pureWildcard(g) && pp.namedBy(base)
	}
	if !r.Glob && pp.match(segs) {
		return true
	}
	if !r.Glob && !r.Tree {
		return false
	}
	if !r.Glob && !pp.anywhere {
		// A literal tree: the pattern reaches beneath it when it matches
		// the tree's path as a prefix.
		return matchPrefix(pp.segs, pp.meta, segs)
	}
	if r.Tree && !pp.anywhere {
		segs = append(segs[:len(segs):len(segs)], beneath)
	}
	return overlap(segs, pp.segs)
}

// reaches reports how a Ref relates to a protected path t (absolute,
// cleaned): at says r could touch t or something beneath it, above says
// r could touch a strict ancestor of t.
func reaches(r *Ref, t string) (at, above bool) {
	if !r.Glob {
		at = within(r.Path, t) || (r.Tree && within(t, r.Path))
		above = r.Path != t && within(t, r.Path)
		return at, above
	}
	rs := splitPath(r.Path)
	ts := splitPath(t)
	tree := append(append(make([]string, 0, len(ts)+1), ts...), "**")
	at = overlap(rs, tree)
	if r.Tree && !at {
		at = overlap(append(rs, beneath), tree)
	}
	for k := 1; k < len(ts) && !above; k++ {
		above = overlap(rs, ts[:k])
	}
	return at, above
}

// patternIndex indexes patterns by the first segment of an absolute
// pattern when it is literal ("etc", "home"); the rest (base-name
// patterns, a first segment with a metacharacter, "**/...") are in any.
// A Ref whose first segment is literal is matched against by[it] and
// any only, in the patterns' order.
type patternIndex struct {
	by  map[string][]int
	any []int
	all []int
}

func indexPatterns(pats []pathPattern) patternIndex {
	ix := patternIndex{by: map[string][]int{}}
	for i := range pats {
		p := &pats[i]
		ix.all = append(ix.all, i)
		if p.segs != nil && len(p.segs) > 1 && p.segs[0] == "" && !p.meta[1] {
			ix.by[p.segs[1]] = append(ix.by[p.segs[1]], i)
		} else {
			ix.any = append(ix.any, i)
		}
	}
	return ix
}

// each calls f with the index of every pattern that could match a Ref
// with the split path segs, in order, until f returns true.
func (ix *patternIndex) each(segs []string, f func(i int) bool) {
	if len(segs) < 2 || hasMeta(segs[1]) || segs[1] == "**" {
		for _, i := range ix.all {
			if f(i) {
				return
			}
		}
		return
	}
	a, b := ix.by[segs[1]], ix.any
	for len(a) > 0 || len(b) > 0 {
		var i int
		if len(b) == 0 || (len(a) > 0 && a[0] < b[0]) {
			i, a = a[0], a[1:]
		} else {
			i, b = b[0], b[1:]
		}
		if f(i) {
			return
		}
	}
}
