package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// GroupGit is the tool group of the git tools.
const GroupGit = "git"

// Limits of the git tools.
const (
	DefaultGitTimeout = time.Minute
	DefaultGitLog     = 20
	MaxGitLog         = 200
	MaxCommitMessage  = 64 << 10
	// DefaultGitAuthor is who the agent's commits are by.
	DefaultGitAuthorName  = "opx agent"
	DefaultGitAuthorEmail = "agent@opx.invalid"
)

// GitConfig configures the git tools.
type GitConfig struct {
	// Launcher is the sandboxing argv prefix, as in ShellConfig; git
	// needs no network, so a launcher without --allow-network will do.
	Launcher []string
	// Timeout bounds each git process; zero means DefaultGitTimeout.
	Timeout time.Duration
	// OutputCap as in ShellConfig; zero means DefaultOutputCap.
	OutputCap int
	// AuthorName and AuthorEmail sign commits as author and committer;
	// empty means DefaultGitAuthorName and DefaultGitAuthorEmail.
	AuthorName, AuthorEmail string
}

// Git implements git_status, git_diff, git_log and git_commit. Each runs
// the git binary (argv only, never a shell) through the sandboxing
// launcher in the workspace, configured so that nothing the repository
// controls can run a program: no hooks, pager, external diff, textconv,
// filter drivers, fsmonitor, signing, credential helpers or transports,
// and no system or global configuration at all.
type Git struct {
	ws  *Workspace
	cfg GitConfig
	env []string
}

// NewGit returns the git tools for a workspace.
func NewGit(ws *Workspace, cfg GitConfig) *Git {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultGitTimeout
	}
	if cfg.OutputCap <= 0 {
		cfg.OutputCap = DefaultOutputCap
	}
	if cfg.AuthorName == "" {
		cfg.AuthorName = DefaultGitAuthorName
	}
	if cfg.AuthorEmail == "" {
		cfg.AuthorEmail = DefaultGitAuthorEmail
	}
	env := []string{
		"PATH=" + CommandPath,
		"LC_ALL=C", // messages the model and replay can rely on
		// No system or global configuration: only the repository's,
		// and gitOverrides over it.
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_PAGER=cat",
		// status and diff must not rewrite the index on the side.
		"GIT_OPTIONAL_LOCKS=0",
		// Paths are paths: no ":(glob)" or ":!" pathspec magic.
		"GIT_LITERAL_PATHSPECS=1",
		// Never look for a repository above the workspace.
		"GIT_CEILING_DIRECTORIES=" + filepath.Dir(ws.Path()),
		"GIT_AUTHOR_NAME=" + cfg.AuthorName, "GIT_AUTHOR_EMAIL=" + cfg.AuthorEmail,
		"GIT_COMMITTER_NAME=" + cfg.AuthorName, "GIT_COMMITTER_EMAIL=" + cfg.AuthorEmail,
	}
	return &Git{ws: ws, cfg: cfg, env: env}
}

// gitOverrides are given on every git command line (-c, which wins over
// every configuration file), each turning off a way for configuration to
// run a program or reach out:
var gitOverrides = []string{
	"core.hooksPath=/dev/null",      // hooks (pre-commit, post-commit, ...)
	"core.fsmonitor=false",          // fsmonitor hook run by status and diff
	"core.pager=cat",                // with --no-pager and GIT_PAGER
	"diff.external=",                // external diff, with --no-ext-diff
	"core.sshCommand=",              // transports (none is used; belt and braces)
	"core.askPass=",                 // password prompts
	"credential.helper=",            // credential helpers (an empty value resets the list)
	"protocol.allow=never",          // every transport, ext:: included
	"commit.gpgSign=false",          // gpg.program on commit
	"tag.gpgSign=false",             // and on tags
	"log.showSignature=false",       // gpg.program on log
	"gc.auto=0",                     // no gc --auto after a commit (it would run pre-auto-gc)
	"maintenance.auto=false",        // nor maintenance
	"core.attributesFile=/dev/null", // no attributes from $HOME
	"core.excludesFile=/dev/null",
	"diff.ignoreSubmodules=all", // submodules have their own config and hooks
	"status.submoduleSummary=false",
	"submodule.recurse=false",
	"color.ui=never",
}

// gitProgramKeys are the <section>.<name>.<key> settings that name a
// program per driver. Their names depend on the repository, so gitRun
// lists the configuration first and blanks every one it finds (an empty
// command means "no filter" / "no driver" to git).
var gitProgramKeys = map[string][]string{
	"filter": {"clean", "smudge", "process"}, // run by add, status and diff on files with a filter attribute
	"diff":   {"command", "textconv"},        // external diff drivers and textconv, with --no-ext-diff --no-textconv
	"merge":  {"driver"},                     // merge drivers
	"hook":   {"command"},                    // configuration-defined hooks of newer gits
}

func stringSchema(desc string) string {
	return `{"type":"string","description":"` + desc + `"}`
}

// Tools implements Executor.
func (g *Git) Tools() []ToolDef {
	obj := func(props string, required ...string) json.RawMessage {
		req, _ := json.Marshal(append([]string{}, required...))
		return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":` + string(req) + `,"additionalProperties":false}`)
	}
	pathProp := `"path":` + stringSchema("limit to this path, relative to the workspace")
	return []ToolDef{
		{Name: "git_status", Group: GroupGit, Description: "Show the working tree status of the workspace's git repository (short format, with the branch).",
			InputSchema: obj("")},
		{Name: "git_diff", Group: GroupGit, Description: "Show unstaged changes, or staged ones with staged=true, optionally for one path.",
			InputSchema: obj(pathProp + `,"staged":{"type":"boolean","description":"show what is staged for the next commit"}`)},
		{Name: "git_log", Group: GroupGit, Description: "Show the most recent commits, optionally only those touching a path.",
			InputSchema: obj(`"n":{"type":"integer","minimum":1,"maximum":` + strconv.Itoa(MaxGitLog) + `,"description":"how many commits; default ` + strconv.Itoa(DefaultGitLog) + `"},` + pathProp)},
		{Name: "git_commit", Group: GroupGit, Mutating: true, WorkspaceWide: true,
			Description: "Stage changes and commit them. With paths, only those paths are staged and committed; without, every change (git add -A).",
			InputSchema: obj(`"message":`+stringSchema("the commit message")+
				`,"paths":{"type":"array","items":{"type":"string"},"description":"paths relative to the workspace; default all changes"}`, "message")},
	}
}

// gitCommands turns a call into the git commands to run, one after
// another, stopping at the first that fails.
func gitCommands(c Call) ([][]string, error) {
	switch c.Tool {
	case "git_status":
		if err := decodeArgs(c.Args, &struct{}{}); err != nil {
			return nil, err
		}
		return [][]string{{"status", "--short", "--branch", "--ignore-submodules=all"}}, nil
	case "git_diff":
		var a struct {
			Path   string `json:"path"`
			Staged bool   `json:"staged"`
		}
		if err := decodeArgs(c.Args, &a); err != nil {
			return nil, err
		}
		cmd := []string{"diff", "--no-ext-diff", "--no-textconv", "--no-color", "--ignore-submodules=all"}
		if a.Staged {
			cmd = append(cmd, "--staged")
		}
		spec, err := gitPathspec(a.Path)
		if err != nil {
			return nil, err
		}
		return [][]string{append(cmd, spec...)}, nil
	case "git_log":
		var a struct {
			N    *int   `json:"n"`
			Path string `json:"path"`
		}
		if err := decodeArgs(c.Args, &a); err != nil {
			return nil, err
		}
		n := DefaultGitLog
		if a.N != nil {
			if *a.N < 1 || *a.N > MaxGitLog {
				return nil, fmt.Errorf("n must be between 1 and %d", MaxGitLog)
			}
			n = *a.N
		}
		spec, err := gitPathspec(a.Path)
		if err != nil {
			return nil, err
		}
		cmd := []string{"log", "--no-color", "--no-decorate", "--no-show-signature", "--no-ext-diff", "--no-textconv",
			"--date=iso-strict", "--format=medium", "-n", strconv.Itoa(n)}
		return [][]string{append(cmd, spec...)}, nil
	case "git_commit":
		var a struct {
			Message string   `json:"message"`
			Paths   []string `json:"paths"`
		}
		if err := decodeArgs(c.Args, &a); err != nil {
			return nil, err
		}
		switch {
		case strings.TrimSpace(a.Message) == "":
			return nil, fmt.Errorf("message must not be empty")
		case len(a.Message) > MaxCommitMessage:
			return nil, fmt.Errorf("the message is over %d bytes", MaxCommitMessage)
		case strings.IndexByte(a.Message, 0) >= 0:
			return nil, fmt.Errorf("the message contains a NUL byte")
		}
		// With paths, stage and commit only those (commit's --only
		// mode); without, stage everything and commit the index.
		var spec []string
		if len(a.Paths) > 0 {
			spec = []string{"--"}
			for _, p := range a.Paths {
				clean, err := gitPath(p)
				if err != nil {
					return nil, err
				}
				spec = append(spec, clean)
			}
		}
		return [][]string{
			append([]string{"add", "-A"}, spec...),
			append([]string{"commit", "--no-verify", "--no-gpg-sign", "--message=" + a.Message}, spec...),
		}, nil
	}
	return nil, fmt.Errorf("the git executor has no such tool")
}

// Execute implements Executor.
func (g *Git) Execute(ctx context.Context, c Call) Result {
	args, err := gitCommands(c)
	if err != nil {
		return Errorf("%s: %v", c.Tool, err)
	}
	overrides, fail := g.configOverrides(ctx)
	if fail != nil {
		fail.Content = c.Tool + ": " + fail.Content
		return *fail
	}
	var out strings.Builder
	truncated := false
	for _, cmd := range args {
		r := g.run(ctx, overrides, cmd)
		if r.failed != "" {
			// git did not run: no exit status, a failure of the tool.
			return Result{Content: c.Tool + ": " + r.failed, IsError: true}
		}
		out.WriteString(r.output)
		truncated = truncated || r.truncated
		if r.exitCode != 0 {
			if r.output != "" && !strings.HasSuffix(r.output, "\n") {
				out.WriteByte('\n')
			}
			out.WriteString("[" + r.status + "]")
			return Result{Content: out.String(), IsError: true, Truncated: truncated, ExitCode: r.exitCode}
		}
	}
	if out.Len() == 0 {
		out.WriteString("(no output)")
	}
	return Result{Content: out.String(), Truncated: truncated}
}

// configOverrides lists the configuration git will read (the
// repository's, with its includes) and returns GIT_CONFIG_* variables
// that blank every per-driver program setting in it (gitProgramKeys).
// They travel in the environment rather than as -c, because a driver's
// name may contain "=", which -c cannot carry.
func (g *Git) configOverrides(ctx context.Context) ([]string, *Result) {
	r := g.run(ctx, nil, []string{"config", "--list", "--name-only", "-z"})
	if r.failed != "" {
		res := Errorf("%s", r.failed)
		return nil, &res
	}
	// Outside a repository the listing is empty, not an error; a
	// configuration git cannot read, or too long to read whole, is
	// refused rather than run unchecked.
	if r.exitCode != 0 {
		res := Result{Content: "cannot check the repository's configuration: " + r.output + "[" + r.status + "]", IsError: true, ExitCode: r.exitCode}
		return nil, &res
	}
	if r.truncated {
		res := Errorf("the repository's configuration is too large to check")
		return nil, &res
	}
	var keys []string
	seen := map[string]bool{}
	add := func(k, v string) {
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k, v)
		}
	}
	for _, name := range strings.Split(r.output, "\x00") {
		section, rest, ok := strings.Cut(name, ".")
		dot := strings.LastIndexByte(rest, '.')
		if !ok || dot < 0 {
			continue // no subsection: not a per-driver setting
		}
		sub, key := rest[:dot], strings.ToLower(rest[dot+1:])
		for _, k := range gitProgramKeys[strings.ToLower(section)] {
			if key == k {
				add(section+"."+sub+"."+key, "")
				if strings.EqualFold(section, "filter") {
					add(section+"."+sub+".required", "false")
				}
			}
		}
	}
	env := []string{"GIT_CONFIG_COUNT=" + strconv.Itoa(len(keys)/2)}
	for i := 0; i < len(keys); i += 2 {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i/2, keys[i]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i/2, keys[i+1]))
	}
	return env, nil
}

// run runs one git command in the workspace through the launcher.
func (g *Git) run(ctx context.Context, extraEnv []string, cmd []string) runResult {
	argv := []string{"git", "--no-pager"}
	for _, o := range gitOverrides {
		argv = append(argv, "-c", o)
	}
	argv = append(argv, cmd...)
	env := mergeEnv(g.env, extraEnv)
	return runSandboxed(ctx, g.cfg.Launcher, argv, g.ws.Path(), env, g.cfg.Timeout, g.cfg.OutputCap)
}

// gitPathspec returns ["--", path] for a path argument, or nothing.
func gitPathspec(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	clean, err := gitPath(p)
	if err != nil {
		return nil, err
	}
	return []string{"--", clean}, nil
}

// gitPath checks a path argument: relative to the workspace, inside it,
// and never something git could take for an option. It is also passed
// after "--" and read literally (GIT_LITERAL_PATHSPECS); the sandbox
// keeps git itself inside the workspace whatever the path.
func gitPath(p string) (string, error) {
	switch {
	case p == "":
		return "", fmt.Errorf("empty path")
	case strings.HasPrefix(p, "-"):
		return "", fmt.Errorf("%q: a path must not start with '-'", p)
	case filepath.IsAbs(p):
		return "", fmt.Errorf("%q: absolute paths are not allowed; use a path relative to the workspace", p)
	case strings.IndexByte(p, 0) >= 0:
		return "", fmt.Errorf("%q: path contains a NUL byte", p)
	}
	clean := path.Clean(p)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("%q: resolves outside the workspace", p)
	}
	return clean, nil
}
