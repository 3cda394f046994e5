package toolmap

import "fmt"

// claude maps Claude Code's tools (2.1.332; the names its PreToolUse
// hook shows). It reports whether it knows tool.
func (m *mapper) claude(tool string) bool {
	switch tool {
	case "Bash":
		if c, ok := m.need("command"); ok {
			m.shell(c, "")
		}
	case "Read":
		if p, ok := m.need("file_path"); ok {
			m.readFile(p)
		}
	case "Write":
		if p, ok := m.need("file_path"); ok {
			m.writeFile(p, m.str("content"))
		}
	case "Edit":
		if p, ok := m.need("file_path"); ok {
			m.editFile(p, m.str("old_string"), m.str("new_string"), m.in["replace_all"] == true)
		}
	case "MultiEdit":
		p, ok := m.need("file_path")
		if !ok {
			break
		}
		edits, _ := m.in["edits"].([]any)
		if len(edits) == 0 || len(edits) > MaxCalls {
			m.unknown(fmt.Sprintf("MultiEdit carries %d edits (1 to %d are judged)", len(edits), MaxCalls))
			break
		}
		for _, e := range edits {
			o, _ := e.(map[string]any)
			old, _ := o["old_string"].(string)
			new, _ := o["new_string"].(string)
			m.editFile(p, old, new, o["replace_all"] == true)
		}
	case "NotebookEdit":
		// A cell of the notebook is replaced, inserted or deleted: a
		// write of the notebook carrying the cell's new source.
		if p, ok := m.need("notebook_path"); ok {
			m.writeFile(p, m.str("new_source"))
		}
	case "Grep":
		m.search(m.str("pattern"), m.str("path"), m.str("glob"))
	case "Glob":
		if g, ok := m.need("pattern"); ok {
			m.glob(g, m.str("path"))
		}
	case "LS":
		if p, ok := m.need("path"); ok {
			m.listDir(p)
		}
	case "WebFetch":
		if u, ok := m.need("url"); ok {
			m.fetch(u)
		}
	case "WebSearch":
		if q, ok := m.need("query"); ok {
			m.webSearch(q)
		}
	case "Task", "Agent":
		m.subagent(m.str("prompt"))
	case "TodoWrite", "ExitPlanMode", "EnterPlanMode", "AskUserQuestion", "ToolSearch", "BashOutput", "TaskOutput", "KillShell", "KillBash", "ListAgents":
		m.internal()
	default:
		return false
	}
	return true
}

// need is the string member k, which must be present and not empty; if
// it is not, the call is unknown.
func (m *mapper) need(k string) (string, bool) {
	s := m.str(k)
	if s == "" {
		m.unknown(fmt.Sprintf("%s has no %s", m.AgentTool, k))
		return "", false
	}
	return s, true
}
