package shield

import (
	"path"
	"strings"
)

// Public key material by name, and keys a signing tool uses (rules 12,
// k27h; docs/shield-rules.md "credential-path"). A certificate or a
// public key is handed to everyone who verifies with it: a PEM file
// whose name says it is one (pad-release-pub.pem, public_key.pem,
// fullchain.pem, ca-cert.pem) and nothing private (no priv, private,
// secret, and no "key" but a public one) is not a credential. And a key
// file of the workspace given to a tool's signing or public-key verb as
// its key (imgtool sign --key k.pem, imgtool getpub -k k.pem, openssl
// pkey -pubout -in k.pem) is used, not shown: what comes out is a
// signature or the public half. A key outside the workspace, any other
// verb (getpriv, an export), or a plain read (cat, base64) stays a
// credential read. A key the workspace links in from elsewhere is judged
// by the path the run names.

// publicWords name public material in a key or certificate file's name.
var publicWords = setOf("pub", "public", "pubkey", "publickey", "cert", "certs", "certificate", "crt", "cacert", "chain",
	"fullchain", "bundle", "trust", "truststore", "root", "intermediate", "verify", "verification")

// privateWords name private material.
var privateWords = setOf("priv", "private", "privkey", "privatekey", "secret", "sk", "signing", "sign", "passphrase")

// publicByName reports whether base (a .pem, .crt, .cer, .der file)
// names only public material.
func publicByName(base string) bool {
	ext := strings.ToLower(path.Ext(base))
	if ext != ".pem" && ext != ".crt" && ext != ".cer" && ext != ".der" {
		return false
	}
	words := riskParts(strings.TrimSuffix(base, path.Ext(base)))
	if len(words) > 1 {
		words = words[:len(words)-1] // the whole word riskParts adds
	}
	pub := false
	// session 28: a name ending in its public half's word (part11-sign.pub.pem,
	// release_signing_public.pem) is that half of the key its other words
	// name, whatever role they give it; only a private word makes it one
	if last := lastWord(words); len(words) > 1 && (last == "pub" || last == "public" || last == "pubkey" || last == "publickey") {
		for _, w := range words {
			if w == "priv" || w == "private" || w == "privkey" || w == "privatekey" || w == "secret" {
				return false
			}
		}
		return true
	}
	for i, w := range words {
		switch {
		case privateWords[w]:
			return false
		case w == "key" || w == "keys":
			if i == 0 || (words[i-1] != "pub" && words[i-1] != "public") {
				return false
			}
		case publicWords[w]:
			pub = true
		}
	}
	return pub
}

// keyVerbs are the verbs of a signing tool that use a private key
// without showing it: a signature or the public half comes out (and,
// rules 14, any verb named verify-…: verify-blob,
// verify-attestation, verify-image).
var keyVerbs = setOf("sign", "getpub", "pubkey", "verify", "-pubout", "--pubout", "-y", "resign")

// keyFlags give a signing tool its key file.
var keyFlags = setOf("-k", "--key", "-key", "--signing-key", "--private-key", "--key-file", "--keyfile", "-inkey", "-in", "--priv-key",
	// Rules 14: a verifier's certificate, chain, trust root or public
	// key, by role (cosign verify-blob --certificate dist/checksums.txt.pem).
	"--certificate", "--cert", "--certificate-chain", "--cert-chain", "--ca-cert", "--cacert", "--ca-file", "--ca-roots",
	"--trusted-root", "--root", "--public-key", "--pubkey", "--pub-key", "--verification-key")

// keyUsed reports whether the credential read r is a key of the
// workspace that a signing tool's run of f takes as its key, with a verb
// that uses it without showing it.
func (s *Shield) keyUsed(f *Facts, r *Ref) bool {
	at := r.Path
	if r.Via != "" {
		// A key the workspace links in (keys/dev.pem -> ~/.signing/dev.pem):
		// judged by the path the run names.
		at = r.Via
	}
	if r.Tree || r.Glob || !s.inWorkspace(at) {
		return false
	}
	for i := range f.Runs {
		run := &f.Runs[i]
		if run.Name == "" || run.Name != r.By || literalVia(run.Via) {
			continue
		}
		verb, key := false, false
		for j, a := range run.Argv[1:] {
			if keyVerbs[a] || strings.HasPrefix(a, "verify-") {
				verb = true
			}
			k, v, ok := strings.Cut(a, "=")
			if !ok && keyFlags[a] && j+2 < len(run.Argv) {
				v, ok = run.Argv[j+2], true
			} else if ok && !keyFlags[k] {
				ok = false
			}
			if ok && v != "" && !strings.HasPrefix(v, "/") && strings.HasSuffix(at, "/"+path.Clean(v)) {
				key = true
			}
		}
		if verb && key {
			return true
		}
	}
	return false
}

// lastWord is the last of words, or "".
func lastWord(words []string) string {
	if len(words) == 0 {
		return ""
	}
	return words[len(words)-1]
}
