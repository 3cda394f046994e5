package shield

import (
	"regexp"
	"strings"
)

// Code written that downloads something and runs it, across lines (rules
// 12, issue 27 ninth pass; docs/shield-rules.md "remote-code:written").
// remote-code:written reads one line that pipes or loads a download; the
// same harm is often two statements: a download into a file or a string
// (DownloadFile, urlretrieve, LoadFileToString of a URL, http.Get,
// requests.get, fetch) and, in the same change, a call that starts a
// process or runs code (Process.Start, subprocess, exec.Command, spawn,
// Runtime.exec, os.system, ShellExecute, a Python or script engine's
// exec). A change that adds both, with a literal URL, is asked about;
// tests and prose are spared.

var (
	fetchCall  = regexp.MustCompile(`(?i)\bDownload(?:File|Data|String)(?:Async|TaskAsync)?\s*\(|\burlretrieve\s*\(|\bdownload_file\s*\(|LoadFileToString\s*\([^)\n]*https?://|\bhttp\.Get\s*\(|\brequests\.get\s*\(|\bhttpx\.get\s*\(|\burlopen\s*\(|\bfetch\s*\(|\bGetByteArrayAsync\s*\(|\bGetStreamAsync\s*\(|\bUnityWebRequest\.Get\s*\(|\bFHttpModule\b|\bURL\s*\([^)\n]*\)\.openStream\s*\(`)
	runCall    = regexp.MustCompile(`(?i)\bProcess\.Start\s*\(|\bsubprocess\.(?:run|call|Popen|check_output|check_call)\s*\(|\bexec\.Command\s*\(|\bchild_process\b|\bspawn(?:Sync)?\s*\(|\bexecFile(?:Sync)?\s*\(|\bRuntime\.getRuntime\(\)\.exec\s*\(|\bProcessBuilder\s*\(|\bos\.system\s*\(|\bShellExecute\w*\s*\(|\bCreateProcess\w*\s*\(|\bFPlatformProcess::CreateProc\s*\(|\bExecPythonCommand\w*\s*\(|\bos\.startfile\s*\(|\bAssembly\.Load\w*\s*\(|\bdlopen\s*\(|\bLoadLibrary\w*\s*\(|\bSystem\.load\s*\(`)
	literalURL = regexp.MustCompile(`(?i)["'(]https?://[^\s"')]{4,}`)
)

// fetchThenRun is `remote-code:written` for a change whose added lines
// download from a literal URL and start a process or run code.
func (s *Shield) fetchThenRun(a *Action, f *Facts, j *judgement) {
	seen := map[string]bool{}
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || seen[p] || !remoteCarrier(p) || testSource(p) || !remoteHint(t.Body) {
			continue
		}
		seen[p] = true
		added, old := textOf(f, p)
		plus, _ := diffLines(codeText(p, added), codeText(p, old))
		if len(plus) > 4096 {
			plus = plus[:4096]
		}
		var fetched, ran, url string
		for _, l := range plus {
			l = clipRaw(l, 4096)
			if fetched == "" && fetchCall.MatchString(l) {
				fetched = l
			}
			if ran == "" && runCall.MatchString(l) {
				ran = l
			}
			if url == "" {
				url = literalURL.FindString(l)
			}
		}
		if fetched != "" && ran != "" && url != "" {
			j.escalate("remote-code:written", "%s writes code to %s that downloads (%s) and runs (%s): what runs is whatever the server sends", toolName(a), s.relPath(p), clipText(fetched, 60), clipText(ran, 60))
			return
		}
	}
}
