package cli_test

import (
	"encoding/json"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// TestMetrics: the counts `opx metrics` shows are the sample's own: every
// verdict by tier, rule and decision, every model response by model with
// its tokens, every execution by tool.
func TestMetrics(t *testing.T) {
	path := importedSample(t)
	verdicts, calls, tokens, execs := map[[3]string]uint64{}, map[string]uint64{}, map[string]uint64{}, map[string]uint64{}
	durations := map[string]uint64{} // failed calls' too
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := l.Head()
	err = l.Range(0, h.Seq, func(e ledger.Entry) error {
		p, err := event.Decode(e)
		if err != nil {
			return nil
		}
		switch p := p.(type) {
		case *event.ShieldVerdict:
			verdicts[[3]string{itoa(p.Tier), p.Rule, p.Decision}]++
		case *event.LLMResponse:
			calls[p.Model]++
			tokens[p.Model] += uint64(p.Usage.InputTokens)
		case *event.ExecCompleted:
			execs[p.Tool]++
			durations[p.Tool] += uint64(p.DurationMS)
		case *event.ExecFailed:
			execs[p.Tool]++
			durations[p.Tool] += uint64(p.DurationMS)
		}
		return nil
	})
	l.Close()
	if err != nil || len(verdicts) < 3 || len(calls) == 0 || len(execs) < 2 {
		t.Fatalf("the sample: %v %v %v %v", verdicts, calls, execs, err)
	}
	r := run(t, "metrics", "--json", "--ledger", path)
	r.wantCode(t, cli.ExitOK)
	var out struct {
		Verdicts []struct {
			Tier           int
			Rule, Decision string
			Count          uint64
		}
		Models []struct {
			Model       string
			Calls       uint64
			InputTokens uint64 `json:"input_tokens"`
		}
		Tools []struct {
			Tool       string
			Calls      uint64
			DurationMS uint64 `json:"duration_ms"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Verdicts) != len(verdicts) || len(out.Models) != len(calls) || len(out.Tools) != len(execs) {
		t.Fatalf("metrics %s\nentries: %v %v %v", r.stdout, verdicts, calls, execs)
	}
	for _, v := range out.Verdicts {
		if n := verdicts[[3]string{itoa(v.Tier), v.Rule, v.Decision}]; n != v.Count {
			t.Errorf("verdict %+v: the entries have %d", v, n)
		}
	}
	for _, m := range out.Models {
		if m.Calls != calls[m.Model] || m.InputTokens != tokens[m.Model] {
			t.Errorf("model %+v: the entries have %d calls, %d input tokens", m, calls[m.Model], tokens[m.Model])
		}
	}
	for _, tl := range out.Tools {
		if tl.Calls != execs[tl.Tool] || tl.DurationMS != durations[tl.Tool] {
			t.Errorf("tool %+v: the entries have %d", tl, execs[tl.Tool])
		}
	}
	run(t, "metrics", "--ledger", path).wantOut(t, "SHIELD VERDICTS", "MODEL CALLS", "TOOL CALLS")
	run(t, "metrics", "x", "--ledger", path).wantCode(t, cli.ExitUsage)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
