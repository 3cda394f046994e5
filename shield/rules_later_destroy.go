package shield

import (
	"path"
	"strconv"
	"strings"
)

// Destruction wired to run later (issue 27, pass 7, rules 10;
// docs/shield-rules.md "destructive:runs-later"). A destructive statement
// written where it runs on every run, deploy or schedule — a hook (dbt's
// on-run-start/on-run-end, pre-hook/post-hook; any before/after hook key),
// a migration's up, an ORM seed, a CI step, a cron or scheduled job, a DAG
// — destroys data later, outside the write's review. Likewise a write mode
// flipped from append to overwrite (or a new overwrite of a table a
// production schema names), and a guard against deletion switched off in
// code (Pulumi protect and retain_on_delete, CDK removal policies, force
// destroy). Judged by the shape of the text written, in any language.

var (
	// destructiveSQL is a statement that destroys a table's data: DROP
	// (table, schema, database, view), TRUNCATE, DELETE without WHERE.
	destructiveSQL = mustRx(`(?i)\bdrop\s+(?:table|schema|database|materialized\s+view|view)\s+(?:if\s+exists\s+)?(\{\{[^}]{1,80}\}\}[\w.]*|[\w."\x60\[\]]{1,120})|\btruncate\s+(?:table\s+)?(\{\{[^}]{1,80}\}\}|[\w."\x60\[\]]{1,120})|\bdelete\s+from\s+(\{\{[^}]{1,80}\}\}|[\w."\x60\[\]]{1,120})\s*(?:;|$|["'\x60)]|\}\})`)
	// scratchTable names a temporary or scratch relation.
	scratchTable = mustRx(`(?i)tmp|temp|scratch|sandbox|__dbt|_backup_old|staging_load|\bdev\b|_dev\b|test`)
	// hookKey is a key or call whose value runs at a hook: every run,
	// before or after something.
	hookKey = mustRx(`(?i)\bon[-_]run[-_](?:start|end)\b|[+]?\b(?:pre|post)[-_]hook\b|\b(?:before|after)_(?:all|each|script|save|create|commit|request|deploy|run)\b|\b(?:beforeAll|afterAll|beforeEach|afterEach|setUp|tearDown|on_startup|on_shutdown|lifecycle|postStart|preStop)\b`)
	// downSection opens a migration's reverse step.
	downSection = mustRx(`(?i)\bdef\s+(?:down|downgrade|rollback)\b|\bexports\.down\b|\bdown\s*[:(=]|\bfunc\s+\w*[Dd]own\w*\(|\basync\s+down\s*\(|public\s+(?:override\s+)?\w*\s*[Dd]own\s*\(|--\s*\+?migrate\s+down|--\s*\+goose\s+down`)
	// upSection opens a migration's forward step.
	upSection = mustRx(`(?i)\bdef\s+(?:up|upgrade|change|forwards)\b|\bexports\.up\b|\bup\s*[:(=]|\bfunc\s+\w*[Uu]p\w*\(|\basync\s+up\s*\(|public\s+(?:override\s+)?\w*\s*[Uu]p\s*\(|--\s*\+?migrate\s+up|--\s*\+goose\s+up`)
	// overwriteMode and appendMode are a writer's modes.
	overwriteMode = mustRx(`(?i)mode\s*\(\s*["']overwrite["']\s*\)|mode\s*=\s*["']overwrite["']|if_exists\s*=\s*["']replace["']|SaveMode\.Overwrite|WRITE_TRUNCATE|\binsert\s+overwrite\b|saveMode\s*[:=]\s*["']?overwrite`)
	appendMode    = mustRx(`(?i)mode\s*\(\s*["'](?:append|ignore|error|errorifexists)["']\s*\)|mode\s*=\s*["'](?:append|ignore|error)["']|if_exists\s*=\s*["'](?:append|fail)["']|SaveMode\.(?:Append|Ignore|ErrorIfExists)|WRITE_APPEND|WRITE_EMPTY|\binsert\s+into\b|saveMode\s*[:=]\s*["']?append`)
	// writeTarget is the table or path an overwrite names.
	writeTarget = mustRx(`(?i)(?:saveAsTable|insertInto|table|to_sql|save|insert\s+overwrite(?:\s+table)?|destination|destination_table)\s*\(?\s*["'\x60]?([\w.\-/:]{2,120})`)
	// batchDir is a directory of batch jobs, pipelines and DAGs.
	batchDir = mustRx(`(?:^|/)(?:jobs|etl|elt|pipelines?|dags|batch|workflows|flows|tasks|schedules?)/`)
	// productionName is a table or schema a production dataset is named
	// by.
	productionName = mustRx(`(?i)(?:^|[._/])(?:prod|production|prd|analytics|warehouse|curated|gold|mart|marts|reporting|finance|billing|core)(?:[._/]|$)|(?:^|[._])(?:fct|fact|dim)_`)
	// guardKey is a setting that guards a resource against deletion;
	// guardLoose one that lets it be deleted.
	guardKey   = mustRx(`^(?:protect|retainondelete|preventdestroy|deletionprotection|terminationprotection|retain)$|retainondelete$|preventdestroy$`)
	guardLoose = mustRx(`forcedestroy|forcedelete|autodeleteobjects|skipfinalsnapshot|purgeondelete|deletebeforereplace`)
	// removalValue reads a removal policy's value: RETAIN or SNAPSHOT
	// are guards, DESTROY or DELETE are not.
	removalKey = mustRx(`removalpolicy|deletionpolicy|updatereplacepolicy|applyremovalpolicy`)
)

// runsEveryTime names, for a path, why what it holds runs later on every
// run, deploy or schedule ("" when it does not by its place).
func runsEveryTime(p string) string {
	l := strings.ToLower(p)
	base := path.Base(l)
	switch {
	case base == "dbt_project.yml" || base == "dbt_project.yaml":
		return "dbt's project file (its hooks run on every dbt run)"
	case migrationFile(p) || strings.Contains(l, "/migrations/") || strings.Contains(l, "/migrate/"):
		return "a migration (applied on deploy)"
	case strings.Contains(base, "seed") || strings.Contains(l, "/seeds/") || strings.Contains(l, "/seeders/"):
		return "a seed (run to set up every environment)"
	case strings.HasPrefix(l, ".github/workflows/") || strings.Contains(l, "/.github/workflows/") || base == ".gitlab-ci.yml" ||
		base == "jenkinsfile" || base == "azure-pipelines.yml" || base == "bitbucket-pipelines.yml" || strings.Contains(l, ".circleci/") || strings.Contains(l, ".buildkite/"):
		return "a CI pipeline (run on every push)"
	case batchDir.MatchString(l):
		return "a batch job (run on its schedule)"
	case strings.Contains(base, "cron") || strings.Contains(l, "/dags/") || strings.Contains(base, "schedule") || strings.Contains(l, "/schedules/") || strings.Contains(l, "/jobs/") && strings.Contains(base, "cron"):
		return "a scheduled job"
	case strings.Contains(l, "/macros/") && strings.HasSuffix(base, ".sql"):
		return ""
	}
	return ""
}

// laterDestruction is `destructive:runs-later` and
// `destructive:protection-off` (escalate) for text written into the
// workspace.
func (s *Shield) laterDestruction(_ *Action, f *Facts, j *judgement) {
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || testSource(p) || !s.inWorkspace(p) || !destroyHint(t.Body) {
			continue
		}
		var old string
		for _, r := range f.Removed {
			if r.Source == t.Source {
				old += r.Body + "\n"
			}
		}
		rel := s.relPath(p)
		if why := destroyLater(rel, t.Body, old); why != "" {
			j.escalate("destructive:runs-later", "the change to %s %s", rel, why)
			return
		}
		if why := guardOff(t.Body, old); why != "" {
			j.escalate("destructive:protection-off", "the change to %s switches off a guard against deleting a resource: %s", rel, why)
			return
		}
	}
}

// destroyHint is a cheap first pass: words without which no judgement
// here can match.
func destroyHint(text string) bool {
	l := strings.ToLower(clipRaw(text, maxAppsecText))
	for _, h := range []string{"drop", "truncate", "delete", "overwrite", "replace", "write_truncate", "protect", "retain", "destroy", "removal", "deletion", "snapshot"} {
		if strings.Contains(l, h) {
			return true
		}
	}
	return false
}

// destroyLater returns what a change wires to destroy data later, or "".
func destroyLater(p, added, old string) string {
	plus, _ := diffLines(added, old)
	if len(plus) == 0 {
		return ""
	}
	where := runsEveryTime(p)
	migration := strings.HasPrefix(where, "a migration")
	inDown := false
	seen := 0
	isPlus := make(map[string]bool, len(plus))
	for _, l := range plus {
		isPlus[l] = true
	}
	for _, l := range strings.Split(clipRaw(added, maxAppsecText), "\n") {
		t := strings.TrimSpace(l)
		if migration {
			if downSection.MatchString(t) {
				inDown = true
			} else if upSection.MatchString(t) {
				inDown = false
			}
		}
		if t == "" || !isPlus[t] {
			continue // unchanged (diffLines: not a line of the old text)
		}
		if inDown || !sqlVerbHint(t) {
			continue
		}
		if seen++; seen > maxDestroyStatements {
			// bounded: what is not read is asked about where it runs later
			if where != "" {
				return "holds more destructive-looking statements than Shield reads (" + strconv.Itoa(maxDestroyStatements) + ") in " + where
			}
			break
		}
		m := destructiveSQL.FindStringSubmatch(t)
		if m == nil {
			continue
		}
		target := strings.TrimSpace(m[1] + m[2] + m[3])
		if scratchTable.MatchString(target) {
			continue
		}
		switch {
		case where != "":
			return "writes " + clipText(strings.TrimSpace(m[0]), 60) + " into " + where + ": it destroys data every time that runs"
		case hookKey.MatchString(t) || hookKey.MatchString(added) && strings.Contains(strings.ToLower(p), "dbt") || configHook(added):
			return "writes " + clipText(strings.TrimSpace(m[0]), 60) + " into a hook: it destroys data on every run"
		case productionName.MatchString(strings.Trim(target, "\"`[]")) && appSource(p):
			return "writes " + clipText(strings.TrimSpace(m[0]), 60) + ", a production table, into code that runs later"
		}
	}
	// A writer's mode flipped to overwrite, or a new overwrite of a
	// production table.
	for _, l := range plus {
		if !overwriteMode.MatchString(l) {
			continue
		}
		target := ""
		if m := writeTarget.FindStringSubmatch(l); m != nil {
			target = m[1]
		}
		if target != "" && scratchTable.MatchString(target) {
			continue
		}
		if appendMode.MatchString(old) && !overwriteMode.MatchString(old) {
			return "switches a write from appending to overwriting (" + clipText(l, 80) + "): each run replaces what was there"
		}
		if target != "" && productionName.MatchString(target) && !strings.Contains(old, target) {
			return "overwrites " + clipText(target, 60) + ", a production table, on every run (" + clipText(l, 80) + ")"
		}
	}
	return ""
}

// maxDestroyStatements bounds the destructive-looking lines one text is
// read for.
const maxDestroyStatements = 64

// sqlVerbHint reports whether a line holds a verb destructiveSQL needs (a
// cheap first pass).
func sqlVerbHint(l string) bool {
	for _, v := range []string{"drop", "DROP", "Drop", "truncate", "TRUNCATE", "Truncate", "delete", "DELETE", "Delete"} {
		if strings.Contains(l, v) {
			return true
		}
	}
	return false
}

// configHook reports whether a model's text sets a hook in its config
// block ({{ config(pre_hook=…) }}).
func configHook(text string) bool {
	l := strings.ToLower(clipRaw(text, 4096))
	return strings.Contains(l, "config(") && (strings.Contains(l, "pre_hook") || strings.Contains(l, "post_hook"))
}

// guardOff returns why an edit's settings let a resource be deleted: a
// guard (protect, retain on delete, prevent destroy, deletion
// protection) turned off or removed, a loosening switch (force destroy,
// auto-delete objects, skip the final snapshot) turned on, a removal
// policy moved from RETAIN or SNAPSHOT to DESTROY or DELETE; or "".
func guardOff(added, old string) string {
	if old == "" {
		return ""
	}
	plus, minus := diffLines(added, old)
	before := map[string]settingPair{}
	for _, s := range settingsIn(minus, 64) {
		before[s.key] = s
		before[s.leaf] = s
	}
	for _, s := range settingsIn(plus, 64) {
		o, had := before[s.key]
		if !had {
			o, had = before[s.leaf]
		}
		v := enumLeaf(s.val)
		switch {
		case (guardKey.MatchString(s.key) || guardKey.MatchString(s.leaf)) && valOff(v) && (!had || !valOff(enumLeaf(o.val))):
			return "turns " + clipText(s.leaf, 40) + " off (" + clipText(s.line, 80) + ")"
		case guardLoose.MatchString(s.key) && valOn(v) && (!had || !valOn(enumLeaf(o.val))):
			return "turns " + clipText(s.leaf, 40) + " on (" + clipText(s.line, 80) + ")"
		case removalKey.MatchString(s.key) && (v == "destroy" || v == "delete") && (!had || enumLeaf(o.val) == "retain" || enumLeaf(o.val) == "snapshot" || strings.HasPrefix(enumLeaf(o.val), "retain")):
			return "sets " + clipText(s.leaf, 40) + " to " + v + " (" + clipText(s.line, 80) + ")"
		}
	}
	return ""
}

// enumLeaf is an enum value's last segment (RemovalPolicy.DESTROY:
// destroy).
func enumLeaf(v string) string {
	if i := strings.LastIndexByte(v, '.'); i >= 0 && i+1 < len(v) {
		if _, err := strconv.Atoi(v[i+1:]); err != nil {
			return v[i+1:]
		}
	}
	return v
}
