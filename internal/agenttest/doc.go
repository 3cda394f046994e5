// Package agenttest runs the coding-agent CLIs opx audits through their
// hooks (Claude Code, Codex CLI, Gemini CLI) for real, offline, in tests.
// It owns three things:
//
//   - Finding the CLIs .ci/run installs from the npm registry (pinned in
//     .ci/agents/package-lock.json, cached outside the clone and linked
//     as .ci/agents/node_modules): Program. Under CI=true a missing CLI
//     fails the test; elsewhere the test is skipped with InstallCommand.
//   - One scripted fake model server per vendor on 127.0.0.1 (NewAnthropic
//     for Claude Code, NewOpenAI for Codex's Responses API, NewGemini),
//     answering each main model call with the next Turn of its script
//     (Shell, Call, Answer), then FinalText, and recording every request
//     (bodies bounded by MaxBody) so that a test can read back the tool
//     results the CLI sent the model (Server.ToolResults), e.g. a hook's
//     denial reason.
//   - Running a CLI headless once (Run) in a working directory with an
//     isolated HOME, TMPDIR, XDG directories and CLI configuration (never
//     the caller's ~), with given command hooks (for Codex trusted
//     through agents/codextrust) or a configuration the test writes
//     itself into that home (Options.Prepare: opx agents install), in its
//     own process group that is killed
//     when the run ends, times out, or the test is cleaned up; and a hook
//     script that records each invocation's stdin and environment
//     (HookLog).
//
// # What the pinned CLIs send their hooks
//
// Observed through the fakes (TestHooks_Tour and TestHooks_Deny keep the
// tool names and the pre/post fields true); "+" lists fields beyond those
// every event of that CLI carries (Claude and Codex: session_id,
// transcript_path, cwd, hook_event_name; Gemini: the same and timestamp).
//
//	Claude Code 2.1.332 (hook timeout in seconds)
//	SessionStart      at start                 + source ("startup")
//	UserPromptSubmit  the prompt, before model + prompt, prompt_id, permission_mode
//	PreToolUse        before each tool call    + prompt_id, permission_mode, tool_name, tool_input, tool_use_id, effort
//	PostToolUse       after it                 + the same, tool_response (Bash: stdout, stderr, interrupted, isImage, noOutputExpected), duration_ms
//	Stop              end of the model's turn  + last_assistant_message, stop_hook_active, background_tasks, session_crons, prompt_id, permission_mode
//	SessionEnd        at exit                  + reason ("other" for -p), prompt_id
//	env: CLAUDE_PROJECT_DIR, CLAUDE_CODE_SESSION_ID (per the shared note)
//
//	Codex CLI 0.171.0 (~/.codex/hooks.json; runs only trusted hooks; SessionEnd timeout clamped to 3 s)
//	SessionStart      at start                 + model, permission_mode, source ("startup")
//	UserPromptSubmit  the prompt               + prompt, turn_id, model, permission_mode
//	PreToolUse        before each tool call    + turn_id, model, permission_mode, tool_name, tool_input, tool_use_id
//	PostToolUse       after it                 + the same, tool_response (a string: the output)
//	Stop              end of the turn          + last_assistant_message, stop_hook_active, turn_id, model, permission_mode
//	SessionEnd        at exit                  + reason ("other")
//
//	Gemini CLI 0.61.0 (hook timeout in milliseconds; each hook needs a name)
//	SessionStart      at start                 + source ("startup")
//	BeforeAgent       the prompt               + prompt
//	PreCompress       before each model call   + trigger ("auto")
//	BeforeModel, BeforeToolSelection, AfterModel   around each model call + llm_request (the whole request)
//	BeforeTool        before each tool call    + tool_name, tool_input (no call id)
//	AfterTool         after it                 + the same, tool_response (llmContent, returnDisplay)
//	AfterAgent        end of the turn          + prompt, prompt_response, stop_hook_active
//	SessionEnd        at exit                  + reason ("exit")
//
// Tool names in hook stdin, as each pinned version calls them:
//
//	what           Claude Code  Codex CLI                      Gemini CLI
//	shell          Bash         Bash (the model's exec_command; tool_input {"command"})   run_shell_command
//	edit           Edit         apply_patch (freeform custom tool; tool_input {"command": PATCH}) replace
//	write/create   Write        apply_patch                    write_file
//	read           Read         -                              read_file
//	search         Grep         -                              grep_search
//	glob           Glob         -                              glob
//	list           -            -                              list_directory
//
// Declared to the model but not run here: Claude Code 2.1.332 declares
// Agent, Skill, ToolSearch, ListAgents, ReportFindings, ScheduleWakeup,
// Workflow (MultiEdit, LS, NotebookEdit, WebFetch and WebSearch are not
// declared in a headless run); Codex 0.171.0 with model gpt-5.5 declares
// exec_command, write_stdin, request_user_input, apply_patch, view_image,
// the goal tools, tool_search and web_search (apply_patch only for a
// model whose metadata has it: with an unknown model it is absent);
// Gemini CLI 0.61.0 declares update_topic, web_fetch,
// google_web_search, list_background_processes, read_background_output,
// enter_plan_mode, invoke_agent, activate_skill.
//
// # Denials
//
// A pre-tool hook's denial (Claude: exit 2 with the reason on stderr;
// Codex: {"hookSpecificOutput":{"permissionDecision":"deny",...}} on
// stdout; Gemini: {"decision":"deny","reason":...}) stops the call, no
// post-tool hook runs, and the model's next request carries the reason in
// the call's tool result (TestHooks_Deny). Claude also lists the call in
// its JSON result's permission_denials.
//
// # Invariants
//
//   - Nothing of the harness is written into the working directory: the
//     hook configuration lives in the isolated home.
//   - A CLI run never outlives its test: its process group is killed.
//   - A fake reads at most MaxBody bytes of a request.
package agenttest
