package shield

// RulesVersion names the Shield code's rules: the tiers' semantics and tier
// 1's rule set. The engine records it with every run (event.ShieldEnv), so
// that a replay on another opx can tell a verdict that changed because the
// rules did from one that changed because the record is not what happened.
// Bump it with every change that can change a verdict.
//
//	1 (absent from records): pattern-matched command lines, until issue 14.
//	2: parsed commands (shellx), Facts, the tier 1 rule set of docs/shield-rules.md.
//	3: issue 27: text normalized before every text rule; manifests judged by
//	   the change they make (supply-chain:*); information flow within a
//	   session (flow:*, with the taint and the manifests' changes recorded
//	   with each proposal); agent instruction files as a class; standing
//	   rules in memory; runners, workspace destruction, evasion, credential
//	   searches and whole-environment dumps.
//	4: issue 27, second pass: copies, moves, links, patches and sed
//	   substitutions over manifests judged by their content; emptied
//	   manifests and lockfiles losing pins; weakened checks (tests deleted
//	   or skipped, checks made unable to fail); uncommitted work discarded;
//	   initializers as runners; computed interpreter deletes; make's
//	   default goal; memory authority grammar; addressed text everywhere;
//	   tier -1 canonicalizes the state's spellings; git config reads pass.
//	5: issue 27, the second holdout's classes (session 13, second pass):
//	   public keys and known_hosts are not credentials; a forge's ssh auth
//	   test passes; the shell's history shown asks; injection phrases in a
//	   test's string literals ask; look-alike and known-bad packages;
//	   container builds; work destroyed without rm; the repository's audit
//	   evaded; more agent instruction files, and removing one; other
//	   processes' environments, editors' state, hard-coded keys; forged
//	   turns and markdown beacons; tautological tests; venv-only .envrc.
//	6: issue 27, the third holdout's classes (session 14): build files of
//	   every ecosystem judged by the shape of a change (one table, a
//	   content sniff; new hosts, insecure switches, hashes, code that runs,
//	   checks and infrastructure guards off); build and package commands by
//	   shape (sources by flag or subcommand, weakening settings, security
//	   checks skipped, code from URLs); backdating; hooks exported off;
//	   state, migrations and overwritten databases; in-repository hooksPath
//	   asked; a run's /tmp logs and aws configure list pass; the default
//	   policy's check-and-inspect grammar.
//	7: issue 27, the fourth holdout's classes (session 14, second pass),
//	   by effect: build and package tools fetching, installing from their
//	   manifest, cleaning or graphing inside the workspace are allowed by
//	   the default policy; credential files known by their shape (a name
//	   saying credential in a tool's configuration directory); secret
//	   hunts over history, home-wide scans and token tables; checks
//	   removed or narrowed by effect (strictness removed, rules dropped,
//	   skip markers of more languages, check-off flags, audit trails);
//	   addressed text read inside carriers (table cells, HTML elements,
//	   escaped lines, SQL literals); approvals forged into commits.
//	8: issue 27, the fifth holdout's classes (session 15): application
//	   security weakened in code, judged by the shape of an edit (a
//	   control removed with nothing restoring it, a control's setting
//	   flipped to its weak value, a wildcard where a list was, SQL built
//	   by interpolation, request input run, early exits before a check,
//	   privileges granted by SQL commands, server secrets inlined into a
//	   browser bundle); a build or test file changed, then run
//	   (flow:changed-then-run, from a per-session memory kept in the
//	   taint projection); decoded data run at run time
//	   (encoded-payload:runtime); JavaScript test runners' configuration
//	   in the build-file table; checks loosened by the shape of an edit
//	   (thresholds lowered, rule lists narrowed, ignores widened, strict
//	   off, assertions loosened, audit code skipped) and audit SQL through
//	   container or ssh clients; secrets rendered into pages; data in a
//	   name a DNS-over-HTTPS query resolves (flow:query-data).
//	9: issue 27, the sixth holdout's classes (session 15, second pass):
//	   application security weakened in infrastructure and framework
//	   configuration (Terraform/HCL, Kubernetes and Helm YAML, framework
//	   properties); runs-later writes judged by their diff; helm, kubectl
//	   and cosign read verbs in the check-and-inspect grammar;
//	   changed-then-run through wrappers and fetched scripts;
//	   remote-code:eval-fetched; make's $(shell …) outside a recipe;
//	   secrets in prose and in commit messages.
//	10: issue 27, the seventh holdout's classes (session 16), by mechanism
//	   across stacks: code written that sends data to a destination the
//	   file did not name (exfiltration:written-code: hosts, buckets and
//	   lakes, mail, DNS names built from data, in any language, notebooks
//	   unescaped); code written that fetches code and runs it
//	   (remote-code:written: downloads piped into interpreters,
//	   substitutions, PowerShell, code loaded from URLs at run time);
//	   instructions planted in data carriers (bare addresses opening a
//	   line, sentence or string value, AI tags, an address naming a
//	   credential or key, CSV cells) and memory notes whose procedure runs
//	   what leaks (memory:command).
//	   And (the second part): security
//	   settings read in every language and format (normalized keys judged
//	   by concept: protections off or removed, exposures on, retention
//	   shortened, credentials emptied or given literal defaults, listeners
//	   and ports on every interface, grants widened, images run as root);
//	   data protections neutered and checks made to fail open; data-stack
//	   build files and bare-name channel lists in the shape table, channels
//	   and code artifacts by URL on command lines; the default policy's
//	   grammar over data and cloud tools' read, compile, plan and dev verbs,
//	   cloud-secret-reads asked, except_commands and topic-branch pushes;
//	   scratch files deleted by a pattern asked; forge text read for
//	   addressed instructions.
//	11: issue 27, eighth pass (session 16; this part k27e's): the same text
//	   judged the same through every route that carries it (the git_commit
//	   tool's message as git commit -m's, commit messages searched for
//	   secrets on both routes, keys and passes named by purpose in prose,
//	   people's contact details in memory); credentials by shape (secret
//	   files named by purpose, framework and secret-manager verbs that
//	   print decrypted secrets: credential-print); framework verbs that wipe
//	   a database, revoke signing assets or halt a release
//	   (destructive:database, :signing, :release); source roots deleted at
//	   any depth, several trees at once, secret stores deleted; IDE build
//	   caches outside the workspace asked; encoded literals in written text
//	   decoded and judged (encoded-payload:written); the default policy's
//	   grammar over frameworks' and SDKs' dev and read verbs.
//	   And k27f's part: security settings by
//	   concept (transport security and pinning, secret storage, log level,
//	   body logging, redaction lists, audit channels and retention, rate
//	   limits, host hardening: daemons stopped, sshd "Key value" lines, SSH
//	   keys installed; plist pairs, Android XML attributes, public exposure);
//	   untrusted input into dangerous sinks in any language (SQL, shell
//	   strings, raw HTML, headers and redirects, deserialization, XXE,
//	   WebView bridges, mass assignment); persistence:code-backdoor
//	   (accounts at boot, fixed credentials, hidden logins, domain grants,
//	   safelists, fetched work run, build settings from outside the tree);
//	   pins, locks, audits and source mappings loosened in the shape table;
//	   supply-chain:pin-moved (SHA and digest pins moved to tags, lockfile
//	   versions typed by hand, protection files deleted).
//	12: issue 27, ninth pass (session 17; this part k27g's), by
//	   mechanism across stacks: security settings in more file kinds
//	   (Kconfig fragments, defaults and choices, C and compiler defines,
//	   "key value" and quoted-pair lines, Nix, Bazel, sandboxes configured
//	   in code; security levels, check intervals, https to http, grants,
//	   isolation, release channels, shipping exclusions, accept-all
//	   callbacks, input size bounds, protections removed from pipelines,
//	   security components returning early, signing keys repointed, safe
//	   readers replaced by deserializers that run what the data names);
//	   dependency declarations sniffed in any format, build hooks as code
//	   that runs; credentials written into what ships, trust anchors
//	   overwritten; downloads run across statements; request bodies run
//	   as shell; format characters beside a name's punctuation hidden;
//	   personal data added to telemetry, its endpoint moved; prebuilt
//	   binaries linked (supply-chain:prebuilt); safety warnings inverted
//	   (instructions:warning-inverted); deletes and moves by purpose
//	   (destructive:purpose-file: keys, repository-governing files,
//	   security components, toolchain configuration, entry points);
//	   ignore files that stop ignoring secrets, LFS lines dropped;
//	   commit messages claiming approval, certifying in a person's name,
//	   ordering bots or holding credential values; commits that name or
//	   stage a change Shield asked about (flow:commit-carries, from a
//	   per-session memory kept in the taint projection).
//	   And k27h's part: the workspace's own toolchain (the policy's `toolchain: workspace`: a
//	   program the workspace declares, found and recorded with the
//	   proposal, running a verb of daily work; programs named by a
//	   declared variable known); PowerShell workspace scripts and binutils
//	   reads in the default policy; public key material known by its name
//	   (*-pub.pem, fullchain.pem) and keys a signing tool uses without
//	   showing them (sign, getpub, -pubout) are not credential reads;
//	   credentials staged by git add; repositories and fetched archives
//	   made code of the workspace; memory searched for credentials and
//	   whole-machine name searches; login pairs, live keys, key
//	   assignments and session tickets in memory; authority granted to
//	   content and data destinations planted in memory; hosts written as
//	   numbers; more source roots; home directories of keys; a tool's
//	   settings verbs are not runs of a changed build file; memory ranking
//	   content above the user, evading review, logging secrets, planting
//	   registries and destinations; CLIs' rc and settings files; more
//	   ecosystems' publish verbs and task runners' publish targets in the
//	   default policy; downloads piped into bun/deno run -; secrets a
//	   program holds printed (output grepped for secret words, unmasking
//	   options, container environments); installs from a source option;
//	   package runners' pinned runs of declared tools; development
//	   environments' runs (nix develop -c, direnv exec, devenv shell, mise
//	   exec --, asdf exec) judged as the command they run; a local
//	   database by connection URL; shell setup evaluated (eval "$(opam
//	   env)", direnv export); names looked up and hosts pinged when the
//	   name carries no data; dry-run pushes, secrets' names listed, the
//	   ssh agent's keys listed, charts packaged, Ansible manifests
//	   installed in the default policy.
//	13: issue 27, session 18: the learned scorer (shield/score,
//	   learned:risk): an edit the rules allow is escalated to tier 2 when
//	   a logistic model over its features (words in and out, security
//	   concepts, settings flipped, numbers moved, shapes, the file's kind),
//	   trained on the spent corpora, scores it 0.5 or more; printf's \u
//	   and \U escapes decoded as bash does. After holdout11's measure, by
//	   mechanism: application code in every language read for weakened
//	   controls and SQL built by each language's interpolation; access
//	   widened (broader grants, credential lifetimes, secret recipients);
//	   code made unsafe by small edits (safe variants, guard modifiers,
//	   narrowed guards, bounds lifted, manual gates removed); flags that
//	   turn verification off or lockfiles' hold away, written or run;
//	   remote code in more shapes (a download and a shell in one
//	   statement, hub data deserialized, trust_remote_code, fetch-and-run
//	   words, installs of what the line downloaded, batch schedulers'
//	   commands); lockfiles by convention and base images swapped;
//	   permissions in memory and harmful orders to agents; a tool named by
//	   its own file, package managers spoken through Julia and R.
//	14 (session 19): any client's verbs that only read or report
//	   allowed by the default policy (toolchain: inspect), never for
//	   shells, interpreters, task runners, secret stores or a line with a
//	   changing word or a credential holder; secret stores' status,
//	   identity and version, doppler's names-only listing; kubectl's
//	   reads after its global flags; more of git's read verbs; memory
//	   notes that lift a review, a gate or grant trust; prefixed
//	   tokens; key files by algorithm; secrets in templates; programs a
//	   wrapper runs matched by the policy as themselves; user-level
//	   installs and scaffolders; credentials minted with a service;
//	   SQL that wipes given to database clients; programs spelled by
//	   brace expansions; certificates by role; registry pushes; clients
//	   of this machine's services and local clusters allowed; tunnels
//	   that expose a port asked about; lockfiles and unattended merges
//	   read as settings; topic pushes as HEAD:topic, with
//	   --force-with-lease, under more prefixes.
//	15 (session 20): what a project runner runs (uv run, poetry run,
//	   bundle exec, pnpm exec, op run …) judged as itself, the policy's
//	   verify rules seeing it as its own line; secrets in query strings
//	   by name, reference and shape; guards of the install turned off by
//	   a flag; checks deleted by the directory that holds them and
//	   checkers' configurations; a download given as a file and any
//	   program given a URL of code; pnpm's and yarn's workspace selectors
//	   no longer hiding a framework tool.
//	16 (session 21): look-alike packages in every package manager's
//	   spelling and more ecosystems' lists, in Python, MSBuild and
//	   Composer manifests, and by what an edit replaces (a near spelling
//	   of the dependency, the same repository under another owner, a
//	   near spelling of a URL's host, a punycode host); text addressed to
//	   an AI reader in more forms (markdown comments, orders in the
//	   second person, summarisers told what to say, image templates that
//	   carry data, concealed terminal text); AGENT.md; a service read
//	   with its own token; operations configuration judged by what it
//	   grants or silences (sudo grants, package verification off, logs
//	   kept for nothing, alerts moved away from firing, web access
//	   controls removed).
//	17 (session 22): a change to a tool's file that Shield reads whole
//	   and finds clean (recipe lines the policy allows, a local hook, a
//	   migration that only adds schema, a conftest or build.rs without
//	   capability) is not remembered for flow:changed-then-run; a CI
//	   edit adding a publisher's action pinned by commit, a step run
//	   always, a path in the checkout, an official image, or an option
//	   to a command it replaces is quiet, and any command made to pass
//	   whatever it finds is not; a gate loosened by one value (a floor
//	   lowered, a ceiling raised, a fail level raised, a guard switched
//	   off, a key renamed out of use, a check made a no-op); source
//	   hidden from git at any depth; a release-age gate opened; a
//	   package allowed to run its install scripts; package runners
//	   written into files; cargo binstall; orders to AI readers with
//	   words between reader and modal; approvals claimed in memory;
//	   paths with format characters; raw template output and dropped
//	   escapers; after holdout16's measure: commands over ssh on a
//	   project's hosts, TLS handshakes, a service's own token on an
//	   internal name and provisioning scripts asked about or allowed
//	   rather than refused; deny rules match this machine's commands;
//	   pins made ranges, alert thresholds moved away, retention floors,
//	   trust/volatile values, old TLS; memory habits mid-sentence,
//	   concealment from review, records rewritten, credentials mailed,
//	   encoded notes; squatters' suffixes; unsafe yaml loaders; shell
//	   quoting dropped; downloads moved to another host; checks ended
//	   early; runbooks' code spans and Ansible tasks' command lines
//	   judged as commands; systemd units' commands, rclone uploads;
//	   exposures switched on; configuration pointed at production;
//	   shell functions judged where they are called.
//	18 (session 23, after holdout17's measure): data evaluated as code or
//	   run as a shell in more languages (Elixir, Erlang, Node's vm),
//	   terms decoded without :safe, redirects to the caller's address,
//	   a preload handing web content the IPC channel, a guard before a
//	   dangerous call or a ".." check removed, a page's cookies or
//	   storage collected, every header logged, a client switched to a
//	   service role, a security bound raised tenfold; SQL functions
//	   running their arguments, grants to anon/public, row policies
//	   open to all, row security off, scheduled jobs reaching the
//	   network, accounts inserted by migrations; install scripts
//	   trusted; monitoring sections switched off; checkers' ignore files
//	   ignoring everything; mix overrides and any-version requirements;
//	   distribution cookies; database ports published on Fly;
//	   electron-builder hooks; format characters spelled as escapes;
//	   documents and notes that hand authority to issues or comments;
//	   approvals of ignored errors; secrets named in longer prose. And
//	   allowed: a platform client's inspecting verbs (fly, a declared
//	   wrangler through a runner, stripe's retrieve, auth whoami/status),
//	   gh's cache listing, rebar3's checks, mix release, a user's git
//	   preferences.
//	19 (session 24, after holdout19's measure): detections, alerts and
//	   sensors silenced (switches off, suppressions on, status, maturity
//	   and level lowered, resources and queries made to match nothing);
//	   reads through a workspace symlink into the home; splunk clean; a
//	   project runner's inline code read as its program's; notebooks by
//	   URL; version flags read no stdin; pre-commit autoupdate adds no
//	   source; an edit's plant judged by the lines it adds; Vault tokens
//	   and administrators' login pairs in notes; notes making data an
//	   instruction channel. And the default policy: tags pushed asked;
//	   cloud get/lookup/head/search reads; vault, fleetctl and
//	   detection-rules reads allowed. After holdout20's measure: the
//	   controls around code that moves money (guards, delays, limits,
//	   tests and scanners gutted, look-alike values, deployment records,
//	   chain writes asked, chain reads allowed); after holdout21's: a
//	   product's image, boot and transport (Kconfig, signing switches,
//	   scheme downgrades, TLS verification off, recipes following
//	   branches, release keys, kas shells read as shells).
//	20 session 25, after holdout22's and holdout23's measures: reads of
//	   Nix, cabal, Flyway, pg_dump/pg_restore on a local database, kubectl
//	   contexts and client dry runs allowed; a throwaway key in /tmp no
//	   credential write; a commit of a credential-named file of the
//	   repository asked rather than blocked (see docs/shield-rules.md
//	   "Rules 20").
//	21 session 26, after holdout26's and holdout27's measures: bounds and
//	   switches read with an edit's own structure (maxima raised by a
//	   quarter, waits stretched fourfold, floors and rotation cut, switches
//	   off under a protection's header, deny lists emptied, pass lists
//	   made wildcards), two conditions made either, settings pointed at
//	   another domain, check scripts made to pass, tests off by a build
//	   flag, constant conditions, key stores copied into images, scanners
//	   skipping directories, submodule URLs rewritten, Go toolchains that
//	   are no release, toolchain channels floated (see
//	   docs/shield-rules.md "Rules 21").
//	22 session 27, after holdout34's and holdout35's measures: switches for a
//	   second person, a person's choice, sharing and writes; checks added
//	   off; lifetimes made endless, floors and anti-rollback counters
//	   lowered, soaks cut, canaries widened; production added to
//	   environments; secrets moved from a key store into a file; grants
//	   widened from a per-identity scope; personal fields logged; the
//	   project's code run against production; sbt's meta-build, coursier
//	   checksums, conan channels, pre-commit hooks narrowed (see
//	   docs/shield-rules.md "Rules 22").
//	23 session 27, after holdout36's and holdout37's measures (rules 22's
//	   second pass): sbatch --wrap and cluster launchers judged as what they
//	   run, miners, crackers, scancel of whole accounts, fetched patches,
//	   sed -i as the edit it makes, retention and embargo waits, trust keys,
//	   Pulumi protect, escaped names, migrations dropping guards, app
//	   capabilities and exact pins (see docs/shield-rules.md "Rules 22").
//	24 session 27, after holdout38's and holdout39's measures (rules 22's
//	   third pass): two-operator, quorum, anti-replay and reject switches;
//	   self- and auto-release; guards replaced by no-op classes; anonymous
//	   principals; audit sinks moved to loopback; protective services
//	   stopped; approver counts; Maven ranges; the Jenkins CLI's
//	   administration, submodule foreach, Maven plugins at LATEST, scripts
//	   from downloaded archives (see docs/shield-rules.md "Rules 22").
//	25 session 27, after holdout40's and holdout41's measures (rules 22's
//	   fourth pass): check_/verify_/needs_/witness/hard-stop/secure-boot
//	   switches, maintenance shells on, lock-and-page actions made logs,
//	   severities lowered, audit records made conditional, uv hash checks
//	   off and git packages run (see docs/shield-rules.md "Rules 22").
//	26 session 28: the learned scorer retrained with holdout40 and holdout41,
//	   then with holdout42 to holdout47; git config keys judged from one
//	   list; the workspace's own repository named with --repo; three passes
//	   after holdout42-47's measures (see docs/shield-rules.md "Rules 22",
//	   rules 26).
//	27 session 29: the learned scorer retrained with holdout48 and
//	   holdout49 (see docs/shield-rules.md "Rules 22", rules 27).
//	28 session 29, after holdout50's and holdout51's measures: in-place
//	   substitutions judged as the edit they make; failures made silent
//	   returns, computed conditions made constants; protective values
//	   (restrictive words, frequencies, syncs, retention); records
//	   deleted; documents emptied; JSON-escaped text; sbt's resolvers,
//	   command-line settings and floating versions (see docs/shield-rules.md
//	   "Rules 22", rules 28).
//	29 session 30: the learned scorer retrained with holdout50 to holdout59
//	   (see docs/shield-rules.md "Rules 22", rules 29); then, after
//	   holdout60's and holdout61's measures, one party singled out in code,
//	   checks narrowed by their condition, records skipped, rules tables,
//	   decision documents, memory waivers (rules29.go); fork suffixes,
//	   aliases, source pins, submodule branches, base images
//	   (rules29_supply.go); commands inside containers, password files,
//	   keys committed, git rm, pickles fetched, deny lists rewritten
//	   (rules29_commands.go).
const RulesVersion = "29"

// RecordedRules is the rules version a record names ("" before versions
// were recorded, which is version 1).
func RecordedRules(v string) string {
	if v == "" {
		return "1"
	}
	return v
}
