package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/engine/redrive"
	"github.com/opx-dev/opx/internal/regularfile"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay"
	"github.com/opx-dev/opx/replay/rerun"
	"github.com/opx-dev/opx/shield"
	"github.com/urfave/cli/v2"
)

// rerunFlags are the flags of `opx replay` that re-drive a session:
// --rerun (deterministic replay with the real sandboxed agent) and
// --policy FILE (what-if under another policy).
func rerunFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "rerun", Usage: "re-drive the session with the real sandboxed agent against recorded model answers and tool results, and compare every event"},
		&cli.StringFlag{Name: "policy", Usage: "re-evaluate every recorded proposal under the policy `FILE` and list the verdicts that would change", TakesFile: true},
	}
}

// rerunOutput is `opx replay SESSION --rerun --json`.
type rerunOutput struct {
	LedgerID     string         `json:"ledger_id"`
	Verification *ledger.Report `json:"verification"`
	*redrive.RerunReport
	RerunMS    int64 `json:"rerun_ms,omitempty"`
	RecordedMS int64 `json:"recorded_ms,omitempty"`
}

// runRerun is `opx replay SESSION --rerun`: verify the ledger, re-drive
// the session with a fresh engine in replay mode (in this process, on an
// empty temporary workspace and ledger) and the real sandboxed agent, and
// compare. A divergence exits 4 (rerun.ErrDiverged is an integrity
// finding). Needs only the ledger file: the recorded workspace is never
// read, and need not exist.
func runRerun(c *cli.Context, session string) error {
	ss, rep, err := openVerified(c, session)
	if err != nil {
		return err
	}
	defer ss.Close()
	w, asJSON := c.App.Writer, c.Bool("json")
	out := rerunOutput{LedgerID: ss.id, Verification: jsonReport(rep)}
	if !rep.OK {
		return refuseUnverified(c, ss, rep, out)
	}
	rec, err := loadSession(ss, session)
	if err != nil {
		return err
	}
	if rec.Hook != nil {
		return runHookRerun(c, rec, out)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if !asJSON && rec.Proxy != nil {
		fmt.Fprintf(w, "rerun of mcp-proxy session %s: %d recorded events, %d proposals, %d client requests (MCP client %s, upstream %s)\n",
			session, len(rec.Entries), len(rec.Proposals), len(rec.Proxy.Steps), proxyClientName(rec.Proxy), proxyUpstream(rec.Proxy))
	} else if !asJSON {
		fmt.Fprintf(w, "rerun of session %s: %d recorded events, %d model calls, %d proposals, %d client messages, %s\n",
			session, len(rec.Entries), len(rec.Calls)+len(rec.Tier2), len(rec.Proposals), len(rec.Messages),
			ui.Plural(uint64(len(rec.SubAgents)), "sub-agent", "sub-agents"))
	}
	// Interrupted, the replay engine stops its agent and removes its
	// temporary workspace and ledger before the command ends.
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	res, err := redrive.Rerun(ctx, redrive.RerunConfig{Recording: rec, SpawnAgent: agentSpawner(self, c.App.ErrWriter), Version: Version})
	if err != nil {
		return fmt.Errorf("rerun session %s: %w", session, err)
	}
	out.RerunReport, out.RerunMS, out.RecordedMS = res, res.Elapsed.Milliseconds(), res.Recorded.Milliseconds()
	if asJSON {
		if err := ui.WriteJSON(c, out); err != nil {
			return err
		}
	} else {
		printRerun(w, res)
	}
	if d := res.Divergence; d != nil {
		return fmt.Errorf("session %s at seq %d (%s%s): %w", session, divergenceSeq(d), divergenceType(d), divergenceThread(d), rerun.ErrDiverged)
	}
	return nil
}

// printRerun prints a rerun's outcome for a terminal.
func printRerun(w io.Writer, r *redrive.RerunReport) {
	agent := r.Agent
	if r.AgentSummary != "" {
		agent += " (" + r.AgentSummary + ")"
	}
	if agent == "" {
		agent = "none: the client's recorded requests were fed again, the upstream's recorded answers served"
	}
	fmt.Fprintf(w, "agent: %s\n", agent)
	if len(r.SubAgentSandboxes) > 0 {
		fmt.Fprintf(w, "sub-agents: %s\n", sandboxCounts(r.SubAgentSandboxes))
	}
	timing := fmt.Sprintf("rerun %s, recorded %s", r.Elapsed.Round(1e6), r.Recorded.Round(1e6))
	if r.Identical {
		threads := ""
		if r.SubAgents > 0 {
			threads = fmt.Sprintf(", the session's agent and %s each in order", ui.Plural(uint64(r.SubAgents), "sub-agent", "sub-agents"))
		}
		switch {
		case r.Uncompared > 0 && r.Mode == "mcp-proxy":
			threads += fmt.Sprintf(" (%d not compared: the upstream server's start, tool listings and end, served from the record)", r.Uncompared)
		case r.Uncompared > 0:
			threads += fmt.Sprintf(" (%d not compared: sub-agent processes' pids, ports and canaries, what a sub-agent sent after its end)", r.Uncompared)
		}
		fmt.Fprintf(w, "%s: %d events%s (%s)\n", ui.Green(w, "identical"), r.Events, threads, timing)
		return
	}
	d := r.Divergence
	what := map[string]string{
		rerun.KindPayload: "the rerun produced the same type with another payload",
		rerun.KindType:    "the rerun produced " + d.ProducedType + " here",
		rerun.KindMissing: "the rerun ended before this entry",
		rerun.KindExtra:   fmt.Sprintf("the rerun produced %s after the record's last entry (seq %d)", d.ProducedType, d.AfterSeq),
	}[d.Kind]
	fmt.Fprintf(w, "%s at seq %d (%s%s): %s\n", ui.Red(w, "divergence"), divergenceSeq(d), divergenceType(d), divergenceThread(d), what)
	fmt.Fprint(w, d.Diff)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "replay: %s\n", n)
	}
	fmt.Fprintf(w, "%d of %d recorded events matched before it (%s)\n", r.Matched, r.Events, timing)
}

func divergenceSeq(d *rerun.Divergence) uint64 {
	if d.Kind == rerun.KindExtra {
		return d.ProducedSeq
	}
	return d.Seq
}

// sandboxCounts summarises sub-agents' sandbox statuses: "2 sandboxed",
// "1 sandboxed, 1 unavailable".
func sandboxCounts(statuses map[string]string) string {
	n := map[string]int{}
	for _, st := range statuses {
		n[st]++
	}
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", n[k], k)
	}
	return strings.Join(parts, ", ")
}

// divergenceThread names the sub-agent whose thread diverged.
func divergenceThread(d *rerun.Divergence) string {
	if d.SubAgentID == "" {
		return ""
	}
	return ", sub-agent " + d.SubAgentID
}

func divergenceType(d *rerun.Divergence) string {
	if d.Kind == rerun.KindExtra {
		return d.ProducedType + ", produced"
	}
	return d.Type
}

// whatIfOutput is `opx replay SESSION --policy FILE --json`.
type whatIfOutput struct {
	LedgerID     string         `json:"ledger_id"`
	Verification *ledger.Report `json:"verification"`
	Policy       string         `json:"policy"`
	*redrive.WhatIfReport
}

// runWhatIf is `opx replay SESSION --policy FILE`: every recorded proposal
// re-evaluated by Shield as it was configured, under the policy FILE, and
// each decision that would change listed. A report, not a finding: it
// exits 0 whatever changes. A policy file that cannot be read is an
// operational error (1, like any missing file); one that is not a valid
// policy is a usage error (2): the value given to --policy is wrong.
func runWhatIf(c *cli.Context, session, policyFile string) error {
	if policyFile == "" {
		return usage.Errorf(c, "--policy needs a policy FILE")
	}
	text, err := regularfile.Read(policyFile, shield.MaxPolicyBytes)
	if err != nil {
		return fmt.Errorf("policy: %w", err)
	}
	policy, err := shield.ParsePolicy(text)
	if err != nil {
		return usage.Errorf(c, "--policy %s: %v", policyFile, err)
	}
	ss, rep, err := openVerified(c, session)
	if err != nil {
		return err
	}
	defer ss.Close()
	out := whatIfOutput{LedgerID: ss.id, Verification: jsonReport(rep), Policy: policyFile}
	if !rep.OK {
		return refuseUnverified(c, ss, rep, out)
	}
	rec, err := loadSession(ss, session)
	if err != nil {
		return err
	}
	wi, err := redrive.WhatIf(rec, policy)
	if err != nil {
		return err
	}
	out.WhatIfReport = wi
	if c.Bool("json") {
		return ui.WriteJSON(c, out)
	}
	w := c.App.Writer
	fmt.Fprintf(w, "what-if: %d proposals of session %s re-evaluated under %s (policy %s): %s would change; %s would reach the same decision by another rule\n",
		wi.Proposals, session, policyFile, wi.PolicyHash[:16], ui.Plural(uint64(wi.DecisionChanges), "decision", "decisions"),
		ui.Plural(uint64(wi.RuleChanges), "verdict", "verdicts"))
	if wi.Restricted > 0 {
		fmt.Fprintf(w, "%d blocked by a restriction before any tier (a sub-agent's tool it was not granted, off the record): kept as recorded, no policy decides them\n", wi.Restricted)
	}
	if len(wi.RecordedRules) > 0 {
		fmt.Fprintf(w, "note: the session was judged by Shield rules version %s; this opx has version %s, so a change may come from the rules as well as the policy\n",
			strings.Join(wi.RecordedRules, ", "), wi.Rules)
	}
	printChanges(w, wi.Changes)
	return nil
}

// printChanges lists re-judged verdicts that would change, the decision
// changes first, each with the sub-agent or the agent's own tool (a hook
// session's) it is of.
func printChanges(w io.Writer, changes []redrive.WhatIfChange) {
	kind := ""
	for _, ch := range changes {
		if ch.Kind != kind {
			kind = ch.Kind
			if kind == redrive.WhatIfDecision {
				fmt.Fprintln(w, "decisions that would change:")
			} else {
				fmt.Fprintln(w, "same decision, another rule:")
			}
		}
		by := ""
		if ch.SubAgentID != "" {
			by = "[sub-agent " + ui.Clip(ch.SubAgentID, 40) + "] "
		}
		if ch.AgentTool != "" {
			by = "[" + ui.Clip(printable(ch.AgentTool), 40) + "] "
		}
		fmt.Fprintf(w, "  seq %-6d %s%s %s\n", ch.Seq, by, ch.Tool, ui.Clip(oneLine(ch.Arguments), 72))
		fmt.Fprintf(w, "             %s  ->  %s\n", verdictText(ch.Old), verdictText(ch.New))
		if ch.Answered != nil {
			fmt.Fprintf(w, "             (recorded: the escalation was answered %s)\n", verdictText(*ch.Answered))
		}
	}
}

func verdictText(v redrive.WhatIfVerdict) string {
	return fmt.Sprintf("%s tier %d %s", v.Decision, v.Tier, v.Rule)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// openVerified opens c's ledger for review (the file, or through the
// engine that holds it, as opx replay reads it) and verifies it strictly,
// printing the verification line unless --json. Through an engine, what
// is read afterwards is the entries verified, byte for byte, up to the
// head the verification reached. An unknown session is said before, and
// instead of, a verification.
func openVerified(c *cli.Context, session string) (*sessionSource, *ledger.Report, error) {
	ss, err := openSessionSource(c)
	if err != nil {
		return nil, nil, err
	}
	if err := replay.Lookup(ss.src, session, 0); errors.Is(err, replay.ErrUnknownSession) {
		ss.Close()
		return nil, nil, explainUnknownSession(err, ss.path)
	}
	rep, err := ss.verify()
	if err != nil {
		ss.Close()
		return nil, nil, err
	}
	if !c.Bool("json") {
		printReport(c.App.Writer, rep)
	}
	return ss, rep, nil
}

// refuseUnverified ends a command whose ledger does not verify: nothing
// is replayed from a record that may not be what was recorded (exit 4).
func refuseUnverified(c *cli.Context, ss *sessionSource, rep *ledger.Report, out any) error {
	if c.Bool("json") {
		if err := ui.WriteJSON(c, out); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(c.App.Writer, "nothing replayed: the record does not verify")
	}
	return fmt.Errorf("verify %s: %w", ss.path, rep.Err())
}

// loadSession reads a session for a rerun or a what-if.
func loadSession(ss *sessionSource, session string) (*rerun.Recording, error) {
	rec, err := rerun.Load(ss.src, session)
	if errors.Is(err, rerun.ErrNoSession) {
		return nil, &usage.Explained{Err: err, Msg: fmt.Sprintf("%v (in %s); `opx sessions` lists the sessions", err, ss.path)}
	}
	return rec, err
}

// proxyClientName and proxyUpstream name an mcp-proxy session's client
// and upstream for the rerun's header.
func proxyClientName(p *rerun.Proxy) string {
	if p.Client == nil {
		return "(unknown)"
	}
	return strings.TrimSpace(event.Display(p.Client.ClientName) + " " + event.Display(p.Client.ClientVersion))
}

func proxyUpstream(p *rerun.Proxy) string {
	if p.Client == nil {
		return "(unknown)"
	}
	return event.Display(p.Client.Upstream)
}
