package toolmap

import (
	"fmt"
	"strings"
)

// The lines of Codex's patch envelope.
const (
	patchBegin  = "*** Begin Patch"
	patchEnd    = "*** End Patch"
	patchAdd    = "*** Add File: "
	patchDelete = "*** Delete File: "
	patchUpdate = "*** Update File: "
	patchMove   = "*** Move to: "
	patchEOF    = "*** End of File"
)

// patchOp is one file operation of a patch.
type patchOp struct {
	kind     byte // 'A'dd, 'D'elete, 'U'pdate
	path, to string
	content  []string    // Add: the file's lines
	hunks    [][2]string // Update: each hunk's old and new text
}

// patch maps a Codex patch (apply_patch's envelope) to the writes,
// deletions and moves it makes. A patch that does not parse is an
// unknown write of unknown paths.
func (m *mapper) patch(text string) {
	ops, err := parsePatch(text)
	if err != nil {
		m.unknown("malformed patch: " + err.Error())
		return
	}
	m.Kind = KindWrite
	for _, op := range ops {
		switch op.kind {
		case 'A':
			content := strings.Join(op.content, "\n")
			if len(op.content) > 0 {
				content += "\n"
			}
			m.writeFile(op.path, content)
		case 'D':
			p := m.path(op.path)
			m.del(p)
			m.call("delete_file", map[string]any{"path": p})
		case 'U':
			target := op.path
			if op.to != "" {
				from, to := m.path(op.path), m.path(op.to)
				m.read(from, false)
				m.del(from)
				m.write(to)
				m.call("move_file", map[string]any{"from": from, "to": to})
				target = op.to
			}
			for _, h := range op.hunks {
				m.editFile(target, h[0], h[1], false)
			}
		}
		if len(m.Calls) > MaxCalls {
			return // done() makes it unknown
		}
	}
}

// parsePatch reads the envelope:
//
//	*** Begin Patch
//	*** Add File: PATH      then lines "+TEXT"
//	*** Delete File: PATH
//	*** Update File: PATH   then optionally "*** Move to: PATH", then hunks:
//	@@ [HEADER]             then lines " CONTEXT", "-OLD", "+NEW", optionally "*** End of File"
//	*** End Patch
//
// Lines outside Begin and End may only be blank or the heredoc that
// wraps a patch given as a shell command (apply_patch <<'EOF' ... EOF).
// It stops at MaxCalls+1 operations.
func parsePatch(text string) ([]patchOp, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	begin, end := -1, -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == patchBegin && begin < 0 {
			begin = i
		}
		if t == patchEnd {
			end = i
		}
	}
	if begin < 0 || end < begin {
		return nil, fmt.Errorf("no %q ... %q envelope", patchBegin, patchEnd)
	}
	for i, l := range lines {
		if i >= begin && i <= end {
			continue
		}
		t := strings.TrimSpace(l)
		if t != "" && !(i < begin && strings.HasPrefix(t, "apply_patch") && strings.Contains(t, "<<")) && !(i > end && strings.Trim(t, `'"`) == "EOF") {
			return nil, fmt.Errorf("line %d: %q outside the envelope", i+1, clipText(t))
		}
	}
	var ops []patchOp
	var cur *patchOp
	var old, new []string
	inHunk := false
	flush := func() {
		if cur != nil && cur.kind == 'U' && inHunk && (len(old) > 0 || len(new) > 0) {
			cur.hunks = append(cur.hunks, [2]string{joinLines(old), joinLines(new)})
		}
		old, new, inHunk = nil, nil, false
	}
	for i := begin + 1; i < end; i++ {
		l := lines[i]
		header := func(prefix string) (string, bool, error) {
			rest, ok := strings.CutPrefix(strings.TrimRight(l, " \t"), prefix)
			if !ok {
				return "", false, nil
			}
			p := strings.TrimSpace(rest)
			if p == "" || strings.ContainsRune(p, 0) {
				return "", true, fmt.Errorf("line %d: %q names no usable path", i+1, clipText(l))
			}
			return p, true, nil
		}
		var p string
		var ok bool
		var err error
		var kind byte
		for _, h := range []struct {
			prefix string
			kind   byte
		}{{patchAdd, 'A'}, {patchDelete, 'D'}, {patchUpdate, 'U'}} {
			if p, ok, err = header(h.prefix); ok || err != nil {
				kind = h.kind
				break
			}
		}
		if err != nil {
			return nil, err
		}
		if ok {
			flush()
			if cur != nil && cur.kind == 'U' && len(cur.hunks) == 0 && cur.to == "" {
				return nil, fmt.Errorf("update of %q changes nothing", clipText(cur.path))
			}
			if len(ops) == MaxCalls+1 {
				return ops, nil
			}
			ops = append(ops, patchOp{kind: kind, path: p})
			cur = &ops[len(ops)-1]
			continue
		}
		if cur == nil {
			return nil, fmt.Errorf("line %d: %q before any file", i+1, clipText(l))
		}
		switch cur.kind {
		case 'A':
			t, ok := strings.CutPrefix(l, "+")
			if !ok {
				return nil, fmt.Errorf("line %d: a line of an added file must start with +", i+1)
			}
			cur.content = append(cur.content, t)
		case 'D':
			if strings.TrimSpace(l) != "" {
				return nil, fmt.Errorf("line %d: %q after a deletion", i+1, clipText(l))
			}
		case 'U':
			switch {
			case strings.HasPrefix(l, patchMove):
				to, _, err := header(patchMove)
				if err != nil {
					return nil, err
				}
				if cur.to != "" || inHunk || len(cur.hunks) > 0 {
					return nil, fmt.Errorf("line %d: a move must come once, before the hunks", i+1)
				}
				cur.to = to
			case strings.HasPrefix(l, "@@"):
				flush()
				inHunk = true
			case strings.TrimSpace(l) == patchEOF:
				flush()
			case strings.HasPrefix(l, "*** "):
				return nil, fmt.Errorf("line %d: unknown header %q", i+1, clipText(l))
			default:
				// Codex lets the first hunk go without "@@".
				inHunk = true
				switch {
				case strings.HasPrefix(l, "-"):
					old = append(old, l[1:])
				case strings.HasPrefix(l, "+"):
					new = append(new, l[1:])
				case strings.HasPrefix(l, " "):
					old, new = append(old, l[1:]), append(new, l[1:])
				case l == "":
					old, new = append(old, ""), append(new, "")
				default:
					return nil, fmt.Errorf("line %d: a hunk line must start with space, - or +", i+1)
				}
			}
		}
	}
	flush()
	if cur != nil && cur.kind == 'U' && len(cur.hunks) == 0 && cur.to == "" {
		return nil, fmt.Errorf("update of %q changes nothing", clipText(cur.path))
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("the patch changes no file")
	}
	return ops, nil
}

func joinLines(l []string) string {
	if len(l) == 0 {
		return ""
	}
	return strings.Join(l, "\n") + "\n"
}

// clipText cuts a line quoted in an error.
func clipText(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
