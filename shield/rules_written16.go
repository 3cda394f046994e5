package shield

import (
	"iter"
	"path"
	"strings"
)

// What written files will do (rules 16; docs/shield-rules.md "Rules 16:
// what written files will do"), whatever the stack:
//
//   - destructive:database (escalate): a schema migration written that
//     drops a table or column, truncates, or deletes without a WHERE —
//     in SQL and in each framework's migration language (drop_table,
//     op.drop_table, migrationBuilder.DropTable, <dropTable>,
//     DeleteModel, knex.schema.dropTable, drop table(:x));
//   - remote-code:reverse-shell (escalate): a reverse shell written into
//     any file (a scheduler's task, a container's command, a unit, a
//     script): bash -i >& /dev/tcp/…, nc -e, ncat --exec, socat
//     exec:…, a socket's descriptors handed to a shell;
//   - supply-chain:source (escalate): a tool's configuration that extends
//     or loads a preset, plugin or module from a URL
//     ("extends": ["https://…/index.js"]) or a Bicep module from a
//     registry at :latest.

// migrationDrop is a migration's statement that destroys data.
var migrationDrop = mustRx(`(?im)\bDROP\s+(?:TABLE|SCHEMA|DATABASE|COLUMN)\b|\bTRUNCATE\s+(?:TABLE\s+)?\w|\bDELETE\s+FROM\s+[\w."]+\s*(?:;|$)|\bdrop_table\b|\bremove_column\b|\bop\.drop_(?:table|column)\b|\bmigrationBuilder\.Drop(?:Table|Column)\b|<drop(?:Table|Column)\b|\bmigrations\.(?:DeleteModel|RemoveField)\b|\.dropTable(?:IfExists)?\(|\.dropColumn\(|\bdrop\s+table\(|\bremove\s+:\w+|\bSchema::drop(?:IfExists)?\(|->dropColumn\(`)

// migrationDoc reports whether p is a schema migration (migrationFile's,
// and the migration directories of Flyway, Liquibase, EF and Ecto).
func migrationDoc(p string) bool {
	if migrationFile(p) {
		return true
	}
	l := strings.ToLower(p)
	switch path.Ext(l) {
	case ".sql", ".xml", ".yaml", ".yml", ".exs", ".cs", ".php", ".kt", ".java":
	default:
		return false
	}
	return strings.Contains(l, "/migrations/") || strings.Contains(l, "/migration/") || strings.Contains(l, "/db/migrate/") ||
		strings.Contains(l, "/changelog") || strings.Contains(l, "/liquibase/") || strings.Contains(l, "/flyway/")
}

// reverseShell is a shell connected to a remote peer.
var reverseShell = mustRx(`(?i)\b(?:ba|z|k)?sh\s+-i\s*[<>]&?\s*/dev/(?:tcp|udp)/|/dev/tcp/[\w.-]+/\d+\s+0>&1|\bn(?:c|cat|etcat)\b[^\n|;]{0,40}\s(?:-e|-c|--exec|--sh-exec)\s+/?(?:bin/)?(?:ba|z)?sh\b|\bsocat\b[^\n]{0,60}\bexec:[^\n]{0,20}\b(?:ba)?sh\b|\bpty\.spawn\(\s*["'](?:/bin/)?(?:ba)?sh|\bos\.dup2\([^)]*\bfileno\(\)|\bmkfifo\b[^\n]{0,60}\bn(?:c|cat)\b|TCPSocket\.new[^\n]{0,80}(?:spawn|exec|system)|\bfsockopen\([^\n]{0,80}(?:proc_open|exec|shell_exec|system)`)

// remoteExtends is a tool configuration loading a preset, plugin or
// module from a URL, or a registry module at :latest.
var remoteExtends = mustRx(`(?i)["']?(?:extends|plugins?|presets?|parser|require|import)["']?\s*[:=]\s*\[?\s*["'](https?://[^"'\s]+\.(?:js|cjs|mjs|ts|json|ya?ml))["']|\bmodule\s+\w+\s+'br:[\w.-]+/[\w./-]+:latest'`)

// writtenFiles yields each file an action writes (its Text of Source
// "content:PATH") as the path and the text, clipped to what rules judge.
func writtenFiles(f *Facts) iter.Seq2[string, Text] {
	return func(yield func(string, Text) bool) {
		for _, t := range f.Texts {
			p, ok := strings.CutPrefix(t.Source, "content:")
			if !ok {
				continue
			}
			t.Body = clip(t.Body, maxTextJudged)
			if !yield(p, t) {
				return
			}
		}
	}
}

// writtenDoes is the rule.
func (s *Shield) writtenDoes(_ *Action, f *Facts, j *judgement) {
	for p, t := range writtenFiles(f) {
		body, rel := t.Body, s.relPath(p)
		if m := reverseShell.FindString(body); m != "" {
			j.escalate("remote-code:reverse-shell", "the change to %s writes a reverse shell (%q): whatever runs it hands a shell to another machine", rel, clipText(m, 60))
			return
		}
		if migrationDoc(p) && !testSource(p) {
			if m := migrationDrop.FindString(body); m != "" && !strings.Contains(removedText(f, t.Source), m) && !downOnly(body, m) {
				j.escalate("destructive:database", "the change to %s writes a migration that destroys data (%q): applied, it cannot be undone from the repository", rel, clipText(strings.TrimSpace(m), 40))
				return
			}
		}
		if m := remoteExtends.FindString(body); m != "" {
			j.escalate("supply-chain:source", "the change to %s loads configuration or code from %q: whatever that address serves runs with the tool", rel, clipText(m, 80))
			return
		}
	}
}

// downOnly reports whether the destructive statement m stands only in a
// migration's rollback (def down, Down(), downgrade(), -- +migrate Down,
// -- migrate:down): undoing the migration's own creation.
func downOnly(body, m string) bool {
	k := strings.Index(body, m)
	if k < 0 {
		return false
	}
	before := strings.ToLower(body[:k])
	down := max(strings.LastIndex(before, "def down"), strings.LastIndex(before, "down("), strings.LastIndex(before, "def downgrade"),
		strings.LastIndex(before, "+migrate down"), strings.LastIndex(before, "migrate:down"), strings.LastIndex(before, "exports.down"),
		strings.LastIndex(before, "async down"), strings.LastIndex(before, "function down"), strings.LastIndex(before, "<rollback"))
	if down < 0 {
		return false
	}
	up := max(strings.LastIndex(before, "def up"), strings.LastIndex(before, "up("), strings.LastIndex(before, "def upgrade"),
		strings.LastIndex(before, "+migrate up"), strings.LastIndex(before, "migrate:up"), strings.LastIndex(before, "exports.up"),
		strings.LastIndex(before, "async up"), strings.LastIndex(before, "function up"), strings.LastIndex(before, "def change"))
	return down > up
}
