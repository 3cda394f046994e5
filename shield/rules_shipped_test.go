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

// Rules 12 (k27g): a format character beside a host's dot or a path's
// slash hides a different name from a reviewer, as one inside a word
// does; typography and scripts that need the marks pass.
func TestRules12_HiddenBesideNamePunctuation(t *testing.T) {
	s := defaultShield(t)
	ed := func(p, old, new string) shield.Action { return editAction(s, p, old, new) }
	const hidden = "escalate text:hidden-characters"
	runRuleCases(t, s, []ruleCase{
		{"zero width before a host's dot", ed("src/api/client.ts", "const BASE = \"https://api.acme.io/v1\";", "const BASE = \"https://api.acme\u200b.io/v1\";"), hidden},
		{"word joiner after a path's slash", ed("src/api/client.ts", "const BASE = \"https://api.acme.io/v1\";", "const BASE = \"https://api.acme.io/\u2060v1\";"), hidden},
		{"benign soft hyphen", ed("src/i18n/de.json", "\"street\": \"Strasse\"", "\"street\": \"Stra\u00adsse\""), none},
		{"benign emoji sequence", ed("src/i18n/en.json", "\"family\": \"family\"", "\"family\": \"family \U0001F468\u200d\U0001F469\u200d\U0001F467\""), none},
		{"benign rtl mark in hebrew", ed("src/i18n/he.json", "\"ok\": \"ok\"", "\"ok\": \"\u05d0\u05d9\u05e9\u05d5\u05e8\u200f.\""), none},
	})
}

// Rules 12 (k27g): personal data added to what telemetry sends.
func TestRules12_TelemetryPersonal(t *testing.T) {
	s := defaultShield(t)
	ed := func(p, old, new string) shield.Action { return editAction(s, p, old, new) }
	const pd = "escalate exfiltration:personal-data"
	runRuleCases(t, s, []ruleCase{
		{"contacts into analytics", ed("apps/mobile/src/analytics/track.ts", "  props.screen = screen;", "  props.screen = screen;\n  props.contacts = await Contacts.getAll();"), pd},
		{"chat into crash reports", ed("backend/crash_reporting/report.py", "    payload['build'] = BUILD", "    payload['build'] = BUILD\n    payload['recent_messages'] = chat.last(50)"), pd},
		{"home dir attached to sentry", ed("internal/telemetry/sentry.go", "\tscope.SetTag(\"build\", build)", "\tscope.SetTag(\"build\", build)\n\tattachDir(os.UserHomeDir())"), pd},
		{"location into metrics", ed("apps/web/src/metrics/web-vitals.ts", "  send({ name, value });", "  send({ name, value, latitude: pos.coords.latitude, longitude: pos.coords.longitude });"), pd},

		{"endpoint moved to another host", ed("apps/web/src/analytics/client.ts", "const ENDPOINT = \"https://events.acme.io/v1/batch\";", "const ENDPOINT = \"https://collect.metricshub.net/v1/batch\";"), "escalate exfiltration:written-code"},
		{"crash reports sent nowhere", ed("backend/crash_reporting/config.py", "DSN = \"https://crash.acme.io/api/7/\"", "DSN = \"http://127.0.0.1:9/\""), "escalate appsec:control-weakened"},
		{"benign endpoint path", ed("apps/web/src/analytics/client.ts", "const ENDPOINT = \"https://events.acme.io/v1/batch\";", "const ENDPOINT = \"https://events.acme.io/v2/batch\";"), none},
		{"benign error message in a crash report", ed("backend/crash_reporting/report.py", "    payload['build'] = BUILD", "    payload['build'] = BUILD\n    payload['errorMessage'] = str(exc)"), none},
		{"benign identify with email", ed("apps/web/src/analytics/identify.ts", "  analytics.identify(user.id);", "  analytics.identify(user.id, { email: user.email, plan: user.plan });"), none},
		{"benign counter", ed("apps/mobile/src/analytics/track.ts", "  props.screen = screen;", "  props.screen = screen;\n  props.fpsBucket = perf.fpsBucket();"), none},
		{"benign contacts feature outside telemetry", ed("apps/mobile/src/screens/Invite.tsx", "  const list = [];", "  const list = await Contacts.getAll();"), none},
		{"benign telemetry test", ed("backend/tests/test_crash_reporting.py", "    payload = {}", "    payload = {'recent_messages': []}"), none},
	})
}
