package manifest

import (
	"bytes"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The shape rule (issue 27, session 14): a change to a build file Shield
// has no parser for is judged by the text it adds and removes, whatever
// the ecosystem:
//
//   - KindSource: a URL, host or namespace that the file did not name
//     before (a repository, registry, feed, index, mirror, module or
//     distribution elsewhere), plain http:// to a remote host, a transport
//     made insecure (allow-insecure, secure-http false, ssl verify off,
//     trust-all), a dependency or plugin id one or two letters away from
//     one the file already names (a look-alike), a source path outside
//     the tree;
//   - KindChecksum: a recorded hash removed, or changed while its version
//     did not; verification switched off or its setting removed;
//   - KindRuns: text that runs code (exec tasks, build hooks, infrastructure
//     local-exec and external programs, JVM agents, required code in a
//     tool's configuration, diff and filter drivers, shell pipelines);
//   - KindChecks: a check made unable to fail or narrowed to nothing
//     (failures ignored, a check skipped, a threshold raised, everything
//     excluded, diffs hidden);
//   - KindDestroy: a guard against deleting infrastructure switched off
//     (prevent_destroy, deletion protection, force_destroy).
//
// A version bump (only a version token changed, same source) adds no host,
// no switch and no hash change for an unchanged version: it passes.

// The kinds only the shape rule reports.
const (
	KindChecks  = "checks"  // a check made unable to fail, skipped or narrowed
	KindDestroy = "destroy" // a guard against deleting infrastructure switched off
)

var (
	urlRe  = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]{1,15})://([^\s"'<>()\[\]{},;` + "`" + `\\]+)`)
	scpRe  = regexp.MustCompile(`(?i)\b[\w.-]+@([a-z0-9-]+(?:\.[a-z0-9-]+)+):([\w.~/-]+)`)
	bareRe = regexp.MustCompile(`(?i)(?:^|[\s"'=(\[,:])((?:[a-z0-9-]+\.)+(?:com|org|net|io|dev|app|co|sh|cloud|xyz|ru|cn|me|info|biz|top|site|online|ly|gg|to|tk|cc|pw|ws|su|in|de|uk|eu|us|ai|so|run|page|link|live|zip|mov|tech|tools|store|pro|website|space|club|fun|icu|sbs|cfd)(?::\d+)?)/([^\s"'<>()\[\]{},;]*)`)
	// pairRes find key/value pairs anywhere in a line: key = value,
	// key: value, <key>value</key>, key="value", key("value"), key 'value'.
	pairRes = []*regexp.Regexp{
		regexp.MustCompile(`<([A-Za-z][\w.:-]*)>\s*([^<]*?)\s*</`),
		regexp.MustCompile(`([A-Za-z_][\w.\-]*)["']?\s*(?:\+?=|:=|:)\s*["']?([^"'\s,;}\])]*)`),
		regexp.MustCompile(`([A-Za-z_][\w.]*)\s*\(\s*["']?([^"')\s,]*)`),
		regexp.MustCompile(`([A-Za-z_][\w.]*)\s+["']([^"']*)["']`),
		regexp.MustCompile(`--?([A-Za-z][\w.-]*)=([^\s"']*)`),
	}
	hashRe    = regexp.MustCompile(`(?i)\b(?:sha1|sha224|sha256|sha384|sha512|md5|h1|zh|blake2b|sha3-256)[-:=]?[A-Za-z0-9+/_=-]{20,}|\b[0-9a-fA-F]{40,128}\b`)
	versionRe = regexp.MustCompile(`\bv?\d+(?:\.\d+)+(?:[-+.][\w.]+)?\b`)
	identRe   = regexp.MustCompile(`[A-Za-z][A-Za-z0-9]*(?:[.:_-][A-Za-z0-9]+)+`)
	// runsRe is text that runs code when the tool reads the file.
	runsRe = regexp.MustCompile(`(?i)\blocal-exec\b|\bremote-exec\b|\bdata\s+"external"|\bprovisioner\s+"|` +
		`\bExec\b|type\s*[:=]\s*["']?exec|\bcommandLine\b|\.execute\(\s*\)|ProcessBuilder|Runtime\.getRuntime|` +
		`\bexec-maven-plugin\b|\bmaven-antrun-plugin\b|<exec\b|<executable>|\bdoFirst\b|\bdoLast\b|` +
		`-javaagent|-agentpath|-agentlib|-Xbootclasspath|-XX:\+?On(?:Error|OutOfMemoryError)|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|` +
		`--init-script\b|\binitscript\b|<extension>|\bBeforeTargets\b|\bAfterTargets\b|<UsingTask\b|` +
		`\bexecute_process\b|\badd_custom_(?:command|target)\b|\bpre_hooks\b|\bpost_hooks\b|\bprovider_hooks\b|` +
		`\bpost_install\b|\bpre_install\b|\bprepare_command\b|-install-cmd\b|-update-cmd\b|-autoload-dump\b|` +
		`helm\.sh/hook\b|\bpreload\s*=|build-type:\s*custom|\bcurl\s+\S|\bwget\s+\S|\|\s*(?:ba|z|da)?sh\b|` +
		`\b(?:ba)?sh\s+-c\b|\bpowershell\b|\bpwsh\b|Invoke-(?:Expression|WebRequest)|\biex\b|\bos\.system\b|` +
		`\bsubprocess\b|\bsystem\s*\(|\bchild_process\b|\beval\s*\(|` +
		`^-{1,2}r(?:equire)?\s+["']?(?:\.|/|~|\S*/)|^require\s*:\s*["']?(?:\.|/|~|\S*/)|\bcallback(?:s_enabled|_whitelist|_plugins)\b|` +
		`\b(?:action|filter|lookup|strategy|vars|inventory|connection|cache|test|module)_plugins\s*=|\blibrary\s*=|\bmodule_utils\s*=|` +
		`apply\s*\(?\s*from\s*[:=(]\s*["']?https?:|` +
		// rules 12: build hooks named as such in any tool's configuration,
		// and recipe code required from another package
		// rules 18: electron-builder's hooks (a script it runs while it
		// packs and signs)
		`\b(?:before|after)(?:Pack|Sign|Build|Extract|AllArtifactBuild)["']?\s*[=:]|\bonNodeModuleFile["']?\s*[=:]|\bartifactBuild(?:Started|Completed)["']?\s*[=:]|` +
		`\bextra_scripts\s*=|\b(?:pre|post)[-_]?(?:build|install|compile|link|configure)[-_]?(?:scripts?|hooks?|commands?|steps?)\s*[=:]|\bbuild[-_]?hooks?\s*[=:]|\bpython_requires\s*=`)
	// computedSource is a source whose value is built when the tool runs
	// (an environment variable, a property, a decoded string, a URL
	// glued from pieces): what it will name cannot be judged.
	computedSource = regexp.MustCompile(`(?i)\b(?:url|uri|source|src|registry|repository|repositories|mirror|index[-_]?url|feed|distributionurl|artifactUrls?)\b["']?\s*(?:\+?=|:|\(|\s)\s*(?:uri\(\s*)?(?:System\.|providers\.|project\.|property\(|findProperty|getenv|env\.|ENV\[|os\.environ|process\.env|\$\{?[A-Za-z_]|String\(|new\s+String|[\w.]*decode|atob\(|base64|file\(|[A-Za-z_][\w.]*\s*\+)|\b(?:https?|git|ftp)://["']?\s*(?:\+|\$\{?[A-Za-z_]|#\{|\{\{|%\()`)
	// codeListKeys are keys whose list items are code the tool loads.
	codeListKeys = regexp.MustCompile(`(?i)^(?:require|requires|plugins|plugin|load|preload|extensions|callbacks_enabled|init_scripts?)$`)
	// metaKeys name a URL that is documentation, not a source.
	metaKeys = regexp.MustCompile(`(?i)^(?:homepage|home|documentation|docs|website|license|licenses|issues|bugs|changelog|description|summary|authors?|email|maintainers?|icon|readme|funding|scm|connection|developerconnection|sources|project_urls|\w+_uri|issuemanagement|cimanagement|organization|tag|keywords)$`)
	// sourceKeys name where code comes from.
	sourceKeys = regexp.MustCompile(`(?i)^(?:source|src|url|uri|repository|repositories|repo|registry|index|index[-_]?url|mirror|mirrors|feed|from|location|remote|server|channel|channels|distributionurl|path|git|origin)$`)
	// Switches: a key that weakens when set truthy, or when set falsy.
	weakOnKeys  = regexp.MustCompile(`(?i)insecure|trust[-_.]?all|no[-_.]?verify|skip[-_.]?(?:tls|ssl|verif|cert|checksum|signature)|disable[-_.]?(?:ssl|tls|verif|checksum|signature|gpg)|allow[-_.]?(?:insecure|http|unsigned|untrusted|unverified)|unsafe|ignore[-_.]?(?:cert|ssl|checksum|signature|verif)`)
	weakOffKeys = regexp.MustCompile(`(?i)verif|ssl|tls|secure|strict|validate[-_.]?certs?|check[-_.]?cert|gpgcheck|checksum|signature|signing|integrity|^hash`)
	checksumKey = regexp.MustCompile(`(?i)verif|checksum|signature|signing|integrity|gpg|pgp|hash|sha\d*(?:sum)?$`)
	// Checks made unable to fail.
	checksOnKeys  = regexp.MustCompile(`(?i)ignore[-_.]?(?:test[-_.]?)?failures?|failures?[-_.]?ignore|ignore[-_.]?errors?|^skip|[.-_]skip$|skip[-_.]?(?:tests?|its|checks?|lint|scan|audit|verify|hooks?)|disable[-_.]?all|allow[-_.]?all|exit[-_.]?zero|continue[-_.]?on[-_.]?error|allow[-_.]?failure|soft[-_.]?fail|warn[-_.]?only|ignore[-_.]?all`)
	checksOffKeys = regexp.MustCompile(`(?i)^fail[-_.]?on|^fail[-_.]?build|abort[-_.]?on[-_.]?error|halt[-_.]?on[-_.]?failure|^fail[-_.]?if|^error[-_.]?on|^fail[-_.]?fast$|warnings[-_.]?as[-_.]?errors|treat[-_.]?warnings|^enabled?$|^required$|^use[-_.]?defaults?(?:[-_.]?rules)?$`)
	thresholdKeys = regexp.MustCompile(`(?i)cvss|threshold|min[-_.]?score|max[-_.]?(?:warnings|issues|violations|errors)|severity|fail[-_.]?level`)
	excludeKeys   = regexp.MustCompile(`(?i)exclu|ignore|skip[-_.]?(?:dirs|files|paths)|suppress|allowlist|whitelist|paths[-_.]?ignore`)
	// A guard against deleting infrastructure.
	guardOffKeys = regexp.MustCompile(`(?i)prevent[-_.]?destroy|deletion[-_.]?protection|termination[-_.]?protection|retain[-_.]?on[-_.]?delete`)
	guardOnKeys  = regexp.MustCompile(`(?i)force[-_.]?destroy|skip[-_.]?final[-_.]?snapshot|force[-_.]?delete`)
	// gitattributes: drivers run programs, the rest hide changes.
	attrDriverRe = regexp.MustCompile(`(?:^|\s)(?:filter|diff|merge)=\S`)
	attrHideRe   = regexp.MustCompile(`(?:^|\s)(?:-diff|binary|-text|linguist-(?:generated|vendored|documentation)|export-ignore)\b`)
	// buildShape is what Sniff looks for in a file the table does not know.
	buildShape = regexp.MustCompile(`(?i)<repositor(?:y|ies)>|\brepositories\s*[{:\[(=]|\bpluginRepositor|\bregistr(?:y|ies)\s*[=:{]|\bmirrors?\s*[=:{]|` +
		`\bfeeds?\s*[=:{]|\bpackageSources?\b|\bindex[-_]?url\b|extra[-_]?index|\bdistributionUrl\b|\bdependencyVerification\b|` +
		`allowInsecure|secure-http|trusted[-_]?host|\bpluginManagement\b|\bbuildscript\b|\bsources?\s*[=:]\s*["']?(?:https?|git)`)
)

// Rules 22: a conan reference's user channel, sbt's checksums emptied and
// code it runs, and a mode that fails or only warns.
var (
	conanChannel    = regexp.MustCompile(`^\s*["']?[\w.+-]+/[\w.+\[\]<>=,~^ -]+@([\w.-]+)/[\w.-]+`)
	sbtChecksumsOff = regexp.MustCompile(`withChecksums\(\s*(?:Vector|Seq|List)\(\s*None\s*\)|withChecksums\(\s*(?:Vector|Seq|List)\(\s*\)|\bchecksums\s*:=\s*(?:Nil|Seq\(\s*\)|Vector\(\s*\)|List\(\s*\))`)
	sbtRuns         = regexp.MustCompile(`\bsys\.process\b|\bProcess\(|["')]\s*\.!!?\s*(?:$|[;)])|\.lineStream\b|\brunCommand\b`)
	failingMode     = regexp.MustCompile(`(?i)fail|error|check|strict|enforc|deny|reject|block`)
	warningMode     = regexp.MustCompile(`(?i)^(?:warn|ignore|none|skip|report|permissive|off$|log$)`)
)

// lastSeg is a value's last dotted segment (Mode.WarnOnError → WarnOnError).
func lastSeg(v string) string { return v[strings.LastIndexByte(v, '.')+1:] }

// channelKeys are keys whose list items name where packages come from
// (conda's and pixi's channels, a list of sources or repositories).
var channelKeys = regexp.MustCompile(`(?i)^(?:channels?|sources?|repositories|repos|registries|indexes|indices|mirrors|remotes)$`)

// bareName is a list item that is a name alone (no URL, no path, no
// spaces, no version operator).
var bareName = regexp.MustCompile(`^[A-Za-z0-9][\w.-]{0,63}$`)

// quotedItem is a quoted item of an inline list.
var quotedItem = regexp.MustCompile(`["']([^"'\s]{1,64})["']`)

// defaultChannels are the names of the ecosystems' own channels and
// repositories (conda's defaults and community channels, CRAN, Maven
// Central, PyPI): naming one is not a redirection.
var defaultChannels = set("defaults", "nodefaults", "conda-forge", "main", "r", "msys2", "free", "pro", "bioconda",
	"pytorch", "nvidia", "anaconda", "pypi", "cran", "central", "mavencentral", "google", "gradlepluginportal",
	"jcenter", "npm", "npmjs", "crates-io", "rubygems", "nuget", "hex", "origin", "upstream")

// pinKeys name the revision of a source fetched by git, and floatingRef
// the names of branches that move.
var (
	pinKeys     = regexp.MustCompile(`(?i)^(?:revision|rev|ref|branch|tag|commit)$`)
	floatingRef = regexp.MustCompile(`(?i)^(?:main|master|head|develop|development|dev|trunk|latest|default|nightly|edge)$`)
)

// maxChannelChecks bounds how many bare-name list items one change is
// checked against the old side (each check reads every old line).
const maxChannelChecks = 32

// named reports whether a side already names item on some line.
func named(side []shapeLine, item string) bool {
	for _, l := range side {
		if strings.Contains(l.text, item) {
			return true
		}
	}
	return false
}

// defaultOrigins are the ecosystems' own registries and distribution
// hosts: naming one is not a redirection.
var defaultOrigins = set("repo.maven.apache.org", "repo1.maven.org", "central.sonatype.com", "plugins.gradle.org",
	"services.gradle.org", "api.nuget.org", "nuget.org", "registry.npmjs.org", "pypi.org", "files.pythonhosted.org",
	"rubygems.org", "repo.packagist.org", "packagist.org", "registry.terraform.io", "registry.opentofu.org",
	"crates.io", "index.crates.io", "static.crates.io", "proxy.golang.org", "sum.golang.org", "hex.pm", "repo.hex.pm",
	"pub.dev", "hackage.haskell.org", "cdn.cocoapods.org", "center.conan.io", "center2.conan.io", "deno.land",
	"jsr.io", "conda.anaconda.org", "repo.anaconda.com", "bcr.bazel.build", "maven.google.com", "dl.google.com",
	"opam.ocaml.org", "cache.nixos.org", "charts.helm.sh", "galaxy.ansible.com", "repo.scala-sbt.org",
	"scala.jfrog.io", "download.swift.org", "storage.googleapis.com/dart-archive")

// multiTenant hosts serve many owners: their origin is host/owner.
var multiTenant = set("github.com", "gitlab.com", "bitbucket.org", "raw.githubusercontent.com", "codeload.github.com",
	"gist.github.com", "gist.githubusercontent.com", "objects.githubusercontent.com", "dev.azure.com", "sourceforge.net",
	"codeberg.org", "sr.ht", "git.sr.ht", "huggingface.co", "ghcr.io", "quay.io", "docker.io", "registry-1.docker.io",
	"hub.docker.com", "npm.pkg.github.com", "maven.pkg.github.com", "nuget.pkg.github.com", "jitpack.io", "gitee.com")

// shapeLine is a line of a side, normalized, with its position.
type shapeLine struct {
	text   string
	idx    int
	indent int
}

// normLine trims a line and drops comments and blank lines ("" then).
func normLine(l string) (string, int) {
	t := strings.TrimRight(l, " \t\r")
	n := len(t)
	t = strings.TrimLeft(t, " \t")
	indent := n - len(t)
	switch {
	case t == "", strings.HasPrefix(t, "#"), strings.HasPrefix(t, "//"), strings.HasPrefix(t, "/*"),
		strings.HasPrefix(t, "* "), t == "*", t == "*/", strings.HasPrefix(t, "-- "), strings.HasPrefix(t, ";"),
		strings.HasPrefix(t, "<!--") && strings.HasSuffix(t, "-->"):
		return "", indent
	}
	return t, indent
}

// shapeSide splits a side into its normalized lines.
func shapeSide(data []byte) ([]shapeLine, error) {
	if data == nil {
		return nil, nil
	}
	ls, err := lines(data)
	if err != nil {
		return nil, err
	}
	out := make([]shapeLine, 0, len(ls))
	for i, l := range ls {
		if t, ind := normLine(l); t != "" {
			out = append(out, shapeLine{text: t, idx: len(out), indent: ind})
			_ = i
		}
	}
	return out, nil
}

// diffShape judges a build file's change by the shape of the lines it
// adds and removes (see the comment above). reader names the tool.
func diffShape(p string, before, after []byte) ([]Change, error) {
	if !utf8.Valid(after) || bytes.IndexByte(after, 0) >= 0 {
		return nil, fmt.Errorf("manifest: %s: not text", p)
	}
	reader := buildFile(p)
	bs, err := shapeSide(before)
	if err != nil {
		return nil, err
	}
	as, err := shapeSide(after)
	if err != nil {
		return nil, err
	}
	count := make(map[string]int, len(bs))
	for _, l := range bs {
		count[l.text]++
	}
	var added []shapeLine
	for _, l := range as {
		if count[l.text] > 0 {
			count[l.text]--
			continue
		}
		added = append(added, l)
	}
	var removed []string
	var removedL []shapeLine
	for _, l := range bs {
		if count[l.text] > 0 {
			count[l.text]--
			removed = append(removed, l.text)
			removedL = append(removedL, l)
		}
	}
	if len(added) == 0 && len(removed) == 0 {
		return nil, nil
	}
	// What the file named before: origins, exact URLs, identifiers.
	origins := map[string]bool{}
	insecure := map[string]bool{}
	idents := map[string]bool{}
	for _, l := range bs {
		for _, u := range lineURLs(l.text) {
			origins[u.origin] = true
			if u.plain {
				insecure[u.origin] = true
			}
		}
		for _, pr := range linePairs(l.text) {
			if sourceKeys.MatchString(pr[0]) {
				if ns := namespace(pr[1]); ns != "" {
					origins[ns] = true
				}
			}
		}
		if len(idents) < maxEntries {
			for _, id := range identRe.FindAllString(l.text, 16) {
				if !versionRe.MatchString(id) {
					for _, part := range idParts(id) {
						idents[part] = true
					}
				}
			}
		}
	}
	var out []Change
	add := func(kind, key, detail string) {
		if len(out) < 4*maxChanges {
			out = append(out, Change{Kind: kind, Key: key, Detail: detail})
		}
	}
	removedPairs := map[string]string{}
	for _, r := range removed {
		for _, pr := range linePairs(r) {
			removedPairs[pr[0]] = pr[1]
		}
	}
	removedText := strings.Join(removed, "\n")
	var beforeText string
	if len(bs) > 0 {
		var b strings.Builder
		for _, l := range bs {
			b.WriteString(l.text)
			b.WriteByte('\n')
		}
		beforeText = b.String()
	}
	addedPairs := map[string]bool{}
	for _, l := range added {
		for _, pr := range linePairs(l.text) {
			addedPairs[pr[0]] = true
		}
	}
	channelChecks := 0 // bounds named()'s scans of the old side
	newChannel := func(item string) bool {
		if !bareName.MatchString(item) || defaultChannels[strings.ToLower(item)] || origins["ns:"+strings.ToLower(item)] || channelChecks >= maxChannelChecks {
			return false
		}
		channelChecks++
		return !named(bs, item)
	}
	for _, l := range added {
		t := l.text
		ctx := contextKey(as, l)
		meta := metaLine(as, l, ctx)
		// Where code comes from.
		for _, u := range lineURLs(t) {
			switch {
			case u.loopback:
			case u.plain && !insecure[u.origin]:
				add(KindSource, "insecure transport", "plain http:// to "+u.origin+" (new): "+t)
			case meta:
			case !origins[u.origin] && !defaultOrigins[u.origin] && !defaultOrigins[u.host]:
				add(KindSource, "new source "+u.origin, "now "+t+" (the file did not name "+u.origin+")")
			}
		}
		lockLoosened(t, removedText, beforeText, removedPairs, add)
		for _, pr := range linePairs(t) {
			k, v := pr[0], pr[1]
			lk := strings.ToLower(k)
			switch {
			case sourceKeys.MatchString(k) && before != nil:
				if ns := namespace(v); ns != "" && !origins[ns] && !defaultOrigins[ns] {
					add(KindSource, "new source "+ns, "now "+t+" (the file did not name "+ns+")")
				} else if outsidePath(v) {
					add(KindSource, "path outside the tree", "now "+t)
				}
			}
			switch {
			case weakOnKeys.MatchString(k) && truthy(v):
				if checksumKey.MatchString(k) {
					add(KindChecksum, k, "now "+t)
				} else {
					add(KindSource, "insecure transport", "now "+t)
				}
			case weakOffKeys.MatchString(k) && weak(v):
				if checksumKey.MatchString(k) {
					add(KindChecksum, k, "now "+t)
				} else {
					add(KindSource, "insecure transport", "now "+t)
				}
			}
			switch {
			case checksOnKeys.MatchString(k) && truthy(v) && !strings.Contains(lk, "skipfinal"):
				add(KindChecks, k, "now "+t)
			case checksOffKeys.MatchString(k) && weak(v) && (!strings.HasPrefix(lk, "enable") || checker(reader)):
				add(KindChecks, k, "now "+t)
			case thresholdKeys.MatchString(k) && raised(removedPairs[k], v):
				add(KindChecks, k, "now "+t+" (was "+removedPairs[k]+")")
			case excludeKeys.MatchString(k) && MatchesAll(v):
				add(KindChecks, k, "now "+t)
			}
			if pinKeys.MatchString(k) && floatingRef.MatchString(v) && removedPairs[k] != v && before != nil {
				add(KindSource, "unpinned "+k, "now "+t+" (a moving branch: what is fetched changes without a change here)")
			}
			switch {
			case guardOffKeys.MatchString(k) && weak(v), guardOnKeys.MatchString(k) && truthy(v),
				strings.EqualFold(k, "DeletionPolicy") && strings.EqualFold(v, "Delete"):
				add(KindDestroy, k, "now "+t)
			}
		}
		// List items under a key that excludes, or loads code.
		if item, ok := listItem(t); ok && ctx != "" {
			switch {
			case excludeKeys.MatchString(ctx) && MatchesAll(item):
				add(KindChecks, ctx, "now "+t)
			case codeListKeys.MatchString(ctx) && pathLike(item):
				add(KindRuns, ctx, "now "+t+" (loaded as code)")
			case channelKeys.MatchString(ctx) && newChannel(item):
				// a channel or source named without a URL (conda's
				// channels, a repositories list): an owner's namespace
				// on the ecosystem's host, which anyone can register
				add(KindSource, "new source ns:"+strings.ToLower(item), "now "+t+" under "+ctx+" (the file did not name "+item+")")
			}
		}
		// An inline list of channels: channels = ["conda-forge", "x"].
		if k, rest, ok := strings.Cut(t, "["); ok && channelKeys.MatchString(strings.Trim(strings.TrimSpace(strings.TrimRight(strings.TrimSpace(k), ":=")), `"'`)) {
			for _, q := range quotedItem.FindAllStringSubmatch(rest, 16) {
				if item := q[1]; newChannel(item) {
					add(KindSource, "new source ns:"+strings.ToLower(item), "now "+t+" (the file did not name "+item+")")
					break
				}
			}
		}
		if m := computedSource.FindString(t); m != "" {
			add(KindSource, "computed source", "now "+t+" (where code comes from is computed when the tool runs)")
		}
		// Code run when the tool reads the file.
		if runsRe.MatchString(t) {
			add(KindRuns, "code", "now "+t)
		}
		switch reader {
		case "git":
			if attrDriverRe.MatchString(t) {
				add(KindRuns, "driver", "now "+t+" (a filter, diff or merge driver runs a program)")
			} else if attrHideRe.MatchString(t) {
				add(KindChecks, "hidden diff", "now "+t+" (its changes no longer show in diffs)")
			}
		case "trivy", "snyk":
			add(KindChecks, "finding ignored", "now "+t)
		case "conan":
			// rules 22: a reference from a user's channel (name/1.0@user/channel)
			// that the file did not name: a package not from the ecosystem's index
			if m := conanChannel.FindStringSubmatch(t); m != nil && !strings.Contains(beforeText, "@"+m[1]+"/") {
				add(KindSource, "new source conan:"+m[1], "now "+t+" (a package from the "+m[1]+" user's channel, which the file did not name)")
			}
		case "sbt":
			// rules 22: coursier's or sbt's checksums emptied, code run from the build
			if sbtChecksumsOff.MatchString(t) {
				add(KindChecksum, "checksums", "now "+t)
			}
			if sbtRuns.MatchString(t) {
				add(KindRuns, "code", "now "+t)
			}
		}
		// rules 22: a setting moved from failing to warning (CheckAfterUpdate → WarnOnError)
		for _, pr := range linePairs(t) {
			if was, ok := removedPairs[pr[0]]; ok && failingMode.MatchString(lastSeg(was)) && !warningMode.MatchString(lastSeg(was)) && warningMode.MatchString(lastSeg(pr[1])) {
				add(KindChecks, pr[0], "now "+t+" (was "+was+": a failure is only reported)")
			}
		}
		if strings.HasSuffix(p, "ignore") && MatchesAll(t) {
			add(KindChecks, "everything ignored", "now "+t)
		}
		if scanner(reader) && matchAllQuoted.MatchString(t) {
			add(KindChecks, "everything allowed", "now "+t+" (a pattern that matches everything)")
		}
		// A dependency or plugin id one or two letters from one the file names.
		for _, id := range identRe.FindAllString(t, 16) {
			if versionRe.MatchString(id) {
				continue
			}
			for _, part := range idParts(id) {
				if near := lookalikeOf(part, idents); near != "" {
					add(KindSource, "look-alike "+part, "now "+t+" (the file names "+near+")")
					break
				}
			}
		}
	}
	// What was removed: hashes, verification, guards.
	hashSwap, versionChanged := false, false
	addedSkel := map[string][]string{}
	for _, l := range added {
		if hashRe.MatchString(l.text) {
			addedSkel[skeleton(l.text)] = append(addedSkel[skeleton(l.text)], strings.Join(versionRe.FindAllString(l.text, -1), ","))
		}
	}
	addedVers := map[string]string{}
	for _, l := range added {
		if !hashRe.MatchString(l.text) && versionRe.MatchString(l.text) {
			addedVers[versionRe.ReplaceAllString(l.text, "#V")] = l.text
		}
	}
	removedHashes := 0
	for _, r := range removed {
		if !hashRe.MatchString(r) {
			if versionRe.MatchString(r) {
				if a, ok := addedVers[versionRe.ReplaceAllString(r, "#V")]; ok && a != r {
					versionChanged = true
				}
			}
			for _, pr := range linePairs(r) {
				k, v := pr[0], pr[1]
				if addedPairs[k] {
					continue
				}
				switch {
				case checksumKey.MatchString(k) && !weak(v) && v != "":
					add(KindChecksum, k, "removed: "+r)
				case guardOffKeys.MatchString(k) && truthy(v):
					add(KindDestroy, k, "removed: "+r)
				}
			}
			continue
		}
		vs, ok := addedSkel[skeleton(r)]
		if !ok {
			removedHashes++
			continue
		}
		if len(vs) > 0 && vs[0] == strings.Join(versionRe.FindAllString(r, -1), ",") {
			hashSwap = true
		} else {
			versionChanged = true
		}
	}
	checksNarrowed(reader, bs, as, added, removedL, add)
	if !versionChanged {
		if hashSwap {
			add(KindChecksum, "recorded hash", "a hash changed for an unchanged version")
		}
		if removedHashes > 0 {
			add(KindChecksum, "recorded hash", fmt.Sprintf("%d recorded hash(es) removed: what is fetched is no longer verified", removedHashes))
		}
	}
	return out, nil
}

// shapeURL is a URL or host a line names.
type shapeURL struct {
	origin, host    string
	plain, loopback bool
}

// lineURLs returns what a line names as a URL, an scp-like git address
// or a bare host with a path.
func lineURLs(t string) []shapeURL {
	t = strings.ReplaceAll(t, `\:`, ":")
	var out []shapeURL
	for _, m := range urlRe.FindAllStringSubmatch(t, 8) {
		scheme := strings.ToLower(m[1])
		if i := strings.LastIndex(scheme, "+"); i >= 0 {
			scheme = scheme[i+1:]
		}
		if i := strings.LastIndex(scheme, ":"); i >= 0 {
			scheme = scheme[i+1:]
		}
		if scheme == "file" || scheme == "mailto" {
			continue
		}
		out = append(out, mkURL(m[2], scheme == "http" || scheme == "ftp" || scheme == "git"))
	}
	for _, m := range scpRe.FindAllStringSubmatch(t, 4) {
		out = append(out, mkURL(m[1]+"/"+m[2], false))
	}
	if len(out) == 0 {
		for _, m := range bareRe.FindAllStringSubmatch(t, 4) {
			out = append(out, mkURL(m[1]+"/"+m[2], false))
		}
	}
	return out
}

func mkURL(rest string, plain bool) shapeURL {
	if i := strings.LastIndex(strings.SplitN(rest, "/", 2)[0], "@"); i >= 0 {
		rest = rest[i+1:]
	}
	hostport, p, _ := strings.Cut(rest, "/")
	host := strings.ToLower(hostport)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimPrefix(strings.TrimSuffix(host, "."), "www.")
	u := shapeURL{origin: host, host: host, plain: plain}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || host == "127.0.0.1" || host == "::1" || host == "[::1]" || host == "0.0.0.0" {
		u.loopback, u.plain = true, false
	}
	if multiTenant[host] {
		owner, _, _ := strings.Cut(p, "/")
		if host == "dev.azure.com" || host == "raw.githubusercontent.com" || owner != "" {
			u.origin = host + "/" + strings.ToLower(owner)
		}
	} else if defaultOrigins[host+"/"+firstSeg(p)] {
		u.origin = host + "/" + firstSeg(p)
	}
	return u
}

func firstSeg(p string) string { s, _, _ := strings.Cut(p, "/"); return s }

// namespace is the origin a source value names without a URL: a
// registry's namespace (hashicorp/aws, the host of host/ns/name), or "".
var nsRe = regexp.MustCompile(`^([\w.-]+)/[\w.-]+(?:/[\w.-]+){0,2}$`)

func namespace(v string) string {
	v = strings.Trim(v, `"'`)
	if strings.Contains(v, "://") || strings.HasPrefix(v, ".") || strings.HasPrefix(v, "/") {
		return ""
	}
	m := nsRe.FindStringSubmatch(v)
	if m == nil {
		return ""
	}
	if strings.Contains(m[1], ".") {
		return strings.ToLower(m[1]) // a host: host/ns/name
	}
	return "ns:" + strings.ToLower(m[1])
}

// outsidePath reports whether v is a local path leaving the tree.
func outsidePath(v string) bool {
	v = strings.Trim(v, `"'`)
	return strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "//") || strings.HasPrefix(v, "~/") || strings.HasPrefix(v, "../../")
}

// linePairs returns a line's key/value pairs (keys as written).
func linePairs(t string) [][2]string {
	var out [][2]string
	for _, re := range pairRes {
		for _, m := range re.FindAllStringSubmatch(t, 8) {
			out = append(out, [2]string{m[1], strings.Trim(m[2], `"' `)})
		}
	}
	return out
}

// contextKey is the key of the nearest line above l, less indented,
// that ends a key (a YAML or TOML list's owner), or "".
func contextKey(side []shapeLine, l shapeLine) string {
	for i, n := l.idx-1, 0; i >= 0 && n < 64; i, n = i-1, n+1 {
		s := side[i]
		if s.indent > l.indent || s.indent == l.indent && (strings.HasPrefix(s.text, "-") || strings.HasPrefix(s.text, `"`) || strings.HasPrefix(s.text, "'")) {
			continue
		}
		k := strings.TrimSpace(strings.TrimLeft(s.text, "-[ "))
		if j := strings.IndexAny(k, ":=["); j > 0 {
			return strings.Trim(strings.TrimSpace(k[:j]), `"'`)
		}
		if strings.HasPrefix(s.text, "<") {
			return strings.Trim(s.text, "<>/ ")
		}
		return ""
	}
	return ""
}

// metaLine reports whether the URL an added line names is documentation
// (a homepage, a license, an issue tracker), by its key or its list's.
func metaLine(side []shapeLine, l shapeLine, ctx string) bool {
	for _, pr := range linePairs(l.text) {
		if metaKeys.MatchString(pr[0]) {
			return true
		}
		if strings.EqualFold(pr[0], "url") && strings.HasPrefix(l.text, "<") {
			// <url> is a repository's in a repository block, else the
			// project's own (homepage, license, scm).
			for i, n := l.idx, 0; i >= 0 && n < 7; i, n = i-1, n+1 {
				s := strings.ToLower(side[i].text)
				if strings.Contains(s, "<repositor") || strings.Contains(s, "<pluginrepositor") || strings.Contains(s, "<mirror") ||
					strings.Contains(s, "<snapshotrepositor") || strings.Contains(s, "<distributionmanagement") {
					return false
				}
			}
			return true
		}
	}
	return ctx != "" && metaKeys.MatchString(ctx)
}

// listItem returns a list item's value (- x, "x",).
func listItem(t string) (string, bool) {
	if v, ok := strings.CutPrefix(t, "- "); ok {
		return strings.Trim(strings.TrimSpace(v), `"',`), true
	}
	if strings.HasPrefix(t, `"`) || strings.HasPrefix(t, `'`) {
		return strings.Trim(strings.TrimSpace(t), `"',`), true
	}
	return "", false
}

// pathLike reports whether a list item names a file or a URL rather than
// a package from the default registry (rubocop-rails is a dependency;
// ./lib/cop.rb and https://… are code the tool loads as it is).
func pathLike(v string) bool {
	return strings.HasPrefix(v, ".") || strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~") || strings.Contains(v, "/") || strings.Contains(v, "\\")
}

func truthy(v string) bool {
	switch strings.ToLower(strings.Trim(v, `"' `)) {
	case "true", "yes", "on", "1", "always", "all", "y":
		return true
	}
	return false
}

// weak reports whether a value switches something off.
func weak(v string) bool {
	switch strings.ToLower(strings.Trim(v, `"' `)) {
	case "false", "no", "off", "0", "none", "disabled", "disable", "never", "skip", "ignore", "lenient", "warn",
		"permissive", "optional", "n":
		return true
	}
	return false
}

// raised reports whether a threshold went up (a number) or off.
func raised(was, now string) bool {
	now = strings.ToLower(strings.Trim(now, `"' `))
	if now == "none" || now == "off" || now == "never" || now == "critical" && was != "" && !strings.EqualFold(was, "critical") {
		return true
	}
	num := func(v string) string { return strings.TrimRight(strings.Trim(v, `"' `), "fFdDlL") }
	a, err1 := strconv.ParseFloat(num(was), 64)
	b, err2 := strconv.ParseFloat(num(now), 64)
	return err1 == nil && err2 == nil && b > a
}

// matchAllQuoted is a quoted pattern (glob or regular expression) that
// matches everything.
var matchAllQuoted = regexp.MustCompile(`["'](?:\(\?s\))?(?:\^?\.[*+]\$?|\*\*?(?:/\*\*?)?|\[\\s\\S\][*+])["']`)

// scanner reports whether reader is a secret or vulnerability scanner.
func scanner(reader string) bool {
	switch reader {
	case "gitleaks", "secretlint", "trufflehog", "detect-secrets", "semgrep", "trivy", "snyk", "checkov", "a dependency checker", "sonar":
		return true
	}
	return false
}

// MatchesAll reports whether a pattern (a glob or a regular expression,
// quoted or in a list's brackets) matches every file: an ignore or
// exclude entry that switches a check off wholesale.
func MatchesAll(v string) bool {
	switch strings.Trim(strings.TrimSpace(v), `"'[],`) {
	case "*", "**", "**/*", "/**", ".*", ".*/**", "/", "./", ".", "*/**", "**/**", "**/*.*", "*.*", ".+", "^.*$", "^.*", ".*$", "(?s).*", `[\s\S]*`:
		return true
	}
	return false
}

// skeleton is a line with its hashes and versions blanked.
func skeleton(t string) string {
	return versionRe.ReplaceAllString(hashRe.ReplaceAllString(t, "#H"), "#V")
}

// checker reports whether reader is a check tool (a linter, scanner,
// test runner, formatter) rather than a build tool.
func checker(reader string) bool {
	switch reader {
	case "gradle", "maven", "sbt", "ant", "ivy", "NuGet", "msbuild", "dotnet", "composer", "terraform", "OpenTofu",
		"terragrunt", "helm", "helmfile", "kustomize", "bazel", "cmake", "conan", "vcpkg", "nix", "":
		return false
	}
	return true
}

// lookalikeOf returns the identifier among known that id imitates: one
// letter away (two for long ones), not equal, not an extension of it
// (kotlin, kotlinx), not a digit-for-digit or case-only difference, or "".
func lookalikeOf(id string, known map[string]bool) string {
	if len(id) < 5 || known[id] || len(known) == 0 {
		return ""
	}
	n := 0
	for k := range known {
		if n++; n > 4000 {
			break
		}
		if len(id) == len(k)+1 && strings.HasPrefix(id, k) && id[len(id)-1] == k[len(k)-1] && len(k) >= 4 {
			return k // rules 18: its last letter doubled (oban, obann)
		}
		if d := len(k) - len(id); d > 2 || d < -2 || strings.EqualFold(k, id) || strings.HasPrefix(k, id) || strings.HasPrefix(id, k) {
			continue
		}
		limit := 1
		if len(id) >= 12 {
			limit = 2
		}
		if dist := editDistance(id, k, limit); dist > 0 && dist <= limit && !digitsOnly(id, k) {
			return k
		}
	}
	return ""
}

// digitsOnly reports whether a and b, of one length, differ only where
// both hold a digit (jdk8, jdk9).
func digitsOnly(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if a[i] != b[i] && !(a[i] >= '0' && a[i] <= '9' && b[i] >= '0' && b[i] <= '9') {
			return false
		}
	}
	return true
}

// idParts are an identifier and its segments of five letters or more.
func idParts(id string) []string {
	out := []string{id}
	for _, s := range strings.FieldsFunc(id, func(r rune) bool { return r == '.' || r == ':' || r == '-' || r == '_' }) {
		if len(s) >= 5 && s != id {
			out = append(out, s)
		}
	}
	return out
}

// editDistance is the Damerau-Levenshtein distance of a and b, or
// limit+1 once it is over limit.
func editDistance(a, b string, limit int) int {
	if a == b {
		return 0
	}
	la, lb := len(a), len(b)
	prev2 := make([]int, lb+1)
	prev := make([]int, lb+1)
	cur := make([]int, lb+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= la; i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= lb; j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			best = min(best, cur[j])
		}
		if best > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[lb]
}

// ForeignOrigins returns the origins of the URLs (and scp-like git
// addresses) in s that are neither loopback nor an ecosystem's own
// registry, with whether one is plain http.
func ForeignOrigins(s string) (origins []string, plain bool) {
	if !strings.Contains(s, "://") && !strings.Contains(s, "@") {
		return nil, false
	}
	for _, u := range lineURLs(s) {
		if u.loopback || defaultOrigins[u.origin] || defaultOrigins[u.host] {
			continue
		}
		origins = append(origins, u.origin)
		plain = plain || u.plain
	}
	return origins, plain
}

// WeakSetting is the kind of change setting key to value makes by shape
// (KindSource for a transport made insecure, KindChecksum for
// verification off, KindChecks for a check made unable to fail,
// KindDestroy for a guard off), or "".
func WeakSetting(key, value string) string {
	switch {
	case weakOnKeys.MatchString(key) && truthy(value), weakOffKeys.MatchString(key) && weak(value):
		if checksumKey.MatchString(key) {
			return KindChecksum
		}
		return KindSource
	case guardOffKeys.MatchString(key) && weak(value), guardOnKeys.MatchString(key) && truthy(value):
		return KindDestroy
	}
	return ""
}

// strictRe is a token that makes a check strict: it fails on warnings,
// exits non-zero, stops at the first error. Removed without coming back
// on an added line, the check can no longer fail as it did.
var strictRe = regexp.MustCompile(`(?i)-Werror\b|--strict\b|\bstrict(?:[-_]?mode)?\s*[:=]\s*["']?(?:true|yes|on|1)\b|warnings[-_]?as[-_]?errors|-D\s*warnings\b|--deny[= ]warnings|--max-warnings[= ]0\b|--exit-code[= ]1\b|exit[-_]?code\s*[:=]\s*1\b|--error-on-warnings|fail[-_]on[-_]warnings?|--fail-on[= ]\w+|--fail-level[= ]\w+|\bset\s+-e\w*|-euo\s+pipefail`)

// oneLineList is a key given a list on one line (select = ["E", "F"]).
var oneLineList = regexp.MustCompile(`^["']?([\w.-]+)["']?\s*[:=]\s*\[(.*)\]\s*,?$`)

// ruleListKeys name a check tool's list of rules or checks it runs.
var ruleListKeys = regexp.MustCompile(`(?i)^(?:select|extend[-_]select|enable|enabled|enabled[-_]rules|rules|checks|linters|include|only|presets?|extends)$`)

// checksNarrowed is the removal side of the checks shape (session 14,
// second pass): a strictness token removed, a rule dropped from a check
// tool's list of rules (a one-line list shrinking, or a list item gone),
// a check tool's configuration emptied.
func checksNarrowed(reader string, bs, as, added, removed []shapeLine, add func(kind, key, detail string)) {
	var addedText strings.Builder
	addedItems := map[string]bool{}
	addedLists := map[string]string{}
	for _, l := range added {
		addedText.WriteString(l.text)
		addedText.WriteByte('\n')
		if item, ok := listItem(l.text); ok {
			addedItems[item] = true
		}
		if m := oneLineList.FindStringSubmatch(l.text); m != nil {
			addedLists[strings.ToLower(m[1])] = m[2]
		}
	}
	at := addedText.String()
	tool := checkTool(reader)
	for _, rl := range removed {
		r := rl.text
		for _, m := range strictRe.FindAllString(r, 4) {
			if !strings.Contains(at, m) {
				add(KindChecks, "strictness removed", "removed: "+r+" (the check no longer fails as it did)")
				return
			}
		}
		if !tool {
			continue
		}
		if m := oneLineList.FindStringSubmatch(r); m != nil {
			k := strings.ToLower(m[1])
			if nv, ok := addedLists[k]; ok && ruleListKeys.MatchString(k) && fewerItems(m[2], nv) {
				add(KindChecks, "rules dropped", "removed: "+r+", now "+k+" = ["+nv+"]")
				return
			}
		}
		ctx := contextKey(bs, rl)
		if item, ok := listItem(r); ok && !addedItems[item] && !excludeKeys.MatchString(ctx) && !strings.Contains(strings.ToLower(ctx), "disable") {
			add(KindChecks, "rule dropped", "removed: "+r+" (a rule or check the tool ran)")
			return
		}
	}
	if tool && len(as) == 0 && len(removed) > 0 {
		add(KindChecks, "configuration emptied", "the check tool's configuration is emptied")
	}
}

// checkTool reports whether a reader is a linter, scanner or other check
// tool, whose configuration lists what it checks.
func checkTool(reader string) bool {
	if scanner(reader) {
		return true
	}
	switch reader {
	case "golangci-lint", "rubocop", "eslint", "flake8", "ruff", "pylint", "bandit", "mypy", "swiftlint", "hadolint", "tflint",
		"yamllint", "checkstyle", "detekt", "phpcs", "phpstan", "psalm", "stylelint", "markdownlint", "clippy", "scalafix",
		"editorconfig-checker":
		return true
	}
	return false
}

// fewerItems reports whether a one-line list lost items: every item of
// now was in was, and was had more.
func fewerItems(was, now string) bool {
	split := func(v string) map[string]bool {
		out := map[string]bool{}
		for _, x := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '[' || r == ']' || r == ' ' }) {
			if x = strings.Trim(x, `"'`); x != "" {
				out[x] = true
			}
		}
		return out
	}
	w, n := split(was), split(now)
	if len(n) >= len(w) {
		return false
	}
	for x := range n {
		if !w[x] {
			return false
		}
	}
	return true
}
