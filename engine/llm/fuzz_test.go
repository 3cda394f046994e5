package llm_test

import (
	"errors"
	"testing"

	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/fixtures"
)

// FuzzParseTranscript: no transcript makes ParseTranscript panic; every
// refusal is ErrConfig.
func FuzzParseTranscript(f *testing.F) {
	f.Add(fixtures.DefaultTranscript)
	f.Add([]byte(`{"model":"m","turns":[{"match":"(","reply":{"content":"x"}}]}`))
	f.Add([]byte(`{"model":"m","turns":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := llm.ParseTranscript(b); err != nil && !errors.Is(err, llm.ErrConfig) {
			t.Fatalf("error %v is not ErrConfig", err)
		}
	})
}
