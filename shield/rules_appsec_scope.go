package shield

import (
	"path"
	"strconv"
	"strings"
)

// Access widened (rules 13; docs/shield-rules.md "appsec:control-weakened"),
// in any file kind, by what an edit moves:
//
//   - a granted path or resource pattern made broader: a glob replaced by
//     one whose literal part is a strict prefix of it, on a line that is
//     otherwise the same (path "kv/data/app/prod/*" -> path "kv/data/*",
//     arn:…:bucket/app/* -> arn:…:bucket/*);
//   - a credential's life lengthened: a TTL, expiry or maximum age on a
//     line about tokens, sessions, cookies, certificates, leases or
//     credentials raised more than tenfold (token_ttl 15m -> 8760h);
//   - a reader of encrypted secrets added: an age, PGP or KMS recipient
//     list of an encryption configuration (.sops.yaml, .git-crypt,
//     recipients) that gains an entry.

// grantFile reports whether p is configuration that grants (policies,
// infrastructure, settings), where a pattern names what is reachable — not
// code, where a glob names files to read.
func grantFile(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".hcl", ".tf", ".tfvars", ".json", ".yaml", ".yml", ".toml", ".conf", ".ini", ".rego", ".cue", ".properties", ".xml", ".policy", ".cfg":
		return true
	}
	return false
}

// scopeWidened returns why plus widens a pattern of minus, or "".
func scopeWidened(p string, plus, minus []string) string {
	if len(plus) == 0 || len(minus) == 0 || !grantFile(p) {
		return ""
	}
	for _, m := range minus[:min(len(minus), 64)] {
		mi := strings.IndexByte(m, '*')
		if mi < 0 {
			continue
		}
		for _, p := range plus[:min(len(plus), 64)] {
			pi := strings.IndexByte(p, '*')
			if pi < 0 || pi >= mi {
				continue
			}
			// the same line around the pattern: what precedes its
			// literal part's last separator, and what follows the star
			mPre, pPre := m[:mi], p[:pi]
			if !strings.HasPrefix(mPre, pPre) || m[mi:] != p[pi:] {
				continue
			}
			cut := strings.LastIndexAny(pPre, `"'/:= `)
			if cut < 0 || !strings.ContainsAny(mPre[len(pPre):], "/:") {
				continue
			}
			return "widens " + clipText(strings.TrimSpace(m), 60) + " to " + clipText(strings.TrimSpace(p), 60)
		}
	}
	return ""
}

// lifeKey is a key that bounds a lifetime; lifeContext what the line is
// about for it to be a credential's.
var (
	lifeKey     = mustRx(`(?i)ttl|expir|max_?age|maxage|lifetime|valid(?:ity|_for|for)|lease_?duration|duration`)
	lifeContext = mustRx(`(?i)token|session|cookie|jwt|cert|credential|lease|password|secret|key|auth|login|refresh|access|sts|role`)
)

// expiryLengthened returns why plus lengthens a credential's life more
// than tenfold, or "".
func expiryLengthened(plus, minus []string) string {
	before := map[string]float64{}
	for _, s := range settingsIn(minus, 64) {
		if d, ok := durationSeconds(s.val); ok && lifeKey.MatchString(s.key) {
			before[s.key] = d
		}
	}
	if len(before) == 0 {
		return ""
	}
	for _, s := range settingsIn(plus, 64) {
		old, ok := before[s.key]
		d, ok2 := durationSeconds(s.val)
		if !ok || !ok2 || old <= 0 || d <= old*10 {
			continue
		}
		if lifeContext.MatchString(s.key) || lifeContext.MatchString(s.line) {
			return "lengthens " + clipText(s.key, 40) + " more than tenfold (" + clipText(s.line, 60) + ")"
		}
	}
	return ""
}

// durationSeconds reads "15m", "8760h", "30d", "3600", "1y", "PT15M" as
// seconds.
func durationSeconds(v string) (float64, bool) {
	v = strings.Trim(strings.ToLower(v), `"' `)
	if v == "" || len(v) > 24 {
		return 0, false
	}
	if rest, ok := strings.CutPrefix(v, "pt"); ok { // ISO 8601 time part
		v = rest
	}
	unit := 1.0
	switch v[len(v)-1] {
	case 's':
		v = v[:len(v)-1]
	case 'm':
		unit, v = 60, v[:len(v)-1]
	case 'h':
		unit, v = 3600, v[:len(v)-1]
	case 'd':
		unit, v = 86400, v[:len(v)-1]
	case 'w':
		unit, v = 7*86400, v[:len(v)-1]
	case 'y':
		unit, v = 365*86400, v[:len(v)-1]
	}
	n, err := strconv.ParseFloat(strings.ReplaceAll(v, "_", ""), 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n * unit, true
}

// recipientKey is a key naming who can decrypt.
var recipientKey = mustRx(`(?i)^(?:age|pgp|gpg|kms|azure_keyvault|gcp_kms|hc_vault_transit_uri|recipients?|key_groups|encrypt_to|readers)$`)

// recipientAdded returns why plus adds a reader of encrypted secrets, or
// "": a recipient setting whose list of entries grows.
func recipientAdded(p string, plus, minus []string) string {
	base := strings.ToLower(p[strings.LastIndexByte(p, '/')+1:])
	if base != ".sops.yaml" && base != ".sops.yml" && !strings.Contains(base, "git-crypt") && !strings.Contains(base, "recipients") {
		return ""
	}
	count := func(v string) int {
		n := 0
		for _, f := range strings.FieldsFunc(strings.Trim(v, `"'[] `), func(r rune) bool { return r == ',' || r == ' ' }) {
			if f != "" {
				n++
			}
		}
		return n
	}
	// key: value lines, the value the rest of the line (a list)
	lists := func(lines []string) map[string]int {
		out := map[string]int{}
		for _, l := range lines[:min(len(lines), 256)] {
			k, v, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- ")), ":")
			if !ok {
				continue
			}
			k = strings.Trim(strings.TrimSpace(k), `"'`)
			if recipientKey.MatchString(k) && strings.TrimSpace(v) != "" {
				out[k] += count(v)
			}
		}
		return out
	}
	before := lists(minus)
	for k, n := range lists(plus) {
		if old, ok := before[k]; ok && n > old {
			return "adds a reader of the encrypted secrets (" + k + ": " + strconv.Itoa(old) + " -> " + strconv.Itoa(n) + " recipients)"
		}
	}
	return ""
}
