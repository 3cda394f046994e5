package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
)

// TestCollector_UsageErrors: what `opx collector` refuses before it
// starts anything, flags and config file alike (a config is outside
// input: bounded, strict, every field checked).
func TestCollector_UsageErrors(t *testing.T) {
	t.Setenv(cli.EnvFleetStore, "")
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	cfg := func(body string) string {
		p := filepath.Join(t.TempDir(), "collector.yaml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tt := range []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"no store", []string{"collector", "--nats", "nats://127.0.0.1:4222"}, cli.ExitUsage, "--store DIR"},
		{"no nats", []string{"collector", "--store", store}, cli.ExitUsage, "which NATS"},
		{"both", []string{"collector", "--store", store, "--nats", "nats://h:1", "--embedded-nats", dir}, cli.ExitUsage, "one or the other"},
		{"bad url", []string{"collector", "--store", store, "--nats", "http://h:1"}, cli.ExitUsage, "not a NATS url"},
		{"empty url", []string{"collector", "--store", store, "--nats", ""}, cli.ExitUsage, "--nats needs a URL"},
		{"listen without embedded", []string{"collector", "--store", store, "--nats", "nats://h:1", "--listen", "127.0.0.1:1"}, cli.ExitUsage, "--listen goes with"},
		{"bad listen", []string{"collector", "--store", store, "--embedded-nats", dir, "--listen", "nope"}, cli.ExitUsage, "HOST:PORT"},
		{"bad prefix", []string{"collector", "--store", store, "--nats", "nats://h:1", "--prefix", "a.*"}, cli.ExitUsage, "subject prefix"},
		{"negative stall", []string{"collector", "--store", store, "--nats", "nats://h:1", "--stall-after", "-1s"}, cli.ExitUsage, "negative"},
		{"args", []string{"collector", "--store", store, "--nats", "nats://h:1", "extra"}, cli.ExitUsage, "extra"},
		{"missing config", []string{"collector", "--store", store, "--config", filepath.Join(dir, "nope.yaml")}, cli.ExitError, "no such file"},
		{"unknown field", []string{"collector", "--store", store, "--config", cfg("url: nats://h:1\nsurprise: 1\n")}, cli.ExitError, "surprise"},
		{"config bad url", []string{"collector", "--store", store, "--config", cfg("url: ftp://h\n")}, cli.ExitError, "not a NATS url"},
		{"config relative creds", []string{"collector", "--store", store, "--config", cfg("url: nats://h:1\ncreds: x.creds\n")}, cli.ExitError, "not an absolute path"},
		{"config creds and nkey", []string{"collector", "--store", store, "--config", cfg("url: nats://h:1\ncreds: /a\nnkey: /b\n")}, cli.ExitError, "one or the other"},
		{"config cert alone", []string{"collector", "--store", store, "--config", cfg("url: nats://h:1\ntls: {cert: /a}\n")}, cli.ExitError, "go together"},
		{"config replicas", []string{"collector", "--store", store, "--config", cfg("url: nats://h:1\nreplicas: 9\n")}, cli.ExitError, "replicas"},
		{"config durable", []string{"collector", "--store", store, "--config", cfg("url: nats://h:1\ndurable: a.b\n")}, cli.ExitError, "durable"},
		{"config stall", []string{"collector", "--store", store, "--config", cfg("url: nats://h:1\nstall_after: soon\n")}, cli.ExitError, "stall_after"},
		{"config allow id", []string{"collector", "--store", store, "--config", cfg("url: nats://h:1\nallow_keys: {nope: x}\n")}, cli.ExitError, "not a ledger id"},
		{"config allow key", []string{"collector", "--store", store, "--config", cfg("url: nats://h:1\nallow_keys: {00112233445566778899aabbccddeeff: x}\n")}, cli.ExitError, "allow_keys 00112233445566778899aabbccddeeff"},
		{"config not yaml", []string{"collector", "--store", store, "--config", cfg("url: [\n")}, cli.ExitError, "collector config"},
		{"config huge", []string{"collector", "--store", store, "--config", cfg("url: nats://h:1\n#" + strings.Repeat("x", 2<<20) + "\n")}, cli.ExitError, "larger than"},
		{"witness listen not host:port", []string{"collector", "--store", store, "--nats", "nats://h:1", "--witness-listen", "8080"}, cli.ExitUsage, "want HOST:PORT"},
		{"witness listen bad port", []string{"collector", "--store", store, "--nats", "nats://h:1", "--witness-listen", "127.0.0.1:99999"}, cli.ExitUsage, "want HOST:PORT"},
		{"witness listen every interface", []string{"collector", "--store", store, "--nats", "nats://h:1", "--witness-listen", ":8080"}, cli.ExitUsage, "not a loopback address"},
		{"witness listen public", []string{"collector", "--store", store, "--nats", "nats://h:1", "--witness-listen", "0.0.0.0:8080"}, cli.ExitUsage, "--witness-insecure-listen"},
		{"witness listen a name", []string{"collector", "--store", store, "--nats", "nats://h:1", "--witness-listen", "witness.example.com:8080"}, cli.ExitUsage, "not a loopback address"},
		{"witness insecure alone", []string{"collector", "--store", store, "--nats", "nats://h:1", "--witness-insecure-listen"}, cli.ExitUsage, "goes with --witness-listen"},
		{"witness tls cert alone", []string{"collector", "--store", store, "--nats", "nats://h:1", "--witness-listen", "0.0.0.0:8443", "--witness-tls-cert", cfg("x")}, cli.ExitUsage, "go together"},
		{"witness tls without listen", []string{"collector", "--store", store, "--nats", "nats://h:1", "--witness-tls-cert", cfg("x"), "--witness-tls-key", cfg("x")}, cli.ExitUsage, "goes with --witness-listen"},
		{"witness tls and insecure", []string{"collector", "--store", store, "--nats", "nats://h:1", "--witness-listen", "0.0.0.0:8443", "--witness-tls-cert", cfg("x"), "--witness-tls-key", cfg("x"), "--witness-insecure-listen"}, cli.ExitUsage, "not with --witness-tls-cert"},
		{"witness tls not a certificate", []string{"collector", "--store", store, "--nats", "nats://h:1", "--witness-listen", "0.0.0.0:8443", "--witness-tls-cert", cfg("x"), "--witness-tls-key", cfg("x")}, cli.ExitUsage, "--witness-tls-cert/--witness-tls-key"},
		{"witness rate zero", []string{"collector", "--store", store, "--nats", "nats://h:1", "--witness-listen", "127.0.0.1:0", "--witness-rate", "0"}, cli.ExitUsage, "--witness-rate must be positive"},
		{"witness client rate zero", []string{"collector", "--store", store, "--nats", "nats://h:1", "--witness-listen", "127.0.0.1:0", "--witness-client-rate", "0"}, cli.ExitUsage, "--witness-client-rate must be positive"},
		{"witness rate negative", []string{"collector", "--store", store, "--nats", "nats://h:1", "--witness-listen", "127.0.0.1:0", "--witness-rate", "-1"}, cli.ExitUsage, "--witness-rate must be positive"},
		{"witness logs alone", []string{"collector", "--store", store, "--nats", "nats://h:1", "--witness-logs", cfg("")}, cli.ExitUsage, "goes with --witness-listen"},
		{"witness logs missing", []string{"collector", "--store", store, "--nats", "nats://h:1", "--witness-listen", "127.0.0.1:0", "--witness-logs", filepath.Join(dir, "nope")}, cli.ExitError, "no such file"},
		{"witness logs a directory", []string{"collector", "--store", store, "--nats", "nats://h:1", "--witness-listen", "127.0.0.1:0", "--witness-logs", dir}, cli.ExitError, "--witness-logs"},
		{"witness logs one field", []string{"collector", "--store", store, "--nats", "nats://h:1", "--witness-listen", "[::1]:0", "--witness-logs", cfg("# logs\nexample.com/log\n")}, cli.ExitError, "line 2: want ORIGIN KEY"},
		{"witness logs bad key", []string{"collector", "--store", store, "--nats", "nats://h:1", "--witness-listen", "localhost:0", "--witness-logs", cfg("example.com/log example.com/log+00000000+AAAA\n")}, cli.ExitError, "example.com/log: key"},
		{"witness logs huge", []string{"collector", "--store", store, "--nats", "nats://h:1", "--witness-listen", "127.0.0.1:0", "--witness-logs", cfg("#" + strings.Repeat("x", 5<<20) + "\n")}, cli.ExitError, "--witness-logs"},
		{"key args", []string{"collector", "key", "--store", store, "extra"}, cli.ExitUsage, "extra"},
		{"key no store", []string{"collector", "key"}, cli.ExitUsage, "--store DIR"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.args...)
			r.wantCode(t, tt.code)
			r.wantErr(t, tt.err)
		})
	}
	if _, err := os.Stat(store); err == nil {
		t.Errorf("a refused collector created its store")
	}
}
