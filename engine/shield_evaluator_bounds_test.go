package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/opx-dev/opx/engine/executor"
)

// TestShieldEvaluator_TooLarge: an argument over the executor's own cap
// for it is refused before Shield reads it (input:too-large); at the cap
// it is judged as usual.
func TestShieldEvaluator_TooLarge(t *testing.T) {
	e := defaultEvaluator(t)
	arg := func(k, v string) string {
		b, _ := json.Marshal(map[string]string{k: v, "path": "notes.txt", "url": "http://localhost:3000/x", "method": "POST"})
		return string(b)
	}
	for _, c := range []struct {
		tool, key string
		cap       int
	}{
		{"execute_command", "command", executor.MaxCommandBytes},
		{"memory_append", "text", executor.MaxMemoryAppend},
		{"write_file", "content", executor.MaxWriteBytes},
		{"edit_file", "new", executor.MaxWriteBytes},
		{"http_request", "body", executor.MaxHTTPRequestBody},
	} {
		over := proposal(t, c.tool, arg(c.key, "echo "+strings.Repeat("a", c.cap)))
		if got := decided(e.Evaluate(context.Background(), over)); got != "block input:too-large" {
			t.Errorf("%s over the cap: %s", c.tool, got)
		}
		at := proposal(t, c.tool, arg(c.key, "echo "+strings.Repeat("a", c.cap-5)))
		if got := decided(e.Evaluate(context.Background(), at)); got == "block input:too-large" {
			t.Errorf("%s at the cap: %s", c.tool, got)
		}
	}
}
