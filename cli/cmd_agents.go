package cli

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/opx-dev/opx/agents/codextrust"
	"github.com/opx-dev/opx/agents/hookproto"
	"github.com/opx-dev/opx/agents/install"
	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/urfave/cli/v2"
)

// agentsCommand is the "opx agents" group: the coding-agent CLIs whose
// tool calls opx audits through their hooks.
func agentsCommand() *cli.Command {
	return &cli.Command{
		Name:      "agents",
		Usage:     "hook Claude Code, Codex CLI or Gemini CLI into opx",
		UsageText: "opx agents COMMAND [options] [arguments]",
		Action:    unknownCommand,
		Subcommands: []*cli.Command{
			agentsInstallCommand(),
		},
	}
}

func agentsInstallCommand() *cli.Command {
	return &cli.Command{
		Name:      "install",
		Usage:     "write the hooks that make an agent CLI run opx hook AGENT around each tool call",
		UsageText: "opx agents install AGENT [--workspace DIR | --user] [--uninstall] [--command PATH] [--codex PATH] [--json]",
		Description: "AGENT is claude, codex or gemini. Writes, into the CLI's settings, a hook on each of its session and\n" +
			"tool events that runs `OPX hook AGENT` (OPX: this opx's absolute path, or --command), or `DIR/opx-hook AGENT`\n" +
			"when an executable opx-hook sits in this opx's directory DIR (the small hook binary: it starts faster):\n" +
			"   claude  WORKSPACE/.claude/settings.json, or ~/.claude/settings.json ($CLAUDE_CONFIG_DIR) with --user\n" +
			"   codex   WORKSPACE/.codex/hooks.json, or ~/.codex/hooks.json ($CODEX_HOME) with --user; then records\n" +
			"           the hooks as trusted in Codex's config.toml by asking `codex app-server` (--codex)\n" +
			"   gemini  WORKSPACE/.gemini/settings.json, or ~/.gemini/settings.json ($GEMINI_CLI_HOME) with --user;\n" +
			"           and hooksConfig.enabled: true\n" +
			"The settings are merged: other hooks and settings are kept in their order, an older opx hook is\n" +
			"replaced, and running it again changes nothing. A settings file that is not plain JSON (comments\n" +
			"included) is refused and left as it is. --uninstall removes opx's hooks for AGENT (any opx path) and\n" +
			"nothing else. An opx run with `go run` is refused: its binary does not last (go build or go install\n" +
			"opx first, or give --command). Codex reads a workspace's hooks only in a project it trusts, and\n" +
			"Gemini CLI runs hooks only in a folder it trusts: the output says when that stops the hooks.\n" +
			"opx status and opx doctor show which agents are hooked, where, and whether the hooks will run.\n\n" +
			exitCodesHelp(""),
		Flags: append(ledgerloc.WorkspaceFlags(),
			&cli.BoolFlag{Name: "user", Usage: "write the user's settings instead of the workspace's"},
			&cli.BoolFlag{Name: "uninstall", Usage: "remove opx's hooks for AGENT"},
			&cli.StringFlag{Name: "command", Usage: "the opx (or opx-hook) `PATH` the hooks run (default: the opx-hook beside this opx, else this opx)", TakesFile: true},
			&cli.StringFlag{Name: "codex", Value: "codex", Usage: "the codex `PATH` to ask to trust the hooks (default: codex on $PATH)", TakesFile: true},
			ui.JSONFlag(),
		),
		Action: runAgentsInstall,
	}
}

func runAgentsInstall(c *cli.Context) error {
	args, err := wantArgs(c, 1, 1, "AGENT (claude, codex or gemini)")
	if err != nil {
		return err
	}
	agent, err := hookproto.ParseAgent(args[0])
	if err != nil {
		return usage.Errorf(c, "%v", err)
	}
	_, wsGiven := usage.FlagGiven(c, "workspace")
	if wsGiven && c.Bool("user") {
		return usage.Errorf(c, "--workspace and --user name different settings; give one of them")
	}
	scope := install.User
	if !c.Bool("user") {
		ws, err := ledgerloc.WorkspaceDir(c)
		if err != nil {
			return err
		}
		scope = install.Project(ws)
	}
	exe, why, err := hookExecutable(c)
	if err != nil && !c.Bool("uninstall") {
		return err
	}
	o := install.Options{Agent: agent, Scope: scope, Exe: exe}
	if c.Bool("uninstall") {
		res, err := install.Uninstall(o)
		if err != nil {
			return err
		}
		if c.Bool("json") {
			return ui.WriteJSON(c, res)
		}
		if res.Removed == 0 {
			fmt.Fprintf(c.App.Writer, "no opx hooks for %s in %s: nothing to do\n", agent, res.Path)
			return nil
		}
		fmt.Fprintf(c.App.Writer, "removed %s for %s from %s (%s)\n", ui.Plural(uint64(res.Removed), "opx hook", "opx hooks"), agent, res.Path, strings.Join(res.Events, ", "))
		return nil
	}
	if agent == hookproto.Codex {
		path, err := exec.LookPath(c.String("codex"))
		if err != nil {
			return fmt.Errorf("codex not found (%v): opx asks codex to record the hooks as trusted, without which Codex does not run them; give --codex PATH", err)
		}
		o.Codex = install.CodexServer(path)
	}
	res, err := install.Install(context.Background(), o)
	if err != nil && res.Path == "" {
		return err
	}
	res.CommandWhy = why
	if c.Bool("json") {
		if jerr := ui.WriteJSON(c, res); jerr != nil {
			return jerr
		}
		return err
	}
	printInstall(c, res)
	return err
}

// hookExecutable is the program the hooks run and why: --command, else
// the small opx-hook binary when an executable one sits beside this opx
// (it starts in a few milliseconds, where opx takes about fifteen more
// on every hook), else this opx unless it is a go run binary.
func hookExecutable(c *cli.Context) (exe, why string, err error) {
	if p, ok := usage.FlagGiven(c, "command"); ok {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", "", err
		}
		return abs, "given by --command", install.CheckCommand(abs)
	}
	exe, err = install.Executable()
	if errors.Is(err, install.ErrBuildCache) {
		return "", "", &usage.Explained{Err: err, Msg: fmt.Sprintf(
			"this opx (%s) was built by go run or go test, and the go command deletes it: the hooks would stop working.\n"+
				"Build or install opx first (go build -o ~/bin/ ./cli/opx ./cli/opx-hook, or go install ./cli/opx ./cli/opx-hook) and run that one, or give --command PATH",
			strings.TrimPrefix(err.Error(), install.ErrBuildCache.Error()+": "))}
	}
	if err != nil {
		return "", "", err
	}
	if hook := filepath.Join(filepath.Dir(exe), install.HookProgram); install.CheckCommand(hook) == nil {
		return hook, "the opx-hook beside this opx: it starts in a few milliseconds, where opx hook takes about 15 ms more on every hook", nil
	}
	return exe, fmt.Sprintf("this opx: no %s beside it, which would start faster on every hook "+
		"(build both into one directory: go build -o DIR ./cli/opx ./cli/opx-hook)", install.HookProgram), nil
}

func printInstall(c *cli.Context, res install.Result) {
	w := c.App.Writer
	switch {
	case res.Written && res.Removed > 0:
		fmt.Fprintf(w, "wrote %s (replacing %s)\n", res.Path, ui.Plural(uint64(res.Removed), "older opx hook", "older opx hooks"))
	case res.Written:
		fmt.Fprintf(w, "wrote %s\n", res.Path)
	default:
		fmt.Fprintf(w, "%s already has opx's hooks: unchanged\n", res.Path)
	}
	fmt.Fprintf(w, "  %s runs: %s\n    (%s)\n  on: %s\n", res.Agent, res.Command, res.CommandWhy, strings.Join(res.Events, ", "))
	if res.EnabledHooks {
		fmt.Fprintf(w, "  turned Gemini CLI's hooks on (hooksConfig.enabled was off)\n")
	}
	if len(res.Trusted) > 0 {
		fmt.Fprintf(w, "trusted by Codex (recorded in %s):\n", res.TrustFile)
		for _, h := range res.Trusted {
			fmt.Fprintf(w, "  %s %s\n", h.Key, h.CurrentHash)
		}
	}
	for _, n := range res.Notes {
		fmt.Fprintf(w, "%s %s\n", ui.Red(w, "but:"), n)
	}
}

// codexServer is the codex `opx doctor` and `opx status --verbose` ask
// about trust: codex on $PATH, or nil.
func codexServer() *codextrust.Server {
	path, err := exec.LookPath("codex")
	if err != nil {
		return nil
	}
	return install.CodexServer(path)
}
