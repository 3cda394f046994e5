package shield

import (
	"os"
	"testing"
)

func TestZZProbe2(t *testing.T) {
	body, _ := os.ReadFile("/tmp/probe_body")
	e, d := encodedInText(string(body))
	t.Logf("e=%q d=%q run=%v", e, d, runsFetched.MatchString(d))
}
