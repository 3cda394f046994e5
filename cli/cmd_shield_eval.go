package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/config"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay/projection"
	"github.com/opx-dev/opx/shield"
	"github.com/urfave/cli/v2"
)

// maxEvalLine bounds one proposal line of opx shield eval. A longer line
// is reported as bad and skipped to its newline without being held.
const maxEvalLine = 1 << 20

func shieldEvalCommand() *cli.Command {
	return &cli.Command{
		Name:      "eval",
		Usage:     "judge tool proposals (JSON lines) with Shield's tiers -1, 0 and 1, as the engine would",
		UsageText: "opx shield eval [--workspace DIR] [--policy FILE] [--features] [FILE]",
		Description: "Reads one proposal per line from FILE (or standard input, also as \"-\"):\n" +
			"   {\"tool\": \"execute_command\", \"arguments\": {\"command\": \"go test ./...\"}, \"id\": \"optional\"}\n" +
			"and prints one JSON line per proposal, in order:\n" +
			"   {\"id\":...,\"decision\":\"allow|escalate|block\",\"tier\":N,\"rule\":\"...\",\"reason\":\"...\",\n" +
			"    \"verdicts\":[{\"tier\":N,\"decision\":\"...\",\"rule\":\"...\",\"reason\":\"...\"},...]}\n" +
			"decision, tier, rule and reason are those of the verdict that decides, as the engine combines\n" +
			"them (any block blocks, else an escalation asks, else the last allow). Only Shield's own tiers\n" +
			"run (-1: opx's state and configuration, 0: the policy, 1: the built-in rules): no model is\n" +
			"asked and no human, so an escalation is printed as \"escalate\" with the tier that would answer\n" +
			"it. There is no rate limit. \"id\" is echoed when given.\n\n" +
			"Lines that name the same \"session\" (a string) are one session, judged in order: a call that\n" +
			"reads something sensitive (\"sensitive\" in its output) and is not blocked taints the session as\n" +
			"if it ran, and later calls that can carry data out are judged with that taint (flow:*). A line\n" +
			"without \"session\" is a session of its own. Other fields are ignored, so a\n" +
			"corpus of cases with their expectations can be piped in as it is. A tool opx does not have is\n" +
			"judged as the engine judges it (as a tool that changes nothing) and marked \"unknown_tool\":true;\n" +
			"the engine would then fail the call.\n\n" +
			"Shield is configured as the workspace's engine would be: the workspace, your home, opx's state\n" +
			"directory for the workspace protected, and the policy of the workspace's .opx/config.yaml, or\n" +
			"--policy FILE, or the built-in default. Nothing is written: no state directory, no ledger.\n\n" +
			"A bad line (not a JSON object, no tool, arguments not an object, over 1 MiB) prints\n" +
			"   {\"line\":N,\"error\":\"...\"}\n" +
			"and the rest are still judged; the exit status is then 1.\n\n" +
			"--features adds \"features\" to each line: what tier 1's learned scorer (shield/score) read of\n" +
			"the proposal, whatever it decided (the rule learned:risk names the heaviest when it asks).\n\n" +
			"EXAMPLE:\n" +
			"   echo '{\"tool\":\"execute_command\",\"arguments\":{\"command\":\"cat /etc/shadow\"}}' | opx shield eval --policy policy.yaml\n\n" +
			exitCodesHelp(""),
		Flags: append(ledgerloc.WorkspaceFlags(), &cli.StringFlag{
			Name:      "policy",
			Usage:     "policy `FILE` to judge with (default: the workspace's configured policy, else the built-in one)",
			TakesFile: true,
		}, &cli.BoolFlag{
			Name:  "features",
			Usage: "print the learned scorer's features of each proposal",
		}),
		Action: runShieldEval,
	}
}

func runShieldEval(c *cli.Context) error {
	args, err := wantArgs(c, 0, 1, "")
	if err != nil {
		return err
	}
	ev, err := newShieldEval(c)
	if err != nil {
		return err
	}
	defer ev.ws.Close()
	ev.features = c.Bool("features")
	in, name := io.Reader(c.App.Reader), "standard input"
	if len(args) == 1 && args[0] != "-" {
		f, err := os.Open(args[0])
		if err != nil {
			return err
		}
		defer f.Close()
		in, name = f, args[0]
	}
	if in == nil {
		in = os.Stdin
	}
	out := bufio.NewWriter(c.App.Writer)
	bad, err := ev.run(in, out)
	if ferr := out.Flush(); err == nil && ferr != nil {
		err = ferr
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	if bad > 0 {
		return fmt.Errorf("%d bad line(s) in %s", bad, name)
	}
	return nil
}

// shieldEval judges proposals the way the engine's pipeline does, with
// the engine's Shield (loadShield) and tool definitions (evalTools).
type shieldEval struct {
	eval  judge.Evaluator
	tools *executor.Registry
	ws    *executor.Workspace // held (O_PATH) for the tools' definitions; nothing runs in it
	// maxLine bounds a line; 0 means maxEvalLine.
	maxLine int
	// features: print the learned scorer's features (--features).
	features bool
	// taint is, per "session" named by the lines, the calls that read
	// something sensitive and were not blocked (an escalation may be
	// approved, and then the call runs), as the engine's taint
	// projection would hold them had each run.
	taint map[string][]event.Taint
}

// maxEvalSessions bounds the sessions opx shield eval remembers taint for.
const maxEvalSessions = 100000

// newShieldEval configures Shield as `opx start` would for the workspace,
// with --policy in place of the configured policy when given. It only
// reads: the state directory is named (protected), never created.
func newShieldEval(c *cli.Context) (*shieldEval, error) {
	ws, err := ledgerloc.WorkspaceDir(c)
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(ws)
	if err != nil {
		return nil, err
	}
	policyFile, policyName := "", cfg.Policy
	if cfg.Policy != "" {
		policyFile = filepath.Join(ws, cfg.Policy)
	}
	if p := c.String("policy"); p != "" {
		if policyFile, err = filepath.Abs(p); err != nil {
			return nil, err
		}
		policyName = p
	}
	return evalFor(ws, policyFile, policyName)
}

// evalFor is newShieldEval for a resolved workspace and policy file
// ("" for the built-in default).
func evalFor(ws, policyFile, policyName string) (*shieldEval, error) {
	lp, err := ledgerloc.WorkspaceLedger(ws)
	if err != nil {
		return nil, err
	}
	sh, err := loadShield(ws, policyFile, policyName, lp)
	if err != nil {
		return nil, err
	}
	// No rate limit: each proposal is judged a minute after the one
	// before, so the window never holds more than one.
	sc := sh.config
	var clock time.Time
	sc.Now = func() time.Time {
		clock = clock.Add(time.Minute)
		return clock
	}
	xws, err := executor.OpenWorkspace(ws)
	if err != nil {
		return nil, err
	}
	tools, err := evalTools(xws)
	if err != nil {
		xws.Close()
		return nil, err
	}
	return &shieldEval{eval: judge.ShieldEvaluator{S: shield.New(sc), FS: xws, Declared: judge.NewDeclarations()}, tools: tools, ws: xws}, nil
}

// evalTools is the registry of the engine's tools as engine.New builds it
// (files, edits, search, memory, and the shell, git and web tools opx
// start always configures). Only their definitions (Mutating) and Paths
// (the memory tools act on MEMORY.md) are used: nothing is executed.
func evalTools(ws *executor.Workspace) (*executor.Registry, error) {
	return executor.NewRegistry(executor.NewFiles(ws), executor.NewEdits(ws), executor.NewSearch(ws), executor.NewMemory(ws),
		executor.NewShell(ws, executor.ShellConfig{}), executor.NewGit(ws, executor.GitConfig{}), executor.NewHTTP(executor.HTTPConfig{}))
}

// evalVerdict is one tier's verdict as opx shield eval prints it.
type evalVerdict struct {
	Tier     int    `json:"tier"`
	Decision string `json:"decision"`
	Rule     string `json:"rule"`
	Reason   string `json:"reason"`
}

// evalResult is opx shield eval's line for one proposal.
type evalResult struct {
	ID          json.RawMessage `json:"id,omitempty"`
	Decision    string          `json:"decision"`
	Tier        int             `json:"tier"`
	Rule        string          `json:"rule"`
	Reason      string          `json:"reason"`
	Verdicts    []evalVerdict   `json:"verdicts"`
	UnknownTool bool            `json:"unknown_tool,omitempty"`
	// Sensitive, Manifests and Toolchain are what the engine would record
	// with the proposal: what it reads that is sensitive, the changes it
	// makes to manifests, and the programs it runs that the workspace
	// declares ("program=file").
	Sensitive []string                `json:"sensitive,omitempty"`
	Manifests []event.ManifestChanges `json:"manifests,omitempty"`
	Toolchain []string                `json:"toolchain,omitempty"`
	// Features are the learned scorer's features (--features).
	Features []string `json:"features,omitempty"`
}

// evalError is opx shield eval's line for a bad input line.
type evalError struct {
	Line  int             `json:"line"`
	ID    json.RawMessage `json:"id,omitempty"`
	Error string          `json:"error"`
}

// run judges every line of in and writes one line per proposal or bad
// line to out. It holds one line at a time (at most maxEvalLine bytes).
// The error is non-nil only when in or out failed.
func (e *shieldEval) run(in io.Reader, out io.Writer) (bad int, err error) {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	max := e.maxLine
	if max <= 0 {
		max = maxEvalLine
	}
	lr := lineReader{r: bufio.NewReaderSize(in, 64<<10), max: max}
	for n := 1; ; n++ {
		line, tooLong, err := lr.next()
		if errors.Is(err, io.EOF) {
			return bad, nil
		}
		if err != nil {
			return bad, err
		}
		var v any
		switch {
		case tooLong:
			v = evalError{Line: n, Error: fmt.Sprintf("line is longer than %d bytes", max)}
		case len(bytes.TrimSpace(line)) == 0:
			continue // blank lines separate nothing and ask nothing
		default:
			res, id, jerr := e.judge(n, line)
			if jerr != nil {
				v = evalError{Line: n, ID: id, Error: jerr.Error()}
			} else {
				v = res
			}
		}
		if _, isErr := v.(evalError); isErr {
			bad++
		}
		if err := enc.Encode(v); err != nil {
			return bad, err
		}
	}
}

// judge decodes one proposal line and judges it as Pipeline.Handle does
// before anything runs: canonical arguments, the tool's definition and
// Paths, every tier's verdict, and engine.Decide over them.
func (e *shieldEval) judge(n int, line []byte) (evalResult, json.RawMessage, error) {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(line, &in); err != nil || in == nil {
		return evalResult{}, nil, errors.New("not a JSON object")
	}
	id := in["id"]
	var tool string
	if raw, ok := in["tool"]; !ok || json.Unmarshal(raw, &tool) != nil || tool == "" {
		return evalResult{}, id, errors.New(`"tool" must be a non-empty string`)
	}
	rawArgs := bytes.TrimSpace(in["arguments"])
	if len(rawArgs) == 0 {
		rawArgs = []byte("{}") // as the engine reads a call without arguments
	}
	if rawArgs[0] != '{' {
		return evalResult{}, id, errors.New(`"arguments" must be a JSON object`)
	}
	args, err := ledger.Canonicalize(rawArgs)
	if err != nil {
		return evalResult{}, id, fmt.Errorf("arguments: %v", err)
	}
	def, known := e.tools.Def(tool)
	callID := "eval-" + strconv.Itoa(n)
	call := executor.Call{ID: callID, Tool: tool, Args: args}
	session := ""
	if raw, ok := in["session"]; ok && json.Unmarshal(raw, &session) != nil {
		return evalResult{}, id, errors.New(`"session" must be a string`)
	}
	prop := judge.Proposal{Session: "eval", CallID: callID, Tool: tool, Args: args, ActionHash: engine.ActionHash(tool, args),
		Def: def, Known: known, Paths: e.tools.Paths(call)}
	if session != "" {
		prop.Session = "eval:" + session
	}
	// As the engine does before it records a proposal: paths through
	// symlinks judged where they lead too, manifests' changes computed,
	// sensitive reads named, and the session's taint.
	if ob, ok := e.eval.(judge.Observer); ok {
		prop.Observe(ob.Observe(prop))
	}
	if session != "" {
		prop.Taint = e.taint[session]
	}
	vs := e.eval.Evaluate(context.Background(), prop)
	final := engine.Decide(vs)
	if session != "" && len(prop.Sensitive) > 0 && final.Decision != event.Block {
		if e.taint == nil {
			e.taint = map[string][]event.Taint{}
		}
		if _, seen := e.taint[session]; seen || len(e.taint) < maxEvalSessions {
			// As the projection keeps them.
			e.taint[session] = projection.KeepTaint(e.taint[session], event.Taint{Seq: uint64(n), CallID: callID}, prop.Sensitive)
		}
	}
	res := evalResult{ID: id, Decision: final.Decision, Tier: final.Tier, Rule: final.Rule, Reason: final.Reason,
		Verdicts: make([]evalVerdict, len(vs)), UnknownTool: !known, Sensitive: prop.Sensitive, Manifests: prop.Manifests,
		Toolchain: prop.Toolchain}
	for i, v := range vs {
		res.Verdicts[i] = evalVerdict{Tier: v.Tier, Decision: v.Decision, Rule: v.Rule, Reason: v.Reason}
	}
	if se, ok := e.eval.(judge.ShieldEvaluator); ok && e.features {
		res.Features = se.S.Features(se.Action(prop))
	}
	return res, id, nil
}

// lineReader reads lines of at most max bytes in bounded memory.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// next returns the next line without its line ending. A line longer than
// max is read to its end and dropped: tooLong, no content. It returns
// io.EOF after the last line (a last line without a newline is a line).
func (lr *lineReader) next() (line []byte, tooLong bool, err error) {
	lr.buf = lr.buf[:0]
	read := 0
	for {
		chunk, err := lr.r.ReadSlice('\n')
		read += len(chunk)
		if !tooLong {
			if len(lr.buf)+len(chunk) > lr.max+2 { // room for "\r\n"
				tooLong, lr.buf = true, lr.buf[:0]
			} else {
				lr.buf = append(lr.buf, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if read == 0 {
				return nil, false, io.EOF
			}
		case err != nil:
			return nil, false, err
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(lr.buf, []byte("\n")), []byte("\r"))
		if !tooLong && len(line) > lr.max {
			tooLong, line = true, nil
		}
		if tooLong {
			line = nil
		}
		return line, tooLong, nil
	}
}
