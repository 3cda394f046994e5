package cli

import (
	"fmt"
	"strings"

	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/engine/redrive"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay/rerun"
	"github.com/urfave/cli/v2"
)

// hookRerunOutput is `opx replay SESSION --rerun --json` for a session of
// an agent audited through its hooks: nothing re-driven (Redriven false,
// Note says why), every recorded proposal re-judged.
type hookRerunOutput struct {
	LedgerID     string         `json:"ledger_id"`
	Verification *ledger.Report `json:"verification"`
	Redriven     bool           `json:"redriven"`
	Note         string         `json:"note"`
	*redrive.RejudgeReport
}

// hookRerunNote says why a hook session is re-judged, not re-driven.
const hookRerunNote = "the agent's model calls cannot be re-driven: they did not pass through opx (the agent's transcript holds them), " +
	"and opx ran none of its tools; every recorded proposal is re-judged instead, under the policy recorded in force"

// runHookRerun is --rerun of a hook session: every recorded proposal
// re-judged under the policy recorded in force, and each verdict that
// would change listed. A decision that would change is a divergence
// (exit 4, as a rerun's); a change of rule alone is reported, no more.
func runHookRerun(c *cli.Context, rec *rerun.Recording, out rerunOutput) error {
	w, asJSON := c.App.Writer, c.Bool("json")
	if !asJSON {
		// Said first: a record that cannot be re-judged (no policy text
		// recorded) ends the command below.
		agent := "agent unknown: no hook.session recorded"
		if a := rec.Hook.Agent; a != nil {
			agent = strings.TrimSpace(event.HookAgentName(a.Agent) + " " + printable(a.AgentVersion))
		}
		fmt.Fprintf(w, "rerun of %s session %s (%s): %d recorded events, %s, %d proposals, %s\n", rec.Mode, rec.Session, agent, len(rec.Entries),
			ui.Plural(uint64(len(rec.Hook.Calls)), "agent call", "agent calls"), len(rec.Proposals), ui.Plural(uint64(len(rec.Messages)), "prompt", "prompts"))
		fmt.Fprintln(w, hookRerunNote)
	}
	rj, err := redrive.Rejudge(rec)
	if err != nil {
		return fmt.Errorf("rerun session %s: %w", rec.Session, err)
	}
	if asJSON {
		if err := ui.WriteJSON(c, hookRerunOutput{LedgerID: out.LedgerID, Verification: out.Verification, Note: hookRerunNote, RejudgeReport: rj}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(w, "policy recorded in force: %s\n", strings.Join(shortHashes(rj.Policies), ", "))
		if len(rj.RecordedRules) > 0 {
			fmt.Fprintf(w, "note: the session was judged by Shield rules version %s; this opx has version %s, so a change may come from the rules\n",
				strings.Join(rj.RecordedRules, ", "), rj.Rules)
		}
		switch {
		case rj.Identical && rj.RuleChanges > 0:
			fmt.Fprintf(w, "%s: the %d proposals reach the same decisions (%s by another rule)\n", ui.Green(w, "identical"), rj.Proposals,
				ui.Plural(uint64(rj.RuleChanges), "verdict", "verdicts"))
		case rj.Identical:
			fmt.Fprintf(w, "%s: the %d proposals reach the same decisions by the same rules\n", ui.Green(w, "identical"), rj.Proposals)
		default:
			fmt.Fprintf(w, "%s: %s of %d would differ under the recorded policy\n", ui.Red(w, "divergence"),
				ui.Plural(uint64(rj.DecisionChanges), "decision", "decisions"), rj.Proposals)
		}
		printChanges(w, rj.Changes)
	}
	if !rj.Identical {
		return fmt.Errorf("session %s: %d decision(s) would differ under the recorded policy: %w", rec.Session, rj.DecisionChanges, rerun.ErrDiverged)
	}
	return nil
}

func shortHashes(hs []string) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = shortHash(h)
	}
	return out
}
