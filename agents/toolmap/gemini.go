package toolmap

import (
	"fmt"
	"regexp"
	"strings"
)

// GeminiMemoryFile is where Gemini CLI's save_memory writes.
const GeminiMemoryFile = "~/.gemini/GEMINI.md"

// gemini maps Gemini CLI's tools (0.61.0's names and parameters; the
// older path parameters are taken too). It reports whether it knows
// tool.
func (m *mapper) gemini(tool string) bool {
	switch tool {
	case "run_shell_command":
		if c, ok := m.need("command"); ok {
			m.shell(c, m.str("dir_path", "directory"))
		}
	case "read_file":
		if p := m.str("file_path", "absolute_path", "path"); p != "" {
			m.readFile(p)
		} else {
			m.unknown("read_file has no file_path")
		}
	case "write_file":
		if p, ok := m.need("file_path"); ok {
			m.writeFile(p, m.str("content"))
		}
	case "replace":
		p, ok := m.need("file_path")
		if !ok {
			break
		}
		old, new := m.str("old_string"), m.str("new_string")
		if old == "" {
			m.writeFile(p, new) // an empty old_string creates the file
			break
		}
		n, _ := m.in["expected_replacements"].(float64)
		m.editFile(p, old, new, m.in["allow_multiple"] == true || n > 1)
	case "grep_search", "search_file_content":
		m.search(m.str("pattern"), m.str("dir_path", "path"), m.str("include_pattern", "include"))
	case "glob":
		if g, ok := m.need("pattern"); ok {
			m.glob(g, m.str("dir_path", "path"))
		}
	case "list_directory":
		m.listDir(m.str("dir_path", "path"))
	case "read_many_files":
		m.readMany()
	case "web_fetch":
		m.webFetch()
	case "google_web_search":
		if q, ok := m.need("query"); ok {
			m.webSearch(q)
		}
	case "save_memory":
		// A memory write: the fact is read by every later session.
		m.Kind = KindMemory
		m.write(GeminiMemoryFile)
		m.call("memory_append", map[string]any{"text": m.str("fact")})
	case "invoke_agent":
		m.subagent(m.str("prompt", "task", "query", "objective"))
	case "write_todos", "update_topic", "enter_plan_mode", "ask_user", "complete_task", "get_internal_docs",
		"list_background_processes", "read_background_output":
		m.internal()
	default:
		if strings.HasPrefix(tool, "tracker_") {
			m.internal()
			break
		}
		return false
	}
	return true
}

// readMany reads the files each include pattern names: a literal path is
// a read of the file, a glob a search of every line of the files it
// matches (the contents are read).
func (m *mapper) readMany() {
	var inc []string
	switch v := m.in["include"].(type) {
	case string:
		inc = []string{v}
	case []any:
		if len(v) > MaxCalls {
			m.unknown(fmt.Sprintf("read_many_files names %d patterns, more than the %d judged", len(v), MaxCalls))
			return
		}
		for _, x := range v {
			if s, ok := x.(string); ok && s != "" {
				inc = append(inc, s)
			}
		}
	}
	if len(inc) == 0 {
		m.unknown("read_many_files names no file")
		return
	}
	for _, p := range inc {
		if !strings.ContainsAny(p, "*?[{") {
			m.readFile(p)
			continue
		}
		dir := literalDir(p)
		base := p[strings.LastIndexByte(p, '/')+1:]
		m.Kind = KindRead
		d := orDot(m.path(dir))
		m.Reads = append(m.Reads, Ref{Path: m.path(p), Glob: true})
		m.call("search_files", map[string]any{"pattern": "^", "path": d, "glob": base})
	}
}

// urlRE finds the URLs in web_fetch's prompt (Gemini fetches the ones the
// prompt names).
var urlRE = regexp.MustCompile(`(?i)\bhttps?://[^\s<>"'` + "`" + `]+`)

// webFetch is a GET of each URL the prompt (or a url member) names.
func (m *mapper) webFetch() {
	text := m.str("prompt") + " " + m.str("url")
	urls := urlRE.FindAllString(text, MaxCalls+1)
	if len(urls) > MaxCalls {
		m.unknown(fmt.Sprintf("web_fetch names more than %d URLs", MaxCalls))
		return
	}
	if len(urls) == 0 {
		// The request's host cannot be known: Shield says so.
		m.fetch("")
		m.Unknown = append(m.Unknown, "web_fetch's prompt names no http(s) URL")
		return
	}
	for _, u := range urls {
		m.fetch(strings.TrimRight(u, ".,;:!?)]}"))
	}
}
