package shield

import (
	"regexp"
	"regexp/syntax"
)

// Tier 1's regular expressions with a prefilter. Most are
// case-insensitive alternations of words, run over every changed line;
// Go's regexp cannot skip ahead to a literal under (?i), so a line that
// holds none of the words still costs the backtracker's full walk. An rx
// first asks a necessary condition computed from the expression's syntax
// (required): every match contains one of a few literals (compared
// without case). A line holding none of them cannot match, and the
// answer is the one the expression gives, without running it. Text with
// a byte outside ASCII is always given to the expression (case folding
// outside ASCII, K and the Kelvin sign, is not the scanner's to judge).

// rx is a compiled expression and its prefilter. The methods tier 1
// uses on text are prefiltered; the others are regexp's.
type rx struct {
	*regexp.Regexp
	pre *prefilter // nil: no necessary literal, always run
}

// allRx are the expressions mustRx compiled (for the prefilter's test).
var allRx []*rx

// mustRx compiles expr (regexp.MustCompile) and its prefilter. For
// package-level expressions only (compiled once).
func mustRx(expr string) *rx {
	r := &rx{Regexp: regexp.MustCompile(expr)}
	if re, err := syntax.Parse(expr, syntax.Perl); err == nil {
		if lits, ok := required(re.Simplify()); ok {
			r.pre = newPrefilter(lits)
		}
	}
	allRx = append(allRx, r)
	return r
}

// may reports whether s can hold a match (false: it cannot).
func (r *rx) may(s string) bool { return r.pre == nil || r.pre.may(s) }

func (r *rx) MatchString(s string) bool { return r.may(s) && r.Regexp.MatchString(s) }

func (r *rx) Match(b []byte) bool { return (r.pre == nil || r.pre.may(string(b))) && r.Regexp.Match(b) }

func (r *rx) FindString(s string) string {
	if !r.may(s) {
		return ""
	}
	return r.Regexp.FindString(s)
}

func (r *rx) FindStringIndex(s string) []int {
	if !r.may(s) {
		return nil
	}
	return r.Regexp.FindStringIndex(s)
}

func (r *rx) FindStringSubmatch(s string) []string {
	if !r.may(s) {
		return nil
	}
	return r.Regexp.FindStringSubmatch(s)
}

func (r *rx) FindStringSubmatchIndex(s string) []int {
	if !r.may(s) {
		return nil
	}
	return r.Regexp.FindStringSubmatchIndex(s)
}

func (r *rx) FindAllString(s string, n int) []string {
	if !r.may(s) {
		return nil
	}
	return r.Regexp.FindAllString(s, n)
}

func (r *rx) FindAllStringIndex(s string, n int) [][]int {
	if !r.may(s) {
		return nil
	}
	return r.Regexp.FindAllStringIndex(s, n)
}

func (r *rx) FindAllStringSubmatch(s string, n int) [][]string {
	if !r.may(s) {
		return nil
	}
	return r.Regexp.FindAllStringSubmatch(s, n)
}

func (r *rx) FindAllStringSubmatchIndex(s string, n int) [][]int {
	if !r.may(s) {
		return nil
	}
	return r.Regexp.FindAllStringSubmatchIndex(s, n)
}

func (r *rx) ReplaceAllString(src, repl string) string {
	if !r.may(src) {
		return src
	}
	return r.Regexp.ReplaceAllString(src, repl)
}

func (r *rx) ReplaceAllStringFunc(src string, repl func(string) string) string {
	if !r.may(src) {
		return src
	}
	return r.Regexp.ReplaceAllStringFunc(src, repl)
}

// maxRequired bounds the literals of a prefilter (beyond, none is kept).
const maxRequired = 256

// required returns literals (lower case ASCII) one of which every match
// of re contains, as text compared without case, in text that is all
// ASCII; false when there is no such set (re can match without any
// literal: an empty match, a large class, a repetition that may be
// absent).
func required(re *syntax.Regexp) ([]string, bool) {
	lits, _, ok := req(re)
	if !ok || containsString(lits, "") {
		return nil, false
	}
	return lits, true
}

// req is required's analysis. exact: every match, in ASCII text, is one
// of lits (which may hold ""), compared without case; ok: every match
// contains one of them. exact implies ok.
func req(re *syntax.Regexp) (lits []string, exact, ok bool) {
	switch re.Op {
	case syntax.OpNoMatch:
		return nil, true, true // matches nothing
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return []string{""}, true, true // matches the empty string only
	case syntax.OpLiteral:
		b := make([]byte, 0, len(re.Rune))
		for _, c := range re.Rune {
			if c >= 0x80 {
				return nil, false, false
			}
			b = append(b, lowerASCII(byte(c)))
		}
		return []string{string(b)}, true, true
	case syntax.OpCharClass:
		// in ASCII text only the class's ASCII members can match
		var lits []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if lo >= 0x80 {
				continue
			}
			hi = min(hi, 0x7f)
			for c := lo; c <= hi; c++ {
				l := string([]byte{lowerASCII(byte(c))})
				if !containsString(lits, l) {
					lits = append(lits, l)
				}
				if len(lits) > 4 {
					return nil, false, false
				}
			}
		}
		return lits, true, true
	case syntax.OpCapture:
		return req(re.Sub[0])
	case syntax.OpQuest:
		lits, exact, _ := req(re.Sub[0])
		if !exact || len(lits) >= maxRequired {
			return nil, false, false
		}
		if !containsString(lits, "") {
			lits = append(lits, "")
		}
		return lits, true, true
	case syntax.OpPlus:
		lits, _, ok := req(re.Sub[0])
		return lits, false, ok
	case syntax.OpRepeat:
		if re.Min >= 1 {
			lits, _, ok := req(re.Sub[0])
			return lits, false, ok
		}
		return nil, false, false
	case syntax.OpConcat:
		// runs of exact children multiply into exact sets (bounded);
		// the result is the most selective set found
		var best []string
		found := false
		consider := func(lits []string) {
			if !containsString(lits, "") && (!found || better(lits, best)) {
				best, found = lits, true
			}
		}
		cur, allExact := []string{""}, true
		for _, sub := range re.Sub {
			lits, exact, ok := req(sub)
			if exact && len(cur)*len(lits) <= maxRequired {
				cur = product(cur, lits)
				continue
			}
			allExact = false
			consider(cur)
			cur = []string{""}
			if exact {
				cur = lits
			} else if ok {
				consider(lits)
			}
		}
		if allExact {
			return cur, true, true
		}
		consider(cur)
		return best, false, found
	case syntax.OpAlternate:
		var all []string
		exact := true
		for _, s := range re.Sub {
			lits, ex, ok := req(s)
			if !ok {
				return nil, false, false
			}
			exact = exact && ex
			for _, l := range lits {
				if !containsString(all, l) {
					all = append(all, l)
				}
			}
			if len(all) > maxRequired {
				return nil, false, false
			}
		}
		return all, exact, true
	}
	return nil, false, false
}

// product is every a followed by every b.
func product(a, b []string) []string {
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			if l := x + y; !containsString(out, l) {
				out = append(out, l)
			}
		}
	}
	return out
}

// better reports whether literal set a filters more than b: a longer
// shortest literal, then fewer literals.
func better(a, b []string) bool {
	ma, mb := shortest(a), shortest(b)
	if ma != mb {
		return ma > mb
	}
	return len(a) < len(b)
}

func shortest(lits []string) int {
	n := 1 << 30
	for _, l := range lits {
		n = min(n, len(l))
	}
	return n
}

func containsString(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// prefilter finds, without case, whether text holds one of its literals.
type prefilter struct {
	first [256]bool     // the literals' first bytes, both cases
	by    [256][]string // literals by their (lower case) first byte
}

func newPrefilter(lits []string) *prefilter {
	p := &prefilter{}
	for _, l := range lits {
		c := l[0]
		p.first[c] = true
		if 'a' <= c && c <= 'z' {
			p.first[c-'a'+'A'] = true
		}
		p.by[c] = append(p.by[c], l)
	}
	return p
}

// may reports whether s holds one of the literals, or a byte outside
// ASCII (then the expression decides).
func (p *prefilter) may(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return true
		}
		if !p.first[c] {
			continue
		}
		for _, l := range p.by[lowerASCII(c)] {
			if hasPrefixFold(s[i:], l) {
				return true
			}
		}
	}
	return false
}

// hasPrefixFold reports whether s begins with lit (lower case ASCII),
// ASCII case ignored.
func hasPrefixFold(s, lit string) bool {
	if len(s) < len(lit) {
		return false
	}
	for k := 0; k < len(lit); k++ {
		if lowerASCII(s[k]) != lit[k] {
			return false
		}
	}
	return true
}
