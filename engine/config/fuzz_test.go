package config_test

import (
	"errors"
	"testing"

	"github.com/opx-dev/opx/engine/config"
)

// FuzzParse: no configuration text makes Parse panic; what it accepts
// validates.
func FuzzParse(f *testing.F) {
	f.Add([]byte(config.Template))
	f.Add([]byte("provider:\n  kind: openai\n  model: m\n  api_key_env: KEY\n"))
	f.Add([]byte("chronicle:\n  max_snapshots: -1\n"))
	f.Add([]byte("limits:\n  tool_timeout: 1h\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > config.MaxBytes {
			return
		}
		c, err := config.Parse(b)
		if err != nil {
			if !errors.Is(err, config.ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("accepted a configuration that does not validate: %v", err)
		}
	})
}
