package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/opx-dev/opx/engine/config"
)

// TestParse_Telemetry_Checked: telemetry.otlp is parsed, and an endpoint,
// protocol, sample or header that cannot work is refused with its name.
func TestParse_Telemetry_Checked(t *testing.T) {
	c, err := config.Parse([]byte("telemetry:\n  otlp:\n    endpoint: 127.0.0.1:4317\n    insecure: true\n    headers: {x-api-key: k}\n    sample: 0.5\n  content: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if o := c.Telemetry.OTLP; o.Endpoint != "127.0.0.1:4317" || !o.Insecure || o.Headers["x-api-key"] != "k" || o.Sample != 0.5 || !c.Telemetry.Content {
		t.Errorf("parsed %+v", c.Telemetry)
	}
	if c, err := config.Parse([]byte("telemetry:\n  otlp:\n    endpoint: https://otel.example.com:4318/v1/traces\n    protocol: http\n")); err != nil || c.Telemetry.OTLP.Protocol != "http" {
		t.Errorf("http endpoint: %v", err)
	}
	for _, bad := range []string{
		"telemetry:\n  otlp:\n    protocol: grpc\n",
		"telemetry:\n  otlp:\n    endpoint: nohost\n",
		"telemetry:\n  otlp:\n    endpoint: ftp://h:1\n",
		"telemetry:\n  otlp:\n    endpoint: http://u:p@h:1\n",
		"telemetry:\n  otlp:\n    endpoint: h:1\n    protocol: udp\n",
		"telemetry:\n  otlp:\n    endpoint: h:1\n    sample: 2\n",
		"telemetry:\n  otlp:\n    endpoint: h:1\n    sample: -0.1\n",
		"telemetry:\n  otlp:\n    endpoint: h:1\n    headers: {\"bad name\": v}\n",
		"telemetry:\n  otlp:\n    endpoint: h:1\n    headers: {x: \"a\\r\\nInjected: 1\"}\n",
		"telemetry:\n  otlp:\n    endpoint: \"" + strings.Repeat("h", 600) + ":1\"\n",
	} {
		if _, err := config.Parse([]byte(bad)); !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), "telemetry.otlp") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
