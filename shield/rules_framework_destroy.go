package shield

import (
	"slices"
	"strings"
)

// dbWipeVerbs are framework verbs that drop, empty or rebuild a database
// (its data lost), by tool; "*" holds verbs any tool's CLI may name. A
// verb is the tool's positional arguments joined by spaces, lower case.
var dbWipeVerbs = map[string][]string{
	"rails":         {"db:drop", "db:reset", "db:purge", "db:schema:load", "db:structure:load", "db:truncate_all", "db:seed:replant", "db:migrate:reset", "db:drop:all", "db:purge:all"},
	"rake":          {"db:drop", "db:reset", "db:purge", "db:schema:load", "db:structure:load", "db:truncate_all", "db:seed:replant", "db:migrate:reset", "db:drop:all", "db:purge:all"},
	"artisan":       {"migrate:fresh", "migrate:reset", "migrate:refresh", "db:wipe"},
	"manage.py":     {"flush", "reset_db", "sqlflush"},
	"django-admin":  {"flush", "reset_db"},
	"dotnet-ef":     {"database drop"},
	"prisma":        {"migrate reset", "db push --accept-data-loss", "db push --force-reset"},
	"drizzle-kit":   {"drop"},
	"flyway":        {"clean"},
	"liquibase":     {"dropall", "drop-all"},
	"sequelize":     {"db:drop", "db:migrate:undo:all"},
	"sequelize-cli": {"db:drop", "db:migrate:undo:all"},
	"typeorm":       {"schema:drop"},
	"knex":          {"migrate:rollback --all"},
	"mix":           {"ecto.drop", "ecto.reset", "ecto.rollback --all"},
	"diesel":        {"database reset", "database drop"},
	"sqlx":          {"database drop", "database reset"},
	"goose":         {"reset"},
	"dbmate":        {"drop"},
	"migrate":       {"drop"},
	"alembic":       {"downgrade base"},
	"console":       {"doctrine:database:drop", "doctrine:schema:drop"},
	"ace":           {"migration:fresh", "migration:reset", "db:wipe"},
	"supabase":      {"db reset --linked", "db reset --db-url"},
}

// dbProdOnlyVerbs undo migrations: routine in development, destructive
// against production (the rows the migrations held are dropped).
var dbProdOnlyVerbs = map[string][]string{
	"rails":     {"db:rollback", "db:migrate:down", "db:migrate:redo"},
	"rake":      {"db:rollback", "db:migrate:down", "db:migrate:redo"},
	"artisan":   {"migrate:rollback"},
	"dotnet-ef": {"database update 0"},
	"manage.py": {"migrate * zero"},
	"alembic":   {"downgrade"},
	"knex":      {"migrate:rollback"},
	"sequelize": {"db:migrate:undo"},
}

// dbApplyVerbs apply migrations or a schema: routine on a development
// database, a change of production's schema from this machine against
// production (rules 15: asked).
var dbApplyVerbs = map[string][]string{
	"rails": {"db:migrate"}, "rake": {"db:migrate"}, "artisan": {"migrate"}, "dotnet-ef": {"database update"},
	"manage.py": {"migrate"}, "django-admin": {"migrate"}, "alembic": {"upgrade"}, "prisma": {"migrate deploy", "db push"},
	"flyway": {"migrate", "repair", "baseline"}, "liquibase": {"update", "updatesql"}, "knex": {"migrate:latest", "migrate:up"},
	"sequelize": {"db:migrate"}, "sequelize-cli": {"db:migrate"}, "typeorm": {"migration:run", "schema:sync"},
	"goose": {"up", "up-to", "up-by-one"}, "dbmate": {"up", "migrate"}, "migrate": {"up"}, "diesel": {"migration run"},
	"sqlx": {"migrate run"}, "mix": {"ecto.migrate"}, "console": {"doctrine:migrations:migrate", "doctrine:schema:update"},
	"ace": {"migration:run"}, "drizzle-kit": {"push", "migrate"}, "atlas": {"schema apply", "migrate apply"},
}

// sqlpackageAction is sqlpackage's action (/Action:Publish, /a:Script),
// lower case, or "".
func sqlpackageAction(c frameworkCall) string {
	for _, a := range c.args {
		l := strings.ToLower(strings.TrimLeft(a, "/-"))
		if v, ok := strings.CutPrefix(l, "action:"); ok {
			return v
		}
		if v, ok := strings.CutPrefix(l, "a:"); ok {
			return v
		}
	}
	return ""
}

// sqlpackageDrops reports whether a sqlpackage publish may drop data:
// objects missing from the source dropped, or data loss not blocked.
func sqlpackageDrops(c frameworkCall) bool {
	for _, a := range c.args {
		l := strings.ToLower(strings.ReplaceAll(a, " ", ""))
		if strings.Contains(l, "dropobjectsnotinsource=true") || strings.Contains(l, "blockonpossibledataloss=false") {
			return true
		}
	}
	return false
}

// anywhereVerbs are tools whose one-word verb follows other positional
// arguments (goose DRIVER DSN reset, flyway -x y clean).
var anywhereVerbs = map[string]bool{"goose": true, "migrate": true, "dbmate": true, "flyway": true, "liquibase": true}

// verbMatches reports whether call c names verb v: v's words are the
// call's first positional words ("*" any word), and a word of v that is
// an option ("--all") is one of the call's options.
func verbMatches(c frameworkCall, v string) bool {
	p := c.positional()
	if anywhereVerbs[c.tool] {
		// Drivers, DSNs and directories come first: the verb is any
		// positional word.
		for _, x := range p {
			if strings.ToLower(x) == v {
				return true
			}
		}
		return false
	}
	k := 0
	for _, w := range strings.Fields(v) {
		if strings.HasPrefix(w, "-") {
			if !c.has(w) {
				return false
			}
			continue
		}
		if k >= len(p) || (w != "*" && strings.ToLower(p[k]) != w) {
			return false
		}
		k++
	}
	return true
}

// frameworkDestruction is `destructive:database`, `destructive:signing`
// and `destructive:release` (rules 11): a framework verb that wipes a
// database (block when the line names production, escalate when it names
// no environment, left to the policy when it names development or test),
// undoes migrations against production (block), revokes signing assets or
// halts a store release (escalate).
func (s *Shield) frameworkDestruction(_ *Action, f *Facts, j *judgement) {
	for i := range f.Runs {
		r := &f.Runs[i]
		c, ok := frameworkOf(r)
		if !ok {
			continue
		}
		env := lineEnv(r.Line)
		if env == "" && (c.has("--force") || c.has("--no-interaction") || c.has("--noinput")) && strings.Contains(strings.ToLower(r.Line), "disable_database_environment_check") {
			env = "prod"
		}
		for _, v := range dbWipeVerbs[c.tool] {
			if !verbMatches(c, v) {
				continue
			}
			switch env {
			case "prod":
				j.block("destructive:database", "%s runs %s %s against production: the database's data is dropped", quote(r.Line), c.tool, v)
				return
			case "":
				j.escalate("destructive:database", "%s runs %s %s, which drops the database's data, in an environment the line does not name", quote(r.Line), c.tool, v)
				return
			}
		}
		if env == "prod" {
			for _, v := range dbProdOnlyVerbs[c.tool] {
				if verbMatches(c, v) {
					j.block("destructive:database", "%s runs %s %s against production: undone migrations drop what they held", quote(r.Line), c.tool, v)
					return
				}
			}
		}
		if c.tool == "sqlpackage" && sqlpackageAction(c) == "publish" {
			// rules 15: a dacpac published: a schema deployed
			switch {
			case env == "prod" && sqlpackageDrops(c):
				j.block("destructive:database", "%s publishes a schema to production that drops what the source lacks or allows data loss", quote(r.Line))
				return
			case env == "prod":
				j.escalate("destructive:database", "%s publishes a schema to production from this machine", quote(r.Line))
				return
			case env == "" && sqlpackageDrops(c):
				j.escalate("destructive:database", "%s publishes a schema that drops what the source lacks or allows data loss, to a database the line does not name as development", quote(r.Line))
				return
			}
		}
		if env == "prod" {
			for _, v := range dbApplyVerbs[c.tool] {
				if verbMatches(c, v) {
					j.escalate("destructive:database", "%s runs %s %s against production: production's schema changed from this machine, outside the release", quote(r.Line), c.tool, v)
					return
				}
			}
		}
		if why := signingOrRelease(c); why != "" {
			rule := why[:strings.IndexByte(why, ' ')]
			j.escalate(rule, "%s %s", quote(r.Line), why[len(rule)+1:])
			return
		}
	}
}

// signingOrRelease says how a call revokes signing assets or halts or
// pushes a store release ("rule reason"), or "".
func signingOrRelease(c frameworkCall) string {
	v := c.verb(2)
	switch c.tool {
	case "fastlane":
		switch {
		case strings.HasPrefix(v, "match nuke") || v == "match_nuke" || strings.HasPrefix(v, "nuke"):
			return "destructive:signing revokes the team's certificates and profiles (match nuke): every build signed with them stops installing"
		case strings.HasPrefix(v, "match") && (c.has("--force") || fastlaneArg(c, "readonly") == "false" || fastlaneArg(c, "force") == "true"):
			// rules 18: readonly off or --force: match creates or replaces them
			return "destructive:signing creates or replaces the team's shared signing certificates (match with readonly off or --force)"
		case strings.HasPrefix(v, "supply") || strings.HasPrefix(v, "upload_to_play_store") || strings.HasPrefix(v, "deliver") || strings.HasPrefix(v, "upload_to_app_store"):
			if fastlaneArg(c, "rollout") == "0" || fastlaneArg(c, "rollout") == "0.0" || prodNameRe.MatchString(fastlaneArg(c, "track")) || c.has("--submit_for_review") {
				return "destructive:release changes a production store release from this machine (a rollout halted or a build submitted)"
			}
		}
	case "security":
		if strings.HasPrefix(v, "delete-keychain") || strings.HasPrefix(v, "delete-certificate") || strings.HasPrefix(v, "delete-identity") {
			return "destructive:signing deletes a keychain, certificate or signing identity"
		}
	case "keytool":
		if c.has("-delete") {
			return "destructive:signing deletes a key from a keystore"
		}
	}
	return ""
}

// fastlaneArg returns the value of a fastlane option given as --name
// value, --name=value or name:value, or "".
func fastlaneArg(c frameworkCall, name string) string {
	for k, x := range c.args {
		switch {
		case x == "--"+name && k+1 < len(c.args):
			return c.args[k+1]
		case strings.HasPrefix(x, "--"+name+"="):
			return x[len(name)+3:]
		case strings.HasPrefix(x, name+":"):
			return x[len(name)+1:]
		}
	}
	return ""
}

// sqlWipe is SQL (or a database shell's command) that drops or empties
// what a database holds: DROP TABLE|DATABASE|SCHEMA …, TRUNCATE, a DELETE
// without a WHERE, Mongo's drop(), Redis's FLUSHALL.
var sqlWipe = mustRx(`(?i)\bdrop\s+(?:table|database|schema|view|materialized\s+view|keyspace|collection|owned)\b|\btruncate\s+(?:table\s+)?["\x60\w.]+|\bdelete\s+from\s+["\x60\w.]+\s*(?:;|$|["'])|\.drop(?:Database)?\(\s*\)|\bflush(?:all|db)\b`)

// dbShells are database clients whose arguments (or the text given to
// them) are SQL or their shell's commands.
var dbShells = setOf("psql", "mysql", "mariadb", "mongosh", "mongo", "clickhouse-client", "sqlcmd", "cqlsh", "usql", "pgcli", "mycli",
	"cockroach", "sqlite3", "duckdb", "redis-cli", "valkey-cli", "snowsql", "bq", "trino", "presto", "spark-sql", "influx")

// sqlDestruction is `destructive:database` (escalate; rules 14) for a
// database client given SQL that drops or empties tables, schemas or
// databases (psql -c 'DROP TABLE orders', sqlite3 dev.db 'DELETE FROM
// frames;', redis-cli FLUSHALL): what a server holds is not in any
// snapshot, and a database file's rows are the project's data.
func (s *Shield) sqlDestruction(_ *Action, f *Facts, j *judgement) {
	for i := range f.Runs {
		r := &f.Runs[i]
		if !dbShells[r.Name] || len(r.Argv) < 2 {
			continue
		}
		text := strings.Join(r.Argv[1:], " ")
		if len(text) > maxTextJudged {
			text = text[:maxTextJudged]
		}
		if m := sqlWipe.FindString(text); m != "" {
			j.escalate("destructive:database", "%s gives %s %q: it drops or empties what the database holds", quote(r.Line), r.Name, clipText(m, 40))
			return
		}
	}
	if !slices.ContainsFunc(f.Runs, func(r Run) bool { return dbShells[r.Name] }) {
		return
	}
	for _, t := range f.Texts {
		// SQL a client reads from a here-document (psql <<'SQL' … SQL).
		if t.Source != "stdin" {
			continue
		}
		if m := sqlWipe.FindString(clip(t.Body, maxTextJudged)); m != "" {
			j.escalate("destructive:database", "a database client is given %q: it drops or empties what the database holds", clipText(m, 40))
			return
		}
	}
}
