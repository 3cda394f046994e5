// Package install writes, removes and inspects the hook configuration
// that makes Claude Code, Codex CLI and Gemini CLI run `opx hook AGENT`
// before and after each tool call and at their session-level events
// (`opx agents install`, and the hook lines of `opx status` and
// `opx doctor`). It owns the settings files' hook entries and, for
// Codex, their trust; the command line above it is thin.
//
// It is file logic: it reads and rewrites one JSON settings file per call,
// and for Codex asks a `codex app-server` child (agents/codextrust) to
// record the hooks as trusted or to say whether they are. It imports
// agents/hookproto, agents/codextrust, internal/regularfile and the shell
// parser; never the engine or the CLI.
//
// # Where and what
//
//	            file (workspace / user)                         events (* = matcher "*")                  timeout
//	claude      .claude/settings.json / ~/.claude/settings.json  SessionStart UserPromptSubmit PreToolUse*  600 s
//	                                                            PostToolUse* PostToolUseFailure* Stop SessionEnd
//	codex       .codex/hooks.json / ~/.codex/hooks.json          SessionStart UserPromptSubmit PreToolUse*  600 s (none on
//	                                                            PostToolUse* Stop SessionEnd               SessionEnd: Codex clamps it to 3 s)
//	gemini      .gemini/settings.json / ~/.gemini/settings.json  SessionStart BeforeAgent BeforeTool*       600000 ms, name "opx",
//	                                                            AfterTool* AfterAgent SessionEnd           hooksConfig.enabled true
//
// CLAUDE_CONFIG_DIR, CODEX_HOME and GEMINI_CLI_HOME move the user's files
// as they move the CLIs'. Each event gets one group of opx's with one
// command handler, `EXE hook AGENT`, EXE the absolute path of opx quoted
// for the shell; or `EXE AGENT` when EXE is the small hook binary
// opx-hook (IsHookProgram: by its name), which starts faster. Matchers are written only on tool events: Codex drops a
// matcher elsewhere, and the pinned CLIs fire the other events without
// one (internal/agenttest's tour shows it).
//
// A workspace's Codex hooks file is read by Codex only in a project it
// trusts; a Gemini CLI folder it does not trust runs no settings hooks at
// all. Install writes the file either way and says so (Result.Notes, or
// for Codex an error: its hooks must also be trusted, and trust is
// recorded only for hooks Codex lists).
//
// # Invariants
//
//   - An opx hook is recognised by its command alone: the first word's
//     base name is opx (or it is the opx being installed) and `hook AGENT`
//     follows, or its base name is opx-hook and AGENT follows. Either
//     form replaces the other. Nothing else is ever removed or replaced.
//   - Merging keeps every other member of the file, at every level, in its
//     order; an older opx group is replaced where it stood; an opx handler
//     inside someone else's group is taken out of it, the group kept.
//   - Install run twice leaves the same bytes; a run that changes nothing
//     does not write. Uninstall after Install leaves a document equal to
//     the one before (re-encoded with two-space indentation, as the CLIs
//     write their own). A Gemini hooksConfig of only {"enabled": true},
//     its default, is taken out even if the user wrote it.
//   - A file that is not one JSON object, has comments, duplicate member
//     names, invalid UTF-8, a "hooks" (or an opx event) of another shape,
//     or more than MaxSettingsBytes, is refused with ErrSettings and left
//     untouched.
//   - Files are replaced atomically (regularfile.WriteAtomic), keeping their
//     mode. In a workspace a settings file or directory that is a symbolic
//     link is refused (ErrSymlink): a repository could aim it at any file of
//     the user's. In the user's directory a link is followed.
//   - Codex: Install succeeds only after Codex lists every opx hook of the
//     file as trusted; the hooks of others keep their trust.
//   - Inspect never writes, and starts codex only when told to
//     (InspectOptions.CheckCodexTrust).
package install
