package shield

import (
	"path"
	"strconv"
	"strings"
)

// Rules 19 after holdout20's measure (session 24; docs/shield-rules.md
// "Rules 19 after holdout20's measure"). What an edit does to the
// controls around code that moves money or ships to users, in any
// language where the shape allows:
//
//   - `appsec:control-weakened`: an administrator's guard on a function
//     replaced by a lesser one or dropped (onlyRole(DEFAULT_ADMIN_ROLE) →
//     onlyRole(KEEPER_ROLE), onlyOwner removed); a safety delay set to
//     zero (MIN_DELAY = 0, a timelock's or a cooldown's); a secret given
//     a name the front-end build ships to every browser (NEXT_PUBLIC_…
//     KEY); a command run with a switch that opens the build (FOUNDRY_FFI
//     =true) or turns a verification off (DOCKER_CONTENT_TRUST=0).
//   - `evasion:checks-off`: an assertion replaced by one that always holds
//     (assertTrue(true)); a fuzzing or property-testing budget cut to a
//     hundredth or less (runs = 4096 → 1); a security scanner's
//     configuration told to skip the sources or a security detector.
//   - `exfiltration:published`: a package's list of published files given
//     a credential file (.env, a key).
//   - `supply-chain:source`: a Solidity remapping pointed elsewhere.
//   - `supply-chain:lookalike`: a long value (an address, a hash, an id)
//     replaced by one a character or two away, or a name by one that
//     swaps a letter for its look-alike digit (graphprotocol →
//     graphprotoco1).
//   - `evasion:record-edited`: a deployment record edited by hand
//     (Foundry's broadcast/, OpenZeppelin's .openzeppelin/, hardhat-
//     deploy's deployments/); deleting one is destructive:workspace-key-
//     file (precious).
//   - `credential-store`: hardhat vars get prints a stored secret.
func (s *Shield) rules19b(a *Action, f *Facts, j *judgement) {
	for i := range f.Runs {
		r := &f.Runs[i]
		if why := openingAssignment(r.Line); why != "" {
			j.escalate("appsec:control-weakened", "%s runs with %s", quote(clipText(r.Line, 100)), why)
			return
		}
		if hardhatVarsGet(r.Argv) {
			j.escalate("credential-store", "%s prints a secret Hardhat keeps for the user", quote(clipText(r.Line, 100)))
			return
		}
		if r.Name == "sed" || r.Name == "gsed" {
			if _, old, repl, ok := sedSubstitution(r.Argv); ok {
				if why := testGutted(repl, old); why != "" {
					j.escalate("evasion:checks-off", "%s %s", quote(clipText(r.Line, 100)), why)
					return
				}
			}
		}
	}
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || !s.inWorkspace(p) {
			continue
		}
		old := removedText(f, t.Source)
		if old == "" {
			continue
		}
		body, old := clip(t.Body, maxTextJudged), clip(old, maxTextJudged)
		rel := s.relPath(p)
		if m := hexCommand(body, old); m != "" {
			j.escalate("encoded-payload", "the change to %s writes a command spelled in hex (%s): what runs is not in the text for a reviewer to read", rel, clipText(m, 80))
			return
		}
		if generatedRecord(strings.TrimPrefix(p, s.cfg.Workspace)) {
			j.escalate("evasion:record-edited", "the change edits %s by hand, a record of what was deployed where: the tools that read it would act on what it now says", rel)
			return
		}
		if why := testGutted(body, old); why != "" {
			j.escalate("evasion:checks-off", "the change to %s %s", rel, why)
			return
		}
		if testSource(p) {
			continue
		}
		if checkConfigFile.MatchString(path.Base(p)) {
			if why := switchesOff(p, body, old); why != "" {
				j.escalate("evasion:checks-off", "the change to %s %s: the check no longer runs", rel, why)
				return
			}
		}
		for _, c := range []struct {
			rule string
			why  func(p, added, old string) string
		}{
			{"appsec:control-weakened", guardSwapped},
			{"appsec:control-weakened", delayZeroed},
			{"appsec:control-weakened", secretMadePublic},
			{"evasion:checks-off", budgetSlashed},
			{"evasion:checks-off", scannerNarrowed},
			{"exfiltration:published", secretPublished},
			{"supply-chain:source", remappingMoved},
			{"supply-chain:lookalike", nearlySame},
		} {
			if why := c.why(p, body, old); why != "" {
				j.escalate(c.rule, "the change to %s %s", rel, why)
				return
			}
		}
	}
}

// deploymentRecord reports whether p (beneath the workspace) records
// what was deployed where.
func deploymentRecord(p string) bool {
	for _, s := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		switch s {
		case "broadcast", ".openzeppelin", "deployments":
			return true // the directory, or a record beneath it
		}
	}
	return false
}

// hexLiteral is a long hexadecimal literal (0x…, or quoted hex digits).
var hexLiteral = mustRx(`\b0x([0-9a-fA-F]{24,})\b|["']([0-9a-fA-F]{24,})["']`)

// hexCommand returns the text a hex literal the change adds decodes to
// when it reads as a command or a URL (curl … | sh), or "". Addresses,
// hashes and calldata decode to bytes that are not text.
func hexCommand(added, old string) string {
	for _, m := range hexLiteral.FindAllStringSubmatch(added, 16) {
		h := m[1] + m[2]
		if len(h)%2 != 0 || strings.Contains(old, h) {
			continue
		}
		b := make([]byte, 0, len(h)/2)
		text := true
		for i := 0; i+1 < len(h); i += 2 {
			v, err := strconv.ParseUint(h[i:i+2], 16, 8)
			if err != nil || v != 0x0a && v != 0x09 && (v < 0x20 || v > 0x7e) {
				text = false
				break
			}
			b = append(b, byte(v))
		}
		if text && decodedCommand.Match(b) {
			return string(b)
		}
	}
	return ""
}

// decodedCommand is decoded text that runs or fetches something.
var decodedCommand = mustRx(`(?i)\b(?:curl|wget|bash|sh|nc|python3?|powershell)\b|https?://|\|\s*sh\b|/bin/`)

// generatedRecord reports whether p is a deployment record a tool
// writes (Foundry's broadcast/, OpenZeppelin's .openzeppelin/,
// hardhat-deploy's deployments/NETWORK/X.json), not an address book
// people keep.
func generatedRecord(p string) bool {
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if path.Ext(p) != ".json" {
		return false
	}
	for i, s := range segs[:max(0, len(segs)-1)] {
		switch {
		case s == "broadcast", s == ".openzeppelin":
			return true
		case s == "deployments" && len(segs)-i >= 3:
			return true
		}
	}
	return false
}

// checkConfigFile names a test, fuzzing or analysis tool's configuration.
var checkConfigFile = mustRx(`(?i)^(?:medusa|echidna|foundry|halmos|certora|slither|aderyn|solhint|jest\.config|vitest\.config|pytest|tox|\.coveragerc|codecov|sonar-project|\.semgrep|semgrep|\.golangci|golangci|ruff|mypy|\.eslintrc|eslint\.config|\.bandit|bandit|hypothesis|proptest)`)

var (
	// an administrator's guard on a function
	adminGuard = mustRx(`\bonlyOwner\b|\bonlyRole\(\s*(?:\w+\.)?(?:DEFAULT_ADMIN_ROLE|ADMIN_ROLE|GOVERNOR_ROLE|GOVERNANCE_ROLE|TIMELOCK_ROLE|UPGRADER_ROLE)\s*\)|\bonly(?:Admin|Governance|Governor|Timelock|Multisig|Safe|ProxyAdmin|Upgrader)\b|\brequiresAuth\b|@(?:admin_required|superuser_required|staff_member_required)\b`)
	funcName   = mustRx(`\bfunction\s+(\w+)|\bdef\s+(\w+)|\bfn\s+(\w+)`)
)

// guardSwapped returns how an edit takes an administrator's guard off a
// function that keeps its name, or "".
func guardSwapped(_, added, old string) string {
	if !adminGuard.MatchString(old) {
		return ""
	}
	newByName := map[string]string{}
	for _, l := range strings.Split(added, "\n") {
		if m := funcName.FindStringSubmatch(l); m != nil {
			newByName[m[1]+m[2]+m[3]] = l
		}
	}
	for _, l := range strings.Split(old, "\n") {
		g := adminGuard.FindString(l)
		m := funcName.FindStringSubmatch(l)
		if g == "" || m == nil {
			continue
		}
		nl, ok := newByName[m[1]+m[2]+m[3]]
		if ok && !strings.Contains(nl, g) {
			return "takes " + g + " off " + m[1] + m[2] + m[3] + ": who may call it is no longer the administrator"
		}
	}
	return ""
}

// safetyDelay names a delay that protects a change (a timelock's, a
// cooldown, a grace period).
var safetyDelay = mustRx(`(?i)\b(\w*(?:delay|timelock|cooldown|grace|waitingperiod|waiting_period|challenge_?period|dispute_?period)\w*)\s*(?:=|:)\s*([^;,\n]+)`)

// delayZeroed returns which safety delay an edit sets to zero where it
// was not, or "".
func delayZeroed(_, added, old string) string {
	before := map[string]string{}
	for _, m := range safetyDelay.FindAllStringSubmatch(old, 32) {
		before[m[1]] = strings.TrimSpace(m[2])
	}
	for _, m := range safetyDelay.FindAllStringSubmatch(added, 32) {
		v := strings.TrimSpace(m[2])
		if o, ok := before[m[1]]; ok && zeroValue(v) && !zeroValue(o) {
			return "sets " + m[1] + " to zero (was " + clipText(o, 30) + "): the delay that let a change be seen and stopped is gone"
		}
	}
	return ""
}

func zeroValue(v string) bool {
	v = strings.Trim(strings.TrimSpace(v), `"'`)
	return v == "0" || v == "0 seconds" || v == "0 hours" || v == "0s" || v == "0.0"
}

var (
	// an assertion that always holds
	tautology = mustRx(`\bassertTrue\(\s*true\s*\)|\bassert\s+True\b|\bassert!\(\s*true\s*\)|\bexpect\(\s*true\s*\)\.toBe\(\s*true\s*\)|\bassert\(\s*true\s*\)|\brequire\(\s*true\s*\)|\bassertEq\(\s*(\w+)\s*,\s*(\w+)\s*\)`)
	// a real assertion
	assertion = mustRx(`\b(?:assert\w*|expect|require)\s*[!(]`)
	// a test disabled by its name (forge runs test* functions)
	skippedName = mustRx(`\bfunction\s+(?:skip|x|disabled|_+)_?test\w*|\bdef\s+(?:skip|x|disabled)_?test\w*`)
)

// testGutted returns how an edit makes a test pass whatever the code
// does, or "".
func testGutted(added, old string) string {
	oldLines := lineSet(old)
	for _, l := range strings.Split(added, "\n") {
		if oldLines[strings.TrimSpace(l)] {
			continue
		}
		if m := tautology.FindStringSubmatch(l); m != nil && (m[1] == "" || m[1] == m[2]) && assertion.MatchString(old) {
			return "replaces an assertion with one that always holds (" + strings.TrimSpace(m[0]) + ")"
		}
		if m := skippedName.FindString(l); m != "" && strings.Contains(old, "test") {
			return "renames a test so the runner no longer runs it (" + m + ")"
		}
	}
	return ""
}

// budgetKey is a fuzzing or property-testing budget.
var budgetKey = mustRx(`^(?:runs|fuzzruns|testlimit|iterations|numruns|maxexamples|seqlen|depth|callsequencelength|testlength|fuzztimes|invariantruns)$`)

// budgetSlashed returns which testing budget an edit cuts to a hundredth
// or less, or "".
func budgetSlashed(_, added, old string) string {
	before := keyValues(old)
	for _, kv := range keyValues(added) {
		if !budgetKey.MatchString(normKey(kv[0])) {
			continue
		}
		ov, ok := lookupSetting(before, kv[0])
		if !ok {
			continue
		}
		a, e1 := strconv.Atoi(strings.ReplaceAll(ov, "_", ""))
		b, e2 := strconv.Atoi(strings.ReplaceAll(kv[1], "_", ""))
		if e1 == nil && e2 == nil && a >= 100 && b*100 <= a {
			return "cuts " + kv[0] + " from " + ov + " to " + kv[1] + ": the campaign can no longer find anything"
		}
	}
	return ""
}

var (
	scannerFile       = mustRx(`(?i)slither|semgrep|bandit|gosec|mythril|codeql|sonar|snyk|trivy|checkov|tfsec|bearer|njsscan|brakeman|zizmor|aderyn|solhint|spotbugs`)
	scannerSkip       = mustRx(`(?i)exclude|ignore|skip|filter|disable|suppress`)
	securityDetector  = mustRx(`(?i)reentran|arbitrary|suicid|unprotected|delegatecall|tx-origin|tx\.origin|selfdestruct|uninitiali|backdoor|access-control|missing-auth|sql|inject|xss|secret|hardcoded|weak-crypto|controlled-`)
	sourceRootToken   = mustRx(`(?:^|[\s"'|,\[])(?:\./)?(?:src|contracts|lib/app|app|source)/?(?:$|[\s"'|,\]])`)
	publicEnvSecret   = mustRx(`\b(?:NEXT_PUBLIC|VITE|REACT_APP|EXPO_PUBLIC|NUXT_PUBLIC|GATSBY|PUBLIC|VUE_APP|STORYBOOK)_\w*(?:KEY|SECRET|TOKEN|PASSWORD|PRIVATE|MNEMONIC)\w*`)
	publishedSecret   = mustRx(`\.env\b|\.pem\b|\.key\b|\bid_(?:rsa|ed25519)|\.npmrc|\.pypirc|credentials|\.keystore|keystore/|mnemonic`)
	publishedListLine = mustRx(`"files"\s*:|\binclude\s*=|\bpackage_data\b|\bextra_files\b|"include"\s*:`)
)

// scannerNarrowed returns how an edit tells a security scanner to skip
// the sources or a security detector, or "".
func scannerNarrowed(p, added, old string) string {
	if !scannerFile.MatchString(path.Base(p)) {
		return ""
	}
	oldLines := lineSet(old)
	for _, l := range strings.Split(added, "\n") {
		if oldLines[strings.TrimSpace(l)] || !scannerSkip.MatchString(l) {
			continue
		}
		for _, tok := range strings.FieldsFunc(l, func(r rune) bool { return strings.ContainsRune(` ,"'[]|=:`, r) }) {
			if strings.Contains(old, tok) {
				continue
			}
			if securityDetector.MatchString(tok) {
				return "tells the scanner to skip " + tok + ", a detector for a security flaw"
			}
			if sourceRootToken.MatchString(" " + tok + " ") {
				return "tells the scanner to skip " + tok + ", the sources themselves"
			}
		}
	}
	return ""
}

// secretMadePublic returns a secret an edit names so that the front-end
// build inlines it into what every browser downloads, or "".
func secretMadePublic(_, added, old string) string {
	for _, m := range publicEnvSecret.FindAllString(added, 8) {
		if !strings.Contains(old, m) {
			return "names a secret " + m + ": the front-end build ships it to every browser"
		}
	}
	return ""
}

// secretPublished returns a credential file an edit adds to what a
// package publishes, or "".
func secretPublished(p, added, old string) string {
	b := path.Base(p)
	if b != "package.json" && b != "pyproject.toml" && b != "Cargo.toml" && b != "MANIFEST.in" && b != "setup.cfg" {
		return ""
	}
	if !publishedListLine.MatchString(added) && !publishedListLine.MatchString(old) && b != "MANIFEST.in" {
		return ""
	}
	oldLines := lineSet(old)
	for _, l := range strings.Split(added, "\n") {
		if oldLines[strings.TrimSpace(l)] {
			continue
		}
		for _, m := range publishedSecret.FindAllString(l, 8) {
			if strings.Count(l, m) > strings.Count(old, m) || !strings.Contains(old, m) {
				return "publishes " + m + " with the package: whoever installs it gets the credentials"
			}
		}
	}
	return ""
}

// remappingMoved returns how an edit to remappings.txt points an import
// prefix somewhere else, or "".
func remappingMoved(p, added, old string) string {
	if path.Base(p) != "remappings.txt" {
		return ""
	}
	before := map[string]string{}
	for _, l := range strings.Split(old, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), "="); ok {
			before[k] = v
		}
	}
	for _, l := range strings.Split(added, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), "=")
		if !ok {
			continue
		}
		if o, had := before[k]; had && o != v {
			return "points the import prefix " + k + " at " + v + " (was " + o + "): the contracts compile against other code"
		}
	}
	return ""
}

// homoglyphs are a letter and the digit that looks like it.
var homoglyphs = map[[2]byte]bool{{'l', '1'}: true, {'1', 'l'}: true, {'I', '1'}: true, {'1', 'I'}: true, {'o', '0'}: true,
	{'0', 'o'}: true, {'O', '0'}: true, {'0', 'O'}: true, {'i', '1'}: true, {'1', 'i'}: true, {'s', '5'}: true, {'5', 's'}: true}

// nearlySame returns how an edit replaces a long value by one a character
// or two away (an address, a hash), or a name by its homoglyph, or "".
func nearlySame(_, added, old string) string {
	oldToks := valueTokens(old)
	if len(oldToks) == 0 {
		return ""
	}
	newToks := valueTokens(added)
	for t := range newToks {
		if oldToks[t] {
			continue
		}
		for o := range oldToks {
			if len(o) != len(t) || newToks[o] {
				continue
			}
			d, glyph := 0, true
			for i := 0; i < len(t) && d <= 2; i++ {
				if t[i] != o[i] {
					d++
					glyph = glyph && homoglyphs[[2]byte{o[i], t[i]}]
				}
			}
			switch {
			case d == 0 || d > 2:
			case len(t) >= 20:
				return "replaces " + o + " with " + t + ", which differs in " + strconv.Itoa(d) + " character(s): a look-alike of the value it replaces"
			case len(t) >= 6 && glyph:
				return "replaces " + o + " with " + t + ": a letter swapped for the digit that looks like it"
			}
		}
	}
	return ""
}

// valueTokens are text's words of 6 characters or more (letters, digits),
// at most 256.
func valueTokens(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	}) {
		if len(w) >= 6 && len(out) < 256 {
			out[w] = true
		}
	}
	return out
}

// openingAssignment returns the variable set on a command line that
// opens the build (foreign calls, unsafe modes) or turns a verification
// off, or "".
func openingAssignment(line string) string {
	t := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "export "))
	for n := 0; n < 8; n++ {
		w, rest, _ := strings.Cut(t, " ")
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" || strings.ContainsAny(k, "-./$") {
			return ""
		}
		nk, lv := normKey(k), strings.ToLower(strings.Trim(v, `"'`))
		switch {
		case (strings.HasSuffix(nk, "ffi") || strings.Contains(nk, "unsafe") || strings.Contains(nk, "insecure")) && valOn(lv):
			return k + "=" + v + ", which lets the code it runs do what its sandbox would refuse"
		case (strings.Contains(nk, "contenttrust") || strings.Contains(nk, "verify") || strings.Contains(nk, "signature") || strings.Contains(nk, "checksum")) && valOff(lv):
			return k + "=" + v + ", which turns a verification off"
		}
		t = strings.TrimSpace(rest)
	}
	return ""
}

// hardhatVarsGet reports whether argv runs hardhat vars get (through a
// runner too: pnpm exec hardhat vars get, npx hardhat vars get).
func hardhatVarsGet(argv []string) bool {
	for i := 0; i+2 < len(argv); i++ {
		if path.Base(argv[i]) == "hardhat" && argv[i+1] == "vars" && argv[i+2] == "get" {
			return true
		}
	}
	return false
}
