package main_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	"github.com/opx-dev/opx/ledger/tlog"
	"github.com/opx-dev/opx/sandbox"
	"github.com/opx-dev/opx/shield"
)

// End-to-end tests of `opx replay --rerun` and `opx replay --policy`: the
// real binary re-drives the real sandboxed agent against a ledger `opx
// demo` wrote.

// demoRun is a finished `opx demo`: its ledger, session and workspace.
type demoRun struct {
	ledger, session, workspace string
}

// runDemo runs `opx demo` (in a temporary workspace, or in ws when given,
// with state under state) and returns where it left its record.
func runDemo(t *testing.T, bin, ws, state string) demoRun {
	t.Helper()
	args := []string{"demo"}
	if ws != "" {
		args = append(args, "--workspace", ws)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "OPX_LEDGER=", "TMPDIR="+t.TempDir())
	if state != "" {
		cmd.Env = append(cmd.Env, "XDG_STATE_HOME="+state, "XDG_CACHE_HOME="+filepath.Join(state, "cache"))
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("opx demo: %v\n%s", err, out)
	}
	var d demoRun
	for _, line := range strings.Split(string(out), "\n") {
		if p, ok := strings.CutPrefix(line, "ledger    "); ok {
			d.ledger = p
		}
		if p, ok := strings.CutPrefix(line, "workspace "); ok && d.workspace == "" {
			d.workspace = p
		}
	}
	d.session = regexp.MustCompile(`ses_[0-9a-f]{16}`).FindString(string(out))
	if d.ledger == "" || d.session == "" {
		t.Fatalf("no ledger or session in the demo's output:\n%s", out)
	}
	return d
}

// rerunJSON is what the tests read of `opx replay --rerun --json`.
type rerunJSON struct {
	Identical bool   `json:"identical"`
	Events    int    `json:"events"`
	SubAgents int    `json:"subagents"`
	Agent     string `json:"agent"`
	// SubAgentSandboxes are the re-driven sub-agents' canary statuses.
	SubAgentSandboxes map[string]string `json:"subagent_sandboxes"`
	Divergence        *struct {
		Kind       string `json:"kind"`
		SubAgentID string `json:"subagent_id"`
		Seq        uint64 `json:"seq"`
		Type       string `json:"type"`
		Diff       string `json:"diff"`
	} `json:"divergence"`
}

func rerunOnce(t *testing.T, bin, path, session string) (rerunJSON, string, int) {
	t.Helper()
	out, errOut, code := runOpx(t, bin, "replay", session, "--rerun", "--json", "--ledger", path)
	var r rerunJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("opx replay --rerun --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	return r, out + errOut, code
}

// TestE2E_Rerun runs the demo once and then: (a) reruns its session three
// times, each identical, without touching the demo's workspace; (b)
// alters one recorded model response in a re-chained copy of the ledger
// (which verifies strictly) and finds the rerun diverging at exactly that
// entry, while an unaltered copy imported the same way reruns identically
// with the workspace gone.
func TestE2E_Rerun(t *testing.T) {
	t.Parallel()
	bin := buildOpx(t)
	d := runDemo(t, bin, "", "")

	t.Run("identical three times", func(t *testing.T) {
		before := treeDigest(t, d.workspace)
		events := 0
		for i := 0; i < 3; i++ {
			r, out, code := rerunOnce(t, bin, d.ledger, d.session)
			if code != 0 || !r.Identical || r.Events < 80 {
				t.Fatalf("rerun %d: exit %d, identical %v, %d events\n%s", i, code, r.Identical, r.Events, out)
			}
			if sandboxRequired() && r.Agent != "sandboxed" {
				t.Errorf("rerun %d: the agent was %q, want the sandboxed agent", i, r.Agent)
			}
			if events != 0 && r.Events != events {
				t.Errorf("rerun %d compared %d events, the first %d", i, r.Events, events)
			}
			events = r.Events
		}
		out, _, code := runOpx(t, bin, "replay", d.session, "--rerun", "--ledger", d.ledger)
		if want := fmt.Sprintf("identical: %d events", events); code != 0 || !strings.Contains(out, want) {
			t.Errorf("opx replay --rerun: exit %d, want %q:\n%s", code, want, out)
		}
		if after := treeDigest(t, d.workspace); after != before {
			t.Error("a rerun changed the recorded workspace")
		}
	})

	t.Run("altered response diverges there", func(t *testing.T) {
		dir := t.TempDir()
		export := filepath.Join(dir, "demo.jsonl")
		if out, errOut, code := runOpx(t, bin, "ledger", "export", "-o", export, "--ledger", d.ledger); code != 0 {
			t.Fatalf("export: %d\n%s%s", code, out, errOut)
		}
		// The unaltered copy, imported where no engine ever ran, with the
		// recorded workspace gone.
		plain := filepath.Join(dir, "plain.db")
		if out, errOut, code := runOpx(t, bin, "ledger", "import", export, "--ledger", plain); code != 0 {
			t.Fatalf("import: %d\n%s%s", code, out, errOut)
		}
		if err := os.RemoveAll(d.workspace); err != nil {
			t.Fatal(err)
		}
		if r, out, code := rerunOnce(t, bin, plain, d.session); code != 0 || !r.Identical {
			t.Fatalf("rerun of the imported copy: exit %d\n%s", code, out)
		}

		seq, _ := alterFirstAnswer(t, export, d.session, filepath.Dir(d.ledger), false)
		altered := filepath.Join(dir, "altered.db")
		if out, errOut, code := runOpx(t, bin, "ledger", "import", export, "--ledger", altered); code != 0 {
			t.Fatalf("import of the altered export: %d\n%s%s", code, out, errOut)
		}
		if out, errOut, code := runOpx(t, bin, "ledger", "verify", "--strict", "--ledger", altered); code != 0 {
			t.Fatalf("the altered copy does not verify: %d\n%s%s", code, out, errOut)
		}
		ledgertest.MustVerify(t, altered, event.StrictOptions())
		r, out, code := rerunOnce(t, bin, altered, d.session)
		if code != 4 || r.Identical || r.Divergence == nil {
			t.Fatalf("rerun of the altered copy: exit %d, want 4 and a divergence\n%s", code, out)
		}
		if r.Divergence.Seq != seq || r.Divergence.Type != event.TypeLLMResponse || r.Divergence.Kind != "payload" {
			t.Errorf("diverged at seq %d (%s, %s), want seq %d (llm.response, payload)\n%s", r.Divergence.Seq, r.Divergence.Type, r.Divergence.Kind, seq, r.Divergence.Diff)
		}
		if !strings.Contains(r.Divergence.Diff, "ALTERED") {
			t.Errorf("the diff does not show the altered text:\n%s", r.Divergence.Diff)
		}
		text, _, code := runOpx(t, bin, "replay", d.session, "--rerun", "--ledger", altered)
		t.Logf("opx replay %s --rerun on the altered copy:\n%s", d.session, text)
		if want := fmt.Sprintf("divergence at seq %d (llm.response)", seq); code != 4 || !strings.Contains(text, want) || !strings.Contains(text, "+++ produced seq") {
			t.Errorf("opx replay --rerun: exit %d, want 4 and %q with a diff:\n%s", code, want, text)
		}
	})
}

// TestE2E_RerunSubAgentDiverges: the demo's session spawns two sandboxed
// sub-agents; its rerun re-drives them too (identical), and one of a
// sub-agent's recorded answers altered in a re-chained copy diverges
// there, exit 4, naming the sub-agent.
func TestE2E_RerunSubAgentDiverges(t *testing.T) {
	t.Parallel()
	bin := buildOpx(t)
	d := runDemo(t, bin, "", "")
	r, out, code := rerunOnce(t, bin, d.ledger, d.session)
	if code != 0 || !r.Identical || r.SubAgents != 2 || len(r.SubAgentSandboxes) != 2 {
		t.Fatalf("rerun: exit %d, identical %v, %d sub-agents (%v), want 2\n%s", code, r.Identical, r.SubAgents, r.SubAgentSandboxes, out)
	}
	for id, st := range r.SubAgentSandboxes {
		if sandboxRequired() && st != event.CanarySandboxed {
			t.Errorf("the rerun's sub-agent %s was %q, want sandboxed", id, st)
		}
	}
	dir := t.TempDir()
	export := filepath.Join(dir, "demo.jsonl")
	if out, errOut, code := runOpx(t, bin, "ledger", "export", "-o", export, "--ledger", d.ledger); code != 0 {
		t.Fatalf("export: %d\n%s%s", code, out, errOut)
	}
	seq, sub := alterFirstAnswer(t, export, d.session, filepath.Dir(d.ledger), true)
	altered := filepath.Join(dir, "altered.db")
	if out, errOut, code := runOpx(t, bin, "ledger", "import", export, "--ledger", altered); code != 0 {
		t.Fatalf("import of the altered export: %d\n%s%s", code, out, errOut)
	}
	r, out, code = rerunOnce(t, bin, altered, d.session)
	if code != 4 || r.Divergence == nil || r.Divergence.Seq != seq || r.Divergence.SubAgentID != sub || r.Divergence.Type != event.TypeLLMResponse {
		t.Fatalf("rerun of the altered copy: exit %d, divergence %+v, want 4 at seq %d (llm.response of %s)\n%s", code, r.Divergence, seq, sub, out)
	}
	text, _, code := runOpx(t, bin, "replay", d.session, "--rerun", "--ledger", altered)
	if want := fmt.Sprintf("divergence at seq %d (llm.response, sub-agent %s)", seq, sub); code != 4 || !strings.Contains(text, want) {
		t.Errorf("opx replay --rerun: exit %d, want 4 and %q:\n%s", code, want, text)
	}
}

// TestE2E_WhatIf runs the demo under a workspace policy that denies shell
// scripts, then asks what the built-in policy would have decided: the two
// blocked `sh test.sh` calls are listed as block -> allow. The session,
// recorded under its own policy file, also reruns identically.
func TestE2E_WhatIf(t *testing.T) {
	t.Parallel()
	bin := buildOpx(t)
	ws, state := t.TempDir(), t.TempDir()
	def, err := os.ReadFile("../../fixtures/policies/default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	strict := strings.Replace(string(def), "deny:\n", "deny:\n  - name: no-scripts\n    tools: [execute_command]\n    commands: ['^\\s*sh\\s']\n", 1)
	if err := os.MkdirAll(filepath.Join(ws, ".opx"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{".opx/no-scripts.yaml": strict, ".opx/config.yaml": "policy: .opx/no-scripts.yaml\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d := runDemo(t, bin, ws, state)

	out, errOut, code := runOpx(t, bin, "replay", d.session, "--policy", "../../fixtures/policies/default.yaml", "--json", "--ledger", d.ledger)
	var wi struct {
		Proposals       int      `json:"proposals"`
		RecordedRules   []string `json:"recorded_rules"`
		Rules           string   `json:"rules"`
		DecisionChanges int      `json:"decision_changes"`
		RuleChanges     int      `json:"rule_changes"`
		Changes         []struct {
			Kind     string `json:"kind"`
			Seq      uint64 `json:"seq"`
			Tool     string `json:"tool"`
			Args     string `json:"arguments"`
			Old, New struct {
				Decision string `json:"decision"`
				Tier     int    `json:"tier"`
				Rule     string `json:"rule"`
			}
		} `json:"changes"`
	}
	if err := json.Unmarshal([]byte(out), &wi); code != 0 || err != nil {
		t.Fatalf("opx replay --policy --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if wi.Rules != shield.RulesVersion || len(wi.RecordedRules) != 0 {
		t.Errorf("rules %q, recorded under other rules %v: want %s and none (recorded by this opx)", wi.Rules, wi.RecordedRules, shield.RulesVersion)
	}
	// The agent ran the tests twice, and the demo's test sub-agent once.
	if len(wi.Changes) != 3 || wi.Proposals < 8 || wi.DecisionChanges != 3 || wi.RuleChanges != 0 {
		t.Fatalf("%d of %d proposals would change, want the 3 scripts:\n%s", len(wi.Changes), wi.Proposals, out)
	}
	for _, ch := range wi.Changes {
		if ch.Kind != "decision" {
			t.Errorf("change %+v: kind %q, want decision", ch, ch.Kind)
		}
		if ch.Tool != "execute_command" || !strings.Contains(ch.Args, "sh test.sh") ||
			ch.Old.Decision != "block" || ch.Old.Rule != "policy:no-scripts" || ch.New.Decision != "allow" || ch.New.Rule != "policy:workspace-scripts" {
			t.Errorf("change %+v, want execute_command sh test.sh: block policy:no-scripts -> allow policy:workspace-scripts", ch)
		}
		l, err := ledger.OpenReadOnly(d.ledger)
		if err != nil {
			t.Fatal(err)
		}
		e, err := l.Get(ch.Seq)
		l.Close()
		if err != nil || e.Type != event.TypeShieldVerdict || !strings.Contains(string(e.Data), `"decision":"block"`) {
			t.Errorf("seq %d is %s %s, want the recorded blocking verdict", ch.Seq, e.Type, e.Data)
		}
	}
	text, _, code := runOpx(t, bin, "replay", d.session, "--policy", "../../fixtures/policies/default.yaml", "--ledger", d.ledger)
	if code != 0 || !strings.Contains(text, "block tier 0 policy:no-scripts  ->  allow tier 0 policy:workspace-scripts") {
		t.Errorf("opx replay --policy: exit %d\n%s", code, text)
	}
	// The same policy with the rule renamed changes no decision: the three
	// verdicts are listed apart, as reached by another rule.
	renamed := filepath.Join(t.TempDir(), "renamed.yaml")
	os.WriteFile(renamed, []byte(strings.Replace(strict, "name: no-scripts", "name: no-shell-scripts", 1)), 0o644)
	out, _, code = runOpx(t, bin, "replay", d.session, "--policy", renamed, "--json", "--ledger", d.ledger)
	wi.Changes = nil
	if err := json.Unmarshal([]byte(out), &wi); code != 0 || err != nil || wi.DecisionChanges != 0 || wi.RuleChanges != 3 || len(wi.Changes) != 3 || wi.Changes[0].Kind != "rule" {
		t.Errorf("renamed rule: exit %d, %v, %d decision and %d rule changes, want 0 and 3\n%s", code, err, wi.DecisionChanges, wi.RuleChanges, out)
	}
	text, _, _ = runOpx(t, bin, "replay", d.session, "--policy", renamed, "--ledger", d.ledger)
	if !strings.Contains(text, "0 decisions would change; 3 verdicts would reach the same decision by another rule") {
		t.Errorf("renamed rule, text:\n%s", text)
	}
	// A bad policy file is a usage error; a missing one an operational one.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("version: 2\n"), 0o644)
	if _, errOut, code := runOpx(t, bin, "replay", d.session, "--policy", bad, "--ledger", d.ledger); code != 2 || !strings.Contains(errOut, "version 2") {
		t.Errorf("bad policy: exit %d, %s", code, errOut)
	}
	if _, _, code := runOpx(t, bin, "replay", d.session, "--policy", bad+".missing", "--ledger", d.ledger); code != 1 {
		t.Errorf("missing policy: exit %d, want 1", code)
	}
	if r, out, code := rerunOnce(t, bin, d.ledger, d.session); code != 0 || !r.Identical {
		t.Errorf("rerun under a workspace policy: exit %d\n%s", code, out)
	}
}

// sandboxRequired reports whether the re-driven agent must be sandboxed:
// wherever the kernel sandbox exists, and always on CI (needSandbox).
func sandboxRequired() bool { return sandbox.New().Available() || os.Getenv("CI") == "true" }

// treeDigest hashes a directory tree's paths, modes and contents.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v\n", p, info.Mode())
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// alterFirstAnswer rewrites, in a JSONL export and its blob bundle, the
// raw body of the session's first model response that carries text (the
// first of a sub-agent's when sub): its first text chunk gets "ALTERED "
// in front. The entry names the new blob (hash and size), and every entry
// from it on is re-chained (prev is the BLAKE3 of the previous line, a
// checkpoint's tree root that of the lines before it), so the export
// verifies as a whole. It returns the altered entry's seq and sub-agent.
func alterFirstAnswer(t *testing.T, export, session, keyDir string, sub bool) (uint64, string) {
	t.Helper()
	raw, err := os.ReadFile(export)
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]byte
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
	}
	bundle := ledger.BundlePath(export)
	at := -1
	for i, line := range lines {
		en := decodeLine(t, line)
		data := en["data"].(map[string]any)
		if en["session"] != session || en["type"] != event.TypeLLMResponse || data["text"] == "" || data["blob"] == nil ||
			sub != (data["subagent_id"] != nil) {
			continue
		}
		old := data["blob"].(string)
		body := readBundleBlob(t, bundle, old)
		marker := []byte(`"content":"`)
		k := bytes.Index(body, marker)
		if k < 0 {
			t.Fatalf("no text chunk in the response body of line %d", i)
		}
		k += len(marker)
		altered := append(append(append([]byte(nil), body[:k]...), "ALTERED "...), body[k:]...)
		sum := ledger.Sum(altered).String()
		writeBundleBlob(t, bundle, sum, altered)
		if err := os.Remove(filepath.Join(bundle, old+".zst")); err != nil {
			t.Fatal(err)
		}
		data["blob"], data["size"] = sum, json.Number(fmt.Sprint(len(altered)))
		lines[i] = encodeLine(t, en)
		at = i
		break
	}
	if at < 0 {
		t.Fatal("no model response with text in the session")
	}
	// Re-chained, and the Merkle roots later checkpoints record recomputed
	// and re-signed with the key in the state directory, as a forger who
	// owns the machine would.
	if err := ledgertest.Relink(lines, at+1); err != nil {
		t.Fatal(err)
	}
	resign(t, lines, at+1, keyDir)
	if err := os.WriteFile(export, append(bytes.Join(lines, []byte("\n")), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	// The manifest names the hashes at the end of the export.
	mpath := filepath.Join(bundle, ledger.ManifestName)
	mb, err := os.ReadFile(mpath)
	if err != nil {
		t.Fatal(err)
	}
	var m ledger.Manifest
	if err := json.Unmarshal(mb, &m); err != nil {
		t.Fatal(err)
	}
	m.LastHash = ledger.Sum(lines[len(lines)-1]).String()
	m.HeadHash = m.LastHash
	// The bundled checkpoint and its inclusion proofs no longer match: the
	// forger drops them, and the export passes for one of a ledger that
	// signed nothing (only a key or a checkpoint saved elsewhere, verify
	// --key or --since, tells).
	m.Checkpoint, m.VerifierKey, m.Proofs = "", "", nil
	if mb, err = json.MarshalIndent(m, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mpath, mb, 0o644); err != nil {
		t.Fatal(err)
	}
	en := decodeLine(t, lines[at])
	var seq uint64
	fmt.Sscan(fmt.Sprint(en["seq"]), &seq)
	id, _ := en["data"].(map[string]any)["subagent_id"].(string)
	return seq, id
}

func decodeLine(t *testing.T, line []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("export line: %v", err)
	}
	return m
}

// encodeLine writes an entry in the ledger's canonical form.
func encodeLine(t *testing.T, m map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ledger.Canonicalize(b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func readBundleBlob(t *testing.T, bundle, hash string) []byte {
	t.Helper()
	zb, err := os.ReadFile(filepath.Join(bundle, hash+".zst"))
	if err != nil {
		t.Fatal(err)
	}
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	b, err := dec.DecodeAll(zb, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeBundleBlob(t *testing.T, bundle, hash string, content []byte) {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	if err := os.WriteFile(filepath.Join(bundle, hash+".zst"), enc.EncodeAll(content, nil), 0o644); err != nil {
		t.Fatal(err)
	}
}

// resign signs again, with the key in keyDir, the note of every
// ledger.checkpoint from index from on (its tree already recomputed by
// ledgertest.Relink), re-chaining the lines after each.
func resign(t *testing.T, lines [][]byte, from int, keyDir string) {
	t.Helper()
	signer, err := tlog.LoadKey(keyDir)
	if err != nil {
		t.Fatal(err)
	}
	for i := from; i < len(lines); i++ {
		en := decodeLine(t, lines[i])
		if en["type"] != ledger.TypeCheckpoint {
			continue
		}
		data := en["data"].(map[string]any)
		if _, ok := data["note"]; !ok {
			continue
		}
		size, err := data["tree_size"].(json.Number).Int64()
		if err != nil {
			t.Fatal(err)
		}
		root, err := ledger.DecodeTreeRoot(data["tree_root"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if data["note"], err = signer.Sign(uint64(size), root); err != nil {
			t.Fatal(err)
		}
		lines[i] = encodeLine(t, en)
		if err := ledgertest.Relink(lines, i+1); err != nil {
			t.Fatal(err)
		}
	}
}
