package shield

import (
	"path"
	"strings"

	"github.com/opx-dev/opx/shield/manifest"
)

// A change read whole and found clean is not remembered (rules 17;
// docs/shield-rules.md "flow:changed-then-run", "Rules 17: a clean
// change"). flow:changed-then-run asks about a run of a tool after the
// session changed the tool's file, because the write's judge cannot see
// everything the tool will do with it. For some files it can: what the
// change adds is a list of commands (make, just and task recipes, a local
// pre-commit hook's entry), a test or build script whose added lines can
// be searched for capability (conftest.py, build.rs), or a schema
// migration whose statements can be read. When the change adds only
// lines Shield reads whole and each is what the tool's job is — a recipe
// line the policy allows and tier 1 finds nothing in, a migration that
// adds schema and destroys nothing, a conftest fixture that computes a
// value — the run of that tool runs what was judged, and is not asked
// about again. Anything else stays remembered: a change made by a
// command (sed -i, a redirect), a change that takes lines out, text too
// long to read, a recipe line Shield would ask about, a variable
// assignment, $(shell …), an include, a new hook repository.

// maxCleanRead bounds the text a change may add and still be read whole
// as clean (larger is remembered, as before).
const maxCleanRead = 16 << 10

// cleanChange reports whether the action's change to the tool file p
// (tf, toolFileOf's) is one Shield read whole and found clean.
func (s *Shield) cleanChange(f *Facts, p string) bool {
	added, ok := writtenText(f, p)
	if !ok || len(added) > maxCleanRead || strings.TrimSpace(added) == "" {
		return false
	}
	removed := removedText(f, "content:"+p)
	if takesOut(removed, added) {
		return false // a change that takes lines out is judged by what it took
	}
	base := path.Base(p)
	switch {
	case base == "conftest.py" || base == "build.rs":
		return !manifest.AddsCapability(base, []byte(removed), []byte(added))
	case migrationDoc(p):
		return cleanMigration(added)
	case base == "Makefile" || base == "makefile" || base == "GNUmakefile" || path.Ext(base) == ".mk":
		return s.cleanRecipes(added, makeDirective, recipeLines(makeToolVar.ReplaceAllStringFunc(added, makeTool), "\t", "@-+"))
	case base == "justfile" || base == "Justfile" || base == ".justfile":
		return s.cleanRecipes(added, justDirective, recipeLines(added, " \t", "@-"))
	case base == "Taskfile.yml" || base == "Taskfile.yaml" || base == ".pre-commit-config.yaml":
		lines, ok := yamlCommands(added)
		return ok && s.cleanRecipes("", nil, lines)
	}
	return false
}

// writtenText returns the text the action writes at p (its Text of
// Source "content:"+p), or false when it writes none Shield can read (a
// command's write: sed -i, a redirect of computed output, a move).
func writtenText(f *Facts, p string) (string, bool) {
	var b strings.Builder
	found := false
	for _, t := range f.Texts {
		if t.Source == "content:"+p {
			b.WriteString(t.Body)
			b.WriteByte('\n')
			found = true
		}
	}
	return b.String(), found
}

// takesOut reports whether removed holds a non-blank line that added does
// not hold again (an edit's old text that survives in its new text is
// not taken out).
func takesOut(removed, added string) bool {
	if strings.TrimSpace(removed) == "" {
		return false
	}
	have := map[string]int{}
	for _, l := range strings.Split(added, "\n") {
		have[strings.TrimSpace(l)]++
	}
	for _, l := range strings.Split(removed, "\n") {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if have[t] == 0 {
			return true
		}
		have[t]--
	}
	return false
}

// cleanMigration reports whether a migration's added text only adds or
// changes schema: no statement that destroys data (migrationDrop), no
// reverse shell, no process, network, file or dynamic code in the
// migration's language, no SQL that reaches the server's files or
// programs, roles, grants, row security or triggers.
func cleanMigration(added string) bool {
	if reverseShell.MatchString(added) || migrationReach.MatchString(added) {
		return false
	}
	for _, m := range migrationDrop.FindAllString(added, 16) {
		if !downOnly(added, m) {
			return false // (a rollback dropping what the migration creates is not)
		}
	}
	return true
}

// migrationReach is what a migration may not add and stay clean: rows
// written or removed (a data migration, an account inserted), in SQL
// the server's files and programs (COPY … PROGRAM, pg_read_file,
// lo_import, xp_cmdshell, INTO OUTFILE, LOAD DATA), untrusted languages,
// roles and grants, security definers, row security and triggers turned
// off or policies dropped; in the host language, processes, the network,
// files, the environment and dynamic code.
var migrationReach = mustRx(`(?i)\b(?:UPDATE\s+[\w."]+\s+SET|DELETE\s+FROM|INSERT\s+INTO|MERGE\s+INTO|REPLACE\s+INTO)\b|\b(?:update_all|delete_all|destroy_all|insert_all|upsert_all|bulk_insert|bulk_create|RunPython|RunSQL)\b|\bCOPY\b[^;]{0,200}\b(?:PROGRAM|TO\s+'/)|\bpg_(?:read_file|read_binary_file|ls_dir|execute_server_program)\b|\blo_(?:import|export)\b|\bxp_cmdshell\b|\bINTO\s+(?:OUT|DUMP)FILE\b|\bLOAD\s+DATA\b|\bLANGUAGE\s+['"]?(?:plpython\w*|plperlu|c|pltclu|plsh)\b|\b(?:GRANT|REVOKE)\b|\b(?:CREATE|ALTER)\s+(?:ROLE|USER)\b|\bSECURITY\s+DEFINER\b|\bDISABLE\s+(?:ROW\s+LEVEL\s+SECURITY|TRIGGER)\b|\bDROP\s+(?:POLICY|TRIGGER|FUNCTION)\b|\bdblink\b|\bCREATE\s+(?:EXTENSION|SERVER)\b|` +
	`\b(?:system|exec|spawn|popen|eval|fork)\s*[\(!'"` + "`" + `]|\bsubprocess\b|\bchild_process\b|\bos\.(?:system|popen|environ|getenv|remove|unlink)\b|\bENV\[|\bprocess\.env\b|\bexec\.Command\b|\bCommand::new\b|\b(?:Net::HTTP|open-uri|URI\.open|urllib|requests\.|httpx|axios|fetch\()|\bFile\.(?:write|delete|open)\b|\bopen\(|\bKernel\.|` + "`" + `|%x[\({]|\b__import__\b|\bimportlib\b|\bconstantize\b|\binstance_eval\b|\bclass_eval\b`)

// makeToolVar is a make variable reference by a conventional tool
// variable's name ($(GO), ${PYTHON}); makeTool returns its program (an
// assignment added beside it is a directive, and not clean).
var makeToolVar = mustRx(`\$[({](GO|GOFMT|CC|CXX|PYTHON|PYTHON3|PIP|NPM|PNPM|YARN|NODE|CARGO|RUSTC|DOCKER|KUBECTL|HELM|TERRAFORM|MAKE|GOLANGCI_LINT|BUF|PROTOC|UV|POETRY|MVN|GRADLE|DOTNET)[)}]`)

func makeTool(ref string) string {
	name := ref[2 : len(ref)-1]
	switch name {
	case "GOLANGCI_LINT":
		return "golangci-lint"
	case "PYTHON", "PYTHON3":
		return "python3"
	}
	return strings.ToLower(name)
}

// makeDirective is an added make line other than a recipe or a rule that
// is not clean: a variable assignment (it may change what a recipe
// runs), $(shell …), an include, an export, eval, .ONESHELL/.SHELLFLAGS.
var makeDirective = mustRx(`(?m)^[^\t#\n][^\n]*(?:[:?+!]?=|\$\((?:shell|eval|file)\b)|^-?include\b|^s?include\b|^export\b|^unexport\b|^\.(?:SHELLFLAGS|ONESHELL|SHELL)\b|^\s*SHELL\b|^define\b|^override\b|^vpath\b`)

// justDirective is an added justfile line other than a recipe or a
// recipe header that is not clean: an assignment, a setting, an import,
// a backtick evaluation, a shebang recipe body's interpreter line.
var justDirective = mustRx("(?m)^[^ \\t#\\n][^\\n]*(?::=|`)|^set\\b|^import\\b|^mod\\b|^export\\b|^[ \\t]+#!|^alias\\b")

// cleanRecipes reports whether the added text's directives are clean
// (none that directive matches, outside recipe lines) and every command
// line in lines is allowed by the policy and tier 1 finds nothing in it.
func (s *Shield) cleanRecipes(added string, directive interface{ MatchString(string) bool }, lines string) bool {
	if directive != nil && directive.MatchString(added) {
		return false
	}
	n := 0
	for _, l := range strings.Split(lines, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if n++; n > 32 {
			return false
		}
		if !s.cleanLine(l) {
			return false
		}
	}
	return n > 0
}

// cleanLine reports whether a recipe's command line would be allowed if
// it were proposed: the policy allows every program it runs and tier 1
// (and tier -1) find nothing in it.
func (s *Shield) cleanLine(line string) bool {
	clean, _ := s.cleanLineFacts(line)
	return clean
}

// cleanLineFacts is cleanLine with the line's facts (empty when it is
// refused before they are read).
func (s *Shield) cleanLineFacts(line string) (bool, Facts) {
	if strings.Contains(line, "$(shell") || strings.ContainsAny(line, "`") {
		return false, Facts{}
	}
	v, ok, f := s.judgeLine(line, nil)
	if ok && v.Decision != Allow || len(f.Unknown) > 0 || len(f.Runs) == 0 {
		return false, f
	}
	a := Action{Tool: "execute_command", Command: line}
	return s.tier0(&a, &f).Decision == Allow, f
}

// yamlCommands returns the commands an added Taskfile or pre-commit
// fragment runs (a task's cmds items and cmd: keys; a hook's entry:),
// or false when the fragment adds what is not clean: a hook repository
// other than local, a rev, a hook that runs an image or a script file it
// names by language, a task's dotenv or env, includes, a YAML anchor
// merge.
func yamlCommands(added string) (string, bool) {
	var b strings.Builder
	inCmds := false
	for _, raw := range strings.Split(added, "\n") {
		l := strings.TrimSpace(raw)
		if l == "" || strings.HasPrefix(l, "#") || l == "-" {
			continue
		}
		item := strings.HasPrefix(l, "- ")
		body := strings.TrimSpace(strings.TrimPrefix(l, "- "))
		key, val, isKey := strings.Cut(body, ":")
		if isKey && (key == "" || strings.ContainsAny(key, " \"'{[$|>&;")) {
			isKey = false // a command with a colon in it, not a mapping key
		}
		key = strings.TrimSpace(key)
		val = unquoteYAML(strings.TrimSpace(val))
		if !isKey {
			if !item || !inCmds {
				return "", false // a scalar's continuation, or a list Shield does not read
			}
			b.WriteString(unquoteYAML(body))
			b.WriteByte('\n')
			continue
		}
		switch key {
		case "repo":
			if val != "local" && val != "meta" {
				return "", false
			}
		case "rev", "dotenv", "env", "vars", "sh", "includes", "additional_dependencies", "<<", "shell", "set", "shopt":
			return "", false
		case "language":
			switch val {
			case "system", "python", "node", "golang", "rust", "ruby", "pygrep", "fail":
			default:
				return "", false // docker, docker_image, script run what the entry names
			}
		case "entry", "cmd":
			if val == "" || strings.HasPrefix(val, "|") || strings.HasPrefix(val, ">") {
				return "", false // a block scalar
			}
			b.WriteString(val)
			b.WriteByte('\n')
		case "cmds", "status", "preconditions":
			if val != "" {
				return "", false // a flow sequence
			}
			inCmds = true
		default:
			if !item {
				inCmds = false // a sibling key ends the list
			}
		}
	}
	return b.String(), true
}

// unquoteYAML strips a YAML scalar's quotes.
func unquoteYAML(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		return v[1 : len(v)-1]
	}
	return v
}
