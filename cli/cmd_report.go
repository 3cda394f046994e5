package cli

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/undo"
	"github.com/opx-dev/opx/internal/regularfile"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay"
	"github.com/urfave/cli/v2"
)

// reportFiles are the report's template and style sheet, inlined into
// every report so that it loads nothing.
//
//go:embed report/report.html.tmpl report/report.css
var reportFiles embed.FS

// reportBlobLimit caps the tool output read from a blob into a report.
const reportBlobLimit = 64 << 10

var reportTemplate = template.Must(template.New("report.html.tmpl").Funcs(template.FuncMap{
	"dur":           duration,
	"statusClass":   statusClass,
	"decisionClass": decisionClass,
	"outcomeClass":  outcomeClass,
	"subStatusClass": func(s string) string {
		switch s {
		case replay.SubAgentCompleted:
			return "o-good"
		case replay.SubAgentFailed, replay.SubAgentTimedOut:
			return "o-bad"
		}
		return "o-wait"
	},
	"bad": func(o string) bool { return o == replay.OutcomeBlocked || o == replay.OutcomeDenied },
	"alarm": func(typ string) bool {
		return typ == event.TypeAgentCrashed || typ == event.TypeEngineCrashed || typ == event.TypeAgentError
	},
	"basisText": basisText,
	"blob":      func(string) string { return "" },                       // bound to the ledger per report
	"agentOf":   func(*replay.ToolCall) *replay.AgentCall { return nil }, // bound to the timeline per report
}).ParseFS(reportFiles, "report/report.html.tmpl"))

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "write one self-contained HTML file reviewing a session, with the ledger's verification status",
		UsageText: "opx report -o FILE [--force] [--at SEQ] [--no-workspace] [--ledger PATH | --workspace DIR] SESSION",
		Description: "Verifies what the report shows (see Verification below), then writes FILE: the verification status (ok, or every failure)\n" +
			"with the ledger id and head hash; a summary with the blocked actions first; the timeline (user messages,\n" +
			"model calls, tool calls with each verdict's tier, rule and reason, approvals, executions, errors); the\n" +
			"file changes reconstructed from the session's snapshots; and metrics. The file loads nothing from the\n" +
			"network and escapes everything taken from the ledger. Post-state content the ledger does not hold is\n" +
			"looked up in the workspace (--workspace, else the one the engine recorded), and labelled as such,\n" +
			"unless --no-workspace. A ledger that does not verify still gets its report, and the command exits 4.\n" +
			"An existing FILE is kept unless --force. `opx sessions` lists the sessions.\n\n" +
			reviewVerifyHelp +
			exitCodesHelp("integrity failure found: the ledger does not verify (the report is written and says so)"),
		HideHelpCommand: true,
		Flags: append(append(ledgerloc.Flags(), reviewFlags()...),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the report to `FILE` (- for stdout; required)", TakesFile: true},
			&cli.BoolFlag{Name: "force", Usage: "overwrite FILE if it exists"},
			&cli.Uint64Flag{Name: "at", Usage: "stop at entry `SEQ`: the session as the ledger knew it then"},
			&cli.BoolFlag{Name: "no-workspace", Usage: "never read the workspace: post-state content comes from the ledger only"},
		),
		Action: runReport,
	}
}

func runReport(c *cli.Context) error {
	args, err := wantArgs(c, 1, 1, "SESSION")
	if err != nil {
		return err
	}
	out := c.String("output")
	if out == "" {
		out = c.String("o") // given after SESSION: positionals sets the alias
	}
	switch {
	case out == "":
		return usage.Errorf(c, "missing -o FILE")
	case c.IsSet("at") && c.Uint64("at") == 0:
		return usage.Errorf(c, "--at 0 is the genesis entry, before any session")
	}
	if out != "-" && !c.Bool("force") {
		if _, err := os.Lstat(out); err == nil {
			return fmt.Errorf("%s exists; pass --force to overwrite it: %w", out, fs.ErrExist)
		}
	}
	ss, err := openSessionSource(c)
	if err != nil {
		return err
	}
	defer ss.Close()
	vs, err := verifySession(c, ss, args[0], true)
	if err != nil {
		return err
	}
	if vs.buildErr != nil {
		return vs.buildErr
	}
	rep, t := vs.rep, vs.t
	now, wsNote := reportWorkspace(c, t)
	changes, err := replay.Changes(ss.src, t, now)
	if err != nil {
		return err
	}
	html, err := renderReport(ss, rep, vs.how, t, changes, wsNote)
	if err != nil {
		return err
	}
	if out == "-" {
		if _, err := c.App.Writer.Write(html); err != nil {
			return err
		}
	} else {
		if err := writeReport(out, html, c.Bool("force")); err != nil {
			return err
		}
		w := c.App.Writer
		printReviewReport(w, rep)
		printVerifiedBy(w, vs.how)
		subs := ""
		if s := subAgentTotals(t.Totals.SubAgents); s != "" {
			subs = ", " + s
		}
		fmt.Fprintf(w, "wrote %s: session %s, %s, %s, %s, %s%s\n", out, t.Session, ui.Plural(uint64(t.Totals.Turns), "turn", "turns"),
			ui.Plural(uint64(t.Totals.ToolCalls), "tool call", "tool calls"), paintIf(w, t.Totals.Blocked > 0, "31", fmt.Sprintf("%d blocked", t.Totals.Blocked)),
			paintIf(w, t.Totals.Flagged > 0, "31", fmt.Sprintf("%d flagged", t.Totals.Flagged)), subs)
	}
	if !rep.OK {
		return fmt.Errorf("verify %s: %w", ss.path, rep.Err())
	}
	return nil
}

// reportWorkspace opens the workspace post-state content may be read
// from, and says in a sentence what the report compared with.
func reportWorkspace(c *cli.Context, t *replay.Timeline) (replay.WorkspaceReader, string) {
	if c.Bool("no-workspace") {
		return nil, "The workspace was not read (--no-workspace): post-state content comes from the ledger only."
	}
	ws, given := usage.FlagGiven(c, "workspace")
	if _, source := usage.FlagGiven(c, "source"); source && !given {
		// The path the source recorded names a directory on its own
		// machine: here it is someone else's, or nothing.
		return nil, "The session ran on another machine (--source): no workspace was read; post-state content comes from the ledger only."
	}
	if !given {
		if t.Engine == nil || t.Engine.Workspace == "" {
			return nil, "No workspace is recorded for the session: post-state content comes from the ledger only."
		}
		ws = t.Engine.Workspace
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return nil, fmt.Sprintf("The workspace %s is not here: post-state content comes from the ledger only.", ws)
	}
	w, err := executor.OpenWorkspace(ws)
	if err != nil {
		return nil, fmt.Sprintf("The workspace %s could not be opened (%v): post-state content comes from the ledger only.", ws, err)
	}
	// The workspace stays open until the process ends; reads go through
	// it beneath its root, never following links out.
	fsys := undo.WorkspaceFS(w)
	return func(p string) (event.FileState, []byte, error) { return chronicle.Read(fsys, p) },
		fmt.Sprintf("Post-state content the ledger does not hold was looked up in the workspace %s, as it is now (%s).",
			ws, time.Now().UTC().Format(time.RFC3339))
}

// verdictRow is one row of the report's verdict table.
type verdictRow struct {
	V    *replay.Verdict
	Call *replay.ToolCall
}

// diffLine is one line of a unified diff with its CSS class.
type diffLine struct{ Class, Text string }

type changeView struct {
	replay.FileChange
	Lines []diffLine
}

// reportView is what the template renders.
type reportView struct {
	Generated  string
	LedgerID   string
	LedgerPath string
	Verify     *ledger.Report
	VerifiedBy *ledger.ReviewVerification
	T          *replay.Timeline
	Blocked    []*replay.ToolCall
	Flagged    []*replay.ToolCall // results Shield flagged: beside Blocked at the top
	Models     []string
	Verdicts   []verdictRow
	Changes    []changeView
	// AgentBlocked and AgentInterrupted count a hook session's agent
	// calls blocked (or denied) and interrupted.
	AgentBlocked, AgentInterrupted int
	WorkspaceNote                  string
	CSS                            template.CSS
}

func renderReport(ss *sessionSource, rep *ledger.Report, how *ledger.ReviewVerification, t *replay.Timeline, changes []replay.FileChange, wsNote string) ([]byte, error) {
	css, err := reportFiles.ReadFile("report/report.css")
	if err != nil {
		return nil, err
	}
	v := reportView{Generated: time.Now().UTC().Format(time.RFC3339), LedgerID: ss.id, LedgerPath: ss.path, Verify: rep, VerifiedBy: how,
		T: t, Blocked: t.Blocked(), Flagged: t.Flagged(), Models: t.Models(), WorkspaceNote: wsNote, CSS: template.CSS(css)}
	for _, tc := range t.ToolCalls() {
		for _, vd := range tc.Verdicts {
			v.Verdicts = append(v.Verdicts, verdictRow{V: vd, Call: tc})
		}
	}
	for _, u := range t.Totals.ByAgentTool {
		v.AgentBlocked += u.Blocked
		v.AgentInterrupted += u.Interrupted
	}
	for _, fc := range changes {
		v.Changes = append(v.Changes, changeView{FileChange: fc, Lines: diffLines(fc.Unified)})
	}
	tmpl, err := reportTemplate.Clone()
	if err != nil {
		return nil, err
	}
	blobs := map[string]string{}
	tmpl.Funcs(template.FuncMap{"blob": func(hex string) string {
		if s, ok := blobs[hex]; ok {
			return s
		}
		blobs[hex] = readBlobText(ss.src, t, hex)
		return blobs[hex]
	}, "agentOf": t.AgentCallOf})
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, v); err != nil {
		return nil, fmt.Errorf("render report: %w", err)
	}
	// Off the record: each withheld member (plain [a-z0-9:] text, the
	// same escaped or not) reads "[off the record: N bytes]".
	return []byte(event.DisplayText(buf.String())), nil
}

// readBlobText reads tool output kept as a blob, hash-checked, capped at
// reportBlobLimit; failures are said in its place.
func readBlobText(src replay.Source, t *replay.Timeline, hex string) string {
	if _, ok := event.Withheld(hex); ok {
		return event.Display(hex) // off the record: no blob was stored
	}
	h, err := ledger.ParseHash(hex)
	if err != nil {
		return "(blob " + hex + ": " + err.Error() + ")"
	}
	b, err := src.GetBlob(h)
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		if seq, ok := t.PrunedBy(hex); ok {
			return fmt.Sprintf("(content pruned by retention, entry %d; hash %s)", seq, hex)
		}
		return "(content not in the ledger: blob " + hex + " is missing)"
	case err != nil:
		return "(content unreadable: " + err.Error() + ")"
	}
	if len(b) > reportBlobLimit {
		cut := reportBlobLimit
		for cut > 0 && !utf8.RuneStart(b[cut]) {
			cut--
		}
		return string(b[:cut]) + fmt.Sprintf("\n… (%d more bytes; opx ledger show names the blob %s)", len(b)-cut, hex)
	}
	return string(b)
}

func diffLines(u string) []diffLine {
	if u == "" {
		return nil
	}
	var out []diffLine
	for _, l := range strings.SplitAfter(u, "\n") {
		if l == "" {
			continue
		}
		class := "ctx"
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "Binary files"):
			class = "hdr"
		case strings.HasPrefix(l, "+"):
			class = "add"
		case strings.HasPrefix(l, "-"):
			class = "del"
		case strings.HasPrefix(l, "@@"):
			class = "hunk"
		}
		out = append(out, diffLine{Class: class, Text: strings.TrimSuffix(l, "\n")})
	}
	return out
}

// writeReport writes the report: a new file, never replacing one unless
// force, and then atomically (temp file, fsync, rename). Mode 0600: a
// report holds what the agent read and wrote.
func writeReport(path string, html []byte, force bool) error {
	if !force {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s exists; pass --force to overwrite it: %w", path, err)
		}
		if err != nil {
			return err
		}
		if _, err := f.Write(html); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	return regularfile.WriteAtomic(path, html, 0o600)
}

// statusClass, decisionClass and outcomeClass map recorded values to a
// fixed set of CSS classes (never the recorded text itself).
func statusClass(s string) string {
	switch s {
	case replay.TurnAnswered:
		return "o-good"
	case replay.TurnError:
		return "o-bad"
	}
	return "o-wait"
}

func decisionClass(d string) string {
	switch d {
	case event.Allow:
		return "d-allow"
	case event.Block:
		return "d-block"
	case event.Escalate:
		return "d-escalate"
	}
	return ""
}

func outcomeClass(o string) string {
	switch o {
	case replay.OutcomeBlocked, replay.OutcomeDenied, replay.OutcomeFailed, replay.OutcomeNotProposed:
		return "o-bad"
	case replay.OutcomeCompleted, replay.OutcomeAllowed:
		return "o-good"
	}
	return "o-wait"
}

func basisText(b string) string {
	switch b {
	case replay.BasisRecorded:
		return "pre-state and post-state content both from the ledger"
	case replay.BasisWorkspaceMatch:
		return "post-state content read from the workspace, which still hashes to the recorded post-state"
	case replay.BasisWorkspaceNow:
		return "pre-state against the workspace NOW (the post-state content was not recorded and the file changed since)"
	}
	return "no diff"
}
