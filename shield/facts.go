package shield

import "strings"

// Facts are what an action does, as the tiers judge it: derived from a
// tool's arguments (engine/judge.ShieldEvaluator), or from every simple command
// of a parsed shell line (Shield.CommandFacts). The contract: every path
// is absolute and cleaned by the one resolver, Shield.ResolvePath, for a
// tool's arguments and a command's words alike, so the rules never see
// "~", "..", an alias of another path, or a relative one; a path that
// cannot be resolved is not a Ref but an Unknown.
type Facts struct {
	Reads    []Ref
	Writes   []Ref // created, changed, truncated, moved to, permissions changed
	Deletes  []Ref // removed, moved away
	Requests []Request
	// Runs are the programs the action runs: each simple command of a
	// shell line (nested ones included), or the program a tool runs.
	Runs []Run
	// Texts are text the action passes along or carries: file content,
	// memory entries, request bodies, interpreter string literals,
	// decoded payloads.
	Texts []Text
	// Execs are code an action runs that is not written in the action
	// itself but fetched or produced at run time: a shell or interpreter
	// reading a pipeline fed by a network tool (curl URL | sh), a
	// process or command substitution (bash <(curl URL), eval
	// "$(wget -qO- URL)"), a script the same line downloaded (curl -o
	// x.sh URL && sh x.sh), decoded data (base64 -d | sh), a reverse
	// shell (nc -e /bin/sh HOST PORT). Added by Shield.CommandFacts.
	Execs []Exec
	// Supply are changes to where code comes from, or to code that runs
	// at build, install or test time (shield/manifest): those a file tool
	// makes to a manifest, computed by the engine before the call from
	// the file as it is (judge.ShieldEvaluator.Manifests, recorded with
	// the proposal), and those a package manager's command or an
	// environment setting of the line makes (CommandFacts).
	Supply []Supply
	// Removed is text a change takes out of a file (an edit's old
	// text), Source "content:<path>" like the Text of what it puts in:
	// a rule judging a change's shape (appsec:control-weakened) reads
	// both sides. No other rule reads it: what leaves a file is not
	// carried anywhere.
	Removed []Text
	// Searches are the patterns a search tool looks for in the files it
	// reads (search_files' pattern): what it hunts for, not text it
	// carries (rules 20).
	Searches []string
	// Unknown are reasons the action cannot be fully understood (a line
	// that does not parse, a command whose name is computed, a write to
	// a path that cannot be known): each is a reason to ask.
	Unknown []string
}

// Ref is a path an action touches.
type Ref struct {
	// Path is absolute and cleaned; with Glob it is a pattern (path.Match
	// syntax per segment, and "**" for any number of segments, as
	// CommandFacts writes what find -name selects: "/ws/**/*.pyc")
	// naming every path it matches.
	Path string
	Glob bool
	// Tree says the action touches everything beneath Path too
	// (recursive reads, copies and deletes).
	Tree bool
	// By names the command or tool that touches it, for reasons.
	By string
	// Via, when set, is the path as the action wrote it, and Path is
	// where the filesystem resolves it (through symlinks, beneath the
	// workspace, when the action was judged): the action touches both,
	// and reasons say the symlink led there.
	Via string
}

// Request is a network request or connection an action makes.
type Request struct {
	Host   string // lower case, without port or brackets; "" when it cannot be known
	Method string // upper case for HTTP ("GET", "POST", ...); "" for raw connections or when unknown
	// Data says the request carries data beyond a plain URL: a body, an
	// upload, standard input, form fields, or a URL with parts computed
	// at run time.
	Data bool
	// Files are the absolute paths whose content it sends.
	Files []string
	// Query is the URL's raw query string when the URL is known (and its
	// last path segment, when that alone reads as data: queryOf), for
	// flow:query-data.
	Query string
	By    string
}

// Run is one program an action runs.
type Run struct {
	// Name is the program's base name ("" when computed at run time);
	// Argv its arguments as far as they are known (Argv[0] as written).
	Name string
	Argv []string
	// Line is the simple command as written, for reasons and policy
	// regular expressions.
	Line string
	// Via says what it is nested in (shellx.Command.Via): "" at the top
	// level.
	Via string
}

// Exec is code run that is not written in the action (see Facts.Execs).
type Exec struct {
	Runner string // the program that runs it: "sh", "python3", "eval", "source"
	From   string // the program that produced it: "curl", "wget", "base64", "cat"
	// Remote says From fetched it from the network (or a network peer
	// drives it, as with nc -e): remote code run on this machine.
	Remote bool
	Line   string // the runner's simple command as written
}

// Text is text an action carries.
type Text struct {
	Source string // "content", "memory", "body", "python -c", "base64", ...
	Body   string
}

// Supply is one change to where code comes from or to code that runs
// later (Facts.Supply).
type Supply struct {
	Path   string // the file changed (absolute), or "" for a command's own settings
	Kind   string // manifest.KindSource, KindRuns or KindChecksum; "" with Error
	Key    string // what changed: "replace golang.org/x/net", "scripts.postinstall", "GOPROXY"
	Detail string
	By     string // the tool or program
	// Error says why the change could not be judged (a manifest that
	// does not parse, or is over the size parsed).
	Error string
}

// removedText is what the same change takes out of the file source
// names, or "".
func removedText(f *Facts, source string) string {
	var b strings.Builder
	for _, r := range f.Removed {
		if r.Source == source {
			b.WriteString(r.Body)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
