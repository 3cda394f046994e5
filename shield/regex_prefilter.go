package shield

import (
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
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
		re = re.Simplify()
		if alts, ok := branches(re); ok {
			r.pre = newConjunctive(alts)
		}
		if lits, ok := required(re); ok && r.pre == nil {
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
		// the result is the most selective of the sets concatSets finds
		sets, cur, allExact := concatSets(re.Sub)
		if allExact {
			return cur, true, true
		}
		var best []string
		for _, l := range sets {
			if best == nil || better(l, best) {
				best = l
			}
		}
		return best, false, best != nil
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
		}
		if exact && len(all) <= maxRequired {
			return all, true, true
		}
		// as a set of literals one of which a match contains: those that
		// contain another are redundant, and a literal's first bytes are
		// in the text whenever it is
		all = minimal(all)
		for _, n := range []int{6, 3} {
			if len(all) <= maxRequired {
				break
			}
			all = minimal(prefixes(all, n))
		}
		if len(all) > maxRequired {
			return nil, false, false
		}
		return all, false, true
	}
	return nil, false, false
}

// minimal drops the literals that contain another of lits.
func minimal(lits []string) []string {
	sorted := append([]string(nil), lits...)
	sort.Slice(sorted, func(i, j int) bool { return len(sorted[i]) < len(sorted[j]) })
	var out []string
	for _, l := range sorted {
		redundant := false
		for _, k := range out {
			if strings.Contains(l, k) {
				redundant = true
				break
			}
		}
		if !redundant {
			out = append(out, l)
		}
	}
	return out
}

// prefixes cuts each literal to its first n bytes.
func prefixes(lits []string, n int) []string {
	out := make([]string, len(lits))
	for i, l := range lits {
		out[i] = l[:min(n, len(l))]
	}
	return out
}

// concatSets are the literal sets a concatenation's children require,
// each on its own (runs of exact children multiplied into exact sets,
// bounded): every match contains one of each set. cur is the last run;
// allExact, every child was exact and cur is the whole.
func concatSets(subs []*syntax.Regexp) (sets [][]string, cur []string, allExact bool) {
	consider := func(lits []string) {
		if !containsString(lits, "") {
			sets = append(sets, lits)
		}
	}
	cur, allExact = []string{""}, true
	for _, sub := range subs {
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
	if !allExact {
		consider(cur)
	}
	return sets, cur, allExact
}

// branches is the prefilter as alternatives of conjunctions: for each
// top-level alternative of re, the literal sets it requires together
// (concatSets); a text can match only if, for some alternative, it
// holds a literal of each of its sets. False when an alternative
// requires nothing.
func branches(re *syntax.Regexp) ([][][]string, bool) {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	alts := []*syntax.Regexp{re}
	if re.Op == syntax.OpAlternate {
		alts = re.Sub
	}
	var out [][][]string
	for _, a := range alts {
		for a.Op == syntax.OpCapture {
			a = a.Sub[0]
		}
		var sets [][]string
		if a.Op == syntax.OpConcat {
			all, cur, exact := concatSets(a.Sub)
			if exact {
				all = [][]string{cur}
			}
			for _, l := range all {
				if !containsString(l, "") {
					sets = append(sets, minimal(l))
				}
			}
		} else if lits, _, ok := req(a); ok && !containsString(lits, "") {
			sets = [][]string{minimal(lits)}
		}
		if len(sets) == 0 {
			return nil, false
		}
		out = append(out, sets)
	}
	return out, true
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

// prefilter finds, without case, whether text holds one of its literals
// or, with alts, whether for one of the alternatives it holds a literal
// of each set.
type prefilter struct {
	first [256]bool     // the literals' first bytes, both cases
	by    [256][]string // literals by their (lower case) first byte
	// conjunctive form (newConjunctive): lits by index, byIx their
	// indexes by first byte, alts the alternatives' sets of indexes
	lits []string
	byIx [256][]int
	alts [][][]int
}

// maxConjunctive bounds the distinct literals of a conjunctive
// prefilter (its presence bits).
const maxConjunctive = 512

// newConjunctive is the prefilter of alts (branches), nil when they
// hold more than maxConjunctive distinct literals.
func newConjunctive(alts [][][]string) *prefilter {
	p := &prefilter{}
	index := map[string]int{}
	for _, sets := range alts {
		var a [][]int
		for _, set := range sets {
			var ix []int
			for _, l := range set {
				k, ok := index[l]
				if !ok {
					k = len(p.lits)
					index[l] = k
					p.lits = append(p.lits, l)
					c := l[0]
					p.first[c] = true
					if 'a' <= c && c <= 'z' {
						p.first[c-'a'+'A'] = true
					}
					p.byIx[c] = append(p.byIx[c], k)
				}
				ix = append(ix, k)
			}
			a = append(a, ix)
		}
		p.alts = append(p.alts, a)
	}
	if len(p.lits) > maxConjunctive {
		return nil
	}
	return p
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

// may reports whether s holds one of the literals (in conjunctive form,
// one of each set of an alternative), or a byte outside ASCII (then the
// expression decides).
func (p *prefilter) may(s string) bool {
	if p.alts != nil {
		return p.mayAll(s)
	}
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

// mayAll is may in conjunctive form: which literals s holds, then
// whether an alternative has one of each of its sets.
func (p *prefilter) mayAll(s string) bool {
	var seen [maxConjunctive / 64]uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return true
		}
		if !p.first[c] {
			continue
		}
		found := false
		for _, k := range p.byIx[lowerASCII(c)] {
			if seen[k/64]&(1<<(k%64)) == 0 && hasPrefixFold(s[i:], p.lits[k]) {
				seen[k/64] |= 1 << (k % 64)
				found = true
			}
		}
		if found && p.satisfied(&seen) {
			return true // the rest of s is not needed
		}
	}
	return false
}

// satisfied reports whether the literals seen hold one of each set of an
// alternative.
func (p *prefilter) satisfied(seen *[maxConjunctive / 64]uint64) bool {
	for _, sets := range p.alts {
		all := true
		for _, set := range sets {
			one := false
			for _, k := range set {
				if seen[k/64]&(1<<(k%64)) != 0 {
					one = true
					break
				}
			}
			if !one {
				all = false
				break
			}
		}
		if all {
			return true
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
