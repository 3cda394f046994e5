package shield

import (
	"path"
	"strings"
)

// What ships and what is trusted (rules 12, issue 27 ninth pass;
// docs/shield-rules.md "(rules 12)"):
//
//   - a credential written as a value (password, secret, token, key =
//     a literal that mixes letters with digits or symbols) into a file
//     under a directory whose content is delivered to every user (a web
//     root, a bundle's assets, a game's Resources or StreamingAssets, an
//     app's raw resources; not a server's resources directory):
//     `credential-store`, escalate. Elsewhere,
//     local configuration holds such values and passes;
//   - key material (a public key or certificate) written over a file
//     whose name says it anchors trust (release, signing, root, CA,
//     trusted, pinned, update, firmware, boot): `appsec:control-weakened`,
//     escalate: what verifies against it accepts the new key's signatures.
//
// Tests, fixtures and examples are spared.

var (
	shippedDirs = map[string]bool{"public": true, "static": true, "assets": true, "www": true, "wwwroot": true, "htdocs": true,
		"streamingassets": true, "raw": true, "webroot": true}
	shippedSecret    = mustRx(`(?i)["']?\b[\w.-]{0,30}(?:password|passwd|pass|pwd|secret|token|api_?key|apikey|private_?key|access_?key|auth)["']?\s*[:=]\s*["']?([^\s"',;}{]{8,120})`)
	trustKeyMaterial = mustRx(`-----BEGIN (?:PUBLIC KEY|CERTIFICATE|RSA PUBLIC KEY|EC PUBLIC KEY|PGP PUBLIC KEY BLOCK)-----|\bssh-(?:rsa|ed25519) AAAA`)
	trustNames       = map[string]bool{"release": true, "signing": true, "sign": true, "root": true, "ca": true, "trusted": true, "trust": true,
		"pinned": true, "pin": true, "update": true, "updates": true, "firmware": true, "boot": true, "verify": true, "verification": true, "prod": true, "production": true, "anchor": true}
)

// shippedDir reports whether rel lies beneath a directory whose content
// is delivered to every user.
func shippedDir(rel string) bool {
	segs := strings.Split(rel, "/")
	for _, seg := range segs[:len(segs)-1] {
		if shippedDirs[strings.ToLower(seg)] {
			return true
		}
	}
	return false
}

// shippedAndTrusted judges what ships and what is trusted (above).
func (s *Shield) shippedAndTrusted(_ *Action, f *Facts, j *judgement) {
	ws := s.cfg.Workspace
	if ws == "" {
		return
	}
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || !within(p, ws) || testSource(p) || obsoleteName(strings.TrimPrefix(p, ws+"/")) {
			continue
		}
		rel := strings.TrimPrefix(p, ws+"/")
		body := clipRaw(t.Body, maxAppsecText)
		if shippedDir(rel) && !isTemplate(path.Base(p)) {
			for _, m := range shippedSecret.FindAllStringSubmatch(body, 16) {
				if commitSecretValue(m[1]) && !placeholderSecret(m[1]) {
					j.escalate("credential-store", "%s is written with a credential value (%s…) under %s, which is delivered to every user", rel, clipText(m[0], 24), path.Dir(rel))
					return
				}
			}
		}
		if keyExts[strings.ToLower(path.Ext(p))] && trustKeyMaterial.MatchString(body) {
			for _, tok := range nameTokens(strings.TrimSuffix(path.Base(p), path.Ext(p))) {
				if trustNames[tok] {
					j.escalate("appsec:control-weakened", "%s is written with key material: it anchors trust (its name says %s), and what verifies against it accepts the new key's signatures", rel, tok)
					return
				}
			}
		}
	}
}
