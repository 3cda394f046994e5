package shield

import (
	"strings"
)

// Code written that fetches code and runs it (issue 27, pass 7, rules
// 10; docs/shield-rules.md "remote-code:written"). pipe-to-shell judges a
// command line that pipes a download into a shell; the same line written
// into a file runs later, when the notebook, the DAG, the task runner,
// the CI step or the service runs it, and is as remote. Any written text
// (a notebook's cells, a Python string handed to a shell, a task file, a
// YAML job, a properties file, source code) whose added lines pipe a
// download into an interpreter, run a download through a substitution or
// PowerShell's Invoke-Expression, or load code from a URL at run time (a
// Spark job's jars and Python files, PHP's include of a URL, Ruby's load
// of URI.open, a class loader or assembly from the network, a script
// downloaded to a file) is asked about. Prose (READMEs quote installers),
// lockfiles and container builds (RUN lines act inside the image) are
// left to their own rules.

// writtenFetchRun are the shapes, each a line of written text: a
// download run by a shell (fetchToShell), code loaded from a URL or
// deserialized from what a hub or a URL serves (fetchLoads), and, rules
// 13, a download and a shell in one statement of any language.
var writtenFetchRun = append(append(append([]*rx{}, fetchToShell...), fetchLoads...), fetchAndShell, runnerFetch)

// runnerFetch (rules 17): a package runner that fetches and runs a
// package, written into a file that runs it later (a Prisma generator's
// provider, a task's command): npx -y or a moving version, dlx, bunx,
// uvx, pipx run — as remote-code:runner judges the command itself.
var runnerFetch = mustRx(`(?i)(?:^|[\s"'=\[(,])(?:npx\s+(?:-y|--yes)\s+[@\w]|npx\s+@?[\w./-]+@(?:latest|next|canary)\b|(?:pnpm|yarn)\s+dlx\s+[@\w]|pnpx\s+[@\w]|bunx\s+[@\w]|uvx\s+[@\w]|pipx\s+run\s+[@\w]|npm\s+exec\s+(?:-y|--yes)\s+[@\w])`)

// fetchToShell: a download run by a shell or PowerShell.
var fetchToShell = []*rx{
	// A download piped into an interpreter.
	mustRx(`(?i)\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|aria2c|lwp-request|http\s+get)\b[^|\n]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+(?:\S+=\S*\s+)*)?(?:/\S*/)?(?:(?:ba|z|da|k|mk|fi|a)?sh|python[0-9.]*|perl|ruby|node|php|iex|invoke-expression|pwsh|powershell)\b`),
	// A download run through a substitution.
	mustRx(`(?i)(?:\b(?:(?:ba|z|da|k)?sh|source|python[0-9.]*|perl|ruby|node|eval|exec)|(?:^|[\s;&|])\.)\s+(?:-c\s+)?["']?(?:<\(|\$\()\s*(?:curl|wget|iwr|irm)\b`),
	// PowerShell running what it downloads.
	mustRx(`(?i)\b(?:iex|invoke-expression)\b[\s("']*(?:\(?\s*new-object\s+(?:system\.)?net\.webclient\s*\)?\s*\.\s*download(?:string|data)|iwr\b|irm\b|invoke-webrequest|invoke-restmethod)|\.download(?:string|data)\([^)\n]*\)\s*\|\s*(?:iex|invoke-expression)\b`),
}

// fetchLoads: code loaded from a URL at run time, or data a hub or URL
// serves deserialized by a loader that runs what it names.
var fetchLoads = []*rx{
	// Code loaded from a URL at run time: Spark's files, jars and
	// archives, PHP's include, Ruby's load, a dynamic import, a class
	// loader or an assembly from the network, eval of a download.
	mustRx(`(?i)(?:\baddPyFile|\baddFile|\baddJar|\badd_?(?:py_?)?files?|\bspark\.(?:jars|files|archives|submit\.pyFiles|driver\.extraClassPath|executor\.extraClassPath)|--jars|--py-files|--files|--archives)["'\s(=:,]+[^\s"'()]*(?:https?|ftp)://`),
	mustRx(`(?i)\b(?:include|require)(?:_once)?\s*\(?\s*["'](?:https?|ftp)://|\bload\s*\(?\s*(?:URI\.open|open|Kernel\.open|URI\.parse|Net::HTTP\.get)\s*\(\s*(?:URI\()?["']https?://|\bimport\(\s*["'` + "`" + `]https?://|new\s+URLClassLoader\([^)\n]*https?://|Assembly\.Load(?:From)?\(\s*[^\n;]*(?:Download|https?://)`),
	mustRx(`(?i)\b(?:exec|eval)\s*\(\s*(?:await\s+)?(?:\(?\s*await\s+)?(?:requests\.get|httpx\.get|urlopen|urllib\.request\.urlopen|urllib2\.urlopen|file_get_contents|fetch|curl_exec|open-uri|URI\.open)\s*\(`),
	// A script downloaded to a file (then imported or run).
	mustRx(`(?i)\b(?:urlretrieve|download_file|DownloadFile)\s*\([^)\n]*\.(?:py|sh|ps1|rb|js|pl|jar)["']`),
	// Data a model hub or a URL serves, deserialized by a loader that
	// runs what the data names (pickle underneath), either order.
	mustRx(`(?i)\b(?:torch\.load|pickle\.loads?|cPickle\.loads?|joblib\.load|dill\.loads?|cloudpickle\.loads?|read_pickle|numpy\.load|np\.load|keras\.models\.load_model|load_model)\s*\([^\n]*(?:hf_hub_download|snapshot_download|urlretrieve|urlopen|requests\.get|httpx\.get|(?:https?|ftp)://)`),
	mustRx(`(?i)(?:hf_hub_download|snapshot_download|urlretrieve|urlopen|requests\.get|httpx\.get)\b[^\n]*\b(?:torch\.load|pickle\.loads?|joblib\.load|dill\.loads?|cloudpickle\.loads?|read_pickle)\s*\(`),
	// A model hub's repository code run as the model loads.
	mustRx(`(?i)\btrust_remote_code\s*[=:]\s*(?:True|true|1)\b`),
}

// fetchAndShell (rules 13): a download and a shell in one statement, in
// any language's way of running a pipeline (Julia's run(pipeline(`curl
// …`, `sh`)), a subprocess list).
var fetchAndShell = mustRx("(?i)\\b(?:curl|wget)\\b[^\\n]*?(?:https?|ftp)://[^\\n]*?[\\s,(`\"'](?:ba|z|da)?sh[`\"')]")

// urlImport is a static import of a module by URL (ES modules in Deno,
// Bun, browsers and Node's network imports): the code is the server's,
// fetched when the module loads. Group 1 is the host.
var urlImport = mustRx(`(?i)^\s*(?:import|export)\b[^;\n]*?(?:\bfrom\s*|import\s*)["'](?:https?)://([^/"':]+)`)

// moduleRegistries are hosts that serve versioned modules by URL as a
// package registry does (Deno's and JSR's): importing from one is what
// those projects do, and their versions are pinned in the URL.
var moduleRegistries = map[string]bool{"deno.land": true, "jsr.io": true}

// remoteHint reports whether a line may hold one of the shapes (a cheap
// first pass).
func remoteHint(l string) bool {
	lower := asciiLower(l)
	for _, h := range []string{"curl", "wget", "iwr", "irm", "invoke-", "aria2c", "lwp-", "http get", "download", "://", "iex", "trust_remote_code", "urlopen", "npx", "dlx", "bunx", "bun x", "uvx", "pipx", "npm exec"} {
		if strings.Contains(lower, h) {
			return true
		}
	}
	return false
}

// writtenRemote is `remote-code:written` (escalate).
func (s *Shield) writtenRemote(a *Action, f *Facts, j *judgement) {
	s.inlineRemote(f, j)
	seen := map[string]bool{}
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || seen[p] || !remoteCarrier(p) || !remoteHint(t.Body) {
			continue
		}
		seen[p] = true
		added, old := textOf(f, p)
		if m := remoteAdded(p, added, old); m != "" {
			j.escalate("remote-code:written", "%s writes code to %s that fetches code and runs it (%s): what runs is whatever the server sends when the file runs", toolName(a), s.relPath(p), clipText(m, 100))
			return
		}
	}
}

// remoteAdded returns the first shape of writtenFetchRun the lines added
// to p hold, or "".
func remoteAdded(p, added, old string) string {
	old = codeText(p, old)
	plus, _ := diffLines(codeText(p, added), old)
	oldLower := ""
	for _, l := range plus {
		if !remoteHint(l) {
			continue
		}
		l = clipRaw(l, 4096)
		if m := urlImport.FindStringSubmatch(l); m != nil {
			if oldLower == "" {
				oldLower = asciiLower(old) + " "
			}
			if h := asciiLower(m[1]); !moduleRegistries[h] && !strings.Contains(oldLower, h) && !localHost(h) {
				return strings.TrimSpace(m[0])
			}
		}
		for _, re := range writtenFetchRun {
			if m := re.FindString(l); m != "" {
				return m
			}
		}
	}
	return ""
}

// writtenRisk reports whether the action's write at p adds code that
// sends data out or runs fetched code (exfiltration:written-code,
// remote-code:written): flow:changed-then-run remembers the file, and
// a later run of it (python x.py, jupyter nbconvert --execute x.ipynb)
// is asked about as running what it changed.
func (s *Shield) writtenRisk(f *Facts, p string) bool {
	added, old := textOf(f, p)
	if added == "" {
		return false
	}
	if remoteCarrier(p) && remoteHint(added) && remoteAdded(p, added, old) != "" {
		return true
	}
	return writtenCode(p) && sinkHint(added) && s.sinkAdded(codeText(p, added), codeText(p, old)) != ""
}

// inlineRunners run code given on their command line (-e, -c, eval).
var inlineRunners = map[string]bool{"node": true, "nodejs": true, "deno": true, "bun": true, "ruby": true, "php": true, "perl": true,
	"pwsh": true, "powershell": true, "python": true, "python3": true}

// inlineRemote is remote-code:written for code given on a command line:
// an interpreter's -e or eval that imports, includes or evaluates what a
// URL serves (node -e "import('https://…')", deno eval, php -r).
func (s *Shield) inlineRemote(f *Facts, j *judgement) {
	// A command's word that is itself a line piping a download into a
	// shell (an environment variable a tool runs: OPAMFETCH="sh -c
	// 'curl … | sh'", GIT_SSH_COMMAND, an argument handed to a hook):
	// the tool runs it later (rules 13). A pipeline the line runs
	// itself is pipe-to-shell's: each of its programs is a Run of its own.
	for i := range f.Runs {
		r := &f.Runs[i]
		if inlineRunners[r.Name] || !strings.Contains(r.Line, "|") || !remoteHint(r.Line) {
			continue // an interpreter's code is judged below, by what it loads
		}
		if m := fetchToShell[0].FindString(clipRaw(r.Line, 4096)); m != "" {
			j.escalate("remote-code:written", "%s carries a line that downloads code and runs it (%s), for the program that reads it to run", quote(r.Line), clipText(m, 100))
			return
		}
	}
	for i := range f.Runs {
		r := &f.Runs[i]
		if !inlineRunners[r.Name] || !remoteHint(r.Line) {
			continue
		}
		l := clipRaw(r.Line, 4096)
		for _, re := range fetchLoads {
			if m := re.FindString(l); m != "" {
				j.escalate("remote-code:written", "%s runs code it loads from a URL (%s): what runs is whatever the server sends", quote(r.Line), clipText(m, 100))
				return
			}
		}
	}
}

// remoteCarrier reports whether written text at p is judged for code it
// fetches and runs: not prose, lockfiles or container builds.
func remoteCarrier(p string) bool {
	base := strings.ToLower(p[strings.LastIndexByte(p, '/')+1:])
	ext := ""
	if k := strings.LastIndexByte(base, '.'); k >= 0 {
		ext = base[k:]
	}
	return !proseExt[ext] && !strings.Contains(base, "lock") && !containerFile(p)
}
