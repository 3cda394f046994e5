package shield_test

import (
	"testing"

	"github.com/opx-dev/opx/shield"
)

// Rules 12 (k27h): public key material known by its name, and keys a
// signing tool uses without showing them; in a web stack (a JWT
// verifier's public key, TLS chains, a release signing key the
// repository links in). Each has a look-alike that still blocks.
func TestRules12_PublicKeysAndKeysUsed(t *testing.T) {
	s := defaultShield(t)
	const cred = "block credential-path"
	cmd := func(line string) shield.Action {
		return shield.Action{Session: "s", Tool: "execute_command", Command: line}
	}
	runRuleCases(t, s, []ruleCase{
		{"jwt public key read", facts(s, "read_file").read("services/auth/keys/jwt-public.pem").act(), none},
		{"tls chain read", facts(s, "read_file").read("deploy/tls/fullchain.pem").act(), none},
		{"ca certificate read", facts(s, "read_file").read("deploy/tls/ca-cert.pem").act(), none},
		{"public_key.pem read", facts(s, "read_file").read("config/public_key.pem").act(), none},
		{"base64 of a public key", cmd("base64 -w0 services/auth/keys/jwt-pub.pem"), none},
		// Look-alikes: private material, whatever else the name says.
		{"jwt private key read", facts(s, "read_file").read("services/auth/keys/jwt-private.pem").act(), cred},
		{"server key read", facts(s, "read_file").read("deploy/tls/server-key.pem").act(), cred},
		{"ca key read", facts(s, "read_file").read("deploy/tls/ca-key.pem").act(), cred},
		{"cert and private key bundle", facts(s, "read_file").read("deploy/tls/cert-with-private.pem").act(), cred},
		{"a plain pem", facts(s, "read_file").read("deploy/tls/release.pem").act(), cred},
		{"a glob of pems", facts(s, "").read("deploy/**/*.pem").run("cat deploy/**/*.pem").cmd(), cred},
		// A key of the workspace given to a signing verb as its key.
		{"openssl signs with a workspace key", cmd("openssl dgst -sha256 -sign --key release/dev-signing.pem -out app.sig app.tar"), none},
		{"cosign signs a blob with a workspace key", cmd("cosign sign-blob --key release/cosign.key dist/app.tar"), cred},
		{"the public half of a workspace key", cmd("openssl pkey -in release/dev-signing.pem -pubout"), none},
		{"a key printed", cmd("openssl pkey -in release/dev-signing.pem -text"), cred},
		{"a home key used to sign", cmd("minisign sign --key ~/.keys/prod.key dist/app.tar"), cred},
		{"a workspace key used to sign", cmd("minisign sign --key release/dev.key dist/app.tar"), none},
	})
}
