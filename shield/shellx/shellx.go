package shellx

// Word is one shell word after quote removal.
type Word struct {
	// Text is the word's value: quotes removed, escapes and $'...'
	// decoded, variables assigned a literal value earlier in the same
	// line substituted, $HOME and a leading unquoted ~ written as "~".
	// Parts whose value cannot be known (other parameters, command
	// substitutions, arithmetic) are kept as written ("$X", "$(...)").
	Text string
	// Dynamic says Text holds a part whose value is unknown statically.
	Dynamic bool
	// Glob says the word has an unquoted *, ? or [...]: the shell
	// expands it to every path it matches.
	Glob bool
}

// Redirect is one redirection of a command.
type Redirect struct {
	Op string // as written: ">", ">>", ">|", "&>", "&>>", "<", "<>", "<<", "<<-", "<<<", ">&", "<&"
	Fd string // the file descriptor as written ("" for the default)
	// Target is the file redirected to or from (or the fd for >& and
	// <&); for <<, <<- and <<< it is the text fed to the command.
	Target Word
	Write  bool // Target is a file the redirection creates or changes
	Read   bool // Target is a file the redirection reads
}

// Assign is a NAME=value word.
type Assign struct {
	Name  string
	Value Word
}

// Command is one simple command.
type Command struct {
	// Args is argv; Args[0] the program as written. Empty for a line
	// of assignments or redirections only.
	Args      []Word
	Assigns   []Assign
	Redirects []Redirect
	// PipeIn is the index in Analysis.Commands of the command whose
	// standard output this one reads (the one before it in a
	// pipeline), or -1.
	PipeIn int
	// Via says how the command is reached: "" at the top level, else
	// what it is nested in, outermost first, separated by " > ": "$()",
	// "``", "<()", ">()", "sh -c", "bash -c", "eval", "sh <<" (a
	// here-document fed to a shell), "| sh" (text piped into a shell),
	// "base64" (decoded data), "(1)", "(2)"... (the first, second
	// subshell), "python -c" (a command in a payload's
	// string literal), "function f", "xargs", "find -exec"...
	Via string
	// Depth is how many payloads deep it is (0: the line itself).
	Depth int
	// Line is the command's source text as written, for reasons and
	// policy regular expressions.
	Line string
}

// Literal is a string found in an interpreter payload or decoded data.
type Literal struct {
	// Source names where it comes from: "python -c", "node -e",
	// "perl -e", "ruby -e", "base64", "hex", "printf".
	Source string
	Text   string
}

// Analysis is what a line runs.
type Analysis struct {
	// Commands are every simple command, in source order, nested ones
	// after the command that holds them.
	Commands []Command
	// Literals are the string literals of interpreter payloads and the
	// text of decoded data.
	Literals []Literal
	// Opaque are what the line runs whose text cannot be read statically:
	// an interpreter payload that executes code or a command it builds at
	// run time (exec(''.join(...)), eval(x), os.system(cmd)). Each names
	// where; the caller treats them as not understood.
	Opaque []string
	// Err is set when the line, or a shell payload within it, cannot be
	// parsed, or a limit was reached: what it runs is then not fully
	// known, and Shield escalates. Commands still holds what was read.
	Err error
}

// Limits bound the work Parse does on any line.
const (
	MaxLineBytes = 1 << 20 // a longer line is not parsed (Err)
	MaxDepth     = 4       // payloads within payloads (sh -c within $() ...) read
	MaxCommands  = 4096    // simple commands listed
	MaxLiterals  = 4096    // literals listed
)
