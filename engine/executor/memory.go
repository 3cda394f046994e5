package executor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// GroupMemory is the tool group of the memory tools.
const GroupMemory = "memory"

// MemoryFile is the workspace file the memory tools keep, at the root.
const MemoryFile = "MEMORY.md"

// Limits of the memory tools.
const (
	// MaxMemoryAppend caps one memory_append's text.
	MaxMemoryAppend = 16 << 10
	// MaxMemoryBytes caps MEMORY.md: memory_append refuses to grow it
	// past this, and memory_search reads no further.
	MaxMemoryBytes = 1 << 20
	// MaxMemoryMatches caps the paragraphs memory_search returns.
	MaxMemoryMatches = 20
	// maxMemoryParagraph clips each paragraph memory_search shows.
	maxMemoryParagraph = 4 << 10
	// maxMemoryOutput caps memory_search's result.
	maxMemoryOutput = 32 << 10
	// maxMemoryQuery caps memory_search's query.
	maxMemoryQuery = 1 << 10
)

// Memory implements the memory tools over MEMORY.md at the workspace
// root: memory_read, memory_append and memory_search. Appends are
// serialised with a mutex so concurrent calls through one Memory never
// lose text; a change made outside it between its read and its atomic
// write (a shell command, say) would be overwritten, as with edit_file.
// MEMORY.md must be a regular file: a symlink there is refused, never
// followed. Output is deterministic for the same file content: no dates.
type Memory struct {
	ws *Workspace
	mu sync.Mutex
}

// NewMemory returns the memory tools for a workspace.
func NewMemory(ws *Workspace) *Memory { return &Memory{ws: ws} }

// Tools implements Executor.
func (m *Memory) Tools() []ToolDef {
	return []ToolDef{
		{Name: "memory_read", Group: GroupMemory,
			Description: fmt.Sprintf("Read your long-term memory: %s at the workspace root, notes kept across sessions. Shows the first %d KiB; use memory_search for the rest.", MemoryFile, MaxReadBytes>>10),
			InputSchema: objectSchema("")},
		{Name: "memory_append", Group: GroupMemory, Mutating: true,
			Description: fmt.Sprintf("Remember something across sessions: append text as a new paragraph at the end of %s. At most %d KiB per call; %s may not grow past %d MiB. Existing text is never changed.", MemoryFile, MaxMemoryAppend>>10, MemoryFile, MaxMemoryBytes>>20),
			InputSchema: objectSchema(`"text":{"type":"string","description":"the note to remember, in Markdown"}`, "text")},
		{Name: "memory_search", Group: GroupMemory,
			Description: fmt.Sprintf("Search your long-term memory (%s) for the paragraphs that contain every word of the query, ignoring case. Returns up to %d paragraphs with their line numbers.", MemoryFile, MaxMemoryMatches),
			InputSchema: objectSchema(`"query":{"type":"string","description":"words that must all occur in a paragraph (case-insensitive substrings)"}`, "query")},
	}
}

type memoryArgs struct {
	Text  *string `json:"text"`
	Query *string `json:"query"`
}

// decodeMemoryArgs decodes strictly and refuses the arguments another
// memory tool takes.
func decodeMemoryArgs(c Call) (memoryArgs, error) {
	var a memoryArgs
	if err := decodeArgs(c.Args, &a); err != nil {
		return a, err
	}
	switch {
	case c.Tool != "memory_append" && a.Text != nil:
		return a, errors.New(`invalid arguments: unknown field "text"`)
	case c.Tool != "memory_search" && a.Query != nil:
		return a, errors.New(`invalid arguments: unknown field "query"`)
	}
	return a, nil
}

// Touches implements Toucher: memory_append changes MEMORY.md only.
func (m *Memory) Touches(c Call) ([]string, error) {
	if _, err := decodeMemoryArgs(c); err != nil {
		return nil, err
	}
	if c.Tool == "memory_append" {
		return []string{MemoryFile}, nil
	}
	return nil, nil
}

// Paths implements Pather: every memory tool acts on MEMORY.md.
func (m *Memory) Paths(Call) []string { return []string{MemoryFile} }

// Execute implements Executor.
func (m *Memory) Execute(ctx context.Context, c Call) Result {
	a, err := decodeMemoryArgs(c)
	if err != nil {
		return Errorf("%s: %v", c.Tool, err)
	}
	switch c.Tool {
	case "memory_read":
		return m.read()
	case "memory_append":
		if a.Text == nil {
			return Errorf("memory_append: text is required")
		}
		return m.append(*a.Text)
	case "memory_search":
		if a.Query == nil {
			return Errorf("memory_search: query is required")
		}
		return m.search(*a.Query)
	}
	return Errorf("memory executor has no tool %q", c.Tool)
}

// load reads up to limit+1 bytes of MEMORY.md. A missing file is empty;
// a symlink or anything but a regular file is an error.
func (m *Memory) load(limit int64) (data []byte, size int64, mode uint32, err error) {
	f, err := m.ws.Open(MemoryFile, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, 0, 0o644, nil
	case errors.Is(err, unix.ELOOP):
		return nil, 0, 0, fmt.Errorf("%s is a symbolic link; the memory tools only use a regular file there", MemoryFile)
	case err != nil:
		return nil, 0, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%s: %w", MemoryFile, err)
	}
	if !st.Mode().IsRegular() {
		return nil, 0, 0, fmt.Errorf("%s is not a regular file (%s)", MemoryFile, st.Mode().Type())
	}
	data, err = io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%s: %w", MemoryFile, err)
	}
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(trimCutRune(data)) {
		return nil, 0, 0, fmt.Errorf("%s is not UTF-8 text", MemoryFile)
	}
	return data, max(st.Size(), int64(len(data))), permBits(st.Mode()), nil
}

// permBits gives a file mode's permission bits as chmod takes them.
func permBits(m fs.FileMode) uint32 {
	bits := uint32(m.Perm())
	for _, b := range []struct {
		mode fs.FileMode
		bit  uint32
	}{{fs.ModeSetuid, 0o4000}, {fs.ModeSetgid, 0o2000}, {fs.ModeSticky, 0o1000}} {
		if m&b.mode != 0 {
			bits |= b.bit
		}
	}
	return bits
}

func (m *Memory) read() Result {
	data, size, _, err := m.load(MaxReadBytes)
	if err != nil {
		return Errorf("memory_read: %v", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return Result{Content: MemoryFile + " is empty: nothing has been remembered yet.\n"}
	}
	if len(data) <= MaxReadBytes {
		return Result{Content: string(data)}
	}
	data = trimCutRune(data[:MaxReadBytes])
	return Result{Truncated: true, Content: string(data) +
		fmt.Sprintf("\n[truncated: showing the first %d of %d bytes; use memory_search to find the rest]\n", len(data), size)}
}

func (m *Memory) append(text string) Result {
	if len(text) > MaxMemoryAppend {
		return Errorf("memory_append: text is %d bytes; the limit is %d", len(text), MaxMemoryAppend)
	}
	if strings.IndexByte(text, 0) >= 0 {
		return Errorf("memory_append: text contains a NUL byte")
	}
	text = strings.TrimLeft(strings.TrimRight(text, " \t\r\n"), "\r\n")
	if strings.TrimSpace(text) == "" {
		return Errorf("memory_append: text is empty")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	data, _, mode, err := m.load(MaxMemoryBytes)
	if err != nil {
		return Errorf("memory_append: %v", err)
	}
	if len(data) > MaxMemoryBytes {
		return Errorf("memory_append: %s is over the %d MiB limit; tidy it with edit_file first", MemoryFile, MaxMemoryBytes>>20)
	}
	out := bytes.NewBuffer(make([]byte, 0, len(data)+len(text)+3))
	out.Write(data)
	if len(data) > 0 { // its own paragraph: a blank line before it
		if !bytes.HasSuffix(data, []byte("\n")) {
			out.WriteByte('\n')
		}
		if !bytes.HasSuffix(out.Bytes(), []byte("\n\n")) {
			out.WriteByte('\n')
		}
	}
	out.WriteString(text)
	out.WriteByte('\n')
	if out.Len() > MaxMemoryBytes {
		return Errorf("memory_append: %s would grow to %d bytes, over the %d MiB limit; tidy it with edit_file first", MemoryFile, out.Len(), MaxMemoryBytes>>20)
	}
	if err := m.ws.WriteFile(MemoryFile, out.Bytes(), mode); err != nil {
		return Errorf("memory_append: %v", err)
	}
	return Result{Content: fmt.Sprintf("appended %d bytes to %s (now %d bytes)", len(text)+1, MemoryFile, out.Len())}
}

func (m *Memory) search(query string) Result {
	if len(query) > maxMemoryQuery {
		return Errorf("memory_search: query is %d bytes; the limit is %d", len(query), maxMemoryQuery)
	}
	words := strings.Fields(strings.ToLower(query))
	if len(words) == 0 {
		return Errorf("memory_search: query is empty")
	}
	data, size, _, err := m.load(MaxMemoryBytes)
	if err != nil {
		return Errorf("memory_search: %v", err)
	}
	var r Result
	var out strings.Builder
	var found, shown int
	if len(data) > MaxMemoryBytes {
		data = trimCutRune(data[:MaxMemoryBytes])
	}
	eachParagraph(data, func(first, last int, text string) {
		lower := strings.ToLower(text)
		for _, w := range words {
			if !strings.Contains(lower, w) {
				return
			}
		}
		if found++; found > MaxMemoryMatches || r.Truncated {
			r.Truncated = true
			return
		}
		head := "line " + strconv.Itoa(first)
		if last > first {
			head = fmt.Sprintf("lines %d-%d", first, last)
		}
		if len(text) > maxMemoryParagraph {
			text = string(trimCutRune([]byte(text[:maxMemoryParagraph]))) + " [... paragraph clipped]"
		}
		entry := head + ":\n" + text + "\n\n"
		if out.Len()+len(entry) > maxMemoryOutput {
			r.Truncated = true
			return
		}
		out.WriteString(entry)
		shown++
	})
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = strconv.Quote(w)
	}
	switch {
	case len(bytes.TrimSpace(data)) == 0:
		r.Content = MemoryFile + " is empty: nothing has been remembered yet.\n"
	case found == 0:
		r.Content = fmt.Sprintf("no paragraph in %s contains all of %s\n", MemoryFile, strings.Join(quoted, ", "))
	default:
		r.Content = out.String()
		if r.Truncated {
			r.Content += fmt.Sprintf("[truncated: showing %d of %d matching paragraphs; add words to narrow the query]\n", shown, found)
		}
	}
	if size > MaxMemoryBytes {
		r.Truncated = true
		r.Content += fmt.Sprintf("[truncated: only the first %d MiB of %s (%d bytes) was searched]\n", MaxMemoryBytes>>20, MemoryFile, size)
	}
	return r
}

// eachParagraph calls fn for each run of non-blank lines, with its first
// and last line numbers (from 1) and its text.
func eachParagraph(data []byte, fn func(first, last int, text string)) {
	var para []string
	first := 0
	flush := func(last int) {
		if len(para) > 0 {
			fn(first, last, strings.Join(para, "\n"))
			para = para[:0]
		}
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i, line := range lines {
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" {
			flush(i)
			continue
		}
		if len(para) == 0 {
			first = i + 1
		}
		para = append(para, line)
	}
	flush(len(lines))
}

// trimCutRune drops an incomplete rune at the end of b, left by a cut.
func trimCutRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}
