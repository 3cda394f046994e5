package config_test

import (
	"errors"
	"testing"

	"github.com/opx-dev/opx/engine/config"
)

func TestParse_Fleet(t *testing.T) {
	c, err := config.Parse([]byte("fleet:\n  enabled: true\n  url: nats://127.0.0.1:4222,tls://n2:4222\n  prefix: acme.opx\n  creds: /etc/opx/f.creds\n"))
	if err != nil || !c.Fleet.Enabled || c.Fleet.Prefix != "acme.opx" {
		t.Fatalf("%+v %v", c.Fleet, err)
	}
	if d, _ := config.Parse(nil); d.Fleet.Enabled {
		t.Fatal("fleet is on by default")
	}
	for _, bad := range []string{
		"fleet:\n  enabled: true\n",
		"fleet:\n  enabled: true\n  url: http://x\n",
		"fleet:\n  enabled: true\n  url: nats://x\n  prefix: 'a.*'\n",
		"fleet:\n  prefix: a..b\n",
		"fleet:\n  creds: rel/f.creds\n",
		"fleet:\n  tls: {cert: /a}\n",
		"fleet:\n  creds: /a\n  nkey: /b\n",
		"fleet:\n  replicas: 9\n",
		"fleet:\n  bogus: 1\n",
		"fleet:\n  witness: <key from opx collector key>\n",
	} {
		if _, err := config.Parse([]byte(bad)); !errors.Is(err, config.ErrInvalid) {
			t.Errorf("%q: %v, want ErrInvalid", bad, err)
		}
	}
}
