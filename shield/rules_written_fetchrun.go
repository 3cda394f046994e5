package shield

import (
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
	fetchCall  = mustRx(`(?i)\bDownload(?:File|Data|String)(?:Async|TaskAsync)?\s*\(|\burlretrieve\s*\(|\bdownload_file\s*\(|LoadFileToString\s*\([^)\n]*https?://|\bhttp\.Get\s*\(|\brequests\.get\s*\(|\bhttpx\.get\s*\(|\burlopen\s*\(|\bfetch\s*\(|\bGetByteArrayAsync\s*\(|\bGetStreamAsync\s*\(|\bUnityWebRequest\.Get\s*\(|\bFHttpModule\b|\bURL\s*\([^)\n]*\)\.openStream\s*\(`)
	runCall    = mustRx(`(?i)\bProcess\.Start\s*\(|\bsubprocess\.(?:run|call|Popen|check_output|check_call)\s*\(|\bexec\.Command\s*\(|\bchild_process\b|\bspawn(?:Sync)?\s*\(|\bexecFile(?:Sync)?\s*\(|\bRuntime\.getRuntime\(\)\.exec\s*\(|\bProcessBuilder\s*\(|\bos\.system\s*\(|\bShellExecute\w*\s*\(|\bCreateProcess\w*\s*\(|\bFPlatformProcess::CreateProc\s*\(|\bExecPythonCommand\w*\s*\(|\bos\.startfile\s*\(|\bAssembly\.Load\w*\s*\(|\bdlopen\s*\(|\bLoadLibrary\w*\s*\(|\bSystem\.load\s*\(`)
	literalURL = mustRx(`(?i)["'(]https?://[^\s"')]{4,}`)
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
		fi := -1
		for i, l := range plus {
			l = clipRaw(l, 4096)
			if fetched == "" && fetchCall.MatchString(l) {
				fetched, fi = l, i
			}
			if url == "" {
				url = literalURL.FindString(l)
			}
		}
		if fetched != "" && url != "" {
			ran = ranFromFetch(plus, fi)
		}
		if fetched != "" && ran != "" && url != "" {
			j.escalate("remote-code:written", "%s writes code to %s that downloads (%s) and runs (%s): what runs is whatever the server sends", toolName(a), s.relPath(p), clipText(fetched, 60), clipText(ran, 60))
			return
		}
	}
}

// fetchToken is a name or a string literal a line shares with another.
var fetchToken = mustRx(`[A-Za-z_]\w{0,40}|"[^"\n]{2,200}"|'[^'\n]{2,200}'`)

// fetchStop are names too common to link two lines.
var fetchStop = map[string]bool{"err": true, "nil": true, "const": true, "let": true, "var": true, "await": true, "new": true,
	"return": true, "true": true, "false": true, "None": true, "null": true, "self": true, "this": true, "if": true, "def": true,
	"func": true, "async": true, "function": true, "string": true, "byte": true, "with": true, "as": true, "in": true, "for": true,
	"os": true, "io": true, "fs": true, "http": true, "https": true, "System": true, "File": true, "_": true}

// ranFromFetch returns the line of plus that starts a process or runs
// code with what the line at fi fetched (linked through shared names or
// literals, at most three steps), or "".
func ranFromFetch(plus []string, fi int) string {
	if len(plus) > 512 {
		plus = plus[:512]
	}
	if fi < 0 || fi >= len(plus) {
		return ""
	}
	held := map[string]bool{}
	addTokens := func(l string) {
		for _, t := range fetchToken.FindAllString(clipRaw(l, 4096), 32) {
			if !fetchStop[t] && len(held) < 256 {
				held[t] = true
			}
		}
	}
	addTokens(plus[fi])
	used := map[int]bool{fi: true}
	for step := 0; step < 4; step++ {
		grew := false
		for i, l := range plus {
			if used[i] {
				continue
			}
			shares := false
			for _, t := range fetchToken.FindAllString(clipRaw(l, 4096), 32) {
				if held[t] {
					shares = true
					break
				}
			}
			if !shares {
				continue
			}
			if runCall.MatchString(l) {
				return l
			}
			used[i] = true
			addTokens(l)
			grew = true
		}
		if !grew {
			break
		}
	}
	return ""
}
