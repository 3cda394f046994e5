package shield

import (
	"strings"
	"sync"

	"github.com/opx-dev/opx/shield/shellx"
)

// spec says which options of a program take a value, so that operands
// can be told from option values. Specs are built once, at start-up.
type spec struct {
	valued map[string]bool // "-o", "--output"
	// posix stops option parsing at the first operand (wrappers, ssh,
	// xargs: what follows is another program's argv).
	posix bool
	// long says single-dash words are whole options (Go's flag
	// package: -exec, -run).
	long bool
}

func newSpec(valued string) *spec {
	sp := &spec{valued: map[string]bool{}}
	for _, v := range strings.Fields(valued) {
		sp.valued[v] = true
	}
	return sp
}

// goSpec is a spec for Go-style flags (-name, -name=value, -name value).
func goSpec(valued string) *spec {
	sp := newSpec(valued)
	sp.long = true
	return sp
}

func posixSpec(valued string) *spec {
	sp := newSpec(valued)
	sp.posix = true
	return sp
}

// specs caches the specs handlers build from literal option lists, by
// kind, so that a call builds none (sync.Maps: Shield is used
// concurrently).
var specs [3]sync.Map

// cachedSpec is newSpec (kind 0), posixSpec (1) or goSpec (2) of valued,
// built once.
func cachedSpec(kind byte, valued string) *spec {
	if sp, ok := specs[kind].Load(valued); ok {
		return sp.(*spec)
	}
	var sp *spec
	switch kind {
	case 1:
		sp = posixSpec(valued)
	case 2:
		sp = goSpec(valued)
	default:
		sp = newSpec(valued)
	}
	specs[kind].Store(valued, sp)
	return sp
}

// opt is one option as given.
type opt struct {
	name string // "-x" or "--long"
	val  shellx.Word
	has  bool // val was given
}

// shortNames are "-a".."-z" and friends without allocating per call.
var shortNames [256]string

func init() {
	for i := range shortNames {
		shortNames[i] = "-" + string(rune(i))
	}
}

// parse splits args into options and operands.
func (sp *spec) parse(args []shellx.Word) (opts []opt, ops []shellx.Word) {
	done := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		t := w.Text
		if done || len(t) < 2 || t[0] != '-' || t == inputWord {
			ops = append(ops, w)
			if sp.posix {
				done = true
			}
			continue
		}
		if t == "--" {
			done = true
			continue
		}
		if strings.HasPrefix(t, "--") || sp.long {
			name, val, eq := strings.Cut(t, "=")
			switch {
			case eq:
				opts = append(opts, opt{name: name, val: shellx.Word{Text: val, Dynamic: w.Dynamic, Glob: w.Glob}, has: true})
			case sp.valued[name] && i+1 < len(args):
				i++
				opts = append(opts, opt{name: name, val: args[i], has: true})
			default:
				opts = append(opts, opt{name: name})
			}
			continue
		}
		for j := 1; j < len(t); j++ {
			n := shortNames[t[j]]
			if !sp.valued[n] {
				opts = append(opts, opt{name: n})
				continue
			}
			switch {
			case j+1 < len(t):
				opts = append(opts, opt{name: n, val: shellx.Word{Text: t[j+1:], Dynamic: w.Dynamic, Glob: w.Glob}, has: true})
			case i+1 < len(args):
				i++
				opts = append(opts, opt{name: n, val: args[i], has: true})
			default:
				opts = append(opts, opt{name: n})
			}
			break
		}
	}
	return opts, ops
}

// has reports whether any of names was given.
func has(opts []opt, names ...string) bool {
	for i := range opts {
		for _, n := range names {
			if opts[i].name == n {
				return true
			}
		}
	}
	return false
}

// vals returns the values of the options named.
func vals(opts []opt, names ...string) []shellx.Word {
	var out []shellx.Word
	for i := range opts {
		if !opts[i].has {
			continue
		}
		for _, n := range names {
			if opts[i].name == n {
				out = append(out, opts[i].val)
				break
			}
		}
	}
	return out
}

// val returns the last value of the options named.
func val(opts []opt, names ...string) (shellx.Word, bool) {
	v := vals(opts, names...)
	if len(v) == 0 {
		return shellx.Word{}, false
	}
	return v[len(v)-1], true
}

// word is a static word.
func word(t string) shellx.Word { return shellx.Word{Text: t} }

// subcommand returns the first operand and the args after it, skipping
// options before it (valued ones with their values).
func subcommand(sp *spec, args []shellx.Word) (string, []shellx.Word, []opt) {
	var opts []opt
	for i := 0; i < len(args); i++ {
		t := args[i].Text
		if t == "--" {
			if i+1 < len(args) {
				return args[i+1].Text, args[i+2:], opts
			}
			return "", nil, opts
		}
		if len(t) > 1 && t[0] == '-' {
			o, _ := sp.parse(args[i : i+1])
			if len(o) > 0 && sp.valued[o[len(o)-1].name] && !o[len(o)-1].has && i+1 < len(args) {
				o[len(o)-1].val, o[len(o)-1].has = args[i+1], true
				i++
			}
			opts = append(opts, o...)
			continue
		}
		return t, args[i+1:], opts
	}
	return "", nil, opts
}
