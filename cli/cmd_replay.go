package cli

import (
	"errors"
	"fmt"
	"github.com/opx-dev/opx/cli/internal/liveledger"
	"io"
	"strings"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/opx-dev/opx/replay"
	"github.com/urfave/cli/v2"
)

func replayCommand() *cli.Command {
	return &cli.Command{
		Name:      "replay",
		Usage:     "show a session as a timeline, after verifying the chain under it",
		ArgsUsage: "SESSION",
		Description: "First verifies what it shows (see Verification below) and prints the result and how it verified.\n" +
			"Then prints the session turn by turn: what the user said, each model call\n" +
			"(model, tokens, latency), the tool calls it asked for with every Shield verdict (tier, rule, reason),\n" +
			"approvals, snapshots, what ran and what it changed, errors, crashes and rollbacks; then totals.\n" +
			"Each line starts with the seq of its entry (#N): `opx ledger show N` prints it. A ledger that does\n" +
			"not verify prints its failures and no timeline (exit 4); --force prints the timeline anyway, still\n" +
			"exiting 4. `opx sessions` lists the sessions. Reads the ledger file, or the running engine's ledger\n" +
			"service while an engine holds it.\n\n" +
			"--rerun re-drives the session with the real sandboxed agent; --policy FILE re-evaluates its proposals.\n" +
			"A session of an agent audited through its hooks (mode claude-code, codex, gemini-cli) cannot be re-driven (its\n" +
			"model calls did not pass through opx): --rerun re-judges every recorded proposal under the policy recorded in\n" +
			"force instead, and a decision that would differ is a divergence.\n\n" +
			reviewVerifyHelp +
			exitCodesHelp("integrity failure found: the ledger does not verify (or a rerun diverged)"),
		HideHelpCommand: true,
		Flags: append(append(append(ledgerloc.Flags(), reviewFlags()...),
			ui.JSONFlag(),
			&cli.Uint64Flag{Name: "at", Usage: "stop at entry `SEQ`: the session as the ledger knew it then"},
			&cli.BoolFlag{Name: "force", Usage: "print the timeline even when the ledger does not verify (still exits 4)"},
		), rerunFlags()...),
		Action: runReplay,
	}
}

// replayOutput is `opx replay --json`: the verification report (the
// normative `opx ledger verify --json` object) and the timeline, null when
// verification failed without --force.
type replayOutput struct {
	LedgerID     string         `json:"ledger_id"`
	Verification *ledger.Report `json:"verification"`
	// VerifiedBy says how: every entry, or the session proved against
	// the latest signed checkpoint and the entries after it.
	VerifiedBy *ledger.ReviewVerification `json:"verified_by"`
	Timeline   *replay.Timeline           `json:"timeline"`
}

func runReplay(c *cli.Context) error {
	args, err := wantArgs(c, 1, 1, "SESSION")
	if err != nil {
		return err
	}
	session := args[0]
	switch {
	case c.Bool("rerun") && c.IsSet("policy"):
		return usage.Errorf(c, "give either --rerun or --policy, not both")
	case c.Bool("rerun"):
		return runRerun(c, session)
	case c.IsSet("policy"):
		return runWhatIf(c, session, c.String("policy"))
	}
	if c.IsSet("at") && c.Uint64("at") == 0 {
		return usage.Errorf(c, "--at 0 is the genesis entry, before any session")
	}
	ss, err := openSessionSource(c)
	if err != nil {
		return err
	}
	defer ss.Close()
	vs, err := verifySession(c, ss, session, c.Bool("force"))
	if err != nil {
		return err
	}
	rep, t := vs.rep, vs.t
	w := c.App.Writer
	asJSON := c.Bool("json")
	if !asJSON {
		printReviewReport(w, rep)
		printVerifiedBy(w, vs.how)
	}
	if vs.buildErr != nil {
		return vs.buildErr
	}
	if !rep.OK && !c.Bool("force") {
		if asJSON {
			if err := ui.WriteJSON(c, replayOutput{LedgerID: ss.id, Verification: jsonReport(rep), VerifiedBy: vs.how}); err != nil {
				return err
			}
		} else {
			fmt.Fprintln(w, "no timeline: the record does not verify (use --force to read it anyway)")
		}
		return fmt.Errorf("verify %s: %w", ss.path, rep.Err())
	}
	if asJSON {
		err = ui.WriteJSON(c, replayOutput{LedgerID: ss.id, Verification: jsonReport(rep), VerifiedBy: vs.how, Timeline: t})
	} else {
		if !rep.OK {
			fmt.Fprintln(w, ui.Red(w, "WARNING: the ledger does not verify; this timeline may not be what was recorded"))
		}
		printTimeline(w, t)
	}
	if err != nil {
		return err
	}
	if !rep.OK {
		return fmt.Errorf("verify %s: %w", ss.path, rep.Err())
	}
	return nil
}

// buildTimeline builds session's timeline up to --at, saying how to find
// sessions when the id is unknown.
func buildTimeline(c *cli.Context, ss *sessionSource, session string) (*replay.Timeline, error) {
	return buildTimelineFrom(c, ss, ss.src, session)
}

// buildTimelineFrom is buildTimeline reading from src.
func buildTimelineFrom(c *cli.Context, ss *sessionSource, src replay.Source, session string) (*replay.Timeline, error) {
	t, err := replay.Build(src, session, replay.Options{At: c.Uint64("at")})
	if errors.Is(err, replay.ErrUnknownSession) {
		return nil, explainUnknownSession(err, ss.path)
	}
	return t, err
}

// lookupSession returns the explained unknown-session error when src has
// no entry of session up to --at, and nil otherwise: a ledger that cannot
// be read is left to the verification that follows, which reports it.
func lookupSession(c *cli.Context, ss *sessionSource, src replay.Source, session string) error {
	err := replay.Lookup(src, session, c.Uint64("at"))
	if errors.Is(err, replay.ErrUnknownSession) {
		return explainUnknownSession(err, ss.path)
	}
	return nil
}

// explainUnknownSession says where to find the sessions.
func explainUnknownSession(err error, path string) error {
	return &usage.Explained{Err: err, Msg: fmt.Sprintf("%v (in %s); `opx sessions` lists the sessions, "+
		"`opx ledger tail` shows recent entries with theirs", err, path)}
}

// sessionSource is a ledger opened for session review (openReviewSource:
// the file, or the running engine's LedgerService when the engine holds
// it) with its id and a strict verification. Unlike openChronicleReview
// it folds nothing, so a ledger whose entries do not parse can still be
// verified and reported on.
type sessionSource struct {
	*review
	id     string // ledger id
	verify func() (*ledger.Report, error)
}

// openSessionSource opens c's ledger; an explicit --ledger is always read
// offline. Verification is strict and shows a progress bar on a terminal.
func openSessionSource(c *cli.Context) (*sessionSource, error) {
	r, err := openReviewSource(c)
	if err != nil {
		return nil, err
	}
	if l := r.file; l != nil {
		return &sessionSource{review: r, id: l.ID(), verify: func() (*ledger.Report, error) {
			// Each signed checkpoint against the key recorded before it,
			// as verify --strict checks it.
			opts, err := event.StrictOptionsFor(l)
			if err != nil {
				return nil, err
			}
			bar := ui.NewProgress(c, "verify")
			opts.Progress = bar.Update
			rep, err := l.Verify(opts)
			bar.Finish()
			return rep, err
		}}, nil
	}
	ec := r.src.(*engineSource).ec
	head, err := ec.ledger.Head(ec.ctx, &opxv1.HeadRequest{})
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("ask the engine for the ledger head: %w", err)
	}
	es := r.src.(*engineSource)
	return &sessionSource{review: r, id: head.LedgerId, verify: func() (*ledger.Report, error) {
		// Verified here, as opx ledger verify --strict does through the
		// engine: its entries, blob frames and tiles checked by the same
		// code as the file's, the signed checkpoints against the keys
		// recorded, in one pass whose entry hashes the timeline is then
		// read against (engineSource.verified).
		rl, err := liveledger.Dial(c, r.path)
		if err != nil {
			return nil, fmt.Errorf("verify through the engine: %w", err)
		}
		defer rl.Close()
		tee := newTeeSource(rl, 0, true)
		opts := event.StrictOptions()
		opts.CheckCheckpoint = tee.checkCheckpoint()
		opts.CheckEnd = settleRunningPlans(rl, rl.FixedHead(), opts.CheckEnd)
		bar := ui.NewProgress(c, "verify")
		opts.Progress = bar.Update
		rep, err := ledger.VerifySource(tee, opts)
		bar.Finish()
		if err != nil {
			return nil, err
		}
		es.verified = tee.hashes
		if es.verified == nil {
			es.verified = []ledger.Hash{}
		}
		return rep, nil
	}}, nil
}

// printTimeline prints a timeline for people: a header, the turns as
// trees of model calls and tool calls, the events between them, and
// totals with every blocked action.
func printTimeline(w io.Writer, t *replay.Timeline) {
	title := ""
	if t.Title != "" {
		title = " " + quoteText(t.Title, 120)
	}
	fmt.Fprintf(w, "\nsession %s%s (mode %s)\n", t.Session, title, orDash(t.Mode))
	fmt.Fprintf(w, "  entries %d..%d, %s to %s (%s)\n", t.FirstSeq, t.LastSeq, shortTime(t.Start), shortTime(t.End), duration(t.Totals.DurationMS))
	if t.At != 0 {
		fmt.Fprintf(w, "  %s\n", ui.Paint(w, "33", fmt.Sprintf("as of seq %d: later entries are not shown", t.At)))
	}
	if t.ParentSession != "" {
		fmt.Fprintf(w, "  sub-agent %s of session %s\n", t.SubAgentID, t.ParentSession)
	}
	if e := t.Engine; e != nil {
		fmt.Fprintf(w, "  engine %s (seq %d): policy %s %s, %s/%s, workspace %s\n", e.Version, e.Seq, clean(e.Policy, 80),
			shortHash(e.PolicyHash), e.Provider, e.Model, clean(e.Workspace, 120))
	}
	printHookAgent(w, t)
	fmt.Fprintln(w)
	for _, it := range t.Items() {
		if it.Event != nil {
			fmt.Fprintf(w, "#%d  %s\n", it.Event.Seq, eventLine(w, it.Event))
			continue
		}
		printTurn(w, it.Turn)
	}
	printTotals(w, t)
}

func printTurn(w io.Writer, tn *replay.Turn) {
	who := "user"
	if tn.Client != "" {
		who += " via " + clean(tn.Client, 40)
	}
	if tn.Proxied {
		who = "MCP client " + clean(tn.Client, 40)
	}
	if tn.SubAgentID != "" {
		who = "sub-agent " + tn.SubAgentID
	}
	if tn.Unprompted {
		fmt.Fprintf(w, "%s  #%d  %s\n", ui.Paint(w, "1", fmt.Sprintf("turn %d", tn.N)), tn.Seq,
			ui.Paint(w, "33", "no prompt recorded: the agent's calls before opx saw a prompt of it"))
		printSteps(w, "", tn)
		return
	}
	fmt.Fprintf(w, "%s  #%d  %s: %s\n", ui.Paint(w, "1", fmt.Sprintf("turn %d", tn.N)), tn.Seq, who, quoteText(tn.Content, 300))
	printSteps(w, "", tn)
}

// printSteps prints a turn's steps as a tree under indent.
func printSteps(w io.Writer, indent string, tn *replay.Turn) {
	steps := tn.Steps()
	if tn.Status == replay.TurnOpen {
		steps = append(steps, replay.Step{}) // "no answer" closes the tree
	}
	for i, st := range steps {
		branch, sub := indent+"├─ ", indent+"│  "
		if i == len(steps)-1 {
			branch, sub = indent+"└─ ", indent+"   "
		}
		switch {
		case st.Model != nil:
			fmt.Fprintf(w, "%s%s\n", branch, modelLine(w, st.Model))
			printCalls(w, sub, st.Calls)
		case st.Agent != nil:
			fmt.Fprintf(w, "%s%s\n", branch, agentCallLine(w, st.Agent))
			printCalls(w, sub, st.Calls)
		case len(st.Calls) > 0:
			fmt.Fprintf(w, "%s%s\n", branch, callLine(w, st.Calls[0]))
			printCallDetail(w, sub, st.Calls[0])
		case st.Event != nil:
			fmt.Fprintf(w, "%s#%d %s\n", branch, st.Event.Seq, eventLine(w, st.Event))
		case st.Error != nil:
			fmt.Fprintf(w, "%s#%d %s %s: %s\n", branch, st.Error.Seq, ui.Red(w, "agent error"), clean(st.Error.Code, 40), quoteText(st.Error.Message, 300))
		case st.Response != nil:
			what := "answer"
			switch {
			case tn.Proxied:
				what = "the client got"
			case tn.Hooked:
				what = "the model ended its turn"
			}
			fmt.Fprintf(w, "%s#%d %s after %s: %s\n", branch, st.Response.Seq, what, duration(tn.DurationMS), quoteText(st.Response.Content, 400))
		default:
			s := "no answer recorded"
			if tn.Hooked {
				s = "no end of the model's turn recorded"
			}
			if tn.Streamed.PartialText != "" {
				s += "; the agent had streamed " + quoteText(tn.Streamed.PartialText, 200)
			}
			fmt.Fprintf(w, "%s%s\n", branch, ui.Paint(w, "33", s))
		}
	}
}

func printCalls(w io.Writer, indent string, calls []*replay.ToolCall) {
	for i, tc := range calls {
		branch, sub := "├─ ", "│  "
		if i == len(calls)-1 {
			branch, sub = "└─ ", "   "
		}
		fmt.Fprintf(w, "%s%s%s\n", indent, branch, callLine(w, tc))
		printCallDetail(w, indent+sub, tc)
	}
}

func modelLine(w io.Writer, mc *replay.ModelCall) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d", mc.RequestSeq)
	if mc.ResponseSeq != 0 {
		fmt.Fprintf(&b, "→#%d", mc.ResponseSeq)
	}
	who := "model"
	if mc.Evaluator {
		who = "Shield tier 2 evaluator asked"
	}
	fmt.Fprintf(&b, " %s %s/%s", who, mc.Provider, mc.Model)
	if mc.ResponseSeq == 0 {
		b.WriteString(": " + ui.Paint(w, "33", "no response recorded"))
		return b.String()
	}
	fmt.Fprintf(&b, ": %s, %s", tokens(mc.Usage), ms(mc.LatencyMS))
	if mc.Attempts > 1 {
		fmt.Fprintf(&b, ", %d attempts", mc.Attempts)
	}
	if mc.FinishReason != "" {
		b.WriteString(", finish " + clean(mc.FinishReason, 40))
	}
	if mc.Error != "" {
		b.WriteString(", " + ui.Red(w, "error "+quoteText(mc.Error, 200)))
	}
	if len(mc.ToolCalls) > 0 {
		var names []string
		for _, c := range mc.ToolCalls {
			names = append(names, clean(c.Tool, 40))
		}
		b.WriteString(", asked for " + strings.Join(names, ", "))
	}
	if mc.Text != "" && len(mc.ToolCalls) > 0 {
		b.WriteString(", said " + quoteText(mc.Text, 120))
	}
	return b.String()
}

func callLine(w io.Writer, tc *replay.ToolCall) string {
	args := tc.Arguments
	if tc.Seq == 0 {
		args = tc.AgentArguments
	}
	return fmt.Sprintf("#%d %s %s → %s", tc.ShownSeq(), clean(tc.Tool, 60), clean(args, 200), outcomeWord(w, tc))
}

func outcomeWord(w io.Writer, tc *replay.ToolCall) string {
	switch tc.Outcome {
	case replay.OutcomeBlocked, replay.OutcomeDenied:
		return ui.Red(w, strings.ToUpper(tc.Outcome))
	case replay.OutcomeCompleted, replay.OutcomeAllowed:
		return ui.Green(w, tc.Outcome)
	case replay.OutcomeFailed, replay.OutcomeNotProposed:
		return ui.Red(w, tc.Outcome)
	case replay.OutcomeExited:
		return ui.Paint(w, "33", fmt.Sprintf("ran, exit %d", tc.Exec.ExitCode))
	default:
		return ui.Paint(w, "33", tc.Outcome)
	}
}

// printCallDetail prints what happened to a call, in seq order: its
// verdicts, approval, snapshot, execution and (when nothing ran) what the
// agent was told.
func printCallDetail(w io.Writer, indent string, tc *replay.ToolCall) {
	var lines []string
	_, withheld := event.Withheld(tc.Arguments) // off the record: raw and canonical cannot be compared
	if tc.Seq != 0 && tc.AgentSeq != 0 && !withheld && !sameJSON(tc.AgentArguments, tc.Arguments) {
		lines = append(lines, fmt.Sprintf("#%d the agent sent other arguments: %s", tc.AgentSeq, clean(tc.AgentArguments, 200)))
	}
	for _, st := range tc.Steps() {
		switch {
		case st.Verdict != nil:
			v := st.Verdict
			lines = append(lines, fmt.Sprintf("#%d %s tier %d %s: %s", v.Seq, decision(w, v.Decision), v.Tier, clean(v.Rule, 60), clean(v.Reason, 300)))
		case st.ApprovalAsked != nil:
			a := st.ApprovalAsked
			l := fmt.Sprintf("#%d approval %s asked: %s", a.RequestedSeq, clean(a.ApprovalID, 40), clean(a.Reason, 200))
			if a.SubAgentID != "" {
				l = fmt.Sprintf("#%d approval %s asked by sub-agent %s: %s", a.RequestedSeq, clean(a.ApprovalID, 40), clean(a.SubAgentID, 40), clean(a.Reason, 200))
			}
			if a.ResolvedSeq == 0 {
				l += "; " + ui.Paint(w, "33", "no answer recorded")
			}
			lines = append(lines, l)
		case st.ApprovalAnswer != nil:
			a := st.ApprovalAnswer
			word := ui.Green(w, "approved")
			if !a.Approved {
				word = ui.Red(w, "denied")
			}
			l := fmt.Sprintf("#%d %s by %s after %s", a.ResolvedSeq, word, clean(a.By, 40), duration(a.WaitedMS))
			if a.ResolveReason != "" {
				l += ": " + clean(a.ResolveReason, 200)
			}
			lines = append(lines, l)
		case st.Snapshot != nil:
			lines = append(lines, fmt.Sprintf("#%d snapshot (%s) of %s", st.Snapshot.Seq, st.Snapshot.Kind, snapshotPaths(st.Snapshot)))
		case st.Exec != nil:
			lines = append(lines, execLine(w, st.Exec))
		case st.Flagged != nil:
			f := st.Flagged
			lines = append(lines, fmt.Sprintf("#%d %s by Shield (%s): %s; %s", f.Seq, ui.Red(w, "result flagged"), clean(f.Rule, 60),
				clean(f.Reason, 300), flagAction(f.Action)))
		case st.Result != nil && tc.Exec == nil:
			lines = append(lines, fmt.Sprintf("#%d agent told: %s", st.Result.Seq, resultText(st.Result.Content, st.Result.Blob, st.Result.Size)))
		}
	}
	for i, l := range lines {
		branch := "├─ "
		if i == len(lines)-1 && tc.SubAgent == nil {
			branch = "└─ "
		}
		fmt.Fprintf(w, "%s%s%s\n", indent, branch, l)
	}
	if tc.SubAgent != nil {
		printSubAgent(w, indent, tc.SubAgent)
	}
}

// flagAction says what opx did with a flagged result.
func flagAction(a string) string {
	switch a {
	case "annotated":
		return "the agent got it behind a warning"
	case "withheld":
		return "the agent got only the warning"
	}
	return clean(a, 40)
}

// sameJSON reports whether the agent's arguments canonicalise to the
// proposal's: only a real difference is worth a line.
func sameJSON(agent, canonical string) bool {
	c, err := ledger.Canonicalize([]byte(agent))
	return err == nil && string(c) == canonical
}

// execLine is an execution in one line, as event.ExecOutcome defines how
// it ended: "failed" (the tool failed), "ran, exit N" (a command it ran
// exited non-zero) or "ran"; and the paths it changed.
func execLine(w io.Writer, x *replay.Execution) string {
	var l string
	switch {
	case x.Status == "running":
		return fmt.Sprintf("#%d started; %s", x.StartedSeq, ui.Paint(w, "33", "no end recorded"))
	case x.Interrupted:
		// An agent's call whose end it never reported (through its
		// hooks): what the workspace held when opx closed it.
		l = fmt.Sprintf("#%d→#%d %s after %s, the agent never reported its end: %s", x.StartedSeq, x.EndSeq, ui.Paint(w, "33", "interrupted"),
			ms(x.DurationMS), resultText(x.Result, x.ResultBlob, x.Size))
		return l + changedText(x)
	}
	switch x.Status {
	case "running":
		return fmt.Sprintf("#%d started; %s", x.StartedSeq, ui.Paint(w, "33", "no end recorded"))
	case event.ExecError:
		why := x.Error // exec.failed
		if why == "" {
			why = resultText(x.Result, x.ResultBlob, x.Size)
		} else {
			why = clean(why, 300)
		}
		l = fmt.Sprintf("#%d→#%d %s after %s: %s", x.StartedSeq, x.EndSeq, ui.Red(w, "failed"), ms(x.DurationMS), why)
	case event.ExecExited:
		l = fmt.Sprintf("#%d→#%d ran %s, %s: %s", x.StartedSeq, x.EndSeq, ms(x.DurationMS), ui.Paint(w, "33", fmt.Sprintf("exit %d", x.ExitCode)),
			resultText(x.Result, x.ResultBlob, x.Size))
	default:
		l = fmt.Sprintf("#%d→#%d ran %s, exit %d: %s", x.StartedSeq, x.EndSeq, ms(x.DurationMS), x.ExitCode, resultText(x.Result, x.ResultBlob, x.Size))
	}
	return l + changedText(x)
}

// changedText says what an execution changed: "; changed a, b", or why
// that was not worked out; "" for nothing.
func changedText(x *replay.Execution) string {
	var changed []string
	for _, p := range x.Changed {
		changed = append(changed, clean(p, 80))
	}
	switch {
	case x.DiffError != "":
		return "; changes not worked out: " + clean(x.DiffError, 120)
	case len(changed) > 0:
		l := "; changed " + strings.Join(changed[:min(len(changed), 5)], ", ")
		if len(changed) > 5 {
			l += fmt.Sprintf(" (+%d more)", len(changed)-5)
		}
		return l
	}
	return ""
}

func snapshotPaths(s *replay.Snapshot) string {
	switch {
	case len(s.Paths) == 0 && s.Kind == event.KindWorkspace:
		return fmt.Sprintf("the workspace (%d paths)", s.Entries)
	case len(s.Paths) == 0:
		return "(nothing)"
	}
	var p []string
	for _, x := range s.Paths[:min(len(s.Paths), 5)] {
		p = append(p, clean(x, 80))
	}
	out := strings.Join(p, ", ")
	if len(s.Paths) > 5 {
		out += fmt.Sprintf(" (+%d more)", len(s.Paths)-5)
	}
	return out
}

func resultText(content, blob string, size int64) string {
	if _, ok := event.Withheld(blob); ok {
		return event.Display(blob)
	}
	if blob != "" {
		return fmt.Sprintf("(%d bytes in blob %s)", size, shortHash(blob))
	}
	return quoteText(content, 160)
}

func eventLine(w io.Writer, ev *replay.Event) string {
	s := clean(ev.Summary, 400)
	switch ev.Type {
	case event.TypeAgentCrashed, event.TypeEngineCrashed, event.TypeAgentError:
		return ui.Red(w, s)
	case event.TypeRollback, event.TypePruned:
		return ui.Paint(w, "33", s)
	}
	return s
}

func decision(w io.Writer, d string) string {
	switch d {
	case event.Allow:
		return ui.Green(w, d)
	case event.Block:
		return ui.Red(w, d)
	case event.Escalate:
		return ui.Paint(w, "33", d)
	}
	return clean(d, 20)
}

func printTotals(w io.Writer, t *replay.Timeline) {
	tt := t.Totals
	exited := ""
	if tt.Exited > 0 {
		exited = fmt.Sprintf(" (%d exited non-zero)", tt.Exited)
	}
	models := fmt.Sprintf("%s (%s)", ui.Plural(uint64(tt.ModelCalls), "model call", "model calls"), tokens(tt.Usage))
	if t.Agent != nil && tt.ModelCalls == 0 {
		models = "model calls not through opx (the agent's transcript holds them)"
	}
	fmt.Fprintf(w, "\ntotals: %s, %s, %s: %d ran%s, %s, %s, %s; %s, %s, %s, %s; %s\n",
		ui.Plural(uint64(tt.Turns), "turn", "turns"), models,
		ui.Plural(uint64(tt.ToolCalls), "tool call", "tool calls"), tt.Executed, exited, paintIf(w, tt.Blocked > 0, "31", fmt.Sprintf("%d blocked", tt.Blocked)),
		paintIf(w, tt.Failed > 0, "31", fmt.Sprintf("%d failed", tt.Failed)),
		paintIf(w, tt.Flagged > 0, "31", ui.Plural(uint64(tt.Flagged), "result flagged", "results flagged")), ui.Plural(uint64(tt.Snapshots), "snapshot", "snapshots"), ui.Plural(uint64(tt.Rollbacks), "rollback", "rollbacks"),
		ui.Plural(uint64(tt.AgentErrors+tt.ModelErrors), "error", "errors"), ui.Plural(uint64(tt.Crashes), "crash", "crashes"), duration(tt.DurationMS))
	if s := subAgentTotals(tt.SubAgents); s != "" {
		fmt.Fprintf(w, "%s, whose calls are counted above\n", s)
	}
	if s := agentTotals(w, tt); s != "" {
		fmt.Fprintln(w, s)
	}
	if blocked := t.Blocked(); len(blocked) > 0 {
		fmt.Fprintln(w, ui.Red(w, "blocked:"))
		for _, tc := range blocked {
			why := "denied by " + clean(approvalBy(tc), 40)
			if v := tc.BlockedBy; v != nil {
				why = fmt.Sprintf("tier %d %s: %s", v.Tier, clean(v.Rule, 60), clean(v.Reason, 300))
			}
			fmt.Fprintf(w, "  #%d %s%s%s %s — %s\n", tc.Seq, bySubAgent(tc), byAgent(t, tc), clean(tc.Tool, 60), clean(tc.Arguments, 160), why)
		}
	}
	if flagged := t.Flagged(); len(flagged) > 0 {
		fmt.Fprintln(w, ui.Red(w, "result flagged by Shield:"))
		for _, tc := range flagged {
			f := tc.Flagged
			fmt.Fprintf(w, "  #%d %s%s %s — %s: %s; %s\n", f.Seq, bySubAgent(tc), clean(tc.Tool, 60), clean(tc.Arguments, 160), clean(f.Rule, 60),
				clean(f.Reason, 300), flagAction(f.Action))
		}
	}
	if failed := t.Failed(); len(failed) > 0 {
		fmt.Fprintln(w, ui.Red(w, "failed:"))
		for _, tc := range failed {
			why := tc.Exec.Error // exec.failed
			if why == "" {
				why = resultText(tc.Exec.Result, tc.Exec.ResultBlob, tc.Exec.Size)
			}
			fmt.Fprintf(w, "  #%d %s%s %s — %s\n", tc.Seq, bySubAgent(tc), clean(tc.Tool, 60), clean(tc.Arguments, 160), clean(why, 300))
		}
	}
	for _, p := range t.Problems {
		fmt.Fprintf(w, "%s %s\n", ui.Red(w, "problem:"), clean(p, 300))
	}
}

// bySubAgent names the sub-agent whose call tc is ("" the session's own
// agent's).
func bySubAgent(tc *replay.ToolCall) string {
	if tc.SubAgentID == "" {
		return ""
	}
	return "[sub-agent " + clean(tc.SubAgentID, 40) + "] "
}

func approvalBy(tc *replay.ToolCall) string {
	if tc.Approval != nil {
		return tc.Approval.By
	}
	return "?"
}

func paintIf(w io.Writer, cond bool, code, s string) string {
	if cond {
		return ui.Paint(w, code, s)
	}
	return s
}

func tokens(u event.Usage) string {
	return fmt.Sprintf("%d tokens: %d in, %d out", u.TotalTokens, u.InputTokens, u.OutputTokens)
}

func ms(n int64) string { return fmt.Sprintf("%d ms", n) }

// duration shows milliseconds for people: "850 ms", "7.6 s", "3 min 5 s".
func duration(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d ms", n)
	case n < 60_000:
		return fmt.Sprintf("%.1f s", float64(n)/1000)
	default:
		return fmt.Sprintf("%d min %d s", n/60_000, n%60_000/1000)
	}
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// quoteText is clean in quotes.
func quoteText(s string, n int) string { return `"` + clean(s, n) + `"` }

// clean makes recorded text safe and short for a terminal: control
// characters (an agent's output may carry escape sequences meant for the
// investigator's terminal) and bidirectional overrides are shown escaped,
// newlines as \n, and the result is clipped to n runes.
func clean(s string, n int) string {
	s = event.DisplayText(s) // off the record: "[off the record: N bytes]"
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return ui.Clip(b.String(), n)
}
