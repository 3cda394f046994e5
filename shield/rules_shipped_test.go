package shield_test

import (
	"testing"

	"github.com/opx-dev/opx/shield"
)

// Rules 12 (k27g): credentials written into what ships, trust anchors
// overwritten, and the key a build signs with pointed elsewhere, in a
// web, mobile and Go stack; with benign look-alikes.
func TestRules12_ShippedAndTrusted(t *testing.T) {
	s := defaultShield(t)
	wr := func(p, body string) shield.Action { return facts(s, "write_file").content(p, body).act() }
	ed := func(p, old, new string) shield.Action { return editAction(s, p, old, new) }
	runRuleCases(t, s, []ruleCase{
		{"api key in a web root", wr("web/public/config.json", `{"apiKey": "sk_prod_8f2Kq91LmZ", "env": "prod"}`), "escalate credential-store"},
		{"password in android raw resources", wr("android/app/src/main/res/raw/ftp.properties", "ftp.user=uploader\nftp.password=Sp1ndle#2026\n"), "escalate credential-store"},
		{"token in a static dir", wr("site/static/js/settings.js", "window.SETTINGS = { token: 'glpat9x8Y7wV6u5T4' };"), "escalate credential-store"},
		{"release key overwritten", wr("deploy/keys/release-signing.pub", "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEAAAA\n-----END PUBLIC KEY-----\n"), "escalate appsec:control-weakened"},
		{"root ca replaced", wr("services/api/certs/root-ca.crt", "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n"), "escalate appsec:control-weakened"},
		{"signing key path moved", ed("release/goreleaser.env", "COSIGN_SIGNING_KEY=\"keys/release-cosign.key\"", "COSIGN_SIGNING_KEY=\"/tmp/cosign.key\""), "escalate appsec:control-weakened"},

		{"benign public config", wr("web/public/config.json", `{"apiBase": "https://api.acme.io", "env": "prod"}`), none},
		{"benign placeholder password", wr("web/public/help/setup.json", `{"password": "<your password>"}`), none},
		{"benign local config password", wr("config/local.yml", "db:\n  password: l0cal-dev-only\n"), none},
		{"benign test certificate", wr("services/api/testdata/root-ca.crt", "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n"), none},
		{"benign client cert", wr("deploy/certs/client-dev.crt", "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n"), none},
		{"benign unrelated key path", ed("release/goreleaser.env", "ARTIFACT_DIR=\"dist\"", "ARTIFACT_DIR=\"out\""), none},
	})
}
