package engine_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// judgeTranscript scripts the tier 2 model: it finds the file's name in
// the action it is shown and answers allow, block or prose; t2/fail.md
// has no turn, so the provider fails.
const judgeTranscript = `{"model": "judge-1", "turns": [
  {"match": "t2/safe\\.md", "steps": [{"text": "{\"decision\":\"allow\",\"reason\":\"reads a plain file in the workspace\"}"}]},
  {"match": "t2/danger\\.md", "steps": [{"text": "{\"decision\":\"block\",\"reason\":\"the file looks dangerous\"}"}]},
  {"match": "t2/garbled\\.md", "steps": [{"text": "Sure, that looks fine to me!"}]}
]}`

func judgeModel(t *testing.T) llm.Provider {
	t.Helper()
	tr, err := llm.ParseTranscript([]byte(judgeTranscript))
	if err != nil {
		t.Fatal(err)
	}
	return llm.NewScripted(tr)
}

// tier2Exchanges returns the tier 2 llm.request and llm.response entries.
func tier2Exchanges(t *testing.T, h *harness) (reqs []*event.LLMRequest, resps []*event.LLMResponse) {
	t.Helper()
	h.l.Sync(context.Background())
	head, _ := h.l.Head()
	h.l.Range(0, head.Seq, func(e ledger.Entry) error {
		p, _ := event.Decode(e)
		switch x := p.(type) {
		case *event.LLMRequest:
			if strings.HasPrefix(x.RequestID, "tier2_") {
				reqs = append(reqs, x)
			}
		case *event.LLMResponse:
			if strings.HasPrefix(x.RequestID, "tier2_") {
				resps = append(resps, x)
			}
		}
		return nil
	})
	return reqs, resps
}

// TestTier2_Verdicts: the model's allow runs the tool; its block, an
// answer that is not the strict JSON object, and a failed call all block.
// Each exchange is recorded like the gateway's (request body blob before,
// raw response blob after), then the tier 2 verdict.
func TestTier2_Verdicts(t *testing.T) {
	h := startHarness(t, "", "", func(o *engine.Options) { o.Tier2Provider = judgeModel(t) })
	tests := []struct {
		file, rule string
		allowed    bool
	}{
		{"t2/safe.md", "tier2:llm-evaluator", true},
		{"t2/danger.md", "tier2:llm-evaluator", false},
		{"t2/garbled.md", "tier2:malformed", false},
		{"t2/fail.md", "tier2:error", false},
	}
	for i, tt := range tests {
		id := "c" + string(rune('1'+i))
		r := h.call(id, "read_file", `{"path":"`+tt.file+`"}`)
		if r.IsError == tt.allowed || (!tt.allowed && !strings.Contains(r.Content, tt.rule)) {
			t.Errorf("%s: result %v, want allowed=%v by %s", tt.file, r, tt.allowed, tt.rule)
		}
		got := story(h.entries(id))
		decision := "block"
		if tt.allowed {
			decision = "allow"
		}
		want := "shield.verdict:escalate/2/policy:model-reads shield.verdict:allow/1/heuristics:none shield.verdict:" + decision + "/2/" + tt.rule
		if !strings.Contains(got, want) || strings.Contains(got, "approval.") || strings.Contains(got, "exec.started") != tt.allowed {
			t.Errorf("%s: ledger %s\nwant %s", tt.file, got, want)
		}
	}
	reqs, resps := tier2Exchanges(t, h)
	if len(reqs) != 4 || len(resps) != 4 {
		t.Fatalf("%d tier 2 requests, %d responses, want 4 each", len(reqs), len(resps))
	}
	body, err := h.l.GetBlob(mustHash(t, reqs[0].Blob))
	if err != nil || !strings.Contains(string(body), "tier 2 safety evaluator") || !strings.Contains(string(body), `t2/safe.md`) || reqs[0].Model != "judge-1" {
		t.Errorf("request body %s, %v", body, err)
	}
	raw, err := h.l.GetBlob(mustHash(t, resps[0].Blob))
	if err != nil || !strings.Contains(string(raw), `plain `) || resps[0].RequestID != reqs[0].RequestID {
		t.Errorf("raw response %s, %v", raw, err)
	}
	if resps[3].Error == "" || resps[3].Blob != "" {
		t.Errorf("failed call recorded as %+v", resps[3])
	}
}

// TestTier2_ProviderError: a provider that answers 503 (after its
// retries) blocks, and the failure is on record with its status.
func TestTier2_ProviderError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	p, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL, Model: "judge-http"})
	if err != nil {
		t.Fatal(err)
	}
	h := startHarness(t, "", "", func(o *engine.Options) {
		o.Tier2Provider = p
		o.Retry = llm.RetryPolicy{MaxAttempts: 2, Sleep: func(context.Context, time.Duration) error { return nil }}
	})
	if r := h.call("c1", "read_file", `{"path":"t2/safe.md"}`); !r.IsError || !strings.Contains(r.Content, "tier2:error") {
		t.Fatalf("result %v", r)
	}
	_, resps := tier2Exchanges(t, h)
	if len(resps) != 1 || resps[0].Status != 503 || resps[0].Attempts != 2 || resps[0].Error == "" {
		t.Errorf("recorded %+v", resps)
	}
}

// TestTier2_BudgetSurvivesRestart: over the daily budget tier 2 blocks
// without calling the model, and a restarted engine on the same ledger
// counts the calls already made today.
func TestTier2_BudgetSurvivesRestart(t *testing.T) {
	budget := func(n int) func(*engine.Options) {
		return func(o *engine.Options) { o.Tier2Provider, o.Tier2DailyBudget = judgeModel(t), n }
	}
	h := startHarness(t, "", "", budget(2))
	ws, path := h.ws, h.path
	h.call("c1", "read_file", `{"path":"t2/safe.md"}`)
	h.call("c2", "read_file", `{"path":"README.md"}`) // allowed by tier 0: no tier 2 call
	h.call("c3", "read_file", `{"path":"t2/danger.md"}`)
	if r := h.call("c4", "read_file", `{"path":"t2/safe.md"}`); !r.IsError || !strings.Contains(r.Content, "tier2:budget") {
		t.Fatalf("third tier 2 call: %v, want tier2:budget", r)
	}
	if reqs, _ := tier2Exchanges(t, h); len(reqs) != 2 {
		t.Fatalf("%d tier 2 calls, want 2", len(reqs))
	}
	h.stop()

	h = startHarness(t, ws, path, budget(2))
	if r := h.call("c5", "read_file", `{"path":"t2/safe.md"}`); !r.IsError || !strings.Contains(r.Content, "tier2:budget") {
		t.Fatalf("after a restart: %v, want tier2:budget", r)
	}
	h.stop()

	h = startHarness(t, ws, path, budget(3))
	if r := h.call("c6", "read_file", `{"path":"t2/safe.md"}`); r.IsError {
		t.Fatalf("with one call left: %v", r)
	}
	if r := h.call("c7", "read_file", `{"path":"t2/safe.md"}`); !r.IsError || !strings.Contains(r.Content, "tier2:budget") {
		t.Fatalf("budget of 3 after 3 calls: %v", r)
	}
	if reqs, _ := tier2Exchanges(t, h); len(reqs) != 3 {
		t.Errorf("%d tier 2 calls on record, want 3", len(reqs))
	}
}
