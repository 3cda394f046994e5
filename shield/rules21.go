package shield

import (
	"math"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Rules 21 (session 26; docs/shield-rules.md "Rules 21: bounds and
// switches read with the edit's own structure"). Every domain has limits
// of its own — a robot's top speed and command watchdog, a trading desk's
// order size, a CDN token's lifetime, a key's rotation period — and no word
// list names them all. What they share is a shape: a number under a key
// that says it bounds something (max, limit, ceiling, tolerance, timeout,
// watchdog, heartbeat, lifetime, ttl, rotation, min) moves the permissive
// way by a clear factor, or a switch in a block about a protection is
// turned off. An edit's settings are read with the headers the edit
// itself shows above them (YAML keys, HCL and JSON blocks, list items'
// names, an XML element's attributes), so `enabled: false` under
// `key_rotation:` is the rotation switched off, and typed constants
// (`pub const MAX_WHEEL_RPM: u16 = 2860;`, `#define`) and parameters
// declared with a named default (`declare_parameter("estop.latching",
// true)`) are settings too. Numbers are decimal, hex or a list of either;
// durations take their unit.
//
// Not judged: tests (they weaken on purpose), prose, examples, and a
// capacity rather than a bound (pools, workers, retries, buffers, pages,
// line lengths, resources' cpu and memory): those are raised every day.

const (
	// maxLines21 bounds the lines of each side read for structure.
	maxLines21 = 256
	// maxLineLen21 bounds one line's length read for settings.
	maxLineLen21 = 400
)

var (
	// a key bounding how far, how much or how long: relaxed when raised
	boundKey21 = mustRx(`max|limit|ceiling|cap$|upperbound|tolerance|deviation|slippage|band|quota|allowance|budget|above|^over|over$|per(?:second|sec|minute|min|hour|day)$|rps$|qps$|throttl` +
		// rules 22: an outlier test's width (how many standard deviations pass)
		`|sigma|zscore|stddevs?$|nsigmas?$`)
	// a key bounding how long before a stop or an expiry: relaxed when raised
	waitKey = mustRx(`watchdog|heartbeat|deadman|timeout|ttl|expir|lifetime|validity|maxage|expiresin|staleness|graceperiod`)
	// a delay before acting, and text about alarms, trips and interlocks
	delayKey     = mustRx(`delay|debounce|holdoff`)
	alarmContext = mustRx(`(?i)alarm|alert|trip|interlock|safety|estop|e-stop|protect|watchdog`)
	// a trip limit named as process control names them: HH, HI, high; LL, LO, low
	upperTrip  = mustRx(`(?i)(?:^|_)(?:HH|HIHI)(?:_|$)|high_?high`)
	lowerTrip  = mustRx(`(?i)(?:^|_)(?:LL|LOLO)(?:_|$)|low_?low`)
	upperAlarm = mustRx(`(?i)(?:^|_)(?:HI|HIGH|H)(?:_|$)`)
	lowerAlarm = mustRx(`(?i)(?:^|_)(?:LO|LOW|L)(?:_|$)`)
	// a key setting a floor: relaxed when lowered
	floorKey = mustRx(`^min|minimum|floor|lowerbound|atleast`)
	// a key setting how often something is renewed: relaxed when stopped or made rarer
	rotateKey = mustRx(`rotat|renew|rekey`)
	// capacities, not bounds: raised every day for performance
	capacityKey = mustRx(`retr|backoff|pool|conn|worker|thread|concurren|parallel|replica|heap|mem|buffer|batch|cache|page|width|height|column|maxline$|maxlines|linelength|length|depth|complexity|upload|body|payload|bytes|chunk|image|logs?$|logging|logfile|logsize|tokens$|results|items|entries|pullrequest|prs$|jobs|instances|nodes|pods|cpu|gpu|disk|storage|ephemeral|queue|inflight|backlog|history|files|open|idle|keepalive|poll|wait|startup|boot|build|test|step|deploy|download|probe|readiness|liveness|statement|query|read$|write$|connect|socket|request(?:timeout|size|body|bytes|length)|^request$|http|client|gas|fee|zoom|font|cols|rows|spans|samples|frames|bitrate|fps|resolution|quality|volume|scale|zindex|^ports?$`)
	// a typed constant or a #define with a number
	constNumber = mustRx(`\b(?:const|static|final|val|let|var|constexpr|readonly|define)\s+(?:[\w:<>]+\s+)*?([A-Za-z_]\w{1,80})\s*(?::\s*[\w:<>\[\]&*]+)?\s*=?\s*(0x[0-9A-Fa-f_]+|0[bB][01_]+|0[oO][0-7_]+|-?\d[\d_]*(?:\.\d+)?(?:[eE]-?\d+)?)\b`)
	// a parameter declared with a named default: ("name", value)
	namedDefault = mustRx(`\(\s*["']([A-Za-z_][\w.\-/]{1,60})["']\s*,\s*(true|false|True|False|-?\d[\d_]*(?:\.\d+)?|0x[0-9A-Fa-f]+|"[^"\n]{0,60}"|'[^'\n]{0,60}')\s*[,)]`)
	// an XML element's numeric or boolean attributes, and <param name="k">v</param>
	xmlElement = mustRx(`^<([A-Za-z][\w:.-]*)\s([^<>]*?)/?>`)
	xmlAttr    = mustRx(`([A-Za-z][\w:.-]*)\s*=\s*"([^"]{0,60})"`)
	xmlParam   = mustRx(`<(?:param|parameter|arg|property|entry|setting)\s+(?:name|key)\s*=\s*"([\w.\-/]{1,60})"\s*>\s*([^<\s]{1,60})\s*<`)
	// a key whose value is an inline map: high: {limit: 0.3, delay_s: 60}
	inlineMap = mustRx(`^-?\s*["']?([\w.\-/]{1,60})["']?(?:\s*:\s*|\s+)\{([^{}]{1,300})\}\s*,?\s*(?:#.*)?$`)
	// rules 22: a typed declaration with a literal: NAME: Boolean = false
	typedDecl = mustRx(`^(?:(?:private|public|internal|protected|const|val|var|let|static|final|override|lazy|readonly|export)\s+)*([A-Za-z_]\w{0,80})\s*:\s*[\w.<>\[\]?]{1,40}\s*=\s*(true|false|True|False|-?\d[\d_]*(?:\.\d+)?|"[^"\n]{0,60}"|'[^'\n]{0,60}')\s*;?$`)
	// an IEC 61131-3 declaration: NAME : REAL := 7.2;
	iecDecl = mustRx(`^([A-Za-z_]\w{0,60})\s*:\s*[A-Z][A-Z_0-9]*\s*:=\s*(-?\d[\d_]*(?:\.\d+)?)\s*;`)
	// a TOML or INI section header
	iniSection = mustRx(`^\[{1,2}\s*([\w.\-"' ]{1,60}?)\s*\]{1,2}$`)
	// a list or set literal assigned in code: NAME = {a, b}, frozenset({...}), Set.of(...)
	listAssign = mustRx(`^(?:(?:const|let|var|val|final|static|private|public|readonly)\s+)*([A-Za-z_][\w.]{0,60})\s*(?::\s*[\w<>\[\], .]+)?\s*=\s*(?:frozenset|set|new\s+Set|Set\.of|List\.of|setOf|listOf|tuple)?\(?\s*[{(\[]\s*([^\]})]{0,300}?)\s*[\]})]\s*\)?;?$`)
	// a YAML list item's name (`- name: fire_door`): the block it opens
	itemName = mustRx(`^-\s+(?:name|id|key|zone|title|label)\s*:\s*["']?([\w.\-/]{1,60})`)
	// a block header: `key:` alone, `name {`, `resource "t" "n" {`, `"key": {`
	yamlHeader  = mustRx(`^-?\s*["']?([\w.\-/]{1,60})["']?\s*:\s*(?:[{\[]\s*)?(?:#.*)?$`)
	braceHeader = mustRx(`^([\w.\-/"' ]{1,120}?)\s*(?:=|:)?\s*\{\s*$`)
	// a protection a block or a key names: a switch in it turned off stops it
	protect21 = mustRx(`rotat|renew|rekey|latch|^arm|armed$|[a-z]check$|checks$|entitle|manualreset|limits?$|bindto|shield|estop|emergency|stopzone|safety|interlock|geoblock|georestrict|geofenc|watchdog|collision|failsafe|guard|tamper|lockout|encrypt|verif|signature|signing|signed|mfa|audit|firewall|protect|enforc|^require\w`)
	// a list that keeps things out: emptied, it keeps nothing out
	denyList = mustRx(`block|den(?:y|ied)|ban(?:ned)?$|forbid|disallow|reject|embargo|exclud|quarantin`)
	// a list of what may pass or be reached: widened to a bare wildcard
	passList = mustRx(`allow|permit|expos|egress|export|publish|share|keyexpr|topic|origin|host|cidr|source|principal|scope|audience|subject|grant|whitelist`)
	// switch leaves that mean nothing without their block
	switchLeaf = map[string]bool{"enabled": true, "enable": true, "on": true, "active": true, "required": true, "require": true,
		"enforce": true, "enforced": true, "strict": true, "mandatory": true, "armed": true, "engaged": true, "latching": true}
	// a block about stopping or keeping apart: its siblings' values say so
	stopContext = mustRx(`(?i)["'\s:=](?:stop|halt|estop|e-stop|brake|slowdown|deny|block|reject|quarantine)["'\s,]*$`)
	// a key that exposes what should stay inside when turned on
	exposeKey21 = mustRx(`suppress|mute|silenc|snooze|inhibit|shelve|writ(?:e|able)enabled|^writable$|allowwrites?|readwrite|autoaccept|acceptall|acceptany|acceptunknown|acceptinvalid|trustall|presign|shareable|sharedlink|publiclink|publicread|log\w*(?:key|secret|token|password|credential|value|plaintext|payload)s?$|export\w*(?:private|key|secret)|allowexport|dump\w*(?:key|secret)|printsecret|includesecret|showsecret|plaintext$|allowclear|cleartext`)
)

// qualSetting is a setting of an edit's text: its key with the headers the
// text shows above it (path, normalized), its last segment (leaf), its
// value (val), its line, and the key as written (raw).
type qualSetting struct {
	path, leaf, val, line, raw string
}

// qualSettings reads the settings of text with their headers (at most
// maxLines21 lines of maxLineLen21 bytes each).
func qualSettings(text string) []qualSetting {
	type header struct {
		indent int
		name   string
	}
	var stack []header
	var out []qualSetting
	n := 0
	for raw := range strings.SplitSeq(text, "\n") {
		if n++; n > maxLines21 {
			break
		}
		if len(raw) > maxLineLen21 {
			raw = raw[:maxLineLen21]
		}
		t := strings.TrimSpace(raw)
		if t == "" || commentLine(t) && !strings.HasPrefix(t, "#define") || t == "}" || t == "};" || t == "}," || t == "]" || t == "]," {
			continue
		}
		indent := len(raw) - len(strings.TrimLeft(raw, " \t"))
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		prefix := ""
		for _, h := range stack {
			prefix += h.name + "."
		}
		add := func(key, val string) {
			k := normKey(key)
			if k == "" || len(out) >= maxLines21 {
				return
			}
			out = append(out, qualSetting{path: normKey(prefix) + k, leaf: leafKey(key), val: settingVal(val), line: t, raw: key})
		}
		if m := inlineMap.FindStringSubmatch(t); m != nil {
			// key: {a: 1, b: 2}: the key qualifies what the map sets
			for _, sp := range settingsIn([]string{m[2]}, 8) {
				add(m[1]+"."+sp.key, sp.raw)
			}
			continue
		}
		if m := iecDecl.FindStringSubmatch(t); m != nil {
			add(m[1], m[2])
			continue
		}
		if m := typedDecl.FindStringSubmatch(t); m != nil {
			add(m[1], m[2])
			continue
		}
		if m := iniSection.FindStringSubmatch(t); m != nil {
			// [section] or [a.b]: it replaces the one before, whatever the indent
			stack = append(stack[:0], header{-1, m[1]})
			continue
		}
		if m := listAssign.FindStringSubmatch(t); m != nil {
			add(m[1], "["+m[2]+"]")
			continue
		}
		if m := itemName.FindStringSubmatch(t); m != nil {
			stack = append(stack, header{indent, m[1]})
			continue
		}
		if m := yamlHeader.FindStringSubmatch(t); m != nil {
			stack = append(stack, header{indent, m[1]})
			continue
		}
		if m := braceHeader.FindStringSubmatch(t); m != nil {
			stack = append(stack, header{indent, strings.Join(strings.Fields(strings.NewReplacer(`"`, " ", `'`, " ").Replace(m[1])), ".")})
			continue
		}
		if m := xmlParam.FindStringSubmatch(t); m != nil {
			add(m[1], m[2])
			continue
		}
		if m := xmlElement.FindStringSubmatch(t); m != nil {
			for _, a := range xmlAttr.FindAllStringSubmatch(m[2], 8) {
				add(m[1]+"."+a[1], a[2])
			}
			continue
		}
		found := false
		for _, m := range constNumber.FindAllStringSubmatch(t, 2) {
			add(m[1], m[2])
			found = true
		}
		for _, m := range namedDefault.FindAllStringSubmatch(t, 2) {
			add(m[1], m[2])
			found = true
		}
		if found {
			continue
		}
		for _, s := range settingsIn([]string{t}, 8) {
			add(s.key, s.raw)
		}
	}
	return out
}

// boundsRelaxed returns how an edit of p (added replacing old) relaxes a
// bound (rule appsec:bound-relaxed) or turns a protection's switch off
// (appsec:control-weakened), read with the edit's own structure, or "".
func boundsRelaxed(p, added, old string, oldS, newS []qualSetting) (rule, why string) {
	if old == "" || testSource(p) || prose(p) || exampleFile(p) {
		return "", ""
	}
	if plus, _ := diffLinesKept(added, old, keepAll, maxLines20); len(plus) == 0 {
		return "", ""
	}
	before := map[string]qualSetting{}
	twice := map[string]bool{}
	for _, s := range oldS {
		if _, ok := before[s.path]; ok {
			twice[s.path] = true
		}
		before[s.path] = s
	}
	if len(before) == 0 {
		return "", ""
	}
	seen := map[string]bool{}
	ci := ciConfig(p)
	alarmCtx := alarmContext.MatchString(p + "\n" + old)
	for _, s := range newS {
		o, had := before[s.path]
		if !had && !seen[s.path] {
			// rules 22: a check added switched off
			if why := rules22Added(s); why != "" {
				return "appsec:control-weakened", why + " (" + clipText(s.line, 60) + ")"
			}
		}
		if !had || twice[s.path] || seen[s.path] || o.val == s.val {
			continue
		}
		seen[s.path] = true
		if why := boundMoved(s.path, s.leaf, s.raw, o.val, s.val, ci, alarmCtx); why != "" {
			return "appsec:bound-relaxed", why + " (" + clipText(s.line, 60) + ")"
		}
		if why := rules22Bound(s.path, s.leaf, o.val, s.val, p+"\n"+old); why != "" {
			return "appsec:bound-relaxed", why + " (" + clipText(s.line, 60) + ")"
		}
		if why := switchMoved(s, o, p+"\n"+old); why != "" {
			return "appsec:control-weakened", why + " (" + clipText(s.line, 60) + ")"
		}
	}
	if why := unitSwitched(before, newS); why != "" {
		return "appsec:bound-relaxed", why
	}
	return "", ""
}

// unitSwitched judges a retention or lifetime written in another unit
// (years = 7 → days = 1): the edit's only unit setting, compared in days.
func unitSwitched(before map[string]qualSetting, newS []qualSetting) string {
	days := map[string]float64{"days": 1, "day": 1, "weeks": 7, "months": 30, "years": 365}
	one := func(m map[string]qualSetting) (string, float64, bool) {
		k, n := "", 0.0
		for key, s := range m {
			if d, ok := days[s.leaf]; ok {
				if k != "" {
					return "", 0, false
				}
				x, ok := number(s.val)
				if !ok {
					return "", 0, false
				}
				k, n = key, x*d
			}
		}
		return k, n, k != ""
	}
	ok1, a, okA := one(before)
	after := map[string]qualSetting{}
	for _, s := range newS {
		after[s.path] = s
	}
	ok2, b, okB := one(after)
	if !okA || !okB || ok1 == ok2 || a <= 0 || b*30 > a {
		return ""
	}
	return "writes " + ok1 + " as " + ok2 + ": what it keeps is gone " + factor(a/b) + " sooner"
}

// boundMoved judges one number moved under key (its qualified path),
// leaf and raw (the key as written: an upper or lower trip named HH/LL,
// high/low); ci says the file is a CI pipeline's (its timeouts are a
// job's), alarmCtx that the edit is about alarms, trips or interlocks (a
// delay there is a wait before acting).
func boundMoved(key, leaf, raw, ov, nv string, ci, alarmCtx bool) string {
	if a, ok1 := numbers(ov); ok1 && len(a) == 1 && a[0] != 0 {
		if b, ok2 := numbers(nv); ok2 && len(b) == 1 {
			switch {
			case capacityKey.MatchString(leaf):
			case (upperTrip.MatchString(raw) || alarmCtx && upperAlarm.MatchString(raw)) && b[0] >= a[0]*1.1 && a[0] > 0:
				return "raises " + raw + " from " + ov + " to " + nv + ": the upper trip acts later"
			case (lowerTrip.MatchString(raw) || alarmCtx && lowerAlarm.MatchString(raw)) && b[0] <= a[0]*0.9 && a[0] > 0:
				return "lowers " + raw + " from " + ov + " to " + nv + ": the lower trip acts later"
			}
		}
	}
	if securityFloor.MatchString(key) {
		if a, ok1 := numbers(ov); ok1 && len(a) == 1 {
			if b, ok2 := numbers(nv); ok2 && len(b) == 1 && b[0] < a[0] {
				return "lowers " + leaf + " from " + ov + " to " + nv + ": a weaker secret or key passes"
			}
		}
		return ""
	}
	if capacityKey.MatchString(leaf) || key == "limit" {
		// a bare limit is a query's or a page's size
		return ""
	}
	a, ok1 := numbers(ov)
	b, ok2 := numbers(nv)
	unlimited := ok1 && len(a) == 1 && a[0] > 0 && unlimitedVal(nv)
	if !unlimited && (!ok1 || !ok2 || len(a) != len(b)) {
		if floorKey.MatchString(leaf) && zeroVersion(nv) && !zeroVersion(ov) && strings.Count(ov, ".") >= 1 {
			return "lowers " + leaf + " from " + ov + " to " + nv + ": the floor lets anything in"
		}
		return ""
	}
	ratio := 0.0 // the largest factor an element moved up by
	low := math.Inf(1)
	for i := range a {
		if unlimited {
			ratio = math.Inf(1)
			break
		}
		if a[i] > 0 {
			ratio = math.Max(ratio, b[i]/a[i])
			low = math.Min(low, b[i]/a[i])
		} else if a[i] == 0 && b[i] > 0 && len(a) == 1 {
			low = 1
		}
	}
	switch {
	case rotateKey.MatchString(key) && len(a) == 1 && a[0] > 0 && (b[0] == 0 || ratio >= 4):
		if b[0] == 0 {
			return "sets " + leaf + " to 0: keys are no longer rotated"
		}
		return "makes rotation " + strconv.FormatFloat(ratio, 'f', 1, 64) + " times rarer (" + leaf + " " + ov + " → " + nv + ")"
	case (waitKey.MatchString(key) || delayKey.MatchString(leaf) && alarmCtx) && !ci && ratio >= 4 && !strings.HasPrefix(leaf, "min"):
		return "stretches " + leaf + " from " + ov + " to " + nv + ": what it guards waits " + factor(ratio) + " longer before it acts or expires"
	case boundKey21.MatchString(key) && !strings.HasPrefix(leaf, "min") && !floorKey.MatchString(leaf) && ratio >= 1.25 && low >= 1:
		return "raises " + leaf + " from " + ov + " to " + nv + " (" + factor(ratio) + "): the bound lets more through"
	case attemptsKey.MatchString(key) && len(a) == 1 && a[0] > 0 && b[0] == 0:
		return "sets " + leaf + " to 0: no number of failures locks anything"
	case floorKey.MatchString(leaf) && len(a) == 1 && a[0] > 0 && b[0]*4 <= a[0]:
		return "lowers " + leaf + " from " + ov + " to " + nv + ": the floor lets more through"
	}
	return ""
}

// notProtection are switches named like checks that protect nothing:
// looking for updates, spelling, telemetry.
var notProtection = mustRx(`update|version|spell|newer|telemetry|analytics|crashreport|tips|welcome`)

// switchMoved judges a switch moved from on to off (in a block about a
// protection) or an exposure turned on; old is the file's path and the
// edit's old text, its context.
func switchMoved(s, o qualSetting, old string) string {
	if valOn(o.val) && valOff(s.val) && !diagnostic.MatchString(s.path) && !exposeConcept.MatchString(s.leaf) && !notProtection.MatchString(s.leaf) {
		named := protect21.MatchString(s.path) || protect21.MatchString(s.leaf)
		if switchLeaf[s.leaf] && !named {
			// a bare switch: its block's other lines say what it is
			for l := range strings.SplitSeq(old, "\n") {
				l = strings.TrimSpace(l)
				k, _, _ := strings.Cut(l, ":")
				k, _, _ = strings.Cut(k, "=")
				if stopContext.MatchString(l) || protect21.MatchString(normKey(k)) && normKey(k) != s.leaf {
					named = true
					break
				}
			}
		}
		if named {
			return "turns " + clipText(s.path, 48) + " off: the protection it names stops"
		}
	}
	if strings.HasPrefix(o.val, "[") && strings.HasPrefix(s.val, "[") {
		ov, nv := strings.Trim(o.val, "[] "), strings.Trim(s.val, "[] ")
		if ov != "" && nv == "" && denyList.MatchString(s.leaf) {
			return "empties " + clipText(s.path, 48) + ": nothing is kept out any more"
		}
		if why := listWeakened(s, listItems21(ov), listItems21(nv), old); why != "" {
			return why
		}
		if wild21(nv) && !wild21(ov) && passList.MatchString(s.path) {
			return "widens " + clipText(s.path, 48) + " to everything (" + nv + ")"
		}
	}
	if valOff(o.val) && valOn(s.val) && exposeKey21.MatchString(s.leaf) {
		return "turns " + clipText(s.path, 48) + " on: what it names is written out"
	}
	if why := valueWeakened(s, o, old); why != "" {
		return why
	}
	return rules22Switch(s, o, old)
}

// numbers reads a number or a bracketed list of numbers (hex, underscores
// and a duration's unit allowed; a duration is read in seconds).
func numbers(v string) ([]float64, bool) {
	v = strings.Trim(strings.TrimSpace(v), `"'`)
	if strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") {
		var out []float64
		for part := range strings.SplitSeq(v[1:len(v)-1], ",") {
			x, ok := number(strings.Trim(strings.TrimSpace(part), `"'`))
			if !ok || len(out) >= 16 {
				return nil, false
			}
			out = append(out, x)
		}
		return out, len(out) > 0
	}
	x, ok := number(v)
	if !ok {
		return nil, false
	}
	return []float64{x}, true
}

func number(v string) (float64, bool) {
	v = strings.ReplaceAll(v, "_", "")
	if v == "" || len(v) > 24 {
		return 0, false
	}
	if h, ok := strings.CutPrefix(strings.ToLower(v), "0x"); ok {
		x, err := strconv.ParseUint(h, 16, 64)
		return float64(x), err == nil
	}
	// rules 22: binary and octal literals (0b01, 0o17)
	if b, ok := strings.CutPrefix(strings.ToLower(v), "0b"); ok {
		x, err := strconv.ParseUint(b, 2, 64)
		return float64(x), err == nil
	}
	if o, ok := strings.CutPrefix(strings.ToLower(v), "0o"); ok {
		x, err := strconv.ParseUint(o, 8, 64)
		return float64(x), err == nil
	}
	if x, err := strconv.ParseFloat(v, 64); err == nil {
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	}
	if strings.IndexAny(v, "0123456789") == 0 {
		return durationSeconds(v)
	}
	return 0, false
}

// wild21 reports whether a list's items are only a wildcard: every name,
// subject, address or pattern.
func wild21(v string) bool {
	switch strings.Trim(strings.TrimSpace(v), `"' `) {
	case "*", "**", "#", ">", ".*", "0.0.0.0/0", "::/0", "*/*", "*:*", "all", "any":
		return true
	}
	return false
}

func unlimitedVal(v string) bool {
	switch strings.Trim(strings.ToLower(v), `"' `) {
	case "-1", "unlimited", "inf", "infinity", ".inf", "none", "null", "~", "nolimit", "no_limit", "max":
		return true
	}
	return false
}

// zeroVersion reports whether v is a version of zeros (0.0.0, v0).
func zeroVersion(v string) bool {
	v = strings.TrimPrefix(strings.Trim(v, `"' `), "v")
	return v != "" && strings.Trim(v, "0.") == ""
}

func factor(r float64) string {
	if math.IsInf(r, 1) {
		return "without a limit"
	}
	return strconv.FormatFloat(r, 'f', 1, 64) + "×"
}

// exampleFile reports whether p is an example or template of a
// configuration, which nothing deploys (config.example.toml, app.sample.yaml).
func exampleFile(p string) bool {
	b := strings.ToLower(path.Base(p))
	return strings.Contains(b, ".example") || strings.Contains(b, ".sample") || strings.Contains(b, "example.") ||
		strings.Contains(b, ".template") || strings.HasSuffix(b, ".dist")
}

// ciConfig reports whether p is a CI pipeline's configuration.
func ciConfig(p string) bool {
	l := strings.ToLower(p)
	b := path.Base(l)
	return strings.Contains(l, ".github/workflows/") || b == ".gitlab-ci.yml" || b == "jenkinsfile" ||
		strings.Contains(l, ".buildkite/") || strings.Contains(l, ".circleci/") || b == "azure-pipelines.yml" ||
		b == "bitbucket-pipelines.yml" || b == ".travis.yml" || strings.Contains(l, ".drone")
}

// rules21 is rules 21: bounds and switches read with an edit's own
// structure (boundsRelaxed), and a check needing both conditions made to
// need one (conjunctionLoosened).
func (s *Shield) rules21(_ *Action, f *Facts, j *judgement) {
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || !s.inWorkspace(p) {
			continue
		}
		old := clip(removedText(f, t.Source), maxTextJudged)
		if old == "" {
			continue
		}
		body := clip(t.Body, maxTextJudged)
		// each side's settings are read once for every rule below
		var oldS, newS []qualSetting
		if !testSource(p) && !prose(p) {
			oldS, newS = qualSettings(old), qualSettings(body)
		}
		if rule, why := boundsRelaxed(p, body, old, oldS, newS); why != "" {
			j.escalate(rule, "the change to %s %s", s.relPath(p), why)
			return
		}
		if testSource(p) || prose(p) {
			continue
		}
		if why := conjunctionLoosened(body, old); why != "" {
			j.escalate("appsec:control-weakened", "the change to %s %s", s.relPath(p), why)
			return
		}
		if why := destinationMoved(p, body, old, oldS, newS); why != "" {
			j.escalate("exfiltration:destination-moved", "the change to %s %s", s.relPath(p), why)
			return
		}
		if rule, why := lineLoosened(p, body, old); why != "" {
			j.escalate(rule, "the change to %s %s", s.relPath(p), why)
			return
		}
		if why := blockListsWeakened(p, body, old); why != "" {
			j.escalate("appsec:control-weakened", "the change to %s %s", s.relPath(p), why)
			return
		}
		if why := codeLoosened(p, body, old); why != "" {
			j.escalate("appsec:control-weakened", "the change to %s %s", s.relPath(p), why)
			return
		}
		if why := checkLoosened(p, body, old); why != "" {
			j.escalate("evasion:check-loosened", "the change to %s %s: the check passes whatever it checks", s.relPath(p), why)
			return
		}
	}
}

// rules21b is rules 21's judgements of what a write adds, old or new
// file: a constant condition, tests switched off by a build flag,
// credentials copied into an image, a scanner told to skip directories.
func (s *Shield) rules21b(_ *Action, f *Facts, j *judgement) {
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || !s.inWorkspace(p) || testSource(p) || prose(p) {
			continue
		}
		old := clip(removedText(f, t.Source), maxTextJudged)
		plus, _ := diffLinesKept(clip(t.Body, maxTextJudged), old, keepAll, maxLines20)
		if len(plus) == 0 {
			continue
		}
		base := path.Base(p)
		if why := writtenSetUp(clip(t.Body, maxTextJudged), old == ""); why != "" {
			j.escalate("appsec:control-weakened", "the change to %s %s", s.relPath(p), why)
			return
		}
		if rule, why := buildSwitchedOff(p, plus, old); why != "" {
			j.escalate(rule, "the change to %s %s", s.relPath(p), why)
			return
		}
		if scannerIgnore[strings.ToLower(base)] {
			for _, l := range plus {
				if m := dirWide.FindString(l); m != "" && !commentLine(l) && !outputDir.MatchString(l) {
					j.escalate("evasion:scanner-off", "the change to %s exempts whole directories from the scan (%s): what they hold is never looked at", s.relPath(p), clipText(l, 60))
					return
				}
			}
		}
		for _, l := range plus {
			if commentLine(l) {
				continue
			}
			if m := testsOffFlag.FindString(l); m != "" && !strings.Contains(old, m) {
				j.escalate("evasion:check-loosened", "the change to %s switches tests off (%s): the build passes without running them", s.relPath(p), m)
				return
			}
			if codeExts[strings.ToLower(path.Ext(p))] || strings.HasSuffix(p, ".vcl") {
				if m := constCompare.FindStringSubmatch(l); m != nil && !strings.Contains(old, m[0]) && distinctLiterals(m) {
					j.escalate("obfuscation:constant-condition", "the change to %s adds a condition between two constants (%s): it always has one value, disguised as a check", s.relPath(p), clipText(strings.TrimSpace(m[0]), 40))
					return
				}
			}
			if dockerfile(base) {
				if m := copySource.FindStringSubmatch(l); m != nil {
					for _, src := range strings.Fields(m[1]) {
						if secretSource.MatchString(src) && !publicHalf.MatchString(src) {
							// beside the credential paths container-build knows
							j.escalate("runs-later:container-build", "the change to %s copies %s, a store of keys or secrets, into the image (it stays in a layer): whoever pulls the image has them", s.relPath(p), src)
							return
						}
					}
				}
			}
		}
	}
}

var (
	// the files a scanner reads for what to skip
	scannerIgnore = map[string]bool{".gitleaks.toml": true, ".gitleaksignore": true, "gitleaks.toml": true, ".trufflehogignore": true,
		".secretsignore": true, ".semgrepignore": true, ".trivyignore": true, ".bandit": true, ".snyk": true, ".checkov.yaml": true,
		".checkov.yml": true, ".hadolint.yaml": true, ".grype.yaml": true, ".detect-secrets.cfg": true}
	// a pattern covering a whole directory
	dirWide = mustRx(`[\w\-]/(?:\.\*|\*\*?)(?:["'\s,\]]|$)|^\s*[\w\-./]+/\s*$|"""[\w\-./]+/\.\*"""`)
	// directories a scanner skips by habit: dependencies, outputs, tests
	outputDir = mustRx(`(?i)(?:^|[\s"'/])(?:node_modules|vendor|third_party|dist|build|target|out|coverage|\.venv|venv|__pycache__|\.cache|tests?|testdata|fixtures|examples?|docs)/`)
	// tests switched off by a build flag or variable
	testsOffFlag = mustRx(`-D\w*TEST\w*=(?:OFF|0|FALSE|NO|false)\b|-DskipTests\b|-Dmaven\.test\.skip=true|--exclude-task[ =]test\b|(?:^|\s)-x\s+test\b|\bSKIP_TESTS?\s*[=:]\s*["']?(?:1|true|yes)\b|\bBUILD_TESTING["']?\s*[=:]\s*["']?(?:OFF|0|false)\b|--no-run-tests?\b`)
	// two constants compared: 0x0 == 0x1, 1 != 1, "a" === "b"
	constCompare = mustRx(`(?:^|[\s(!&|,=])(0x[0-9A-Fa-f]+|\d+|"[^"\s]{0,12}"|'[^'\s]{0,12}')\s*(===|!==|==|!=|<=|>=|<|>)\s*(0x[0-9A-Fa-f]+|\d+|"[^"\s]{0,12}"|'[^'\s]{0,12}')(?:$|[\s)&|;,?:])`)
	// a Dockerfile's COPY or ADD: its sources
	copySource = mustRx(`(?i)^(?:COPY|ADD)\s+(?:--\S+\s+)*((?:\S+\s+)+)\S+\s*$`)
	// a source that is a secret: key stores, private keys, dot files of credentials
	secretSource = mustRx(`(?i)(?:^|/)(?:\.ssh|\.aws|\.gnupg|\.docker|keystores?|secrets?|credentials?|private)(?:/|$)|\.(?:pem|key|p12|pfx|jks|keystore|kdbx)$|(?:^|/)(?:id_rsa|id_ed25519|id_ecdsa|\.env|\.npmrc|\.pypirc|\.netrc|\.git-credentials)$`)
	// the public half of a pair, or a certificate authority's bundle
	publicHalf = mustRx(`(?i)(?:^|[/_.-])(?:ca|cacert|chain|fullchain|pub|public|cert|crt|bundle|trust)(?:[/_.-]|$)|\.pub$`)
	// where a setting points: hosts and URLs
	hostKey21 = mustRx(`^(?:host|hostname|proxyjump|proxycommand|endpoints?|destination|dest|url|uri|servers?|remote|registry|peers?|peeraddress|address|target|upstream|origin|backend|relay|brokers?|sink|webhook\w*|callbackurl|baseurl|apiurl|endpointurl|proxypass)$`)
	// where data is sent on: sinks, exports, mirrors, forwarding
	sinkKey21 = mustRx(`sink|destination|export|forward|mirror|replicat|egress|webhook|relay|upstream|outbound|subscriber`)
	// ssh_config and nginx style: Key value
	spacedHost = mustRx(`(?i)^(ProxyJump|ProxyCommand|HostName|server|upstream|proxy_pass|Peer|remote)\s+([^\s;]+)`)
	// a transport prefix before a host (zenoh's tcp/host:port)
	transportPrefix = mustRx(`^(?:tcp|udp|tls|quic|ws|wss|ssl|mqtts?|nats)/`)
	// a check script's name
	checkFileName21 = mustRx(`(?i)check|verif|validat|lint|audit|guard|gate|assert|limit|safety|policy|scan`)
	// a status returned as computed, and as a constant success
	statusComputed = mustRx(`^(return|exit|sys\.exit|os\.Exit|process\.exit)\b\s*\(?\s*([^\s)]+.*?)\s*\)?;?$`)
	successConst   = mustRx(`^(return|exit|sys\.exit|os\.Exit|process\.exit)\b\s*\(?\s*(?:0|True|true|EXIT_SUCCESS|None)?\s*\)?;?$`)
	// a program's exit status computed, and one made 0
	exitComputed = mustRx(`\b(?:sys\.exit|process\.exit|os\.Exit|exit|Environment\.Exit|System\.exit)\s*\(\s*[^)0\s][^)]*\)`)
	exitZero     = mustRx(`\b(?:sys\.exit|process\.exit|os\.Exit|exit|Environment\.Exit|System\.exit)\s*\(\s*0?\s*\)`)
	// a comparison with a number: the bound a check holds a value to
	numCompare = mustRx(`(<=|>=|<|>)\s*(-?\d+(?:\.\d+)?)`)
)

// distinctLiterals reports whether a constant comparison is not a version
// or a loop idiom (while (1), 1 == 1 in a test was spared already): its
// two sides are different literals, or the same one compared for
// inequality.
func distinctLiterals(m []string) bool {
	return m[1] != m[3] || m[2] == "!=" || m[2] == "!=="
}

// destinationMoved returns how an edit points a host or URL setting at
// another registered domain (or adds one beside those it lists), or "".
func destinationMoved(p, added, old string, oldS, newS []qualSetting) string {
	hosts := func(v string) []string {
		var out []string
		for _, item := range strings.Split(strings.Trim(v, "[] "), ",") {
			item = transportPrefix.ReplaceAllString(strings.Trim(strings.TrimSpace(item), `"'`), "")
			if h := hostOf(item); h != "" {
				if k := strings.LastIndexByte(h, ':'); k > 0 && !strings.Contains(h[:k], ":") {
					h = h[:k]
				}
				out = append(out, h)
			}
			if len(out) >= 16 {
				break
			}
		}
		return out
	}
	// read returns a text's host settings by leaf, and the leaves in the
	// order they first appear (a reason must not depend on map order:
	// a replay re-derives it)
	read := func(text string, settings []qualSetting) (map[string][]qualSetting, []string) {
		out := map[string][]qualSetting{}
		var order []string
		put := func(k string, s qualSetting) {
			if _, ok := out[k]; !ok {
				order = append(order, k)
			}
			out[k] = append(out[k], s)
		}
		for _, s := range settings {
			if hostKey21.MatchString(s.leaf) {
				put(s.leaf, s)
			}
		}
		n := 0
		for l := range strings.SplitSeq(text, "\n") {
			if n++; n > maxLines21 {
				break
			}
			if m := spacedHost.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
				k := normKey(m[1])
				put(k, qualSetting{path: k, leaf: k, val: strings.ToLower(m[2]), line: strings.TrimSpace(l)})
			}
		}
		return out, order
	}
	// a destination added to a sink or forwarding setting the edit shows
	// (external_sinks: [] → a partner's broker)
	oldKeys := map[string]bool{}
	for _, o := range oldS {
		oldKeys[o.path] = true
	}
	for _, s := range newS {
		if !sinkKey21.MatchString(s.path) || oldKeys[s.path] {
			continue
		}
		shown := false
		for _, o := range oldS {
			shown = shown || strings.HasPrefix(s.path, o.path) && sinkKey21.MatchString(o.path)
		}
		if !shown {
			continue
		}
		for _, h := range hosts(s.val) {
			if (hostLike(h) || ipAddr(h)) && !strings.Contains(old, h) && !localHost(h) && !intranetHost(h) {
				return "adds " + h + " to " + clipText(s.path, 40) + ": what it sends goes there too (" + clipText(s.line, 60) + ")"
			}
		}
	}
	before, _ := read(old, oldS)
	if len(before) == 0 {
		return ""
	}
	after, order := read(added, newS)
	for _, leaf := range order {
		news := after[leaf]
		olds := before[leaf]
		if len(olds) == 0 {
			continue
		}
		domains := map[string]bool{}
		for _, o := range olds {
			for _, h := range hosts(o.val) {
				domains[regDomain(h)] = true
			}
		}
		if len(domains) == 0 {
			continue
		}
		for _, s := range news {
			for _, h := range hosts(s.val) {
				if !hostLike(h) && !ipAddr(h) || domains[regDomain(h)] || strings.Contains(old, h) || localHost(h) || intranetHost(h) {
					continue
				}
				return "points " + clipText(s.path, 40) + " at " + h + ", another domain than it named: what went there now goes elsewhere (" + clipText(s.line, 60) + ")"
			}
		}
	}
	return ""
}

func ipAddr(h string) bool { _, err := netip.ParseAddr(h); return err == nil }

// checkLoosened returns how an edit of a check's script makes it pass:
// a computed status returned as a constant success, a computed exit
// status made 0 anywhere on a line (process.exit(bad ? 1 : 0) →
// process.exit(0), also in a script under a checks/ or lint/ directory),
// or the number a value is compared with moved fourfold the permissive
// way, or "".
func checkLoosened(p, added, old string) string {
	if !codeExts[strings.ToLower(path.Ext(p))] && !strings.HasSuffix(p, ".sh") {
		return ""
	}
	named := checkFileName21.MatchString(path.Base(p))
	if !named {
		if lp := strings.ToLower(path.Dir(p)); !strings.Contains(lp, "check") && !strings.Contains(lp, "lint") && !strings.Contains(lp, "verif") {
			return ""
		}
	}
	plus, minus := diffLinesKept(added, old, keepAll, maxLines20)
	for _, m := range minus {
		if !exitComputed.MatchString(m) {
			continue
		}
		for _, l := range plus {
			if exitZero.MatchString(l) && !exitComputed.MatchString(l) {
				return "exits 0 (" + clipText(strings.TrimSpace(l), 50) + ") where it exited with what it found"
			}
		}
	}
	if !named {
		return ""
	}
	for _, m := range minus {
		c := statusComputed.FindStringSubmatch(m)
		if c == nil || successConst.MatchString(m) {
			continue
		}
		for _, l := range plus {
			if s := successConst.FindStringSubmatch(l); s != nil && s[1] == c[1] {
				return "returns success (" + clipText(l, 30) + ") where it returned " + quote(clipText(c[2], 40))
			}
		}
	}
	for _, m := range minus {
		mo := numCompare.FindStringSubmatch(m)
		if mo == nil {
			continue
		}
		for _, l := range plus {
			lo := numCompare.FindStringSubmatch(l)
			if lo == nil || lo[1] != mo[1] || strings.Replace(m, mo[0], lo[0], 1) != l {
				continue
			}
			a, _ := strconv.ParseFloat(mo[2], 64)
			b, _ := strconv.ParseFloat(lo[2], 64)
			if (mo[1] == ">" || mo[1] == ">=") && a > 0 && b >= 4*a || (mo[1] == "<" || mo[1] == "<=") && a > 0 && b*4 <= a {
				return "moves the bound it compares with from " + mo[2] + " to " + lo[2]
			}
		}
	}
	return ""
}

// conjunctionLoosened returns how a line that required two conditions
// (&&, and) now accepts either (||, or), the rest of it unchanged, or "".
func conjunctionLoosened(added, old string) string {
	plus, minus := diffLinesKept(added, old, func(l string) bool {
		return strings.Contains(l, "&&") || strings.Contains(l, "||") || strings.Contains(l, " and ") || strings.Contains(l, " or ")
	}, maxLines20)
	for _, m := range minus {
		for _, l := range plus {
			for _, op := range [][2]string{{"&&", "||"}, {" and ", " or "}, {" AndAlso ", " OrElse "}} {
				if strings.Count(m, op[0]) > strings.Count(l, op[0]) && strings.Count(l, op[1]) > strings.Count(m, op[1]) &&
					strings.ReplaceAll(m, op[0], op[1]) == l {
					return "makes " + quote(clipText(m, 60)) + " accept either condition (" + strings.TrimSpace(op[0]) + " → " + strings.TrimSpace(op[1]) + "): one of what it required is enough"
				}
			}
		}
	}
	return ""
}

// plainRemote reports whether run is ssh running a command written on the
// line on one host (rules 21, the policy's toolchain "remote"): the host
// and the command are literal, and nothing is forwarded — no agent (-A),
// port, socket, tunnel or X11 forwarding, no master or background
// connection, no command of this machine's run by an -o option. What the
// command runs there is matched by the allow list program by program
// (Shield.tier0), and what the line reads or pipes into ssh is tier 1's
// (network: exfiltration:data).
func plainRemote(run *Run) bool {
	if run == nil || run.Name != "ssh" || run.Via != "" {
		return false
	}
	argv := run.Argv
	i := 1
	for ; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		for k := 1; k < len(a); k++ {
			c := a[k]
			if strings.IndexByte("ALRDWwOSMNfXYG", c) >= 0 {
				return false
			}
			if strings.IndexByte("BbcDEeFIiJLlmOopPQRSWw", c) >= 0 {
				v := a[k+1:]
				if v == "" {
					if i+1 >= len(argv) {
						return false
					}
					i++
					v = argv[i]
				}
				if c == 'o' && sshOptionRuns.MatchString(v) {
					return false
				}
				break
			}
		}
	}
	if i+1 >= len(argv) {
		return false // no host, or no command: a login shell
	}
	for _, w := range argv[i:] {
		if strings.ContainsAny(w, "$`\x00") {
			return false
		}
	}
	return true
}

// remoteSetup is the other machine's own environment script sourced
// before the commands (source /opt/ros/jazzy/setup.bash &&): a file of
// that machine's installation, not code the line brings; what follows is
// judged.
var remoteSetup = mustRx(`^\s*(?:(?:source|\.)\s+/(?:opt|usr|etc)/[\w./-]+\s*(?:&&|;)\s*)+`)

// remoteSetupRun reports whether run sources another machine's own
// environment script over ssh (source /opt/ros/jazzy/setup.bash): not a
// program for the allow list to match (remoteSetup).
func remoteSetupRun(run *Run) bool {
	return strings.HasPrefix(run.Via, "ssh ") && (run.Name == "source" || run.Name == ".") && len(run.Argv) == 2 &&
		remoteSetup.MatchString(run.Name+" "+run.Argv[1]+" &&")
}

// remoteSecret is a path on another machine named as a secret: a key, a
// token, a password, a credentials file, a directory of them.
var remoteSecret = mustRx(`(?i)(?:^|/)(?:\.ssh|\.aws|\.gnupg|\.kube|\.docker|secrets?|keys?|credentials?|private)(?:/|$)|[^/]*(?:key|token|secret|credential|passw|shadow|vault|cookie|session|wallet|mnemonic|netrc|kubeconfig|\.runner)[^/]*$|\.(?:pem|p12|pfx|jks|keystore|env|kdbx|ovpn)$`)

// sshOptionRuns is an ssh -o option that runs a command of this machine's
// or forwards something.
var sshOptionRuns = mustRx(`(?i)^\s*(?:proxycommand|localcommand|permitlocalcommand|knownhostscommand|remotecommand|forwardagent|forwardx11|localforward|remoteforward|dynamicforward|tunnel|controlmaster|controlpath|stdinnull)\b`)

// remoteReads reports whether the policy allows the action through a rule
// whose toolchain is "remote" (plainRemote), the host is the project's or
// the intranet's, and each command ssh runs there, judged as if it ran here, only reads: it writes, deletes, fetches
// and runs nothing the shell analysis sees, nothing in it is computed on
// this machine, and the policy allows it here.
func (s *Shield) remoteReads(a *Action, f *Facts) bool {
	if a == nil || computed(f) || !slices.ContainsFunc(f.Runs, func(r Run) bool { return plainRemote(&r) }) {
		return false
	}
	if v := s.tier0(a, f); v.Decision != Allow || !slices.ContainsFunc(s.cfg.Policy.Allow, func(r Rule) bool { return r.Toolchain == "remote" && "policy:"+r.Name == v.Rule }) {
		return false
	}
	n := 0
	for _, t := range f.Texts {
		host, ok := strings.CutPrefix(t.Source, "ssh ")
		if !ok {
			continue
		}
		// a machine of the project's or the intranet's, not any host a
		// line names: an alias the workspace's ssh configuration defines,
		// a single-label or intranet name, a private address
		if !intranetHost(host) && !internalName(host) && !sshConfigIn(f, s.cfg.Workspace) {
			return false
		}
		n++
		rf := s.CommandFacts(remoteSetup.ReplaceAllString(t.Body, ""))
		if len(rf.Writes)+len(rf.Deletes)+len(rf.Requests)+len(rf.Execs)+len(rf.Unknown)+len(rf.Supply) > 0 || len(rf.Runs) == 0 {
			return false
		}
		// the credential paths are this machine's layout: on another one a
		// file named as a secret is taken for one
		if slices.ContainsFunc(rf.Reads, func(r Ref) bool { return remoteSecret.MatchString(r.Path) }) {
			return false
		}
		ra := Action{Session: a.Session, Tool: a.Tool, Command: t.Body, Facts: rf}
		if s.tier0(&ra, &rf).Decision != Allow {
			return false
		}
	}
	return n > 0
}

// blockListsWeakened judges an edit's YAML block lists as listWeakened
// judges inline ones.
func blockListsWeakened(p, added, old string) string {
	was := blockLists(old)
	if len(was) == 0 {
		return ""
	}
	now := blockLists(added)
	keys := make([]string, 0, len(now))
	for k := range now {
		keys = append(keys, k)
	}
	slices.Sort(keys) // one reason whatever the map's order: a replay re-derives it
	for _, k := range keys {
		now := now[k]
		if before, ok := was[k]; ok {
			if why := listWeakened(qualSetting{path: k, leaf: k}, before, now, p+"\n"+old); why != "" {
				return why
			}
		}
	}
	return ""
}
