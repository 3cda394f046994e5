package agenttest_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/opx-dev/opx/internal/agenttest"
)

// TestServer_Hostile: a body over MaxBody is refused with 413 and recorded
// as truncated without taking a turn; malformed JSON and unknown paths get
// an answer, not a crash, and take no turn either.
func TestServer_Hostile(t *testing.T) {
	for _, tc := range []struct {
		name string
		new  func(testing.TB, ...agenttest.Turn) *agenttest.Server
		path string
	}{
		{"anthropic", agenttest.NewAnthropic, "/v1/messages"},
		{"openai", agenttest.NewOpenAI, "/v1/responses"},
		{"gemini", agenttest.NewGemini, "/v1beta/models/m:streamGenerateContent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := tc.new(t, agenttest.Shell("true"))
			post := func(path string, body []byte) int {
				resp, err := http.Post(srv.URL+path, "application/json", bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			big := append([]byte(`{"tools":[{}],"x":"`), bytes.Repeat([]byte("a"), agenttest.MaxBody)...)
			if code := post(tc.path, big); code != http.StatusRequestEntityTooLarge {
				t.Errorf("oversized body: %d", code)
			}
			post(tc.path, []byte("{not json"))
			post("/nowhere", nil)
			reqs := srv.Requests()
			if len(reqs) != 3 || !reqs[0].Truncated || len(reqs[0].Body) > agenttest.MaxBody {
				t.Errorf("requests: %s", srv.Describe())
			}
			if srv.Used() != 0 && tc.name != "openai" {
				t.Errorf("%d turns used by hostile requests", srv.Used())
			}
			if strings.Contains(srv.Describe(), "turn=0") && tc.name != "openai" {
				t.Errorf("a hostile request took the turn:\n%s", srv.Describe())
			}
		})
	}
}
